"""An AI chat backend whose generations survive a page reload: the server half of
``@durable-streams/aisdk-transport`` with `durable_sessions.aisdk`, a fake model, and the
conversation recorded as a session (``/ds/sessions/{chat id}``)."""
