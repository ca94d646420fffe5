"""``ghosttype stats``: what ghosttype saved you, counts only.

    ghosttype stats            today and in total, one line a count
    ghosttype stats --json     the same and every day kept, as JSON
    ghosttype stats --reset    delete the counts

The counts live in the stats file (``--path`` prints where); ``stats =
false`` in the config stops counting.
"""

from __future__ import annotations

import argparse
import json

from daemon.stats import FIELDS, LABELS, StatsFile, summary


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("stats", help="suggestions shown and accepted, keystrokes saved (counts only)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print JSON: today, total and each day")
    g.add_argument("--reset", action="store_true", help="delete the counts")
    g.add_argument("--path", action="store_true", help="print where the counts are kept")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    stats = StatsFile()
    if args.path:
        print(stats.path)
        return 0
    if args.reset:
        print("counts deleted" if stats.reset() else "no counts to delete")
        return 0
    view = summary(stats.read())
    if args.json:
        print(json.dumps(view, indent=1, sort_keys=True))
        return 0
    width = max(len(LABELS[k]) for k in FIELDS)
    print(f"{'':{width}}  {'today':>8}  {'total':>8}")
    for key in FIELDS:
        print(f"{LABELS[key]:{width}}  {view['today'][key]:>8}  {view['total'][key]:>8}")
    return 0
