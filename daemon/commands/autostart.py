"""``ghosttype autostart``: start ghosttype at login.

    ghosttype autostart enable [--method M]   install (and enable) the startup entry
    ghosttype autostart disable [--method M]  remove it (every method by default)
    ghosttype autostart status                one line per method: what is installed, where

Linux: a systemd user unit when a systemd user manager runs, else an XDG
autostart entry (``--method systemd|xdg`` forces one); macOS: a LaunchAgent
(``launchd``); Windows: a batch file in the Startup folder (``startup``).  The
entry starts the ghosttype this command runs from, by absolute path.

Exit status: 0 when done, 1 when a file or a manager command failed (one error
line on stderr), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys

from daemon import autostart
from daemon.commands.complete import one_line_errors

PROG = "ghosttype autostart"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("autostart", help="start ghosttype at login: enable, disable or status",
                              description=__doc__.split("\n\n")[0],
                              epilog="methods: systemd, xdg (Linux), launchd (macOS), startup (Windows)")
    p.add_argument("action", choices=("enable", "disable", "status"))
    p.add_argument("--method", choices=autostart.ALL_METHODS, default=None,
                   help="use this method instead of the platform's default (disable: only this one)")
    one_line_errors(p, PROG)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    try:
        ctx = autostart.Context.current()
        if args.action == "status":
            ctx.check_method(args.method)
            statuses = autostart.status(ctx)
            report = autostart.Report(
                lines=[s.line() for s in statuses if args.method in (None, s.method)])
        elif args.action == "enable":
            report = autostart.enable(ctx, args.method)
        else:
            report = autostart.disable(ctx, args.method)
    except autostart.AutostartError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    for line in report.lines:
        print(line)
    for line in report.warnings:
        print(line, file=sys.stderr)
    return 0
