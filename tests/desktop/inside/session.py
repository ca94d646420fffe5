#!/usr/bin/python3
"""One desktop session of the desktop test tier, run inside the sid chroot as the test user, under
``dbus-run-session`` (see ../sid/desktop.sh): starts the desktop with ghosttype as the selected IBus
engine, runs each scenario (one application, real keys), and writes ``OUT/results.json`` (one object per
scenario: what was typed, what the engine logged, what the application holds, screenshot diffs) and the
screenshots ``OUT/<scenario>-<step>.png``. The host's pytest tests (test_sessions.py) judge
the results; this script only observes, records and cleans up what it started.

    session.py gnome|kde OUT SCENARIO...

GNOME: ``gnome-shell --headless`` (it starts ibus-daemon, which starts the engine from its component
file); keys through Mutter's RemoteDesktop D-Bus API; screenshots through org.gnome.Shell.Screenshot.
KDE: KWin nested in Xvfb (KWin's own screenshots are cancelled without a GPU), IBus as KWin's input
method the way Plasma sets it (kwinrc InputMethod = IBus's Wayland panel desktop file); keys through
KWin's org_kde_kwin_fake_input; screenshots of the Xvfb root. Runs with the chroot's /usr/bin/python3
(python3-gi, python3-pil, python3-pywayland).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Callable

from gi.repository import Gio, GLib
from PIL import Image, ImageChops

HERE = os.path.dirname(os.path.abspath(__file__))
GT_VENV = os.environ.get("GT_VENV", "/opt/ghosttype/.venv")
PHRASE = os.environ.get("PHRASE", "Vim is a highly configurable text edi")
#: The keyboard layout of a session (GT_LAYOUT, "gnome-de"): the system's layout, which `ghosttype ibus
#: install --system` gives the engine; keys are then typed as physical keys (evdev codes) of that layout.
LAYOUT = os.environ.get("GT_LAYOUT", "")
#: Typed on the German layout: ö ä ü ß where it puts them, and y/z swapped against US keyboards.
DE_PHRASE = os.environ.get("DE_PHRASE", "Schöne Grüße aus Zürich, wo der Käse gut ist. Die Yacht liegt am "
                                        "Bodensee, nahe der Grenze zu Bay")
#: What is typed into password fields: words the model completes with confidence in a plain field (its
#: suggestion there is "itor that allows users to"), so a suggestion that leaked into a password field would
#: be on screen when the field is judged from the screen.
SECRET = "Vim is a highly configurable text ed"
#: The user session (GT_USER): the default config, a key every 100 ms with no wait for the engine, Tab as
#: soon as the user has seen the suggestion.
USER = bool(os.environ.get("GT_USER"))
#: The packaged route (GT_PKG, the user sessions): desktop.sh installed ghosttype with `apt install`; the user
#: has layouts of their own (USER_SOURCES) and runs `ghosttype setup` before logging in (the README's steps).
PKG = bool(os.environ.get("GT_PKG"))
USER_SOURCES = "[('xkb', 'us'), ('xkb', 'de')]"
#: What `ghosttype setup` said and changed (PKG), for results["setup"].
SETUP_RECORD: dict = {}
#: The test user's password (desktop.sh sets it, and lets the user run sudo with it): typed at sudo's prompt
#: in a terminal after two wrong tries (SECRET, which the model completes where it may).
SUDO_PASSWORD = "Tq7 plain horse"
#: The lock sessions (GT_LOCK, "gnome-lock", "kde-lock"): GNOME Shell gets a lock screen (fake_gdm.py,
#: /run/systemd/seats), KWin its screen locker (no --no-lockscreen, fake_logind.py), and the user locks the
#: screen while a suggestion shows.
LOCK = bool(os.environ.get("GT_LOCK"))
#: Each key is held 30 ms; then this long until the next: a key every 120 ms, every 100 ms in the user session.
KEY_GAP_S = 0.07 if USER else 0.09
HOME = os.environ["HOME"]
RUNDIR = os.environ["XDG_RUNTIME_DIR"]
ENV = dict(os.environ, LANG="C.UTF-8", XDG_CONFIG_HOME=f"{HOME}/.config", XDG_STATE_HOME=f"{HOME}/.local/state",
           XDG_CACHE_HOME=f"{HOME}/.cache", XDG_DATA_HOME=f"{HOME}/.local/share", PATH="/usr/bin:/bin")
ELOG = f"{HOME}/.local/state/ghosttype/log/ghosttype.log"
PROCS: list[subprocess.Popen] = []
SYSBUS_PID = 0
T0 = time.monotonic()


def wall_ms() -> int:
    """Now, in epoch milliseconds: where an application's own protocol log (WAYLAND_DEBUG, stamped with the
    wall clock) is cut when judged (tests/desktop/wayland_log.py)."""
    return int(time.time() * 1000)


def note(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.2f}] {msg}", flush=True)


def spawn(cmd, log_path, env=None, **kw) -> subprocess.Popen:
    f = open(log_path, "ab")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env or ENV, start_new_session=True, **kw)
    PROCS.append(p)
    return p


def stop(p: subprocess.Popen) -> None:
    """Stop one process we started (its own process group: an app's helpers go with it), by PID."""
    if p.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 2)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


def wait_for(pred, timeout: float, step: float = 0.1):
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > end:
            return v
        time.sleep(step)


# ---- the engine's log ---------------------------------------------------------------------------------

SHOWN = re.compile(r"suggestion shown as (\w+) \((\d+) chars\)")
KEYLINE = "ProcessKeyEvent handled"
#: The engine's line for a suggestion KWin's effect would not draw (KWin's caret keys behind the application's).
STALE = "KWin's caret is behind the application's"
#: The cursor rectangle a client sent (the engine logs each at debug level; never any text).
CARET = re.compile(r"cursor location \((-?\d+), (-?\d+), (\d+), (\d+)\)")


#: The most lines :func:`elines` has read: the marks into the log are line counts, and must stay valid.
_ELINES_READ = 0


def elines() -> list[str]:
    """The engine's log, the files it rotated out first (ghosttype.log.3 .. .1, at 1 MB each: a long session
    writes more than one), so that a line count taken as a mark still points at the same line later."""
    global _ELINES_READ
    for attempt in range(3):  # read again when the engine rotated its files while they were read
        lines: list[str] = []
        for path in [f"{ELOG}.{n}" for n in (3, 2, 1)] + [ELOG]:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines += f.read().splitlines()
            except FileNotFoundError:
                pass
        if len(lines) >= _ELINES_READ:
            break
        time.sleep(0.2)
    if len(lines) < _ELINES_READ:  # the oldest file was dropped: every mark taken so far is off
        raise RuntimeError(f"the engine's log shrank from {_ELINES_READ} to {len(lines)} lines (rotated past its "
                           f"last kept file): marks into it no longer hold")
    _ELINES_READ = len(lines)
    return lines


def shown_after(mark: int) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for line in elines()[mark:] for m in [SHOWN.search(line)] if m]


def carets_after(mark: int) -> list[list[int]]:
    """The cursor rectangles (x, y, w, h) the focused client sent after ``mark``, in order."""
    return [[int(v) for v in m.groups()] for line in elines()[mark:] for m in [CARET.search(line)] if m]


def keys_after(mark: int) -> int:
    return sum(KEYLINE in line for line in elines()[mark:])


def settle(timeout: float = 10.0, quiet: float = 0.5) -> int:
    """Wait until the engine has handled no key for ``quiet`` s; returns the log's line count."""
    end = time.monotonic() + timeout
    n, since = keys_after(0), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        m = keys_after(0)
        if m != n:
            n, since = m, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return len(elines())


# ---- screenshots --------------------------------------------------------------------------------------

def _diff_mask(a: str, b: str, mask: tuple = ()):
    """Pixels that differ clearly (any channel by more than 40) between two screenshots, outside ``mask``
    (GNOME's clock, which ticks), as a 0/255 image; None when a screenshot is missing."""
    try:
        ia, ib = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    except OSError:
        return None
    if mask:
        for i in (ia, ib):
            i.paste((0, 0, 0), mask)
    return ImageChops.difference(ia, ib).convert("L").point(lambda v: 255 if v > 40 else 0)


def diff_pixels(a: str, b: str, mask: tuple = ()) -> tuple[int, list]:
    """How many pixels differ clearly between two screenshots, and their box."""
    d = _diff_mask(a, b, mask)
    if d is None:
        return -1, []
    return d.histogram()[255], list(d.getbbox() or [])


CELL = 16


