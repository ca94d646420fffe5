"""``ghosttype config``: where the config file is, whether it is valid, and
writing the commented defaults.

    ghosttype config --path          print the config file's path
    ghosttype config --check [FILE]  validate FILE (default: the config file)
    ghosttype config --init          write the commented defaults if missing

Exit status: 0 when fine, 1 when the file is invalid (one ``file:line:``
line per problem on stderr), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from daemon.config import ConfigError, default_config_path, ensure_config_file, load_config


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("config", help="show, check or create the configuration file",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--config", dest="config_path", metavar="FILE", default=None,
                   help="use FILE instead of the default config path")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--path", action="store_true", help="print the config file path (default action)")
    g.add_argument("--check", nargs="?", const="", metavar="FILE",
                   help="validate FILE (default: the config file); problems are printed as file:line")
    g.add_argument("--init", action="store_true", help="write the commented defaults if the file is missing")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.config_path) if args.config_path else default_config_path()
    if args.check is not None:
        target = pathlib.Path(args.check) if args.check else path
        if not target.exists():
            if args.check:
                print(f"{target}: no such file", file=sys.stderr)
                return 1
            print(f"{target}: not created yet; the defaults apply")
            return 0
        try:
            load_config(target)
        except ConfigError as e:
            print(str(e), file=sys.stderr)
            return 1
        print(f"{target}: OK")
        return 0
    if args.init:
        created_path, created = ensure_config_file(path)
        print(f"{created_path}: {'created with the defaults' if created else 'already exists, left unchanged'}")
        return 0
    print(path)
    return 0
