"""``ghosttype setup``: make ghosttype work for you on this desktop, after the
ghosttype package (or ``sudo ghosttype ibus install --system``) installed it
for the system.  No root; run it once in your desktop session.

    ghosttype setup             make the changes, say each (old -> new) and what is left to do
    ghosttype setup --dry-run   say what it would change, change nothing
    ghosttype setup --undo      take back what setup changed (a setting you changed since stays)

* GNOME: ghosttype becomes an input source beside your keyboard layouts
  (org.gnome.desktop.input-sources), the one selected from your next login,
  and its GNOME Shell extension is enabled unless you switched it off.
* KDE Plasma (Wayland): IBus Wayland becomes KWin's input method (kwinrc) and
  ghosttype the engine IBus selects at login.
* Other desktops' X11 sessions: ghosttype starts at login (``ghosttype
  autostart enable``), as the X11 overlay.

Another desktop changes nothing (exit status 2), and so does GNOME or Plasma
without the engine installed.  What setup changed is recorded in the user's
state directory (``setup.json``) for ``--undo``.  A second run changes only
what is not set up yet.  Exit status: 0 done (or nothing to change), 1 a
setting could not be written (what was changed stays recorded), 2 nothing
could be done here.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Mapping, Optional

PROG = "ghosttype setup"
SUPPORTED = ("GNOME (Wayland or X11), KDE Plasma (Wayland), and the X11 session of any other desktop "
             "(ghosttype starts at login there)")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("setup", help="make ghosttype your input method on this desktop (--undo takes it back)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--undo", action="store_true", help="take back what ghosttype setup changed")
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    p.set_defaults(func=run)
    return p


class AutostartEntry:
    """``ghosttype autostart`` as a setup store: the method whose entry starts ghosttype at login, or None."""

    name = "autostart"

    def __init__(self):
        from daemon import autostart

        self.autostart = autostart
        self.ctx = autostart.Context.current()

    def get(self, key: str) -> Optional[str]:
        return next((s.method for s in self.autostart.status(self.ctx) if s.installed and s.active), None)

    def put(self, key: str, value: Optional[str]) -> None:
        from daemon.setup_changes import SetupError

        try:
            if value is None:
                self.autostart.disable(self.ctx)
            else:
                self.autostart.enable(self.ctx, value)
        except self.autostart.AutostartError as exc:
            raise SetupError(f"ghosttype autostart: {exc}", exc.code) from None

    def choose(self) -> str:
        return self.autostart.choose_method(self.ctx, None)

    def label(self, key: str) -> str:
        return "start at login (ghosttype autostart)"

    def show(self, value: Any) -> str:
        return "not installed" if value is None else f"{value} ({self.ctx.path(value)})"


class Stores(dict):
    """The stores a record names, made when first asked for."""

    def __init__(self, env: Mapping[str, str]):
        super().__init__()
        self.env = env

    def __missing__(self, name: str):
        from daemon.frontends.ibus import desktop_setup

        made = {"gsettings": lambda: desktop_setup.GSettings(self.env),
                "kwinrc": lambda: desktop_setup.KWinRc(self.env),
                "autostart": AutostartEntry}[name]()
        self[name] = made
        return made


def run(args: argparse.Namespace) -> int:
    from daemon.setup_changes import SetupError

    env = os.environ
    if env.get("SUDO_USER") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print(f"{PROG}: run it as yourself, without sudo: it changes your own desktop settings "
              "(root's are not yours); nothing was changed", file=sys.stderr)
        return 2
    try:
        return _undo(env, args.dry_run) if args.undo else _setup(env, args.dry_run)
    except SetupError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return exc.code


def _plan(env: Mapping[str, str], stores: Stores):
    """The desktop's plan, or an exit status (nothing changed)."""
    from daemon.frontends.ibus import desktop_setup
    from daemon.frontends.ibus.desktop_setup import Plan
    from daemon.frontends.session import DisplayServer, detect_session
    from daemon.setup_changes import SetupError, replace_value

    desktop = desktop_setup.desktop_of(env)
    session = detect_session(env)
    wayland = session.server in (DisplayServer.WAYLAND, DisplayServer.XWAYLAND)
    if desktop == "GNOME" or (desktop == "KDE" and wayland):
        if desktop_setup.engine_component(env) is None:
            print(f"{PROG}: the IBus engine is not installed (no ghosttype.xml among IBus's components): install the "
                  "ghosttype package (sudo apt install ./ghosttype_*.deb), or run `sudo ghosttype ibus install "
                  "--system` (`ghosttype ibus install` for you alone), then ghosttype setup again; nothing was changed",
                  file=sys.stderr)
            return 2
        try:
            if desktop == "GNOME":
                return desktop_setup.plan_gnome(stores["gsettings"], env)
            return desktop_setup.plan_kde(stores["gsettings"], stores["kwinrc"], env)
        except SetupError as exc:
            print(f"{PROG}: {exc}" + ("" if "nothing was changed" in str(exc) else "; nothing was changed"),
                  file=sys.stderr)
            return 2
    if session.server is DisplayServer.X11:
        entry = stores["autostart"]
        plan = Plan("X11")
        now = entry.get("login")
        plan.add(None if now else replace_value(entry, "login", None, entry.choose()))
        plan.left = ["ghosttype starts at your next login (start it now: ghosttype run)"]
        return plan
    name = env.get("XDG_CURRENT_DESKTOP") or "unknown desktop"
    print(f"{PROG}: this desktop ({name}, {session.describe()}) is not one setup knows; it sets up {SUPPORTED}. "
          "Nothing was changed.", file=sys.stderr)
    return 2


