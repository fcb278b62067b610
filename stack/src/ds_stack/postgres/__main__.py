"""``python -m ds_stack.postgres`` is ``ds-postgres``."""

from ds_stack.postgres.cli import main

main()
