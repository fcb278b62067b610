"""ds-sync: session streams into Postgres (``session_events``) and Postgres tables into
streams (``pg-{table}``), exactly once across crashes.

The two directions are packages: ``sessions`` (streams → Postgres) and
``mirror`` (Postgres → streams). ``service`` runs both; ``cli`` is the
command line. What both use sits beside them: ``settings``, ``metrics``,
``migrate`` (the schema), ``backoff``, ``failpoints``, ``table_names``.
The contract (event shapes, tables) is ``shared/spec/sessions.md``; how it
works is in ``docs/sync.md``.
"""
