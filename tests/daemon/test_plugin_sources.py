"""What ghosttype's GNOME Shell extension and KWin effect promise, read from the files that ship
(``gnome_shell/``, ``kwin/``): they run only inside GNOME Shell and KWin, where the desktop tier
(tests/desktop) drives them; here the suite checks the rules their sources must keep.
"""

from __future__ import annotations

import json
import re
import shlex

from daemon.frontends.ibus.component import engine_command
from daemon.frontends.ibus.shell_extension import SOURCE_DIR
from daemon.frontends.ibus.shell_ghost import MAX_TEXT_CHARS, PROTOCOL

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


def test_both_plugins_speak_the_engines_protocol_version_and_text_bound():
    """The engine falls back to the popup below :data:`PROTOCOL`, and never sends more than
    :data:`MAX_TEXT_CHARS` characters, which the plug-ins refuse unmeasured."""
    assert int(re.search(r"\nconst VERSION = (\d+);", EXTENSION).group(1)) == PROTOCOL
    assert int(re.search(r"\nstatic constexpr uint s_version = (\d+);", EFFECT).group(1)) == PROTOCOL
    assert int(re.search(r"\nconst MAX_TEXT_CHARS = (\d+);", EXTENSION).group(1)) == MAX_TEXT_CHARS
    assert int(re.search(r"\nstatic constexpr qsizetype s_maxChars = (\d+);", EFFECT).group(1)) == MAX_TEXT_CHARS
    assert "[...text].length > MAX_TEXT_CHARS" in js_method("ShowAsync")
    assert "text.toUcs4().size() > s_maxChars" in cpp_function("GhostService::Show")


def test_both_plugins_know_the_engine_by_the_command_ibus_daemon_starts_it_with():
    """The plug-ins accept Register only from a process whose command ends as the component file
    says (and whose parent runs ibus-daemon): the arguments they look for are the engine's."""
    tail = shlex.split(engine_command())[-3:]
    assert tail == ["ibus", "run", "--ibus"]
    assert re.search(r"\nconst ENGINE_ARGS = \[(.*?)\];", EXTENSION).group(1) == ", ".join(f"'{a}'" for a in tail)
    assert re.search(r"engineArgs = \{(.*?)\};", EFFECT).group(1) == ", ".join(f'QByteArrayLiteral("{a}")' for a in tail)
    for source in (EXTENSION, EFFECT):
        assert "ibus-daemon" in source and "GetConnectionUnixProcessID" in source


def test_the_extension_serves_the_registered_engine_alone():
    """Each of the engine's calls is served only to the unique name that registered (GJS would call a
    method without ``Async`` first, with no way to tell the caller, so there is none), and Hidden goes
    to that engine alone, after every hide."""
    interface = re.search(r"const INTERFACE = `(.*?)`;", EXTENSION, re.S).group(1)
    methods = re.findall(r'<method name="(\w+)"', interface)
    assert methods == ["Register", "Show", "Offset", "Hide"]
    for name in methods:
        assert not re.search(rf"\n    {name}\(", EXTENSION), f"{name} has a handler that skips the check"
    for name in ("ShowAsync", "OffsetAsync", "HideAsync"):
        assert js_method(name).split("\n")[0].strip() == "if (!this._fromEngine(invocation))"
    check = js_method("_fromEngine")
    assert "invocation.get_sender() === this._engine" in check and "ACCESS_DENIED" in check
    assert "emit_signal(this._engine, OBJECT_PATH, BUS_NAME, 'Hidden'" in js_method("_hidden")
    assert "this._dbus.emit_signal" not in EXTENSION  # no broadcast
    assert "if (shown)\n            this._onHidden();" in js_method("hide")


def test_the_effect_serves_the_registered_engine_alone():
    """The effect's Show, Offset, Hide and Watch answer only the unique name that registered;
    Caret and Hidden go to it alone; every hide says Hidden."""
    for name in ("Show", "Offset", "Hide", "Watch"):
        assert "fromEngine()" in cpp_function(f"GhostService::{name}").split("\n")[0 if name != "Show" else 1]
    check = cpp_function("GhostService::fromEngine")
    assert "message().service() == m_engine" in check and "QDBusError::AccessDenied" in check
    assert "createTargetedSignal(m_engine" in cpp_function("GhostService::emitCaret")
    assert "createTargetedSignal(m_engine" in cpp_function("GhostService::emitHidden")
    assert "Q_EMIT" not in EFFECT  # no broadcast signal at all
    assert "refit();" in cpp_function("GhostEffect::hide") and "emitHidden()" in cpp_function("GhostEffect::refit")
