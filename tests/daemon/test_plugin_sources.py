"""What ghosttype's GNOME Shell extension and KWin effect promise, read from the files that ship
(``gnome_shell/``, ``kwin/``, ``protocol.xml``): they run only inside GNOME Shell and KWin, where the
desktop tier (tests/desktop) drives them; here the suite checks the rules their sources must keep, and that
both and the engine agree with the one protocol file.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from daemon.frontends.ibus.component import engine_command
from daemon.frontends.ibus.inline.protocol import FILE, SPEC, parse
from daemon.frontends.ibus.inline.shell_extension import SOURCE_DIR
from daemon.frontends.ibus.inline.shell_ghost import BUS_NAME, MAX_TEXT_CHARS, OBJECT_PATH, PROTOCOL

KWIN_DIR = SOURCE_DIR.parent / "kwin"
EXTENSION = (SOURCE_DIR / "extension.js").read_text()
EFFECT = (KWIN_DIR / "ghosteffect.cpp").read_text()
HEADER = (KWIN_DIR / "ghosteffect.h").read_text()


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


CPP_TYPES = {"QString": "s", "uint": "u", "int": "i", "bool": "b", "double": "d", "QStringList": "as"}


def effect_members(header: str) -> dict[str, tuple[str, str]]:
    """The D-Bus members a C++ header declares (``Q_SCRIPTABLE``): name -> (in, out) signatures, out being the
    return value's type and then each argument taken by non-const reference (Qt's out-arguments)."""
    members = {}
    for ret, name, args in re.findall(r"Q_SCRIPTABLE (\w+) (\w+)\(([^)]*)\);", header):
        ins, outs = "", "" if ret == "void" else CPP_TYPES[ret]
        for arg in filter(None, (a.strip() for a in args.split(","))):
            out = "&" in arg and not arg.startswith("const ")
            kind = CPP_TYPES[arg.replace("const ", "").split()[0].rstrip("&")]
            if out:
                outs += kind
            else:
                ins += kind
        members[name] = (ins, outs)
    return members


def disagreements(spec, extension: str, header: str, effect: str) -> list[str]:
    """Where the plug-ins' sources differ from the protocol file (empty: they agree)."""
    found = []
    wanted = {name: (m.inputs, m.outputs) for name, m in spec.methods.items()}
    wanted |= {name: (sig, "") for name, sig in spec.signals.items()}  # a signal's arguments, as C++ declares them
    declared = effect_members(header)
    if declared != wanted:
        found.append(f"ghosteffect.h declares {declared}, the protocol defines {wanted}")
    if f'Q_CLASSINFO("D-Bus Interface", "{spec.interface}")' not in header:
        found.append("ghosteffect.h serves another interface")
    for name, kind in spec.properties.items():
        if not re.search(rf"Q_PROPERTY\({ {'u': 'uint'}[kind]} {name} READ", header):
            found.append(f"ghosteffect.h has no property {name} of type {kind}")
    for name in spec.methods:
        if f"\n    {name}Async(" not in extension:
            found.append(f"extension.js does not serve {name}")
    for name in spec.signals:
        if name != "Caret" and f"'{name}'" not in extension:  # Caret: KWin's alone (GNOME Shell gives IBus the caret)
            found.append(f"extension.js never sends {name}")
    if re.search(r"<(method|signal|property) name=", extension):
        found.append("extension.js writes an interface of its own")
    for name in re.findall(r"constant\('(\w+)'\)", extension):
        if name not in spec.constants:
            found.append(f"extension.js reads {name}, which the protocol does not name")
    for name in spec.constants:
        if f"GHOSTTYPE_{name}" not in effect:
            found.append(f"ghosteffect.cpp does not take {name} from the protocol")
    if "org.freedesktop.IBus.GhostType" in effect:
        found.append("ghosteffect.cpp writes a name of the protocol itself")
    return found


def test_the_protocol_file_is_the_one_place_the_interface_is_written():
    """protocol.xml defines the interface; the extension loads it (and writes none of its own), the
    effect declares exactly its members with its signatures and takes every constant from it (CMakeLists.txt
    reads the file), and the engine reads it (:data:`SPEC`)."""
    assert disagreements(SPEC, EXTENSION, HEADER, EFFECT) == []
    assert "get_child('protocol.xml')" in EXTENSION and "wrapJSObject(INTERFACE, this)" in EXTENSION
    assert (BUS_NAME, OBJECT_PATH, PROTOCOL) == (SPEC.interface, SPEC.constant("ObjectPath"),
                                                  int(SPEC.constant("Version")))
    cmake = (KWIN_DIR / "CMakeLists.txt").read_text()
    listed = re.search(r"foreach\(name ([\w ]+)\)", cmake).group(1).split()
    assert sorted(listed) == sorted(SPEC.constants) and "../protocol.xml" in cmake


