"""The chaos suite's tests import the harness from scripts/chaos (the repository root on the
path, as scripts/chaos.py puts it)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
