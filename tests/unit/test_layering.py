"""The import rules of daemon/README.md, checked in fresh interpreters and
on the source.

``daemon.cpc`` is a pure library (stdlib + numpy); ``daemon`` never imports Qt
or ``ui``; headless commands must not pull in pynput (which fails to import
without a display) or Qt.  Imports run one way, from the command line down:

    daemon/__main__.py, daemon/commands/        the command line
    daemon/frontends/, daemon/doctor.py         the frontends (and the checks of every frontend)
    daemon/lifecycle.py, daemon/runtime.py      what every frontend starts the same way
    daemon/evaluation/                          the benchmarks
    daemon/controller/, worker, backends, ...   the shared core
    daemon/cpc/                                 the decoder, pure

A module never imports one of a layer above it; :mod:`tests.unit.test_import_cycles`
checks that no modules import each other in a circle.  No module grows
past ``LONG_MODULE_LINES``.
"""

from __future__ import annotations

import functools
import json
import pathlib
import subprocess
import sys

import pytest

from tests.unit.test_import_cycles import import_graph, project_modules

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEAVY = ("llama_cpp", "PyQt6", "pynput", "Xlib", "jeepney", "ui")


def _modules_after_import(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _heavy(mods: set[str], names=HEAVY) -> list[str]:
    return sorted(m for m in mods if m.split(".")[0] in names)


def test_cpc_is_pure():
    mods = _modules_after_import(
        "import daemon.cpc, daemon.cpc.lm, daemon.cpc.suggestion\n"
        "import importlib, pkgutil\n"
        "for m in pkgutil.iter_modules(daemon.cpc.__path__): importlib.import_module('daemon.cpc.' + m.name)"
    )
    assert _heavy(mods) == []
    project = sorted(m for m in mods if m.startswith("daemon.") and not m.startswith("daemon.cpc"))
    assert project == [], f"daemon.cpc imports other project modules: {project}"


def test_cli_parser_is_light():
    """--help and argument parsing must not load the model runtime, Qt or pynput."""
    mods = _modules_after_import("from daemon.__main__ import build_parser; build_parser()")
    assert _heavy(mods) == []


@pytest.mark.parametrize("package", ["daemon"])
def test_daemon_never_imports_qt_or_ui(package):
    root = ROOT / package
    offenders = []
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")) and (
                " PyQt6" in stripped or stripped.startswith(("import ui", "from ui"))
            ):
                offenders.append(f"{path.relative_to(ROOT)}: {stripped}")
    assert offenders == []


