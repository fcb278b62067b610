"""ds-sync: session streams into Postgres (``session_events``), exactly once across crashes.

The contract (event shapes, tables) is ``shared/spec/sessions.md``; how it
works is in ``docs/sync.md``.
"""
