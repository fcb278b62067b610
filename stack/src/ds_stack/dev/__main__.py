"""``python -m ds_stack.dev``: the same as ``ds-dev``."""

from ds_stack.dev.cli import main

main()
