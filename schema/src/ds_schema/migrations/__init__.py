"""The schema, as numbered SQL files (``NNNN_what.sql``) applied in order by ``ds_schema.migrate``.

A shipped file is never edited: its checksum is recorded where it was applied.
"""
