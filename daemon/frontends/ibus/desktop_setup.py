"""What ``ghosttype setup`` changes for the user on GNOME and on KDE Plasma,
once the engine is installed for the system (the Debian package, or ``sudo
ghosttype ibus install --system``): ghosttype becomes an input source beside
the user's keyboard layouts and the one selected at the next login.  No root,
nothing typed; each change is a :class:`~daemon.setup_changes.Change` the
command records so ``--undo`` takes back exactly it.

GNOME (``org.gnome.desktop.input-sources``):

* ``sources`` gets ``('ibus', 'ghosttype')`` appended, the user's layouts
  kept.  An empty list means "the system's layouts": gnome-settings-daemon
  fills an empty ``sources`` from localed's X11Layout at login
  (plugins/keyboard/gsd-keyboard-manager.c at b38441bc,
  ``maybe_create_initial_settings``, 322-323) and GNOME Shell falls back to
  ``us`` (js/ui/status/keyboard.js at 8f782086, 620).  With ghosttype listed
  neither happens, so the system's layout is added first and stays selectable.
* ``mru-sources`` gets ghosttype first, then the rest in their order.  GNOME
  Shell (js/ui/status/keyboard.js at 8f782086) chooses the source at login
  from it: once IBus is ready it empties its list (``_ibusReadyCallback``,
  403), fills it back from ``mru-sources``, keeping the sources listed in
  ``sources`` (``_updateMruSources``, 542-561), orders by it only when that
  names more than one (564), and activates the first (657).  It writes the key
  only when the user switches sources (``activateInputSource``, 526), so the
  value holds until the next login in a running session too.
* ``org.gnome.shell enabled-extensions`` gets ``ghosttype@ghosttype`` unless
  the user switched the extension off (what :func:`shell_extension.enable_for_user`
  does, as a recorded change here).

KDE Plasma (Wayland):

* kwinrc ``[Wayland] InputMethod``: IBus's Wayland panel, as System Settings ›
  Keyboard › Virtual Keyboard writes it (the desktop file's path), through
  kreadconfig6/kwriteconfig6 (5 on Plasma 5) when installed, else by editing
  the file itself.
* ``org.freedesktop.ibus.general preload-engines`` gets ghosttype appended and
  ``engines-order`` gets it first.  IBus's panel (ui/gtk3/panel.vala at
  81ac95ed) starts with ``update_engines(preload-engines, engines-order)``
  (``load_settings``, 1099): the preloaded engines named in ``engines-order``
  come first in its order, then the other preloaded ones (1401-1410), and it
  switches to the first (1446-1448).  An empty ``preload-engines`` it fills
  itself with the xkb engines of the system's layouts (``init_engines_order``,
  711), but not once ghosttype is in it, so the system layout's xkb engine
  (as IBus's simple.xml names it; ``xkb:us::eng``, IBus's own fallback, 1397,
  where it has none) is added first there.  The panel rewrites
  ``engines-order`` when the user switches engines (``state_changed``, 2141).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
from typing import Any, Mapping, Optional, Sequence

from daemon.atomic_write import replace_text
from daemon.frontends.ibus import component
from daemon.frontends.ibus.inline import kwin_effect, shell_extension
from daemon.setup_changes import Change, SetupError, add_entries, canonical, replace_value

ENGINE = component.ENGINE_NAME
IBUS_SOURCE = ["ibus", ENGINE]
SOURCES = "org.gnome.desktop.input-sources sources"
MRU_SOURCES = "org.gnome.desktop.input-sources mru-sources"
EXTENSIONS = "org.gnome.shell enabled-extensions"
USER_EXTENSIONS_OFF = "org.gnome.shell disable-user-extensions"
PRELOAD_ENGINES = "org.freedesktop.ibus.general preload-engines"
ENGINES_ORDER = "org.freedesktop.ibus.general engines-order"
INPUT_METHOD = "Wayland/InputMethod"
#: The virtual keyboard's on/off, which KWin keeps beside InputMethod: it activates the input method only while
#: it is on (kwin src/inputmethod.cpp, ``InputMethod::setActive``), so where the user's kwinrc says false,
#: setup turns it on (recorded, as every change).
VIRTUAL_KEYBOARD = "Wayland/VirtualKeyboardEnabled"
#: IBus's Wayland panel (ibus: ui/gtk3/meson.build installs ibus-ui-wayland.desktop under this name).
IBUS_WAYLAND_DESKTOP = "org.freedesktop.IBus.Panel.Wayland.Gtk3.desktop"
#: The xkb engines IBus ships, with their layouts.
IBUS_SIMPLE_XML = pathlib.Path("/usr/share/ibus/component/simple.xml")
#: IBus's own fallback engine (panel.vala, ``update_engines``).
IBUS_DEFAULT_ENGINE = "xkb:us::eng"
#: (reader, writer) pairs, Plasma 6's first.
KCONFIG_TOOLS = (("kreadconfig6", "kwriteconfig6"), ("kreadconfig5", "kwriteconfig5"))


def desktop_of(env: Mapping[str, str]) -> Optional[str]:
    """``GNOME``, ``KDE`` or None, from ``XDG_CURRENT_DESKTOP``."""
    names = env.get("XDG_CURRENT_DESKTOP", "").upper().split(":")
    return next((d for d in ("GNOME", "KDE") if d in names), None)


def engine_component(env: Mapping[str, str]) -> Optional[pathlib.Path]:
    """The engine's component file, system's first (None: not installed)."""
    for path in (component.SYSTEM_COMPONENT_DIR / component.COMPONENT_FILE,
                 component.user_component_dir(env) / component.COMPONENT_FILE):
        if path.is_file():
            return path
    return None


# --------------------------------------------------------------------------- GSettings


def parse_gvariant(text: str) -> Any:
    """What ``gsettings get`` prints, for the types setup reads (as, a(ss), b), as JSON values."""
    import ast

    text = re.sub(r"^@\S+\s+", "", text.strip())  # "@a(ss) []"
    if text in ("true", "false"):
        return text == "true"
    try:
        return canonical(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        raise SetupError(f"cannot read the value {text!r}") from None


def gvariant_text(value: Any, depth: int = 0) -> str:
    """A JSON value as GVariant text: lists of strings (as), lists of pairs (a(ss))."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value, ensure_ascii=False)  # GVariant reads "..." with these escapes
    inner = ", ".join(gvariant_text(v, depth + 1) for v in value)
    return f"[{inner}]" if depth == 0 else f"({inner})"


