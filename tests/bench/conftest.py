from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench` is not installed; import it from the checkout
    sys.path.insert(0, str(ROOT))
