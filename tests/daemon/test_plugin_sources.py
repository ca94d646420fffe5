"""What ghosttype's GNOME Shell extension and KWin effect promise, read from the files that ship
(``gnome_shell/``, ``kwin/``): they run only inside GNOME Shell and KWin, where the desktop tier
(tests/desktop) drives them; here the suite checks the rules their sources must keep.
"""

from __future__ import annotations

import json
import re

from daemon.frontends.ibus.shell_extension import SOURCE_DIR

KWIN_DIR = SOURCE_DIR.parent / "kwin"
EXTENSION = (SOURCE_DIR / "extension.js").read_text()
EFFECT = (KWIN_DIR / "ghosteffect.cpp").read_text()


def js_method(name: str) -> str:
    """The body of the extension's method ``name`` (up to the next method at the same indent)."""
    match = re.search(rf"\n    {name}\(.*?\) {{\n(.*?)\n    }}\n", EXTENSION, re.S)
    assert match, f"extension.js has no method {name}"
    return match.group(1)


def cpp_function(name: str) -> str:
    """The body of the C++ function ``name`` (a definition at the start of a line)."""
    match = re.search(rf"\n[^\n]*\b{re.escape(name)}\(.*?\)\s*(const)?\s*\n{{\n(.*?)\n}}\n", EFFECT, re.S)
    assert match, f"ghosteffect.cpp has no function {name}"
    return match.group(2)


def test_the_extension_stays_across_the_lock_screen_and_draws_nothing_there():
    """GNOME Shell disables an extension without ``unlock-dialog`` at every lock, and its bus name is
    then free for any program while the user unlocks; kept, it must draw nothing on the lock screen
    (its label would stand above the shield)."""
    meta = json.loads((SOURCE_DIR / "metadata.json").read_text())
    assert meta["session-modes"] == ["user", "unlock-dialog"]
    assert "screenLocked()" in js_method("_place").split("\n")[1]  # nothing is placed while locked
    assert "this._lost()" in js_method("_lockChanged")  # locking takes the text away, and says so


def test_the_effect_draws_nothing_while_the_screen_is_locked():
    """KWin keeps its effects, and their bus name, for the compositor's life; the effect paints above
    every window, the lock screen included, so it places and paints nothing while the screen is locked."""
    assert "effects->isScreenLocked()" in cpp_function("GhostEffect::place").split("\n")[1]
    assert "effects->isScreenLocked()" in cpp_function("GhostEffect::paintScreen")
    assert re.search(r"screenLockingChanged, this, \[this\]\(bool locked\) \{\s*if \(locked\) \{\s*lost\(\);",
                     EFFECT)
