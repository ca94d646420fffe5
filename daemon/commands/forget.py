"""``ghosttype forget``: wipe what ghosttype learned of your words.

    ghosttype forget           the memory file, its key in the keyring, and the
                               memory of every running ghosttype
    ghosttype forget --path    print where the memory file is kept

With ``learn = "persist"`` the memory is kept in one encrypted file whose key
the desktop's keyring holds; both are deleted.  A running ghosttype (the
overlay or the IBus engine) empties its memory at once, whatever ``learn``
says.  The settings window's "Forget what ghosttype learned" does the same.
Exit status 1 when the keyring holds the key but cannot delete it now
(locked): the file is gone all the same, so nothing learned can be read.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("forget", help="wipe what ghosttype learned of your words (file, key, running memory)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--path", action="store_true", help="print where the memory file is kept (learn = \"persist\")")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from daemon.memory.forget import forget_everything
    from daemon.memory.persist import default_memory_path

    if args.path:
        print(default_memory_path())
        return 0
    done = forget_everything()
    for line in done.lines():
        print(line)
    return 0 if done.complete else 1
