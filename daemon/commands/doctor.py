"""``ghosttype doctor``: checks the display server, input capture, AT-SPI, the
tray host, the model and the config, one line each with a fix hint.
Exit status 0 when nothing failed, 1 otherwise."""

from __future__ import annotations

import argparse
import logging
import pathlib

from daemon.config import default_config_path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("doctor", help="check that everything ghosttype needs works", description=__doc__)
    p.add_argument("--config", dest="config_path", metavar="FILE", default=None, help="config file to check")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from daemon.doctor import run_checks

    logging.basicConfig(level=logging.ERROR)
    path = pathlib.Path(args.config_path).expanduser() if args.config_path else default_config_path()
    results = run_checks(path, report=lambda r: print(r.line(), flush=True))
    return 1 if any(r.ok is False for r in results) else 0
