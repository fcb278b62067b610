"""The soak test reads pg-items with the sync tests' readers (``sync/tests/mirror_support.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sync" / "tests"))
