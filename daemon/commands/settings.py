"""``ghosttype settings``: the settings window (an ordinary application
window, on X11 and Wayland).  It edits the config file; a running ghosttype
applies what is saved at once."""

from __future__ import annotations

import argparse
import pathlib

from daemon.commands.qt import import_qt_module
from daemon.config import default_config_path

#: Loaded at run time, so the ``daemon`` package itself never imports Qt.
WINDOW_MODULE = "ui.settings"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("settings", help="open the settings window", description=__doc__)
    p.add_argument("--config", dest="config_path", metavar="FILE", default=None,
                   help=f"config file (default: {default_config_path()})")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.config_path).expanduser() if args.config_path else default_config_path()
    window = import_qt_module(WINDOW_MODULE, "the settings window")
    return 2 if window is None else window.main(path)
