"""The request fuzzer's suite: its helpers live in ``server/tests/support``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