def _setup(env: Mapping[str, str], dry_run: bool) -> int:
    from daemon import setup_changes
    from daemon.setup_changes import Record, describe

    stores = Stores(env)
    plan = _plan(env, stores)
    if isinstance(plan, int):
        return plan
    print(f"ghosttype setup: {plan.desktop}")
    path = setup_changes.record_path()
    if dry_run:
        for change in plan.changes:
            print("would change " + describe(change, stores[change.store]))
        if not plan.changes:
            print("nothing to change")
        for note in plan.notes:
            print(f"note: {note}")
        return 0
    record = setup_changes.load(path) or Record(plan.desktop)
    record.desktop = plan.desktop

    def done(change) -> None:
        record.changes.append(change)
        setup_changes.save(path, record)

    try:
        for line in setup_changes.apply(plan.changes, stores, done):
            print(line)
    finally:
        if plan.changes and record.changes:
            print(f"recorded in {path}: `ghosttype setup --undo` takes these changes back")
    if not plan.changes:
        print(f"nothing to change: ghosttype is set up for you on {plan.desktop}")
    for note in plan.notes:
        print(f"note: {note}")
    print("left to do:" if plan.changes else "left to do, unless done since these settings changed:")
    for line in plan.left:
        print(f"  {line}")
    return 0


def _undo(env: Mapping[str, str], dry_run: bool) -> int:
    from daemon import setup_changes
    from daemon.setup_changes import SetupError

    path = setup_changes.record_path()
    record = setup_changes.load(path)
    if record is None or not record.changes:
        print(f"nothing to undo: ghosttype setup has recorded no changes ({path})")
        if record is not None and not dry_run:
            setup_changes.forget(path)
        return 0
    stores = Stores(env)
    if dry_run:
        for change in reversed(record.changes):
            print(setup_changes.undo_one(change, stores[change.store], dry_run=True))
        return 0
    while record.changes:
        change = record.changes[-1]
        try:
            print(setup_changes.undo_one(change, stores[change.store]))
        except SetupError:
            setup_changes.save(path, record)
            print(f"the changes not taken back stay recorded in {path}; run ghosttype setup --undo again",
                  file=sys.stderr)
            raise
        record.changes.pop()
    setup_changes.forget(path)
    print(f"removed {path}; log out and in once for the desktop to follow")
    return 0