def test_only_the_backend_imports_llama_cpp():
    offenders = []
    backend = ROOT / "daemon" / "backends" / "llamacpp"
    for path in (ROOT / "daemon").rglob("*.py"):
        if path in (backend / "llama.py", backend / "weights.py"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            s = line.strip()
            if s.startswith(("import llama_cpp", "from llama_cpp")):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def _import_lines(paths, modules: tuple[str, ...]) -> list[str]:
    """``import X`` / ``from X`` lines (anywhere, lazy ones included) naming one of ``modules``."""
    hits = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.strip().replace(",", " ").split()
            if len(words) >= 2 and words[0] in ("import", "from") and words[1].split(".")[0] in modules:
                hits.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    return hits


def test_only_the_keyboard_adapter_imports_pynput():
    adapter = ROOT / "daemon" / "frontends" / "overlay" / "keyboard.py"
    paths = [p for pkg in ("daemon", "ui") for p in (ROOT / pkg).rglob("*.py") if p != adapter]
    assert _import_lines(paths, ("pynput",)) == []


def test_os_bindings_stay_in_daemon_platform():
    """Xlib, D-Bus, pyobjc and comtypes (and ctypes' Windows DLLs) are used by
    ``daemon.frontends.overlay.platform``, the IBus engine (``daemon.frontends.ibus``, which speaks
    ibus-daemon's D-Bus protocol) and the accessibility bus both read (``daemon.frontends.atspi_bus``)
    only; the rest of the daemon sees their protocols."""
    platform = ROOT / "daemon" / "frontends" / "overlay" / "platform"
    ibus = ROOT / "daemon" / "frontends" / "ibus"
    shared = ROOT / "daemon" / "frontends" / "atspi_bus.py"
    paths = [p for p in (ROOT / "daemon").rglob("*.py")
             if platform not in p.parents and ibus not in p.parents and p != shared]
    bindings = ("Xlib", "jeepney", "objc", "AppKit", "Foundation", "Quartz", "ApplicationServices",
                "CoreFoundation", "comtypes")
    offenders = _import_lines(paths, bindings)
    offenders += [str(p.relative_to(ROOT)) for p in paths
                  if "windll" in p.read_text(encoding="utf-8") or "WinDLL" in p.read_text(encoding="utf-8")]
    assert offenders == []


BACKENDS = ("x11", "atspi", "macos", "windows")


@pytest.mark.parametrize("backend", BACKENDS)
def test_platform_backends_do_not_import_each_other(backend):
    """One package per backend under ``daemon/frontends/overlay/platform``; a backend may use the
    shared helpers beside ``base.py`` but never another backend's modules (the
    selector in ``daemon/frontends/overlay/platform/__init__.py`` composes them)."""
    package = ROOT / "daemon" / "frontends" / "overlay" / "platform" / backend
    assert (package / "__init__.py").is_file()
    others = tuple(f"daemon.frontends.overlay.platform.{b}" for b in BACKENDS if b != backend)
    offenders = []
    for path in package.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.strip().split()
            if len(words) >= 2 and words[0] in ("import", "from") and (
                words[1] in others or words[1].startswith(tuple(o + "." for o in others))
            ):
                offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert offenders == []


def test_platform_has_no_flat_backend_modules():
    """Backend modules live in their package, not as ``x11_*.py`` beside the protocols."""
    flat = sorted(p.name for p in (ROOT / "daemon" / "frontends" / "overlay" / "platform").glob("*.py")
                  if p.stem.split("_")[0] in BACKENDS)
    assert flat == []


def test_ibus_engine_and_platform_backends_are_independent():
    """The IBus engine is a frontend of its own beside the X11 one: it uses the
    shared controller, worker, config and the protocols beside ``base.py``,
    never a platform backend, and no backend uses it.  Only the D-Bus bindings
    (jeepney) of the two OS bindings it may use."""
    backends = tuple(f"daemon.frontends.overlay.platform.{b}" for b in BACKENDS)
    ibus = ROOT / "daemon" / "frontends" / "ibus"
    offenders = [hit for hit in _import_lines(ibus.rglob("*.py"), ("daemon",))
                 if any(b in hit for b in backends) or " ui" in hit]
    offenders += _import_lines(ibus.rglob("*.py"), ("Xlib", "pynput", "PyQt6", "gi"))
    for backend in BACKENDS:
        offenders += [hit for hit in _import_lines((ROOT / "daemon" / "frontends" / "overlay" / "platform" / backend).rglob("*.py"), ("daemon",))
                      if "daemon.frontends.ibus" in hit]
    assert offenders == []


def test_ibus_engine_process_stays_light():
    """``ghosttype ibus run`` needs neither Qt nor pynput nor Xlib: importing
    its composition root must not load them (the model loads on the worker)."""
    mods = _modules_after_import("import daemon.frontends.ibus.service, daemon.commands.ibus")
    assert _heavy(mods, ("PyQt6", "pynput", "Xlib", "ui", "llama_cpp")) == []


FRONTENDS = ("overlay", "ibus")


def _modules_named(path: pathlib.Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _imports_under(paths, prefixes: tuple[str, ...]) -> list[str]:
    """``import X`` / ``from X import`` lines (lazy ones included) whose module
    is one of ``prefixes`` or inside one."""
    hits = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.strip().replace(",", " ").split()
            if len(words) >= 2 and words[0] in ("import", "from") and any(
                    words[1] == p or words[1].startswith(p + ".") for p in prefixes):
                hits.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    return hits


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_frontends_are_peers(frontend):
    """Each frontend is a package under ``daemon/frontends``, with a composition
    root of its own, and never imports the other (what they share sits beside
    them in ``daemon/frontends/base.py`` and ``session.py``, or below them,
    as the controller's ports)."""
    package = ROOT / "daemon" / "frontends" / frontend
    assert (package / "__init__.py").is_file()
    others = tuple(f"daemon.frontends.{f}" for f in FRONTENDS if f != frontend)
    assert _imports_under(package.rglob("*.py"), others) == []


def test_the_shared_core_knows_no_frontend():
    """The controller, worker, decoder, backends and the rest of the daemon see
    a frontend only through the ports in ``daemon/controller/ports.py``; only
    the command line and ``doctor`` (which checks every frontend) name one."""
    frontends = ROOT / "daemon" / "frontends"
    composers = (ROOT / "daemon" / "commands", ROOT / "daemon" / "doctor.py")
    paths = [p for p in (ROOT / "daemon").rglob("*.py")
             if frontends not in p.parents and not any(c == p or c in p.parents for c in composers)]
    assert _imports_under(paths, tuple(f"daemon.frontends.{f}" for f in FRONTENDS)) == []


def test_backends_are_reached_only_through_the_composition():
    """The decoder talks to a model through ``daemon.cpc.lm.TokenLM``; the
    controller, the worker and the frontends never import a backend (the
    runtime builds it, the command line and the benchmarks load it)."""
    paths = [p for sub in ("controller", "frontends", "cpc", "capture") for p in (ROOT / "daemon" / sub).rglob("*.py")]
    paths.append(ROOT / "daemon" / "worker.py")
    assert _imports_under(paths, ("daemon.backends",)) == []


def test_controller_parts_stay_small():
    """The controller is split by job; no part grows back into one long class."""
    too_long = {_modules_named(p): n for p in (ROOT / "daemon" / "controller").glob("*.py")
                if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert too_long == {}


@functools.lru_cache(maxsize=1)
def _graph() -> dict[str, dict[str, int]]:
    return import_graph()


def _inside(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _upward_imports(sources: tuple[str, ...], targets: tuple[str, ...], exempt: tuple[str, ...] = ()) -> list[str]:
    """Imports (read with ``ast``: lazy, relative and ``from package import
    module`` ones included) from a module inside ``sources`` (and not inside
    ``exempt``) of one inside ``targets``, as ``path:line: a -> b``."""
    modules = project_modules()
    return sorted(f"{modules[a].relative_to(ROOT)}:{line}: {a} -> {b}"
                  for a, imported in _graph().items() if _inside(a, sources) and not _inside(a, exempt)
                  for b, line in imported.items() if _inside(b, targets))


def test_nothing_below_the_command_line_imports_a_command():
    """``daemon/commands/`` is the top: only the command line's entry point
    (``daemon/__main__.py``) and the commands themselves import a command;
    what a command shares with the benchmarks (opening a model, the usage
    error) sits below both."""
    assert _upward_imports(("daemon", "ui"), ("daemon.commands",), exempt=("daemon.commands", "daemon.__main__")) == []


CORE = ("daemon.controller", "daemon.cpc", "daemon.backends", "daemon.capture", "daemon.worker")
ABOVE_THE_CORE = ("daemon.frontends", "daemon.commands", "daemon.runtime", "daemon.lifecycle", "daemon.evaluation",
                  "daemon.doctor", "daemon.__main__", "ui")


@pytest.mark.parametrize("package", CORE)
def test_the_core_reaches_no_layer_above_it(package):
    """The controller, the decoder, the backends, the key capture and the
    worker know nothing of the frontends, the commands, the composition
    (``runtime``, ``lifecycle``) or the benchmarks.  The frontends implement
    the controller's ports and import them from it (``daemon/controller/ports.py``),
    never the other way round."""
    assert _upward_imports((package,), ABOVE_THE_CORE) == []


def test_the_benchmarks_use_no_command_or_frontend():
    """``daemon/evaluation`` drives the controller and the worker itself
    (a recording sink in place of a frontend); the commands call it, never
    the other way round."""
    assert _upward_imports(("daemon.evaluation",), ("daemon.commands", "daemon.frontends", "daemon.lifecycle",
                                                    "daemon.__main__", "ui")) == []


def test_the_composition_knows_no_frontend():
    """``runtime`` and ``lifecycle`` serve every frontend alike."""
    assert _upward_imports(("daemon.runtime", "daemon.lifecycle"), ("daemon.frontends", "daemon.commands",
                                                                    "daemon.evaluation", "ui")) == []


def test_shipped_code_never_imports_the_tests():
    """The research scripts under ``tests/research`` use the shipped code;
    nothing shipped uses them (the wheel does not carry ``tests``)."""
    paths = [p for pkg in ("daemon", "ui") for p in (ROOT / pkg).rglob("*.py")]
    assert _imports_under(paths, ("tests",)) == []


#: No module of ``daemon`` or ``ui`` is longer than this.
LONG_MODULE_LINES = 520
#: Modules allowed past it, each with its reason in its docstring.
LONG_MODULES: dict[str, str] = {}


@pytest.mark.parametrize("package", ["daemon", "ui"])
def test_modules_stay_readable(package):
    too_long = {_modules_named(p): n for p in (ROOT / package).rglob("*.py")
                if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONG_MODULE_LINES
                and _modules_named(p) not in LONG_MODULES}
    assert too_long == {}
