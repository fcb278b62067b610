"""``python -m ds_sync`` is ``ds-sync``."""

from ds_sync.cli import main

main()
