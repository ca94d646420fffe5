"""One result of a ``ghosttype doctor`` check, and the version an installed
program reports.

Shared by the checks in :mod:`daemon.doctor` and the ones a frontend brings
(:func:`daemon.frontends.ibus.component.ibus_checks`), so neither imports the
other for it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Optional


def program_version(program: str, *args: str, pattern: str = r"\d+\.\d+(?:\.\d+)?") -> Optional[str]:
    """The first version number ``program args`` prints (``ibus version``, ``kwin_wayland --version``);
    None when it is not installed or says none."""
    exe = shutil.which(program)
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(pattern, out)
    return m.group(0) if m else None


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: Optional[bool]  #: True ok, False problem, None warning / not applicable
    detail: str
    hint: str = ""

    def line(self) -> str:
        mark = {True: "ok  ", False: "FAIL", None: "warn"}[self.ok]
        text = f"[{mark}] {self.name}: {self.detail}"
        return text + (f"\n       fix: {self.hint}" if self.hint and self.ok is not True else "")