def diff_regions(a: str, b: str, mask: tuple = (), cell: int = CELL) -> list[tuple[int, list]]:
    """The separate places where two screenshots differ, largest first: (pixels, box) of each group of
    changed ``cell`` x ``cell`` cells that touch (a popup, a line of ghost text, a typed character, a
    caret, a status bar's column number). ``cell``: CELL times the screen's scale, so that the words of
    one line stay one place on a HiDPI screen."""
    d = _diff_mask(a, b, mask)
    if d is None:
        return []
    cells = {}
    for y in range(0, d.height, cell):
        for x in range(0, d.width, cell):
            n = d.crop((x, y, x + cell, y + cell)).histogram()[255]
            if n:
                cells[(x // cell, y // cell)] = n
    regions, seen = [], set()
    for start in cells:
        if start in seen:
            continue
        seen.add(start)
        todo, group = [start], []
        while todo:
            c = todo.pop()
            group.append(c)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    n = (c[0] + dx, c[1] + dy)
                    if n in cells and n not in seen:
                        seen.add(n)
                        todo.append(n)
        x0, y0 = min(x for x, _ in group) * cell, min(y for _, y in group) * cell
        x1, y1 = (max(x for x, _ in group) + 1) * cell, (max(y for _, y in group) + 1) * cell
        bx0, by0, bx1, by1 = d.crop((x0, y0, x1, y1)).getbbox()
        regions.append((sum(cells[c] for c in group), [x0 + bx0, y0 + by0, x0 + bx1, y0 + by1]))
    return sorted(regions, key=lambda r: -r[0])


def _lum(px) -> int:
    r, g, b = px[:3]
    return (299 * r + 587 * g + 114 * b) // 1000


def _ink(img, mask, box) -> tuple[int, int]:
    """Within ``box``: the field's background (the median brightness of ``img`` there) and the contrast
    of the ink that changed (``mask``): the 90th percentile of |brightness - background| over those pixels."""
    crop, m = img.crop(box), mask.crop(box)
    lums = sorted(_lum(p) for p in crop.getdata())
    bg = lums[len(lums) // 2] if lums else 0
    ink = sorted(abs(_lum(p) - bg) for p, k in zip(crop.getdata(), m.getdata()) if k)
    return bg, (ink[int(len(ink) * 0.9)] if ink else 0)


#: A dark run this wide or narrower (in logical pixels) is an application's caret (kwrite's is 2 px, 4 on a
#: monitor at scale 2) that blinked on, not a box.
CARET_WIDTH_PX = 3


def _turned_dark(a, b, changed, scale: float = 1.0) -> int:
    """Pixels (of those ``changed``) that turned dark from ``a`` to ``b`` (brightness under 90 from 90 or
    more), counted where they form runs wider than a caret along their row: a box has wide edges or a dark
    fill; a text caret that blinked on between the two screenshots is a vertical bar (``scale``: screenshot
    pixels to a logical one)."""
    caret = math.ceil(CARET_WIDTH_PX * scale)
    w = a.size[0]
    flags = [bool(k) and _lum(pb) < 90 <= _lum(pa) for pa, pb, k in zip(a.getdata(), b.getdata(), changed.getdata())]
    dark = 0
    for row in range(0, len(flags), w):
        run = 0
        for f in flags[row:row + w] + [False]:
            if f:
                run += 1
            else:
                dark += run if run > caret else 0
                run = 0
    return dark


def one_line(regions: list[tuple[int, list]], cell: int = CELL) -> tuple[int, list] | None:
    """The largest region with the others on its line that follow or precede it within two cells: one text
    drawn apart at its word spaces (a fixed-width font's space and its letters' bearings leave 16 px and more,
    a whole empty cell, between "allows" and "users" at 20 px)."""
    if not regions:
        return None
    (n, box), rest = regions[0], list(regions[1:])
    grown = True
    while grown:
        grown = False
        for other in rest:
            m, (x0, y0, x1, y1) = other
            overlap = min(y1, box[3]) - max(y0, box[1])
            gap = max(x0 - box[2], box[0] - x1)
            if overlap >= min(y1 - y0, box[3] - box[1]) / 2 and gap <= 2 * cell:
                n, box = n + m, [min(x0, box[0]), min(y0, box[1]), max(x1, box[2]), max(y1, box[3])]
                rest.remove(other)
                grown = True
                break
    return n, box


def inline_pixels(esc: str, shown: str, tab: str, mask: tuple = (), cell: int = CELL,
                  line: tuple[int, int] | None = None, scale: float = 1.0) -> dict:
    """The suggestion drawn inline, against the text Tab inserted: ``esc`` is the field without the
    suggestion, ``shown`` the same field while it shows, ``tab`` the screen right after Tab. The largest
    place where each differs from ``esc`` (the suggestion; the inserted text: the largest on the caret's
    ``line`` (y0, y1 in the screenshot's pixels), where one is: a word processor's status bar counts the
    inserted words in more pixels than they take), the contrast of each one's ink to the field's background,
    and how many pixels turned dark (a popup's dark box: ``_turned_dark``, at the monitor's ``scale``) while
    the suggestion shows."""
    try:
        a, b, c = (Image.open(p).convert("RGB") for p in (esc, shown, tab))
    except OSError:
        return {}
    ghost = one_line(diff_regions(esc, shown, mask, cell), cell)
    changed = diff_regions(esc, tab, mask, cell)
    on_line = [r for r in changed if line and min(r[1][3], line[1]) > max(r[1][1], line[0])]
    typed = one_line(on_line or changed, cell)
    if ghost is None or typed is None:
        return {"ghost": ghost, "inserted": typed}
    m_shown, m_tab = _diff_mask(esc, shown, mask), _diff_mask(esc, tab, mask)
    bg, ghost_ink = _ink(b, m_shown, ghost[1])
    _bg, typed_ink = _ink(c, m_tab, typed[1])
    dark = _turned_dark(a, b, m_shown, scale)
    return {"ghost": ghost, "inserted": typed, "background": bg, "ghost_contrast": ghost_ink,
            "typed_contrast": typed_ink, "turned_dark": dark, "regions_shown": len(diff_regions(esc, shown, mask, cell))}


# ---- keyboard layouts ---------------------------------------------------------------------------------

EV_SHIFT = 42
BTN_LEFT = 0x110


def _german_keys() -> dict[str, tuple[int, bool]]:
    """Characters of the German (de) layout -> (evdev key code, Shift): the US positions of the letters,
    with Y and Z swapped, and the umlauts and sharp s on the keys right of them."""
    rows = {"qwertzuiop\u00fc": 16, "asdfghjkl\u00f6\u00e4": 30, "yxcvbnm": 44}
    keys: dict[str, tuple[int, bool]] = {}
    for row, first in rows.items():
        for i, ch in enumerate(row):
            keys[ch] = (first + i, False)
            keys[ch.upper()] = (first + i, True)
    keys.update({"\u00df": (12, False), "?": (12, True), " ": (57, False), ",": (51, False), ".": (52, False),
                 "!": (2, True)})
    return keys


LAYOUTS = {"de": _german_keys()}


# ---- desktops -----------------------------------------------------------------------------------------

class Gnome:
    name = "gnome"
    RD = "org.gnome.Mutter.RemoteDesktop"
    KEYSYMS = {"Tab": 0xFF09, "Return": 0xFF0D, "Escape": 0xFF1B, "BackSpace": 0xFF08, "ctrl": 0xFFE3}
    #: No pointer: the clicks Mutter's RemoteDesktop was sent by relative motion (from either corner) never
    #: reached the window in this headless session, and absolute motion needs a screen-cast stream (PipeWire).
    CLICKS = False
    #: The monitor's size in logical pixels; GT_SCALE: the scale Settings' Displays page would set (2: HiDPI,
    #: 1.5: fractional), so the virtual monitor has SCALE times as many pixels.
    LOGICAL = (1024, 600)
    SCALE = float(os.environ.get("GT_SCALE") or 1)
    SCREEN = (round(LOGICAL[0] * SCALE), round(LOGICAL[1] * SCALE))  # the virtual monitor, in pixels
    DISPLAY_CONFIG = ("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig",
                      "org.gnome.Mutter.DisplayConfig")

    def __init__(self, out: str):
        self.out = out
        self.log = f"{out}/gnome-shell.log"  #: the desktop's own log
        # the top bar's clock (IBus's popup may be drawn anywhere else, even up there)
        self.MASK = tuple(round(v * self.SCALE) for v in (380, 0, 644, 36))
        self.CELL = round(CELL * self.SCALE)
        self.monitors: list = []  #: what DisplayConfig says it applied: (connector, x, y, scale) per monitor
        self.app_env = dict(ENV, WAYLAND_DISPLAY="wayland-0", GDK_BACKEND="wayland", QT_QPA_PLATFORM="wayland",
                            XDG_SESSION_TYPE="wayland")
        if os.environ.get("GT_SCHEME") == "prefer-dark":  # no settings portal here: libadwaita and GTK 3 are told
            self.app_env.update(ADW_DEBUG_COLOR_SCHEME="prefer-dark", GTK_THEME="Adwaita:dark")

    def start(self) -> None:
        gs = [("org.gnome.desktop.input-sources", "sources", USER_SOURCES if PKG else "[('ibus', 'ghosttype')]"),
              ("org.gnome.desktop.interface", "enable-animations", "false"),
              ("org.gnome.desktop.interface", "cursor-blink", "false"),
              ("org.gnome.shell", "welcome-dialog-last-shown-version", "'999'")]
        if os.environ.get("GT_SCHEME"):  # GNOME's Appearance: "prefer-dark" turns GTK, Qt and browsers dark
            gs.append(("org.gnome.desktop.interface", "color-scheme", f"'{os.environ['GT_SCHEME']}'"))
        if os.environ.get("GT_EXT") == "off":  # the user switched ghosttype's extension off (Extensions app)
            gs.append(("org.gnome.shell", "disabled-extensions", "['ghosttype@ghosttype']"))
        if self.SCALE != int(self.SCALE):  # fractional scales, as Settings offers them once this is on
            gs.append(("org.gnome.mutter", "experimental-features", "['scale-monitor-framebuffer']"))
        for schema, key, val in gs:
            subprocess.run(["gsettings", "set", schema, key, val], env=ENV, check=False)
        if PKG:
            ghosttype_setup("GNOME")
        env = dict(ENV, XDG_SESSION_TYPE="wayland")
        monitor = "x".join(map(str, self.SCREEN))
        self.shell = spawn(["gnome-shell", "--wayland", "--no-x11", "--headless", "--virtual-monitor", monitor],
                           self.log, env=env)
        if not wait_for(lambda: os.path.exists(f"{RUNDIR}/wayland-0") or self.shell.poll() is not None, 60) \
                or self.shell.poll() is not None:
            raise SetupError("gnome-shell did not start: " + tail(self.log))
        note("gnome-shell up")
        ENV["WAYLAND_DISPLAY"] = "wayland-0"  # ibus finds its daemon's socket by the display's name
        eng = wait_for(lambda: ibus_engine() == "ghosttype", 40)
        if not eng and not os.environ.get("GT_NO_ENGINE"):
            raise SetupError(f"GNOME Shell did not select the IBus engine ghosttype (ibus engine: {ibus_engine()!r})")
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION)
        self._configure_monitors()
        self.session = None
        for attempt in range(100):
            try:
                path = self._rd("/org/gnome/Mutter/RemoteDesktop", self.RD, "CreateSession")[0]
                self._rd(path, self.RD + ".Session", "Start")
                self.session = path
                break
            except GLib.Error as e:
                err = e.message
                time.sleep(0.2)
        if not self.session:
            raise SetupError(f"Mutter RemoteDesktop: {err}")
        time.sleep(0.5)
        # own the name GNOME Shell 51 wants from screenshot callers
        self.bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                           GLib.Variant("(su)", ("org.gnome.SettingsDaemon.MediaKeys", 4)), None,
                           Gio.DBusCallFlags.NONE, 5000, None)
        self.key("Escape")  # the session starts in the overview
        time.sleep(0.5)
        self.started = time.monotonic()

    def _display_config(self, method: str, args=None):
        return self.bus.call_sync(*self.DISPLAY_CONFIG, method, args, None, Gio.DBusCallFlags.NONE, 10000,
                                  None).unpack()

    def _configure_monitors(self) -> None:
        """GT_SCALE, applied the way Settings' Displays page applies it (Mutter's DisplayConfig): the monitor at
        the scale it supports nearest SCALE. What was applied is read back into ``monitors``."""
        if self.SCALE == 1:
            return
        serial, monitors, _logical, _props = self._display_config("GetCurrentState")
        (connector, *_), modes, _mprops = monitors[0]
        mode = next((m for m in modes if m[6].get("is-current")), modes[0])
        scale = min(mode[5], key=lambda v: abs(v - self.SCALE))
        config = [(0, 0, scale, 0, True, [(connector, mode[0], {})])]
        self._display_config("ApplyMonitorsConfig",
                             GLib.Variant("(uua(iiduba(ssa{sv}))a{sv})", (serial, 1, config, {})))
        time.sleep(1.0)
        _serial, _monitors, logical, _props = self._display_config("GetCurrentState")
        self.monitors = [(mons[0][0], lx, ly, scale) for lx, ly, scale, _t, _p, mons, _pr in logical]
        note(f"monitors: {self.monitors}")

    def settle(self) -> None:
        """GNOME Shell opens its overview at start-up, animated, a few seconds in: an app started before
        that is over loses its first keys to it. Wait until 15 s after the start, then leave it again."""
        time.sleep(max(0.0, 15.0 - (time.monotonic() - self.started)))
        self.key("Escape")
        time.sleep(1.5)

    def _rd(self, path, iface, method, sig=None, args=None):
        return self.bus.call_sync(self.RD, path, iface, method, GLib.Variant(sig, args) if sig else None, None,
                                  Gio.DBusCallFlags.NONE, 10000, None).unpack()

    def _press(self, ks: int, down: bool) -> None:
        self._rd(self.session, self.RD + ".Session", "NotifyKeyboardKeysym", "(ub)", (ks, down))

    def _tap(self, ks: int) -> None:
        self._press(ks, True)
        time.sleep(0.03)
        self._press(ks, False)
        time.sleep(KEY_GAP_S)

    def type(self, text: str) -> None:
        for ch in text:
            c = ord(ch)
            self._tap(c if c < 0x100 else 0x1000000 + c)

    def key(self, name: str) -> None:
        *mods, k = name.split("+")
        for m in mods:
            self._press(self.KEYSYMS[m], True)
            time.sleep(0.05)
        self._tap(self.KEYSYMS.get(k) or ord(k))
        for m in reversed(mods):
            self._press(self.KEYSYMS[m], False)
            time.sleep(0.05)

    def type_physical(self, text: str, layout: dict[str, tuple[int, bool]]) -> None:
        """Type ``text`` as a person does on ``layout``: each character's physical key (evdev code),
        with Shift where the layout needs it; what arrives is whatever the active layout makes of it."""
        def press(code: int, down: bool) -> None:
            self._rd(self.session, self.RD + ".Session", "NotifyKeyboardKeycode", "(ub)", (code, down))

        for ch in text:
            code, shift = layout[ch]
            if shift:
                press(EV_SHIFT, True)
                time.sleep(0.03)
            press(code, True)
            time.sleep(0.03)
            press(code, False)
            if shift:
                time.sleep(0.03)
                press(EV_SHIFT, False)
            time.sleep(0.09)

    def shot(self, path: str) -> bool:
        for _ in range(15):
            try:
                ok, _used = self.bus.call_sync("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot",
                                               "org.gnome.Shell.Screenshot", "Screenshot",
                                               GLib.Variant("(bbs)", (False, False, path)), None,
                                               Gio.DBusCallFlags.NONE, 10000, None).unpack()
                if ok:
                    return True
            except GLib.Error as e:
                note(f"screenshot: {e.message}")
            time.sleep(0.3)
        return False

    def stop(self) -> None:
        try:
            self._rd(self.session, self.RD + ".Session", "Stop")
        except Exception:
            pass


class Kde:
    name = "kde"
    MASK = ()
    #: The output's size in logical pixels; GT_SCALE: the scale Plasma's Display Configuration would set (2:
    #: HiDPI), so KWin's output (its window in Xvfb) has SCALE times as many pixels
    LOGICAL = (1024, 600)
    SCALE = float(os.environ.get("GT_SCALE") or 1)
    SCREEN = (round(LOGICAL[0] * SCALE), round(LOGICAL[1] * SCALE))
    IMDESK = "/usr/share/applications/org.freedesktop.IBus.Panel.Wayland.Gtk3.desktop"
    EV = {c: k for k, c in enumerate("1234567890", 2)}
    EV.update({"-": 12, "=": 13, "[": 26, "]": 27, ";": 39, "'": 40, "`": 41, "\\": 43, ",": 51, ".": 52,
               "/": 53, " ": 57})
    for _row, _start in (("qwertyuiop", 16), ("asdfghjkl", 30), ("zxcvbnm", 44)):
        for _i, _c in enumerate(_row):
            EV[_c] = _start + _i
    SHIFTED = {"!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7", "*": "8", "(": "9",
               ")": "0", "_": "-", "+": "=", "{": "[", "}": "]", ":": ";", '"': "'", "~": "`", "|": "\\",
               "<": ",", ">": ".", "?": "/"}
    NAMED = {"Tab": 15, "Return": 28, "Escape": 1, "BackSpace": 14, "ctrl": 29, "shift": 42}
    CLICKS = True  #: org_kde_kwin_fake_input moves the pointer to absolute positions

    def __init__(self, out: str):
        self.out = out
        self.log = f"{out}/kwin.log"  #: the desktop's own log
        self.CELL = round(CELL * self.SCALE)
        self.monitors: list = []  #: what KWin announced (wl_output): (name, x, y, scale) per output
        self.app_env = dict(ENV, WAYLAND_DISPLAY="wayland-kde", QT_QPA_PLATFORM="wayland", GDK_BACKEND="wayland",
                            XDG_SESSION_TYPE="wayland", XCURSOR_SIZE="24")

    def start(self) -> None:
        cfg = ENV["XDG_CONFIG_HOME"]
        if PKG:  # the user's `ghosttype setup` chooses IBus as KWin's input method and the engine
            ghosttype_setup("KDE")
        else:
            with open(f"{cfg}/kwinrc", "w") as f:  # what Plasma's Virtual Keyboard page writes for "IBus Wayland"
                f.write(f"[Wayland]\nInputMethod={self.IMDESK}\nVirtualKeyboardEnabled=true\n")
        screen = "x".join(map(str, self.SCREEN))
        self.xvfb = spawn(["Xvfb", ":77", "-screen", "0", f"{screen}x24", "-nolisten", "tcp"], f"{self.out}/xvfb.log")
        if not wait_for(lambda: subprocess.run(["xdpyinfo", "-display", ":77"], capture_output=True).returncode == 0, 15):
            raise SetupError("Xvfb did not start: " + tail(f"{self.out}/xvfb.log"))
        # KWin's children (IBus, the apps) get this display; ibus finds its daemon's socket by it
        ENV["WAYLAND_DISPLAY"] = "wayland-kde"
        # a Plasma session says so (startplasma sets it), and KWin's children (IBus, the engine) see it
        ENV["XDG_CURRENT_DESKTOP"] = "KDE"
        env = dict(ENV, KWIN_WAYLAND_NO_PERMISSION_CHECKS="1")
        # the lock session keeps KWin's screen locker (kscreenlocker, unlocked through fake_logind.py)
        lock = [] if LOCK else ["--no-lockscreen"]
        self.kwin = spawn(["kwin_wayland", "--x11-display", ":77", *lock, "--socket", "wayland-kde",
                           "--width", str(self.SCREEN[0]), "--height", str(self.SCREEN[1])], self.log, env=env)
        if not wait_for(lambda: os.path.exists(f"{RUNDIR}/wayland-kde") or self.kwin.poll() is not None, 30) \
                or self.kwin.poll() is not None:
            raise SetupError("kwin_wayland did not start: " + tail(self.log))
        note("kwin up")
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION)  # KWin's names on the session bus (the lock scenario)
        if not wait_for(lambda: (ibus_address() or "(null)") != "(null)", 30):
            raise SetupError("KWin did not start IBus (its input method from kwinrc): no ibus address")
        # IBus's panel first switches to its own first engine (ui/gtk3/panel.vala, set_engine), which also gives its
        # candidate panel the language it draws every popup with; an `ibus engine` that cancels that switch ("Switch
        # engine to xkb:us::eng failed: Operation was cancelled" in KWin's log) leaves it none, and ibus-ui-gtk3
        # 1.5.35 then crashes on its first popup (candidatepanel.vala: attrs.change(m_language_attribute.copy()) on
        # null; "Input Method crashed ... CrashExit"), taking the engine with it: the panel's switch goes first
        if not wait_for(lambda: ibus_engine() != "", 15, 0.3):
            note("IBus's panel selected no engine of its own in 15 s")
        # Plasma lets the user pick the engine in IBus's own preferences; `ibus engine` does the same
        def selected():
            if ibus_engine() == "ghosttype":
                return True
            if not PKG:  # with `ghosttype setup` (PKG), IBus's panel must select it by itself
                subprocess.run(["ibus", "engine", "ghosttype"], env=ENV, capture_output=True, timeout=20)
            return False
        ok = wait_for(selected, 40, 0.5)
        if not ok and not os.environ.get("GT_NO_ENGINE"):
            raise SetupError(f"ibus could not select the engine ghosttype (ibus engine: {ibus_engine()!r})")
        if self.SCALE != 1:  # as Display Configuration applies it: KWin's output management, through kscreen
            r = subprocess.run(["kscreen-doctor", f"output.X11-0.scale.{self.SCALE:g}"], env=dict(self.app_env),
                               capture_output=True, text=True, timeout=60)
            note(f"kscreen-doctor: rc {r.returncode} {(r.stdout + r.stderr).strip()[-300:]}")
            time.sleep(1.0)
        gen = tempfile.mkdtemp(prefix="fake-input-")
        from pywayland.scanner import Protocol
        proto = Protocol.parse_file("/usr/share/plasma-wayland-protocols/fake-input.xml")
        proto.output(gen, {i.name: proto.name for i in proto.interface})
        sys.path.insert(0, gen)
        os.environ["WAYLAND_DISPLAY"] = "wayland-kde"
        from pywayland.client import Display
        from fake_input import OrgKdeKwinFakeInput
        from pywayland.protocol.wayland import WlOutput
        self.disp = Display()
        self.disp.connect()
        reg = self.disp.get_registry()
        found = {}

        outputs: dict = {}

        def on_global(registry, name, iface, version):
            if iface == "org_kde_kwin_fake_input":
                found["fi"] = registry.bind(name, OrgKdeKwinFakeInput, min(version, 5))
            elif iface == "wl_output":  # the outputs as KWin announces them to every client: where and what scale
                out = outputs.setdefault(name, {"name": str(name), "x": 0, "y": 0, "scale": 1})
                wl = registry.bind(name, WlOutput, min(version, 4))
                wl.dispatcher["geometry"] = lambda _o, x, y, *_rest: out.update(x=x, y=y)
                wl.dispatcher["scale"] = lambda _o, factor: out.update(scale=factor)
                if version >= 4:
                    wl.dispatcher["name"] = lambda _o, n: out.update(name=n)
                found.setdefault("outputs", []).append(wl)
        reg.dispatcher["global"] = on_global
        self.disp.roundtrip()
        self.disp.roundtrip()
        self.monitors = [(o["name"], o["x"], o["y"], float(o["scale"])) for o in outputs.values()]
        note(f"monitors: {self.monitors}")
        if "fi" not in found:
            raise SetupError("KWin did not offer org_kde_kwin_fake_input")
        self.fi = found["fi"]
        self.fi.authenticate("ghosttype-tests", "desktop test tier key injection")
        self.disp.roundtrip()
        self.park_pointer()

    def park_pointer(self) -> None:
        """The pointer to the screen's bottom-left corner, away from the windows (centred there): KWin draws
        it into the screenshots, and its shape changes with what it hovers."""
        self.fi.pointer_motion_absolute(1.0, 598.0)
        self.disp.roundtrip()

    def _code(self, code: int, shift: bool = False) -> None:
        """One key; with Shift held around it as a person holds it: pressed and released in moments of
        their own (KWin got Shift and the key in one batch before, and once, in kde-popup's first
        application, every letter after the second came out a capital)."""
        if shift:
            self.fi.keyboard_key(EV_SHIFT, 1)
            self.disp.roundtrip()
            time.sleep(0.03)
        self.fi.keyboard_key(code, 1)
        self.disp.flush()
        time.sleep(0.03)
        self.fi.keyboard_key(code, 0)
        if shift:
            self.disp.roundtrip()
            time.sleep(0.03)
            self.fi.keyboard_key(EV_SHIFT, 0)
        self.disp.roundtrip()
        time.sleep(KEY_GAP_S)

    def type(self, text: str) -> None:
        for ch in text:
            if ch in self.EV:
                self._code(self.EV[ch])
            elif ch.isupper() and ch.lower() in self.EV:
                self._code(self.EV[ch.lower()], shift=True)
            elif ch in self.SHIFTED:
                self._code(self.EV[self.SHIFTED[ch]], shift=True)
            else:
                raise ValueError(f"no key for {ch!r}")

    def key(self, name: str) -> None:
        *mods, k = name.split("+")
        for m in mods:
            self.fi.keyboard_key(self.NAMED[m], 1)
        self._code(self.NAMED.get(k) or self.EV[k])
        for m in reversed(mods):
            self.fi.keyboard_key(self.NAMED[m], 0)
        self.disp.roundtrip()

    def click(self, x: int, y: int) -> None:
        """A left click at (x, y); then the pointer goes back to its corner (left where it clicked, KWin drew it
        into the next application's screenshots, and its change between two of them was taken for a
        suggestion 168 px from the typed text)."""
        self.fi.pointer_motion_absolute(float(x), float(y))
        self.disp.roundtrip()
        time.sleep(0.2)
        for state in (1, 0):
            self.fi.button(BTN_LEFT, state)
            self.disp.roundtrip()
            time.sleep(0.05)
        self.park_pointer()

    def settle(self) -> None:
        pass

    def shot(self, path: str) -> bool:
        from PIL import ImageGrab
        try:
            ImageGrab.grab(xdisplay=":77").save(path)
            return True
        except OSError as e:
            note(f"screenshot: {e}")
            return False

    def stop(self) -> None:
        try:
            self.disp.disconnect()
        except Exception:
            pass