def _as_tuples(value: Any, depth: int = 0) -> Any:
    if isinstance(value, list):
        items = [_as_tuples(v, depth + 1) for v in value]
        return items if depth == 0 else tuple(items)
    return value


class GSettings:
    """The user's settings through the ``gsettings`` tool (whatever backend the session uses)."""

    name = "gsettings"

    def __init__(self, env: Mapping[str, str]):
        self.env = dict(env)
        self.exe = shutil.which("gsettings", path=self.env.get("PATH"))
        self._defaults: dict[str, Any] = {}

    def _run(self, args: Sequence[str], env: Optional[Mapping[str, str]] = None) -> str:
        if self.exe is None:
            raise SetupError("gsettings is not installed (Debian/Ubuntu: sudo apt install libglib2.0-bin)", 2)
        try:
            out = subprocess.run([self.exe, *args], capture_output=True, text=True, timeout=20,
                                 env=dict(env or self.env), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SetupError(f"gsettings {' '.join(args)}: {exc}") from None
        if out.returncode != 0:
            why = next((line.strip() for line in out.stderr.splitlines() if line.strip()),
                       f"exit status {out.returncode}")
            raise SetupError(f"gsettings {' '.join(args[:3])}: {why}")
        return out.stdout.strip()

    def get(self, key: str) -> Any:
        return parse_gvariant(self._run(["get", *key.split(" ", 1)]))

    def default(self, key: str) -> Any:
        """The schema's default (with the distribution's overrides): what the key reads when not set."""
        if key not in self._defaults:
            self._defaults[key] = parse_gvariant(self._run(["get", *key.split(" ", 1)],
                                                           {**self.env, "GSETTINGS_BACKEND": "memory"}))
        return self._defaults[key]

    def put(self, key: str, value: Any) -> None:
        """Set ``value``; the default (or None) resets the key, so a key the user never set is unset again."""
        if value is None or canonical(value) == self.default(key):
            self._run(["reset", *key.split(" ", 1)])
        else:
            self._run(["set", *key.split(" ", 1), gvariant_text(canonical(value))])

    def label(self, key: str) -> str:
        return key

    def show(self, value: Any) -> str:
        return repr(_as_tuples(value))


# --------------------------------------------------------------------------- kwinrc


def _kconfig_unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), value)


