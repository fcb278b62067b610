"""The session contract's Postgres schema (sessions.md §3, §5), kept once for its users.

ds-sync writes the tables and ds-spark reads and writes them; either may be the
first to start against an empty database, so both apply the same migrations
(``ds_schema.migrate``) and refuse the same old servers
(``ds_schema.postgres_version``). Nothing here imports either of them.
"""