class SetupError(Exception):
    pass


def tail(path: str, n: int = 3) -> str:
    try:
        with open(path, errors="replace") as f:
            return " | ".join(line.strip() for line in f.read().splitlines()[-n:])
    except OSError:
        return "(no log)"


def ibus_engine() -> str:
    r = subprocess.run(["ibus", "engine"], env=ENV, capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def ibus_address() -> str:
    r = subprocess.run(["ibus", "address"], env=ENV, capture_output=True, text=True)
    return r.stdout.strip()


# ---- applications -------------------------------------------------------------------------------------

# name: readback ("file": the document the user saves with Ctrl+S; "draft": Thunderbird's draft, saved with
# Ctrl+S into its local Drafts folder)
APPS = {
    "gnome-text-editor": "file", "mousepad": "file", "kwrite": "file", "writer": "file", "thunderbird": "draft",
    "qt": "applog", "gtk3": "applog", "gtk4": "applog",
    "kgx": "term", "konsole": "term",
    "firefox": "page", "chromium": "page",
}


#: Firefox and Thunderbird (Gecko) on Wayland, their sandboxes off (the chroot has no user namespaces).
GECKO_ENV = {"MOZ_ENABLE_WAYLAND": "1", "MOZ_DISABLE_CONTENT_SANDBOX": "1", "MOZ_DISABLE_RDD_SANDBOX": "1",
             "MOZ_DISABLE_GMP_SANDBOX": "1", "MOZ_DISABLE_SOCKET_PROCESS_SANDBOX": "1",
             "MOZ_DISABLE_UTILITY_SANDBOX": "1"}


class App:
    def __init__(self, desk, scen: str, out: str):
        self.desk, self.scen, self.out = desk, scen, out
        self.password = scen.endswith("-pw")
        self.jump = scen.endswith("-jump")  #: the page moves the focus to its password input by itself
        self.sudo = scen.endswith("-sudo")  #: a shell in the terminal: sudo's password prompt
        self.foreign = scen.endswith("-foreign")  #: another program calls the plug-in while the suggestion shows
        self.lock = scen.endswith("-lock")  #: the user locks the screen while the suggestion shows
        #: "-off": the user turned ghosttype off in this application ("Off in <app>": the denylist); "-on": an
        #: application typed into right after, while that one is still off
        self.off, self.on = scen.endswith("-off"), scen.endswith("-on")
        #: the Qt window maximized ("-max"), too narrow for the whole suggestion ("-small"), or made narrower
        #: than the typed text by the application while the suggestion shows ("-shrink")
        self.window = next((w for w in ("max", "small", "shrink") if scen.endswith(f"-{w}")), "")
        self.app = scen[:-3] if self.password else scen[:-5] if self.jump or self.sudo else \
            scen[:-8] if self.foreign else scen[:-5] if self.lock else scen[:-4] if self.off else \
            scen[:-3] if self.on else \
            scen[: -len(self.window) - 1] if self.window else scen
        self.readback = APPS[self.app]
        #: the user saves with Ctrl+S before the text is read back (a document, Thunderbird's draft)
        self.saves = self.readback in ("file", "draft")
        self.work = tempfile.mkdtemp(prefix=f"{scen}-", dir=HOME)
        self.doc = f"{self.work}/doc.txt"
        self.log = f"{self.out}/{scen}-app.jsonl"
        open(self.doc, "w").close()
        open(self.log, "w").close()
        self.procs: list[subprocess.Popen] = []

    def launch(self) -> None:
        # WAYLAND_DEBUG: the application's own protocol log (its stderr, {scen}-app.err), the tier's evidence
        # from outside ghosttype of what the application told the compositor (tests/desktop/wayland_log.py)
        env = dict(self.desk.app_env, APP_LOG=self.log, FOCUS="password" if self.password else "normal",
                   WINDOW=self.window, WAYLAND_DEBUG="1")
        a, err = self.app, f"{self.out}/{self.scen}-app.err"
        py = "/usr/bin/python3"
        if a == "gnome-text-editor":
            cmd = ["gnome-text-editor", "--standalone", self.doc]
        elif a == "mousepad":
            cmd = ["mousepad", self.doc]
        elif a == "kwrite":
            cmd = ["kwrite", self.doc]
        elif a == "writer":  # LibreOffice Writer on the plain-text document (GTK 3 on GNOME, KF6 on Plasma)
            prof = f"{self.work}/lo"
            os.makedirs(f"{prof}/user")
            shutil.copyfile(f"{HERE}/writer-profile.xcu", f"{prof}/user/registrymodifications.xcu")
            # "Text (encoded)" with its options given: UTF-8 without the BOM 26.8 puts in a file that was empty
            cmd = ["libreoffice", f"-env:UserInstallation=file://{prof}", "--norestore", "--nologo",
                   "--infilter=Text (encoded):UTF8,LF,,,false", "--writer", self.doc]
        elif a == "thunderbird":  # a new message's body, the message addressed and titled (the focus is in the body)
            prof = f"{self.work}/tb"
            os.makedirs(prof)
            shutil.copyfile(f"{HERE}/thunderbird-user.js", f"{prof}/user.js")
            env.update(GECKO_ENV)
            cmd = ["thunderbird", "--no-remote", "--profile", prof, "-compose",
                   "to=someone@example.org,subject=Hello,format=text"]
        elif a == "qt":
            cmd = [py, f"{HERE}/fields_qt.py"]
        elif a in ("gtk3", "gtk4"):
            cmd = [py, f"{HERE}/fields_gtk.py"]
            env["GTKVER"] = a[-1]
        elif a == "kgx":
            cmd = ["kgx", "--", "bash", "--norc", "--noprofile"] if self.sudo else ["kgx", "--", "sh", "-c", f"cat > {self.doc}"]
        elif a == "konsole":
            shell = ["/bin/bash", "--norc", "--noprofile"] if self.sudo else ["/bin/sh", "-c", f"cat > {self.doc}"]
            cmd = ["konsole", "--separate", "--nofork", "-e", *shell]
        elif a in ("firefox", "chromium"):
            port = 8700 + (os.getpid() + len(self.scen)) % 200
            self.procs.append(spawn([py, f"{HERE}/page_server.py", str(port), self.log], f"{self.out}/{self.scen}-server.err"))
            url = f"http://127.0.0.1:{port}/" + ("?pw" if self.password else "?jump" if self.jump else "")
            time.sleep(0.5)
            if a == "chromium":
                cmd = ["chromium", "--ozone-platform=wayland", "--enable-wayland-ime", "--wayland-text-input-version=3",
                       "--no-sandbox", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
                       f"--user-data-dir={self.work}/chromium", f"--app={url}"]
            else:
                prof = f"{self.work}/ff"
                os.makedirs(prof)
                with open(f"{prof}/user.js", "w") as f:
                    for k, v in (("browser.aboutwelcome.enabled", "false"), ("datareporting.policy.dataSubmissionEnabled", "false"),
                                 ("browser.startup.homepage_override.mstone", '"ignore"'), ("browser.shell.checkDefaultBrowser", "false"),
                                 ("startup.homepage_welcome_url", '""'), ("browser.startup.page", "0")):
                        f.write(f'user_pref("{k}", {v});\n')
                env.update(GECKO_ENV)
                cmd = ["firefox", "--no-remote", "--new-instance", "--profile", prof, url]
        else:
            raise ValueError(a)
        self.mark_launch = len(elines())
        self.pre = f"{self.work}/pre-launch.png"
        self.desk.shot(self.pre)
        self.procs.append(spawn(cmd, err, env=env, cwd=self.work))

    def events(self) -> list[dict]:
        out = []
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        except OSError:
            pass
        return out

    def wait_ready(self) -> str:
        """Wait until the application's field has the keyboard focus, as far as can be seen."""
        main = self.procs[-1]
        if self.readback == "applog":
            ok = wait_for(lambda: any(e.get("event") == "active" for e in self.events()) or main.poll() is not None, 30)
            time.sleep(1.0)
            return "active" if ok and main.poll() is None else "app never active"
        if self.readback == "page":
            ok = wait_for(lambda: any(e.get("ev") == "ready" for e in self.events()) or main.poll() is not None, 60)
            # the page is loaded; its field has the engine's focus once the engine logs a focus-in
            if not USER:  # the default config logs no focus-in
                wait_for(lambda: any("focus in" in line for line in elines()[self.mark_launch:]), 15)
            time.sleep(2.0)
            return "page ready" if ok and main.poll() is None else "page never loaded"
        if self.app == "thunderbird":  # its main window first, then the compose window (its own Wayland log)
            wait_for(lambda: COMPOSE_TITLE in self.wayland_requests() or main.poll() is not None, 60)
        # real apps with no log of their own: the engine's first focus-in after the launch (which may also come
        # from the desktop's own entries, e.g. GNOME's overview search), then a window on screen that has
        # stopped changing (typing into a window still mapping loses the first keys)
        # (the default config of the user sessions logs no focus-in: the window on screen alone tells)
        ok = USER or wait_for(lambda: any("focus in" in line for line in elines()[self.mark_launch:])
                              or main.poll() is not None, 30)
        shown = self.wait_drawn()
        time.sleep(1.0)
        if not ok or main.poll() is not None:
            return "no focus-in from the app"
        return "engine focus-in, window drawn" if shown else "engine focus-in, window never settled on screen"

    def wait_drawn(self, timeout: float = 20.0) -> bool:
        """Until the screen differs clearly from before the launch and two screenshots 0.7 s apart agree
        (but for a blinking caret)."""
        a, b = f"{self.work}/settle-a.png", f"{self.work}/settle-b.png"
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            time.sleep(0.7)
            if not self.desk.shot(b):
                continue
            if diff_pixels(self.pre, b, self.desk.MASK)[0] > 2000 and last and diff_pixels(a, b, self.desk.MASK)[0] <= 300:
                return True
            os.replace(b, a)
            last = a
        return False

    def wayland_requests(self) -> str:
        """What the application's own Wayland log (WAYLAND_DEBUG, its stderr) holds so far."""
        try:
            with open(f"{self.out}/{self.scen}-app.err", encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def text(self, page_field: str = "") -> str:
        """What the application's field holds now (preedit excluded); on the page, ``page_field``
        ("t", "p") names the field where the focus may have moved."""
        if self.readback == "applog":
            field = "password" if self.password else "normal"
            ch = [e["text"] for e in self.events() if e.get("event") == "changed" and e.get("field") == field]
            return ch[-1] if ch else ""
        if self.readback == "page":
            st = sorted((e for e in self.events() if e.get("ev") == "state"
                         and (not page_field or e.get("field") == page_field)), key=lambda e: e.get("seq", 0))
            return st[-1]["value"] if st else ""
        if self.readback == "draft":
            return draft_body(f"{self.work}/tb/Mail/Local Folders/Drafts")
        with open(self.doc, encoding="utf-8", errors="replace") as f:
            return f.read()

    def page_focus(self) -> str:
        """The page's field that last got the focus."""
        foc = [e.get("field") for e in sorted(self.events(), key=lambda e: e.get("seq", 0)) if e.get("ev") == "focus"]
        return foc[-1] if foc else ""

    def focus_moved_on(self) -> bool:
        """After Tab in the password field: did the focus leave it (the app got the Tab)?"""
        ev = self.events()
        if self.readback == "applog":
            foc = [e.get("field") for e in ev if e.get("event") == "focus"]
            return bool(foc) and foc[-1] == "button"
        foc = [e.get("field") for e in sorted(ev, key=lambda e: e.get("seq", 0)) if e.get("ev") == "focus"]
        return bool(foc) and foc[-1] == "b"

    def preedits(self) -> list[str]:
        ev = self.events()
        if self.readback == "applog":
            return [e.get("text", e.get("preedit", "")) for e in ev if e.get("event") in ("preedit", "im")]
        if self.readback == "page":
            return [e.get("data") or "" for e in sorted(ev, key=lambda e: e.get("seq", 0)) if e.get("ev") == "compositionupdate"]
        return []

    def close(self) -> None:
        if self.readback == "page" and self.procs and self.procs[-1].poll() is None:
            # Mutter 51 passes a committed cursor rectangle on only when the focused surface next applies a
            # state, and a browser whose caret does not blink may paint no frame before it closes: the
            # rectangle's hook then stays for the rest of the session and no caret reaches IBus again
            # (tests/desktop/upstream.md). One frame more, with no visible change, before the window goes.
            with open(self.log + ".cmd", "w") as f:
                f.write("repaint")
            time.sleep(0.6)
        for p in reversed(self.procs):
            stop(p)


#: The compose window's title as Thunderbird sets it ("Write: <subject> - Thunderbird").
COMPOSE_TITLE = 'set_title("Write: Hello'


def draft_body(drafts: str) -> str:
    """The text of the last draft Thunderbird saved in the mbox ``drafts`` (an earlier copy of a draft saved
    again stays there, marked expunged: 0x0008 in X-Mozilla-Status), its plain text unwrapped where
    format=flowed broke a line (a space before the line break), without the line breaks after it."""
    import mailbox
    try:
        box = mailbox.mbox(drafts, create=False)
        msgs = [m for m in box if not int(m.get("X-Mozilla-Status", "0") or "0", 16) & 0x0008]
    except (OSError, mailbox.Error, ValueError):
        return ""
    if not msgs:
        return ""
    msg = msgs[-1]
    part = next((p for p in msg.walk() if p.get_content_type() == "text/plain"), msg)
    body = (part.get_payload(decode=True) or b"").decode(part.get_content_charset() or "utf-8", "replace")
    body = body.replace("\r\n", "\n")
    if part.get_param("format") == "flowed":
        body = re.sub(r"(?<=[^ ]) \n", " ", body)
    return body.rstrip("\n")  # the message's own line breaks after the text (Thunderbird ends it with two)


# ---- scenarios ----------------------------------------------------------------------------------------

def wait_ghost(mark: int, timeout: float = 20.0) -> tuple[str, int] | None:
    """The last suggestion the engine showed after ``mark``, once it has shown one and gone quiet."""
    got = wait_for(lambda: shown_after(mark), timeout)
    if not got:
        return None
    time.sleep(0.6)  # a later result may replace it
    return shown_after(mark)[-1]


def type_last(desk, text: str) -> tuple[int, tuple[str, int] | None]:
    """Type ``text``; the mark before its last key and the suggestion shown after that key."""
    if text == "\b":
        mark = settle()
        desk.key("BackSpace")
    else:
        if len(text) > 1:
            desk.type(text[:-1])
        mark = settle()
        desk.type(text[-1])
    wait_for(lambda: keys_after(mark) >= 2, 10)
    return mark, wait_ghost(mark)


def shooter(desk, app: App, res: dict) -> Callable[[str], str]:
    """``shot(step)``: a screenshot of the scenario's step, recorded in ``res["shots"]``; returns its path."""
    shots = res["shots"] = {}

    def shot(step: str) -> str:
        p = f"{desk.out}/{app.scen}-{step}.png"
        shots[step] = p if desk.shot(p) else None
        return p
    return shot


def scenario_normal(desk, app: App, res: dict) -> None:
    shot = shooter(desk, app, res)
    shot("0-app")
    start = len(elines())
    before_ed = PHRASE[:-1]
    # a: the phrase up to its last character; b: the last character (the suggestion's next char, if it begins
    # with it: then the engine advances the suggestion while the key goes through)
    m1, g1 = type_last(desk, before_ed)
    res["ghost_a"] = g1
    shot("1-typed")
    m2, g2 = type_last(desk, PHRASE[-1])
    res["ghost_b"] = g2
    time.sleep(0.3)
    s2 = shot("2-typed-through")
    res["preedit_b"] = (app.preedits() or [""])[-1]
    # c: Esc hides the suggestion
    mark = settle()
    desk.key("Escape")
    time.sleep(0.8)
    s3 = shot("3-esc")
    res["shown_after_esc"] = shown_after(mark)
    res["diff_typed_through"] = diff_pixels(s2, s3, desk.MASK)
    # d: BackSpace: a fresh suggestion from the model for the phrase minus its last char; Esc again
    m4, g4 = type_last(desk, "\b")
    res["ghost_d"] = g4
    time.sleep(0.3)
    s4 = shot("4-model")
    mark = settle()
    desk.key("Escape")
    time.sleep(0.8)
    s5 = shot("5-esc")
    res["diff_model"] = diff_pixels(s4, s5, desk.MASK)
    # where it was drawn: the largest place where 4-model and 5-esc differ (a caret blinking is smaller), with
    # the rest of its line;
    # where the caret is: 3-esc and 5-esc differ by the phrase's last character and the caret's move (and
    # whatever shows the caret's column, e.g. a status bar)
    res["suggestion_region"] = one_line(diff_regions(s4, s5, desk.MASK, desk.CELL), desk.CELL)
    res["caret_regions"] = diff_regions(s3, s5, desk.MASK, desk.CELL)
    # e: as a user does: BackSpace (a fresh suggestion from the model), then type along it (its
    # next two characters, the phrase's last two: the engine advances it), then Tab accepts it, then "!".
    # The field then holds what it held at 3-esc, so the two screenshots differ by the suggestion only.
    m6, g6 = type_last(desk, "\b")
    res["ghost_e0"] = g6
    m6, g6 = type_last(desk, PHRASE[-2:])
    res["ghost_e"] = g6
    time.sleep(0.3)
    s6 = shot("6-before-tab")
    res["diff_before_tab"] = diff_pixels(s3, s6, desk.MASK)
    mark_tab = settle()
    # where the window is (what changed on screen since before the launch)
    res["window_box"] = diff_pixels(app.pre, s3, desk.MASK)[1]
    # the cursor rectangles the application sent while typed into (the last one: where it said its caret is
    # when Tab was pressed): told apart from where its text then went, they show an application's late caret
    res["carets"] = carets_after(start)
    # how often KWin's effect refused to draw at a caret KWin had not updated (the popup showed it instead)
    res["stale_caret"] = sum(STALE in line for line in elines()[start:mark_tab])
    res["tab_wall_ms"] = wall_ms()
    desk.key("Tab")
    time.sleep(0.3)
    s7 = shot("7-tab")
    # the caret's line, where the application last said its caret is (as IBus passed it on), in pixels
    caret = res["carets"][-1] if res["carets"] else None
    line = (round(caret[1] * desk.SCALE), round((caret[1] + caret[3]) * desk.SCALE)) if caret and caret[3] > 0 else None
    res["inline"] = inline_pixels(s3, s6, s7, desk.MASK, desk.CELL, line, desk.SCALE)
    time.sleep(0.7)
    shot("7b-tab")  # a second look, a second after Tab: IBus's popup on a busy KWin redraws late
    res["accepting"] = [line.split("accepting", 1)[1].strip() for line in elines()[mark_tab:] if "accepting" in line]
    desk.type("!")
    time.sleep(0.8)
    res["typed"] = PHRASE
    res["after"] = "!"
    if app.readback == "page":
        settle()
        if app.preedits() and app.preedits()[-1]:
            desk.key("Escape")  # a suggestion shown inline is part of a page's value
        time.sleep(1.0)
    elif app.saves:
        desk.key("ctrl+s")
        time.sleep(2.0)
    elif app.readback == "term":
        desk.key("Return")
        time.sleep(1.5)
    res["text"] = app.text()
    shot("8-end")


def scenario_user(desk, app: App, res: dict) -> None:
    """ghosttype as installed (the default config) and typed into as people type: the phrase typed
    a key every 100 ms with no wait for the engine, a pause to read the suggestion, Tab at once, "!". The
    engine's default log names no suggestion, so what showed is read off the screen: where the screen
    changed when Tab replaced the suggestion with the text it inserted."""
    shot = shooter(desk, app, res)
    shot("0-app")
    res["typed"], res["after"] = PHRASE, "!"
    desk.type(PHRASE)
    time.sleep(USER_READS_S)
    s1 = shot("1-shown")
    res["tab_wall_ms"] = wall_ms()
    desk.key("Tab")
    time.sleep(0.4)
    s2 = shot("2-tab")
    # where Tab changed the screen: the suggestion became text (inline), or a popup went or changed
    changed = diff_regions(s1, s2, desk.MASK, desk.CELL)  # the text's line first: apart at its spaces
    line = one_line(changed, desk.CELL)
    res["suggestion_regions"] = ([line] if line else []) + [r for r in changed[:4] if r != line]
    desk.type("!")
    time.sleep(0.8)
    if app.readback == "page":
        time.sleep(1.0)
    elif app.saves:  # an editor: the user saves (the document or the draft is read back)
        desk.key("ctrl+s")
        time.sleep(2.0)
    res["text"] = app.text("t" if app.readback == "page" else "")
    shot("3-end")
    if app.app in CLICK_APPS and desk.CLICKS:
        click_away(desk, app, res, shot)
    else:
        see_and_dismiss(desk, app, res, shot)


def see_and_dismiss(desk, app: App, res: dict, shot: Callable[[str], str]) -> None:
    """More of the phrase typed at the user's pace, the pause to read the suggestion, then Esc, as a user who
    does not want it: where the screen changed at Esc (the suggestion) against where the typed text went, and
    whether anything showed again after Esc."""
    if app.saves:  # an editor or a message body: a new line (mousepad does not wrap: the line ran past its window)
        desk.key("Return")
        time.sleep(0.5)
    before = shot("4-before-more")
    res["typed_more"] = " Vim is a highly configurable text ed"  # words the model completes: a suggestion shows
    desk.type(res["typed_more"])
    time.sleep(USER_READS_S)
    shown = shot("5-more-shown")
    desk.key("Escape")
    time.sleep(0.8)
    esc = shot("6-more-esc")
    time.sleep(1.5)
    res["more_suggestion"] = one_line(diff_regions(shown, esc, desk.MASK, desk.CELL), desk.CELL)
    res["more_typed"] = diff_regions(before, esc, desk.MASK, desk.CELL)[:8]
    res["diff_more_later"] = diff_pixels(esc, shot("7-more-later"), desk.MASK)


#: The user session's applications in which the user clicks into another field (the tier's page, whose second
#: textarea Firefox shows); in the others the user dismisses the suggestion with Esc.
CLICK_APPS = ("firefox",)
#: Where the user clicks while a suggestion shows: inside the page's second textarea (#u), below the
#: button, on GNOME (a top bar) and on KWin alike.
CLICK_AT = (500, 450)


def click_away(desk, app: App, res: dict, shot: Callable[[str], str]) -> None:
    """A click into another field while a suggestion shows: more of the phrase typed, the pause, a click into
    the page's second textarea, then Esc (which would hide anything still shown) and Tab."""
    res["typed_more"] = " Vim is a highly configurable text ed"  # words the model completes: a suggestion shows
    desk.type(res["typed_more"])
    time.sleep(USER_READS_S)
    before = shot("4-before-click")
    desk.click(*CLICK_AT)
    time.sleep(1.0)
    clicked = shot("5-clicked")
    res["clicked_into"] = app.page_focus()
    res["click_regions"] = diff_regions(before, clicked, desk.MASK, desk.CELL)[:8]
    res["diff_click_esc"] = esc_diff(desk, clicked, clicked.replace("5-clicked", "6-click-esc"), res["shots"],
                                     "6-click-esc")
    desk.key("Tab")
    time.sleep(1.0)
    res["text_after_click"] = app.text("t")
    res["other_field"] = app.text("u")


#: How long the user of scenario_user looks at a suggestion before pressing Tab.
USER_READS_S = 1.5


def scenario_layout(desk, app: App, res: dict) -> None:
    """Physical keys of the session's layout: the phrase up to its last character, then that character,
    the suggestion, Tab, "!"; the field must hold exactly what that layout types, then the suggestion."""
    keys = LAYOUTS[LAYOUT]
    shots = res["shots"] = {}
    settle()
    desk.type_physical(DE_PHRASE[:-1], keys)
    mark = settle()
    desk.type_physical(DE_PHRASE[-1], keys)
    wait_for(lambda: keys_after(mark) >= 2, 10)
    res["ghost_e"] = wait_ghost(mark)
    time.sleep(0.3)
    p = f"{desk.out}/{app.scen}-1-typed.png"
    shots["1-typed"] = p if desk.shot(p) else None
    settle()
    desk.key("Tab")
    time.sleep(1.0)
    desk.type_physical("!", keys)
    time.sleep(0.8)
    res["typed"], res["after"] = DE_PHRASE, "!"
    if app.saves:
        desk.key("ctrl+s")
        time.sleep(2.0)
    res["text"] = app.text()
    p = f"{desk.out}/{app.scen}-2-end.png"
    shots["2-end"] = p if desk.shot(p) else None


def scenario_password(desk, app: App, res: dict) -> None:
    o = f"{desk.out}/{app.scen}"
    res["shots"] = {}
    p = f"{o}-0-empty.png"  # the field before the password: what the screen may still show after it
    res["shots"]["0-empty"] = p if desk.shot(p) else None
    res["window_box"] = diff_pixels(app.pre, p, desk.MASK)[1]
    mark = settle()
    desk.type(SECRET)
    settle()
    time.sleep(1.5)
    p = f"{o}-1-typed.png"
    res["shots"]["1-typed"] = p if desk.shot(p) else None
    res["shown"] = shown_after(mark)
    res["engine_keys"] = keys_after(mark)
    res["text_before_tab"] = app.text()
    # from the screen: Esc would hide a suggestion, so the screen must not change at Esc (nothing showed)
    res["diff_esc"] = esc_diff(desk, p, f"{o}-1-esc.png", res["shots"], "1-esc")
    desk.key("Tab")
    time.sleep(1.2)
    res["typed"] = SECRET
    res["text"] = app.text()
    res["focus_moved_on"] = app.focus_moved_on()
    p = f"{o}-2-tab.png"
    res["shots"]["2-tab"] = p if desk.shot(p) else None
    res["diff_tab_esc"] = esc_diff(desk, p, f"{o}-2-esc.png", res["shots"], "2-esc")


def scenario_sudo(desk, app: App, res: dict) -> None:
    """A password typed at sudo's prompt in a terminal, as people do: the command, then at "[sudo] password for
    ghosttest:" two wrong tries (SECRET: words the model completes) and the right one, each ended by Return.
    The screen is taken before and 1.5 s after each try: the prompt echoes nothing, so the two must be alike
    (a suggestion drawn from the password, or its characters, would change it). sudo's exit status, written to
    the document, tells whether the third try's keys all arrived, once and in order."""
    shot = shooter(desk, app, res)
    shot("0-app")
    desk.type(f"sudo -k; sudo true; echo rc=$? >{app.doc}")
    desk.key("Return")
    time.sleep(2.5)
    for i, pw in enumerate((SECRET, SECRET, SUDO_PASSWORD), 1):
        before = shot(f"{i}-prompt")
        desk.type(pw)
        time.sleep(1.5)
        res[f"diff_typed_{i}"] = diff_pixels(before, shot(f"{i}-typed"), desk.MASK)
        desk.key("Return")
        time.sleep(3.0)  # sudo waits about 2 s after a wrong password before it asks again
    res["typed"], res["after"] = SUDO_PASSWORD, ""
    res["text"] = app.text()
    shot("4-end")


#: The bus name, object and interface of ghosttype's GNOME Shell extension and KWin effect.
GHOST = ("org.freedesktop.IBus.GhostType.Shell", "/org/freedesktop/IBus/GhostType/Shell",
         "org.freedesktop.IBus.GhostType.Shell")
#: What another program of the user calls on the plug-in while a suggestion shows (it must be refused).
FOREIGN_CALLS = (("Hide", None), ("Show", ("(s)", ("PLANTED BY ANOTHER PROGRAM",))),
                 ("Offset", ("(biiid)", (True, 0, 0, 300, 0.0))), ("Register", None), ("Watch", None))


def foreign(bus, method: str, args) -> str:
    """Call the plug-in as another program of the user would: "ok", or the error's name."""
    try:
        bus.call_sync(GHOST[0], GHOST[1], GHOST[2], method, GLib.Variant(*args) if args else None, None,
                      Gio.DBusCallFlags.NONE, 5000, None)
        return "ok"
    except GLib.Error as e:
        return Gio.DBusError.get_remote_error(e) or e.message


def scenario_foreign(desk, app: App, res: dict) -> None:
    """Another program of the user calls the plug-in while the suggestion shows (Hide, Show with its own text,
    Offset, Register, KWin's Watch): each is refused, the screen does not change, and Tab still inserts the
    suggestion."""
    shot = shooter(desk, app, res)
    shot("0-app")
    _mark, res["ghost"] = type_last(desk, PHRASE)
    time.sleep(0.5)
    before = shot("1-shown")
    bus = Gio.DBusConnection.new_for_address_sync(  # a connection of its own: not the session script's
        Gio.dbus_address_get_for_bus_sync(Gio.BusType.SESSION, None),
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    res["foreign"] = {m: foreign(bus, m, a) for m, a in FOREIGN_CALLS}
    bus.close_sync(None)
    time.sleep(0.8)
    res["diff_foreign"] = diff_pixels(before, shot("2-after-foreign"), desk.MASK)
    res["tab_wall_ms"] = wall_ms()
    desk.key("Tab")
    time.sleep(0.7)
    desk.type("!")
    time.sleep(0.8)
    res["typed"], res["after"] = PHRASE, "!"
    if app.saves:
        desk.key("ctrl+s")
        time.sleep(2.0)
    res["text"] = app.text()
    shot("3-end")


def _config_path() -> str:
    """The test user's ghosttype config file (written at the session's start; the engine follows it)."""
    return f"{ENV['XDG_CONFIG_HOME']}/ghosttype/config.toml"


def scenario_off(desk, app: App, res: dict) -> None:
    """The user turned ghosttype off in this application ("Off in <app>": the denylist in the config, as the
    settings window writes it; the engine follows the file): the phrase typed as anywhere, nothing shows
    (Esc changes nothing on the screen) and Tab reaches the application. The application stays off for the
    next scenario ("-on"), which turns it on again."""
    shutil.copyfile(_config_path(), _config_path() + ".before-off")
    with open(_config_path(), "a") as f:
        f.write(f'denylist = ["{app.app}"]\n')
    time.sleep(2.0)  # the engine reads the changed file
    shot = shooter(desk, app, res)
    shot("0-app")
    settle()
    desk.type(PHRASE)
    settle()
    time.sleep(1.5)
    typed = shot("1-typed")
    res["diff_esc"] = esc_diff(desk, typed, f"{desk.out}/{app.scen}-1-esc.png", res["shots"], "1-esc")
    desk.key("Tab")
    time.sleep(1.0)
    res["typed"] = PHRASE
    if app.saves:
        desk.key("ctrl+s")
        time.sleep(2.0)
    res["text"] = app.text()


def scenario_on(desk, app: App, res: dict) -> None:
    """Right after "-off", with that application still off: the phrase typed here shows a suggestion (Esc
    takes it off the screen), and after a BackSpace Tab inserts the next one. Then the config is as before."""
    try:
        shot = shooter(desk, app, res)
        shot("0-app")
        _mark, res["ghost"] = type_last(desk, PHRASE)
        time.sleep(0.5)
        shown = shot("1-typed")
        res["diff_esc"] = esc_diff(desk, shown, f"{desk.out}/{app.scen}-1-esc.png", res["shots"], "1-esc")
        _mark, res["ghost_again"] = type_last(desk, "\b")  # a fresh suggestion, as after any BackSpace
        time.sleep(0.5)
        desk.key("Tab")
        time.sleep(1.0)
        res["typed"] = PHRASE[:-1]
        if app.readback == "page":
            time.sleep(1.0)
        res["text"] = app.text()
    finally:
        if os.path.exists(_config_path() + ".before-off"):
            os.replace(_config_path() + ".before-off", _config_path())


def scenario_shrink(desk, app: App, res: dict) -> None:
    """A suggestion shows; then the application makes its window narrower than the typed text (its field
    scrolls, the caret stands at the window's edge, no room is left for a suggestion there): the desktop takes
    the suggestion off the screen on its own, and Tab, pressed then, reaches the application as a Tab."""
    shot = shooter(desk, app, res)
    shot("0-app")
    _mark, res["ghost"] = type_last(desk, PHRASE)
    time.sleep(0.5)
    shown = shot("1-shown")
    os.kill(app.procs[-1].pid, signal.SIGUSR1)
    res["resized"] = bool(wait_for(lambda: any(e.get("event") == "resized" for e in app.events()), 5))
    time.sleep(1.0)
    res["diff_shrunk"] = diff_pixels(shown, shot("2-shrunk"), desk.MASK)
    desk.key("Tab")
    time.sleep(1.0)
    res["typed"] = PHRASE
    res["text"] = app.text()
    foc = [e.get("field") for e in app.events() if e.get("event") == "focus"]
    res["focus_after_tab"] = foc[-1] if foc else ""
    shot("3-tab")


#: Each desktop's lock screen on the session bus: GNOME Shell's (js/ui/shellDBus.js, ScreenSaverDBus), KWin's
#: (kscreenlocker's interface.cpp).
SCREENSAVER = {"gnome": ("org.gnome.Shell.ScreenShield", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver"),
               "kde": ("org.freedesktop.ScreenSaver", "/ScreenSaver", "org.freedesktop.ScreenSaver")}
#: The compositor's own name, which its plug-in's connection also owns.
COMPOSITOR = {"gnome": "org.gnome.Shell", "kde": "org.kde.KWin"}
#: fake_logind.py's session on the system bus, and its tier-only Unlock (logind's Unlock signal follows).
LOGIND_UNLOCK = ("org.freedesktop.login1", "/org/freedesktop/login1/session/ghosttype", "org.ghosttype.Tier.Logind")
BUS_DAEMON = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")


def name_owner(bus, name: str) -> str:
    try:
        return bus.call_sync(*BUS_DAEMON, "GetNameOwner", GLib.Variant("(s)", (name,)), None,
                             Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
    except GLib.Error:
        return ""


def screen_locked(desk) -> bool:
    """The desktop's lock screen is up (its screen saver's GetActive)."""
    return desk.bus.call_sync(*SCREENSAVER[desk.name], "GetActive", None, None, Gio.DBusCallFlags.NONE, 5000,
                              None).unpack()[0]


def unlock(desk) -> None:
    """Unlock as the session's manager would: GNOME Shell's SetActive(false); on KWin logind's Unlock signal
    (fake_logind.py), which stops kscreenlocker's greeter with no password asked."""
    if desk.name == "gnome":
        desk.bus.call_sync(*SCREENSAVER["gnome"], "SetActive", GLib.Variant("(b)", (False,)), None,
                           Gio.DBusCallFlags.NONE, 5000, None)
        return
    system = Gio.DBusConnection.new_for_address_sync(
        ENV["DBUS_SYSTEM_BUS_ADDRESS"],
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    try:
        system.call_sync(*LOGIND_UNLOCK, "Unlock", None, None, Gio.DBusCallFlags.NONE, 5000, None)
    finally:
        system.close_sync(None)


def scenario_lock(desk, app: App, res: dict) -> None:
    """A suggestion shows; another program of the user asks for the plug-in's name (and waits in the bus's
    queue for it); the user locks the screen, looks at it, unlocks it (:func:`unlock`), then types on: the
    name never left the compositor, the other program got nothing, the lock screen showed no suggestion, and
    after the unlock the suggestion is drawn at the caret again and Tab inserts it."""
    shot = shooter(desk, app, res)
    res["window_box"] = diff_pixels(app.pre, shot("0-app"), desk.MASK)[1]
    _mark, res["ghost"] = type_last(desk, PHRASE)
    time.sleep(0.5)
    shot("1-shown")
    squatter = Gio.DBusConnection.new_for_address_sync(  # another program: a connection of its own
        Gio.dbus_address_get_for_bus_sync(Gio.BusType.SESSION, None),
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    got: list[str] = []  # what reached it: NameAcquired (the name became its), any call or signal of another peer

    def spy(_conn, msg, incoming, _data):
        if incoming and msg.get_destination() == squatter.get_unique_name():
            if msg.get_sender() != BUS_DAEMON[0]:
                got.append(f"{msg.get_message_type().value_nick} {msg.get_member()} from {msg.get_sender()}")
            elif msg.get_member() == "NameAcquired" and msg.get_body().unpack()[0] == GHOST[0]:
                got.append("NameAcquired")
        return msg
    squatter.add_filter(spy, None)
    res["squatter_request"] = squatter.call_sync(*BUS_DAEMON, "RequestName", GLib.Variant("(su)", (GHOST[0], 0)),
                                                 None, Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
    res["shell_owner"] = name_owner(desk.bus, COMPOSITOR[desk.name])
    desk.bus.call_sync(*SCREENSAVER[desk.name], "Lock", None, None, Gio.DBusCallFlags.NONE, 20000, None)
    res["locked"] = bool(wait_for(lambda: screen_locked(desk), 10))
    time.sleep(2.0)
    res["owner_locked"] = name_owner(desk.bus, GHOST[0])
    shot("2-locked")
    unlock(desk)
    res["unlocked"] = bool(wait_for(lambda: not screen_locked(desk), 10))
    time.sleep(2.0)
    res["owner_unlocked"] = name_owner(desk.bus, GHOST[0])
    shot("3-unlocked")
    # typing on after the unlock: the phrase once more, on a line of its own (the engine takes a field's earlier
    # text only from keys typed since the focus came back; one line holds no second phrase and a suggestion), a
    # fresh suggestion, Tab, "!"
    desk.key("Return")
    _mark, res["ghost_after"] = type_last(desk, PHRASE)
    time.sleep(0.5)
    shot("4-before-tab")
    desk.key("Tab")
    time.sleep(0.7)
    desk.type("!")
    time.sleep(0.8)
    desk.key("ctrl+s")
    time.sleep(2.0)
    res["typed"], res["after"] = PHRASE + "\n" + PHRASE, "!"
    res["text"] = app.text()
    shot("5-end")
    time.sleep(0.5)
    res["squatter_got"] = list(got)
    squatter.close_sync(None)


def esc_diff(desk, shown: str, after: str, shots: dict, step: str) -> tuple[int, list]:
    """Esc, then how much of the screen it changed against ``shown``: a suggestion on screen (inline or
    a popup) would be hidden by it; a field showing nothing, or a button, does not change."""
    desk.key("Escape")
    time.sleep(0.8)
    shots[step] = after if desk.shot(after) else None
    return diff_pixels(shown, after, desk.MASK)


def scenario_jump(desk, app: App, res: dict) -> None:
    """A suggestion shows in the textarea; the page moves the focus to its password input by itself (no
    key), then the password is typed and Tab pressed."""
    o = f"{desk.out}/{app.scen}"
    shots = res["shots"] = {}
    res["typed"] = PHRASE
    _, res["ghost"] = type_last(desk, PHRASE)
    p = f"{o}-1-ghost.png"
    shots["1-ghost"] = p if desk.shot(p) else None
    res["window_box"] = diff_pixels(app.pre, p, desk.MASK)[1]
    res["tab_wall_ms"] = wall_ms()  # the suggestion stood at the textarea's caret by now (the page's log up to here)
    jumped = len(elines())
    with open(app.log + ".cmd", "w") as f:
        f.write("jump")
    res["jumped"] = bool(wait_for(lambda: app.page_focus() == "p", 10))
    settle()
    time.sleep(1.0)
    p = f"{o}-2-jumped.png"
    shots["2-jumped"] = p if desk.shot(p) else None
    desk.type(SECRET)
    settle()
    time.sleep(1.5)
    p = f"{o}-3-typed.png"
    shots["3-typed"] = p if desk.shot(p) else None
    res["shown"] = shown_after(jumped)
    res["text_before_tab"] = app.text("p")
    res["textarea"] = app.text("t")
    res["diff_esc"] = esc_diff(desk, p, f"{o}-3-esc.png", shots, "3-esc")
    desk.key("Tab")
    time.sleep(1.2)
    res["text"] = app.text("p")
    res["focus_moved_on"] = app.focus_moved_on()


def ghosttype_setup(current_desktop: str) -> None:
    """PKG: the user's `ghosttype setup`, in the session's D-Bus before the desktop starts (as after a login
    on that desktop; the desktop then starts as at the next login)."""
    env = dict(ENV, XDG_CURRENT_DESKTOP=current_desktop, XDG_SESSION_TYPE="wayland")
    r = subprocess.run(["ghosttype", "setup"], env=env, capture_output=True, text=True, timeout=180)
    SETUP_RECORD.update(rc=r.returncode, output=(r.stdout + r.stderr)[-3000:])
    if r.returncode != 0:
        raise SetupError(f"ghosttype setup exited {r.returncode}: {(r.stdout + r.stderr)[-600:]}")


def after_setup(desktop: str) -> dict:
    """PKG: the settings `ghosttype setup` left, read after the desktop started."""
    got = {}
    if desktop == "gnome":
        for key in ("sources", "mru-sources"):
            got[key] = subprocess.run(["gsettings", "get", "org.gnome.desktop.input-sources", key], env=ENV,
                                      capture_output=True, text=True).stdout.strip()
    else:
        kwinrc = f"{ENV['XDG_CONFIG_HOME']}/kwinrc"
        got["kwinrc"] = open(kwinrc).read() if os.path.exists(kwinrc) else ""
        got["preload-engines"] = subprocess.run(["gsettings", "get", "org.freedesktop.ibus.general", "preload-engines"],
                                                env=ENV, capture_output=True, text=True).stdout.strip()
    got["engine"] = ibus_engine()
    return got


def _engine_pids() -> list[int]:
    # "ghosttype ibus run --ibus" (the package's script) or "python -m daemon ibus run --ibus" (the README's venv)
    r = subprocess.run(["pgrep", "-u", str(os.getuid()), "-f", "ibus run --ibus"], capture_output=True, text=True)
    return sorted(int(p) for p in r.stdout.split())


def watch_carets(out: str) -> None:
    """A monitor of the carets the desktop passes to IBus, on IBus's own bus (IBus dispatches every call to a
    matching rule): the outside record of what the compositor told the input method (ibus_carets.py)."""
    spawn(["dbus-monitor", "--address", ibus_address(),
           "type='method_call',interface='org.freedesktop.IBus.InputContext',member='SetCursorLocation'",
           "type='method_call',interface='org.freedesktop.IBus.InputContext',member='SetCursorLocationRelative'"],
          f"{out}/ibus-carets.log")


#: Who selected IBus's engine: every SetGlobalEngine call on IBus's own bus (the caller's connection and the
#: engine's name) and IBus's GlobalEngineChanged signal, as a monitor of that bus printed them.
ENGINE_SWITCHES = "ibus-engines.log"


def watch_engine_switches(out: str) -> None:
    """A monitor of who switches IBus's engine (GNOME Shell falls back to ``xkb:us::eng`` when a switch it
    asked for fails; ``ibus engine`` and IBus's panel switch it too): the outside record that a lost input
    method's failure cites."""
    spawn(["dbus-monitor", "--address", ibus_address(),
           "type='method_call',interface='org.freedesktop.IBus',member='SetGlobalEngine'",
           "type='signal',interface='org.freedesktop.IBus',member='GlobalEngineChanged'"],
          f"{out}/{ENGINE_SWITCHES}")


def engine_switches(out: str, start: int) -> list[str]:
    """The switches the monitor printed after byte ``start`` of its log, one line each: the message's first
    line (its time, sender and member) and its string argument (the engine's name)."""
    try:
        with open(f"{out}/{ENGINE_SWITCHES}", errors="replace") as f:
            f.seek(start)
            lines = f.read().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        if line.startswith(("method call", "signal")):
            found.append(re.sub(r" serial=\d+| path=\S+;| interface=\S+;", "", line.strip())[:200])
        elif found and line.strip().startswith("string ") and "'" not in found[-1]:
            found[-1] += f" '{line.strip()[7:].strip(chr(34))}'"
    return found[-12:]


def choose_engine_again(out: str, lost: dict) -> None:
    """After the input method or the engine went (``lost``): ghosttype chosen again with `ibus engine` (what
    IBus's preferences do) until an engine process serves it, a new one ready for keys; a new ibus-daemon
    gets a new monitor of its carets."""
    mark = len(elines())

    def chosen() -> bool:
        if ibus_engine() == "ghosttype" and _engine_pids():
            return True
        subprocess.run(["ibus", "engine", "ghosttype"], env=ENV, capture_output=True, timeout=20)
        return False
    if not wait_for(chosen, 40, 0.5):
        note(f"ghosttype could not be chosen again: {input_method()}")
        return
    if _engine_pids() != lost["before"]["engine"]:
        wait_for(lambda: any("status: ready" in line for line in elines()[mark:]), 120)
    if input_method()["ibus_daemon"] != lost["before"]["ibus_daemon"]:
        watch_carets(out)
        watch_engine_switches(out)
    note(f"ghosttype chosen again: {input_method()}")


def input_method() -> dict:
    """Who serves the keys now: ibus-daemon's process, the engine's, and the engine IBus has selected."""
    r = subprocess.run(["pgrep", "-u", str(os.getuid()), "-x", "ibus-daemon"], capture_output=True, text=True)
    return {"ibus_daemon": sorted(int(p) for p in r.stdout.split()), "engine": _engine_pids(),
            "selected": ibus_engine()}


#: What a desktop's log says when its input method or the engine went (KWin restarts a crashed input method;
#: GNOME Shell logs IBus's "Set global engine failed" before it falls back to xkb:us::eng).
IM_TROUBLE = re.compile(r"crash|Input Method|ibus-daemon|SIGSEGV|SIGABRT|Traceback|global engine", re.I)


def input_method_lost(desk, before: dict, marks: dict, out: str) -> dict | None:
    """After a scenario: None when the same ibus-daemon and engine still serve the keys as before it; else
    what changed, and what the desktop's log, the engine's log (no text), its stacks at a crash and the monitor
    of engine switches on IBus's bus said meanwhile."""
    after = input_method()
    if after != before:  # `ibus engine` may fail once in a busy moment: read again before calling it lost
        time.sleep(1.0)
        after = input_method()
    if after == before:
        return None
    try:
        with open(desk.log, errors="replace") as f:
            desktop_lines = f.read().splitlines()[marks["desktop"]:]
    except OSError:
        desktop_lines = []
    return {"before": before, "after": after,
            "desktop_log": [line[:300] for line in desktop_lines if IM_TROUBLE.search(line)][-12:],
            "engine_log": [line[:300] for line in elines()[marks["engine"]:]
                           if " ERROR " in line or " CRITICAL " in line or "Traceback" in line][-12:],
            "engine_crash": stacks_since(marks["stacks"]),
            "engine_switches": engine_switches(out, marks["switches"])}


#: Where the engine writes every thread's stack when it dies of a fatal signal or is sent SIGUSR1 (names and
#: lines of code, no value).
STACKS = os.path.join(os.path.dirname(ELOG), "stacks.txt")


def stacks_size() -> int:
    """How many bytes the engine has written to stacks.txt so far."""
    return os.path.getsize(STACKS) if os.path.exists(STACKS) else 0


def stacks_since(start: int) -> str:
    """What the engine wrote to stacks.txt after byte ``start`` (its end: the dump's last thread, the one that
    failed, comes first)."""
    try:
        with open(STACKS, errors="replace") as f:
            f.seek(start)
            return f.read()[:6000]
    except OSError:
        return ""


def engine_stacks() -> str:
    """Every thread's stack in each running engine (SIGUSR1): what an engine that stops answering is doing."""
    start = stacks_size()
    for pid in _engine_pids():
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            pass
    time.sleep(1.0)
    return stacks_since(start) or "(none written)"


def log_marks(desk, out: str) -> dict:
    """Where the desktop's log, the engine's log (line counts), the engine's stacks.txt and the monitor of
    engine switches (bytes) stand now."""
    try:
        with open(desk.log, errors="replace") as f:
            desktop = len(f.read().splitlines())
    except OSError:
        desktop = 0
    try:
        switches = os.path.getsize(f"{out}/{ENGINE_SWITCHES}")
    except OSError:
        switches = 0
    return {"desktop": desktop, "engine": len(elines()),
            "stacks": stacks_size(), "switches": switches}


def upgrade_while_running(desktop: str) -> dict:
    """PKG, before the scenarios: the packages installed again over themselves while the engine runs (the
    user's sudo; dpkg runs the maintainer scripts' upgrade path: prerm upgrade, postinst configure). The
    user's config and input settings must stay as they were, the running engine keep running, and the
    scenarios that follow judge the grey text and Tab after it."""
    config = _config_path()
    with open(config, "a") as f:  # a setting of the user's own, which the upgrade must leave alone
        f.write("# the user's own line, kept across upgrades\n")
    config_before = open(config, "rb").read()
    before, pids_before = after_setup(desktop), _engine_pids()
    r = subprocess.run(["sudo", "-S", "-k", "sh", "-c",
                        "DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall /root/debs/*.deb"],
                       input=SUDO_PASSWORD + "\n", env=ENV, capture_output=True, text=True, timeout=600)
    time.sleep(2.0)
    after = after_setup(desktop)
    engines = subprocess.run(["ibus", "list-engine"], env=ENV, capture_output=True, text=True).stdout
    return {"rc": r.returncode, "output": (r.stdout + r.stderr)[-1500:],
            "config_kept": open(config, "rb").read() == config_before,
            "engine_pids_before": pids_before, "engine_pids_after": _engine_pids(),
            "listed": re.search(r"^\s*ghosttype\b", engines, re.M) is not None,
            "settings_before": before, "settings_after": after}


def purge_while_running(desk, desktop: str) -> dict:
    """PKG, after the scenarios: the administrator removes the packages while the session runs (the user's
    sudo, with their password). ibus-daemon and the desktop must keep running and the user's input settings
    stay as they were."""
    before = after_setup(desktop)
    r = subprocess.run(["sudo", "-S", "-k", "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "purge", "-y",
                        "ghosttype", "ghosttype-kwin"], input=SUDO_PASSWORD + "\n", env=ENV, capture_output=True,
                       text=True, timeout=300)
    time.sleep(2.0)
    after = after_setup(desktop)
    compositor = getattr(desk, "shell", None) or getattr(desk, "kwin", None)
    return {"rc": r.returncode, "output": (r.stdout + r.stderr)[-1500:],
            "ibus_daemon": subprocess.run(["pgrep", "-u", str(os.getuid()), "-x", "ibus-daemon"],
                                          capture_output=True).returncode == 0,
            "desktop": compositor is not None and compositor.poll() is None,
            "settings_before": {k: v for k, v in before.items() if k != "engine"},
            "settings_after": {k: v for k, v in after.items() if k != "engine"}}


def run_scenario(desk, scen: str, out: str) -> dict:
    """One scenario, start to end; its record. ``input_method_lost`` in it: the input method changed under it
    (the engine is chosen again afterwards, so the next scenario tests it)."""
    t = time.monotonic()
    res: dict = {"app": scen}
    app = App(desk, scen, out)
    im_before, marks = input_method(), log_marks(desk, out)
    try:
        app.launch()
        res["ready"] = app.wait_ready()
        note(f"{scen}: {res['ready']}")
        if res["ready"].startswith("no focus-in") and app.procs[-1].poll() is None:
            res["engine_stacks"] = engine_stacks()  # the application runs; the engine told of no focus
        if app.password:
            scenario_password(desk, app, res)
        elif app.jump:
            scenario_jump(desk, app, res)
        elif app.sudo:
            scenario_sudo(desk, app, res)
        elif app.foreign:
            scenario_foreign(desk, app, res)
        elif app.lock:
            scenario_lock(desk, app, res)
        elif app.window == "shrink":
            scenario_shrink(desk, app, res)
        elif app.off:
            scenario_off(desk, app, res)
        elif app.on:
            scenario_on(desk, app, res)
        elif LAYOUT:
            scenario_layout(desk, app, res)
        elif USER:
            scenario_user(desk, app, res)
        else:
            scenario_normal(desk, app, res)
    except Exception:
        res["error"] = traceback.format_exc()[-1500:]
    finally:
        app.close()
        if not os.environ.get("GT_NO_ENGINE") and (lost := input_method_lost(desk, im_before, marks, out)):
            if lost["after"]["engine"]:
                lost["engine_stacks"] = engine_stacks()
            res["input_method_lost"] = lost
            note(f"{scen}: the input method changed under it: {lost['before']} -> {lost['after']}")
            choose_engine_again(out, lost)
        res["seconds"] = round(time.monotonic() - t, 1)
        note(f"{scen}: done in {res['seconds']} s: {res.get('text')!r}")
    return res


def main() -> int:
    desktop, out, scenarios = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    # "plugin": ghosttype's GNOME Shell extension or KWin effect draws (not where the user switched it off or
    # did not install it: IBus's popup)
    results: dict = {"desktop": desktop, "phrase": DE_PHRASE if LAYOUT else PHRASE, "layout": LAYOUT,
                     "plugin": os.environ.get("GT_EXT") != "off", "scenarios": {}, "setup": None}

    def save():
        with open(f"{out}/results.json", "w") as f:
            json.dump(results, f, indent=1)

    os.makedirs(f"{ENV['XDG_CONFIG_HOME']}/ghosttype", exist_ok=True)
    for d in ("gtk-3.0", "gtk-4.0"):
        os.makedirs(f"{ENV['XDG_CONFIG_HOME']}/{d}", exist_ok=True)
        with open(f"{ENV['XDG_CONFIG_HOME']}/{d}/settings.ini", "w") as f:
            f.write("[Settings]\ngtk-cursor-blink=false\n")
    with open(_config_path(), "w") as f:
        # GT_USER: ghosttype as installed (the default config, no log of shown suggestions): the user
        # scenario reads everything from the screen and the application
        if not USER:
            f.write('debounce_ms = 5\nthreads = 1\nmax_tokens = 6\nlog_level = "debug"\n')
            # the terminals' scenarios (kgx, konsole typing into `cat`) test the suggestion there: VTE reports
            # no text, so by default (auto) its keys never reach the model (the user sessions keep the default
            # and type a password at sudo's prompt)
            f.write('ibus_terminals = "suggest"\n')
        if os.environ.get("GT_DISPLAY"):
            f.write(f'ibus_display = "{os.environ["GT_DISPLAY"]}"\n')
    # a private, empty "system" bus: GNOME Shell and KWin only need one to exist
    sysbus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                            capture_output=True, text=True, env=ENV).stdout.split()
    ENV["DBUS_SYSTEM_BUS_ADDRESS"] = sysbus[0]
    global SYSBUS_PID
    SYSBUS_PID = int(sysbus[1])
    desk = (Gnome if desktop == "gnome" else Kde)(out)
    # GT_BUSY: that many processes keep the CPUs busy while the desktop starts the engine (a user's
    # machine at login); GNOME holds the keyboard at most 4 s for a selected engine to appear
    busy = [spawn([sys.executable, "-c", "while True: pass"], os.devnull) for _ in range(int(os.environ.get("GT_BUSY") or 0))]
    t_start = time.monotonic()
    try:
        if LOCK:  # GNOME Shell builds its lock screen only where GDM answers on the system bus (fake_gdm.py);
            # KWin's locker follows logind's session (fake_logind.py), which the tier unlocks through
            fake = "fake_gdm" if desktop == "gnome" else "fake_logind"
            stand_in = spawn([sys.executable, f"{HERE}/{fake}.py"], f"{out}/{fake}.log")
            if not wait_for(lambda: "ready" in tail(f"{out}/{fake}.log") or stand_in.poll() is not None, 10) \
                    or stand_in.poll() is not None:
                raise SetupError(f"{fake}.py did not start: " + tail(f"{out}/{fake}.log"))
        desk.start()
        if os.environ.get("GT_NO_ENGINE"):  # debugging the tier itself: desktop, apps and keys without the engine
            pass
        elif not wait_for(lambda: any("status: ready" in line for line in elines()), 120):
            raise SetupError("the engine never logged 'status: ready': " + (elines() or ["no engine log"])[-1])
        for p in busy:
            stop(p)
        results["setup"] = {"ok": True, "seconds": round(time.monotonic() - t_start, 1), "busy": len(busy),
                            "monitors": getattr(desk, "monitors", []),
                            "engine_start": next((line for line in elines() if "engine running" in line), ""),
                            "registered": next((line for line in elines() if "registered with ibus-daemon" in line), "")}
        if PKG:
            results["setup"]["ghosttype setup"] = dict(SETUP_RECORD, after=after_setup(desktop))
            results["upgraded_while_running"] = upgrade_while_running(desktop)
        desk.settle()
        watch_carets(out)
        watch_engine_switches(out)
        note(f"{desktop} and engine ready")
    except Exception as e:
        results["setup"] = {"ok": False, "error": f"{type(e).__name__}: {e}", "seconds": round(time.monotonic() - t_start, 1),
                            "ghosttype setup": SETUP_RECORD}
        save()
        note(f"setup failed: {e}")
        return 1
    save()
    for scen in scenarios:
        res = run_scenario(desk, scen, out)
        results["scenarios"][scen] = res
        lost = res.get("input_method_lost")
        if lost and lost["after"]["ibus_daemon"] != lost["before"]["ibus_daemon"]:
            # the desktop's input method itself went (KWin restarts a crashed one): the scenario once more, now
            # the engine is chosen again; its first run's files kept as lost-*, its record as "first_run"
            for name in os.listdir(out):
                if re.match(rf"{re.escape(scen)}-(app|server|\d)", name):
                    os.replace(f"{out}/{name}", f"{out}/lost-{name}")
            res = run_scenario(desk, scen, out)
            res["first_run"] = lost
            results["scenarios"][scen] = res
        save()
        time.sleep(1.0)
    if PKG:
        results["purged_while_running"] = purge_while_running(desk, desktop)
        save()
    desk.stop()
    results["engine_log_lines"] = len(elines())
    save()
    return 0


if __name__ == "__main__":
    rc = 1
    try:
        rc = main()
    finally:
        for p in reversed(PROCS):
            stop(p)
        if SYSBUS_PID:
            try:
                os.kill(SYSBUS_PID, signal.SIGTERM)
            except ProcessLookupError:
                pass
    sys.exit(rc)