@pytest.mark.parametrize("side, change", [
    ("header", ("Q_SCRIPTABLE void Hide();", "Q_SCRIPTABLE void HideAll();")),
    ("header", ("bool Show(const QString &text, uint &chars)", "bool Show(const QString &text, int &chars)")),
    ("header", ("Q_SCRIPTABLE void Visible(uint chars);\n", "")),
    ("extension", ("    WatchAsync(", "    WatchLater(")),
    ("extension", ("'Visible'", "'Seen'")),
    ("effect", ("GHOSTTYPE_EdgePx", "4")),
    ("spec", ('<signal name="Hidden"/>', '<signal name="Hidden"><arg type="u" name="why"/></signal>')),
])
def test_a_change_on_one_side_alone_is_found(side, change):
    sources = {"header": HEADER, "extension": EXTENSION, "effect": EFFECT, "spec": FILE.read_text()}
    assert change[0] in sources[side]
    sources[side] = sources[side].replace(change[0], change[1], 1)
    assert disagreements(parse(sources["spec"]), sources["extension"], sources["header"], sources["effect"])


def test_both_plugins_refuse_a_text_over_the_protocols_bound():
    """The engine never sends more than :data:`MAX_TEXT_CHARS` characters (the protocol's bound), which the
    plug-ins refuse unmeasured."""
    assert MAX_TEXT_CHARS == int(SPEC.constant("MaxTextChars"))
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
    methods = list(SPEC.methods)
    assert methods == ["Register", "Show", "Offset", "SurfaceCaret", "Hide", "Watch"]
    for name in methods:
        assert not re.search(rf"\n    {name}\(", EXTENSION), f"{name} has a handler that skips the check"
    for name in ("ShowAsync", "OffsetAsync", "SurfaceCaretAsync", "HideAsync", "WatchAsync"):
        assert js_method(name).split("\n")[0].strip() == "if (!this._fromEngine(invocation))"
    check = js_method("_fromEngine")
    assert "invocation.get_sender() === this._engine" in check and "ACCESS_DENIED" in check
    assert "emit_signal(this._engine, OBJECT_PATH, BUS_NAME, 'Hidden'" in js_method("_hidden")
    assert "this._dbus.emit_signal" not in EXTENSION  # no broadcast
    assert "if (shown)\n            this._onHidden();" in js_method("hide")


def test_the_effect_serves_the_registered_engine_alone():
    """The effect's Show, Offset, SurfaceCaret, Hide and Watch answer only the unique name that registered;
    Caret and Hidden go to it alone; every hide says Hidden."""
    for name in ("Show", "Offset", "SurfaceCaret", "Hide", "Watch"):
        assert "fromEngine()" in cpp_function(f"GhostService::{name}").split("\n")[0 if name != "Show" else 1]
    check = cpp_function("GhostService::fromEngine")
    assert "message().service() == m_engine" in check and "QDBusError::AccessDenied" in check
    assert "createTargetedSignal(m_engine" in cpp_function("GhostService::emitCaret")
    assert "createTargetedSignal(m_engine" in cpp_function("GhostService::emitHidden")
    assert "Q_EMIT" not in EFFECT  # no broadcast signal at all
    assert "refit();" in cpp_function("GhostEffect::hide") and "emitHidden()" in cpp_function("GhostEffect::refit")


def test_the_effects_build_takes_each_constant_of_the_protocol_file_as_it_is(tmp_path):
    """CMakeLists.txt's reading of protocol.xml, run by CMake itself (script mode, on the protocol part of the
    file): every constant becomes the compile definition it names, with the file's value (a CMake regex match
    once overwrote the values with another match's); a header that declares another member stops the build."""
    import shutil
    import subprocess

    if shutil.which("cmake") is None:  # .ci/run installs it (install-deps.sh --test)
        pytest.skip("cmake is not installed")
    cmake = (KWIN_DIR / "CMakeLists.txt").read_text()
    part = cmake[cmake.index("set(GHOSTTYPE_PROTOCOL"):cmake.index("add_library(")]
    part = re.sub(r"set_property\(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS[^)]*\)", "", part)
    script = tmp_path / "protocol.cmake"
    script.write_text(part + 'foreach(d ${protocol_defs})\n  message(STATUS "${d}")\nendforeach()\n')

    def run(header: str):
        (tmp_path / "kwin").mkdir(exist_ok=True)
        (tmp_path / "kwin" / "ghosteffect.h").write_text(header)
        (tmp_path / "protocol.xml").write_text(FILE.read_text())
        return subprocess.run(["cmake", "-P", str(script)], cwd=tmp_path / "kwin", capture_output=True, text=True,
                              timeout=60)

    r = run(HEADER)
    assert r.returncode == 0, r.stderr
    defs = dict(line.removeprefix("-- ").split("=", 1) for line in r.stdout.splitlines() if line.startswith("-- "))
    quoted = {"ObjectPath", "StaleCaretError"}
    want = {f"GHOSTTYPE_{k}": f'"{v}"' if k in quoted else v for k, v in SPEC.constants.items()}
    want["GHOSTTYPE_Grey"] = "0x" + SPEC.constant("Grey").removeprefix("#")  # a Makefile drops a "#"
    assert defs == {"GHOSTTYPE_INTERFACE": f'"{SPEC.interface}"'} | want
    assert not any("#" in v for v in defs.values())
    r = run(HEADER.replace("Q_SCRIPTABLE void Watch();", "Q_SCRIPTABLE void WatchAll();"))
    assert r.returncode != 0 and "WatchAll" in r.stderr, r.stderr
