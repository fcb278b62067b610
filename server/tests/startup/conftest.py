"""Start-up tests run real ``ds-server`` processes from ``support``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
