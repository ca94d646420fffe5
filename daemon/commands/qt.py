"""Loading ghosttype's Qt half (``ui``) from a command, at run time, so the
``daemon`` package itself never imports Qt (``ui`` depends on ``daemon``,
never the other way round)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Optional


def import_qt_module(name: str, what: str) -> Optional[ModuleType]:
    """Import ``name``; when Qt is missing, say so on stderr (``what`` names
    the part that needs it) and return None."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        print(f"ghosttype: cannot load {what} ({e}); install PyQt6 and the Qt xcb libraries "
              "(see README: packaging/linux/install-deps.sh)", file=sys.stderr)
        return None