def _kconfig_escape(value: str) -> str:
    value = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return "\\s" + value[1:] if value.startswith(" ") else value


_GROUP = re.compile(r"^\s*\[(.*)\]\s*$")


class KWinRc:
    """KWin's settings file, ``$XDG_CONFIG_HOME/kwinrc``: through kreadconfig/kwriteconfig
    when installed (KConfig itself), else edited in place, every other group, key,
    comment and blank line kept as it was."""

    name = "kwinrc"
    _NOT_SET = "ghosttype-setup:not-set"

    def __init__(self, env: Mapping[str, str], tools: Optional[Sequence[tuple[str, str]]] = None):
        self.env = dict(env)
        home = pathlib.Path(env.get("HOME") or os.path.expanduser("~"))
        self.path = pathlib.Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "kwinrc"
        found = [(shutil.which(r, path=env.get("PATH")), shutil.which(w, path=env.get("PATH")))
                 for r, w in (KCONFIG_TOOLS if tools is None else tools)]
        self.tools = next(((r, w) for r, w in found if r and w), None)

    def label(self, key: str) -> str:
        group, name = key.split("/", 1)
        return f"{self.path} [{group}] {name}"

    def show(self, value: Any) -> str:
        return "(not set)" if value is None else str(value)

    def _tool(self, argv: list[str]) -> str:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=20, env=self.env,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SetupError(f"{pathlib.Path(argv[0]).name}: {exc}") from None
        if out.returncode != 0:
            raise SetupError(f"{pathlib.Path(argv[0]).name} failed: {out.stderr.strip() or out.returncode}")
        return out.stdout

    def get(self, key: str) -> Optional[str]:
        group, name = key.split("/", 1)
        if self.tools:
            value = self._tool([self.tools[0], "--file", "kwinrc", "--group", group, "--key", name,
                                "--default", self._NOT_SET]).rstrip("\n")
            return None if value == self._NOT_SET else value
        lines = self._lines()
        found = self._key_lines(lines, group, name)
        return _kconfig_unescape(lines[found[-1]].split("=", 1)[1].strip()) if found else None  # the last one counts

    def put(self, key: str, value: Optional[str]) -> None:
        group, name = key.split("/", 1)
        if self.tools:
            argv = [self.tools[1], "--file", "kwinrc", "--group", group, "--key", name]
            self._tool(argv + (["--delete", ""] if value is None else [value]))
            if self.get(key) != value:
                raise SetupError(f"{self.label(key)} did not take the value {self.show(value)} (is it locked?)")
            return
        self._edit(group, name, value)

    # the file itself
    def _lines(self) -> list[str]:
        try:
            return self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise SetupError(f"cannot read {self.path}: {exc}") from None

    @staticmethod
    def _blocks(lines: list[str], group: str) -> list[tuple[int, int]]:
        """(header, end) of each block of ``group``: its header line and the line after its last."""
        heads = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _GROUP.match(line))]
        ends = [i for i, _ in heads[1:]] + [len(lines)]
        return [(i, end) for (i, g), end in zip(heads, ends) if g == group]

    def _key_lines(self, lines: list[str], group: str, name: str) -> list[int]:
        pattern = re.compile(rf"^\s*{re.escape(name)}\s*(\[\$[^\]]*\])*\s*=")  # InputMethod, InputMethod[$e]
        return [i for start, end in self._blocks(lines, group) for i in range(start + 1, end)
                if pattern.match(lines[i])]

    def _edit(self, group: str, name: str, value: Optional[str]) -> None:
        lines = self._lines()
        found = self._key_lines(lines, group, name)
        if value is not None:
            flags = re.match(rf"^\s*{re.escape(name)}\s*((?:\[\$[^\]]*\])*)", lines[found[0]]).group(1) if found else ""
            line = f"{name}{flags}={_kconfig_escape(value)}"
            if found:
                lines[found[0]] = line
                lines = [x for i, x in enumerate(lines) if i not in found[1:]]
            elif self._blocks(lines, group):
                start, end = self._blocks(lines, group)[0]
                last = max([i for i in range(start, end) if lines[i].strip()])
                lines.insert(last + 1, line)
            else:
                lines += ([""] if lines and lines[-1].strip() else []) + [f"[{group}]", line]
        else:
            lines = [x for i, x in enumerate(lines) if i not in found]
            for start, end in reversed(self._blocks(lines, group)):
                if not any(x.strip() for x in lines[start + 1:end]):  # a group left empty goes, as KConfig drops it
                    del lines[start:end]
                    if start == len(lines):  # it ended the file: so does the group before it now
                        while lines and not lines[-1].strip():
                            lines.pop()
        if not lines and not self.path.exists():
            return
        try:
            if lines:
                replace_text(self.path, "\n".join(lines) + "\n")
            else:
                self.path.unlink()
        except OSError as exc:
            raise SetupError(f"cannot write {self.path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- what to change


@dataclasses.dataclass
class Plan:
    desktop: str
    changes: list[Change] = dataclasses.field(default_factory=list)
    #: what setup left as it is, and why
    notes: list[str] = dataclasses.field(default_factory=list)
    #: what the user still does
    left: list[str] = dataclasses.field(default_factory=list)

    def add(self, change: Optional[Change]) -> None:
        if change is not None:
            self.changes.append(change)


def _system_layout() -> tuple[str, str]:
    layout, variant = component.keyboard_layout(True)
    return ("us", "") if layout == "default" else (layout, variant)  # GNOME's and IBus's fallback, as theirs


def plan_gnome(gs: GSettings, env: Mapping[str, str]) -> Plan:
    plan = Plan("GNOME")
    sources = gs.get(SOURCES)
    entries = [IBUS_SOURCE]
    if not sources:
        layout, variant = _system_layout()
        entries.insert(0, ["xkb", f"{layout}+{variant}" if variant else layout])
    plan.add(add_entries(gs, SOURCES, sources, entries))
    mru = gs.get(MRU_SOURCES)
    rest = [s for s in mru if s != IBUS_SOURCE]
    rest += [s for s in sources + entries if s not in rest and s != IBUS_SOURCE]
    plan.add(replace_value(gs, MRU_SOURCES, mru, [IBUS_SOURCE] + rest))  # ghosttype, then the others as they were
    state = shell_extension.user_state(env)
    uuid = shell_extension.UUID
    if not shell_extension.installed(env):
        plan.notes.append(f"the GNOME Shell extension {uuid} is not installed: suggestions show in IBus's popup "
                          "(the ghosttype package and `ghosttype ibus install` install it)")
    elif state == "off":
        plan.add(add_entries(gs, EXTENSIONS, gs.get(EXTENSIONS), [uuid]))
        if gs.get(USER_EXTENSIONS_OFF) is True:
            plan.notes.append("GNOME's extensions are switched off (Extensions app): turn them on for grey text "
                              "at the caret")
    elif state == "disabled":
        plan.notes.append(f"left the GNOME Shell extension {uuid} off, as you switched it "
                          f"(gnome-extensions enable {uuid} turns it on)")
    elif state is None:
        plan.notes.append(f"GNOME Shell's settings cannot be read here: the extension {uuid} is left as it is")
    plan.left = ["log out and in once: ghosttype is then your input source, drawing suggestions at the caret",
                 "Super+Space switches between ghosttype and your keyboard layouts"]
    return plan


def ibus_wayland_panel(env: Mapping[str, str]) -> Optional[pathlib.Path]:
    """IBus's Wayland panel's desktop file, where the XDG data directories have it."""
    home = pathlib.Path(env.get("HOME") or os.path.expanduser("~"))
    dirs = [env.get("XDG_DATA_HOME") or str(home / ".local" / "share")]
    dirs += (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    return next((p for d in dirs if d and (p := pathlib.Path(d) / "applications" / IBUS_WAYLAND_DESKTOP).is_file()),
                None)


def xkb_engine(layout: str, variant: str, simple_xml: Optional[pathlib.Path] = None) -> str:
    """IBus's xkb engine for ``layout`` (``xkb:de::ger``), from IBus's simple.xml."""
    try:
        text = (simple_xml or IBUS_SIMPLE_XML).read_text(encoding="utf-8")
    except OSError:
        return IBUS_DEFAULT_ENGINE
    for block in re.findall(r"<engine>(.*?)</engine>", text, re.S):
        fields = dict(re.findall(r"<(name|layout|layout_variant)>([^<]*)</\1>", block))
        if fields.get("name", "").startswith("xkb:") and fields.get("layout") == layout \
                and fields.get("layout_variant", "") == variant:
            return fields["name"]
    return IBUS_DEFAULT_ENGINE


def plan_kde(gs: GSettings, kwinrc: KWinRc, env: Mapping[str, str]) -> Plan:
    plan = Plan("KDE")
    panel = ibus_wayland_panel(env)
    if panel is None:
        raise SetupError(f"IBus's Wayland panel ({IBUS_WAYLAND_DESKTOP}) is not installed: install IBus "
                         "(Debian/Ubuntu: sudo apt install ibus) and run ghosttype setup again; nothing was changed", 2)
    chosen = kwinrc.get(INPUT_METHOD)
    if not (chosen and pathlib.Path(chosen).name == IBUS_WAYLAND_DESKTOP and pathlib.Path(chosen).is_file()):
        plan.add(replace_value(kwinrc, INPUT_METHOD, chosen, str(panel)))
    enabled = kwinrc.get(VIRTUAL_KEYBOARD)
    if enabled is not None and enabled.strip().lower() != "true":
        plan.add(replace_value(kwinrc, VIRTUAL_KEYBOARD, enabled, "true"))
    preload = gs.get(PRELOAD_ENGINES)
    entries = [ENGINE] if preload else [xkb_engine(*_system_layout()), ENGINE]
    plan.add(add_entries(gs, PRELOAD_ENGINES, preload, entries))
    order = gs.get(ENGINES_ORDER)
    plan.add(replace_value(gs, ENGINES_ORDER, order, [ENGINE] + [e for e in order if e != ENGINE]))
    if not kwin_effect.installed(env):
        plan.notes.append("ghosttype's KWin effect is not installed: suggestions show in IBus's popup "
                          "(the ghosttype package or `ghosttype kde install` installs it)")
    plan.left = ["log out and in once: KWin then starts IBus Wayland with ghosttype selected",
                 "IBus's tray icon switches between ghosttype and your other engines"]
    return plan
