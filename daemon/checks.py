"""One result of a ``ghosttype doctor`` check.

Shared by the checks in :mod:`daemon.doctor` and the ones a frontend brings
(:func:`daemon.frontends.ibus.component.ibus_checks`), so neither imports the
other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


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
