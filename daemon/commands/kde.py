"""``ghosttype kde``: ghosttype's KWin effect, which draws the IBus engine's
suggestion as grey text at the caret on KDE Plasma 6 (Wayland) instead of
IBus's popup.

* ``install``: builds the effect against the installed KWin (needs its
  development files and a C++ compiler: ``packaging/linux/install-deps.sh
  --kde``) and installs it, for you (``~/.local``, from your next login on) or
  with ``--system`` as root for every user (KWin loads it at once).  Run it
  again after every Plasma upgrade: ``ghosttype doctor`` says when it is due.
* ``uninstall`` (``--system``): removes it; ``status``: installed, built for
  which KWin, loaded.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("kde", help="the KWin effect: grey suggestions at the caret on KDE Plasma",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kde_command", metavar="ACTION", required=True)
    for name, helptext in (("install", "build the KWin effect against the installed KWin and install it"),
                           ("uninstall", "remove the KWin effect")):
        q = sub.add_parser(name, help=helptext)
        q.add_argument("--system", action="store_true",
                       help="for every user: the system's Qt plugin directory (needs root)")
        q.set_defaults(func=_install if name == "install" else _uninstall)
    st = sub.add_parser("status", help="is the KWin effect installed, built for this KWin, loaded")
    st.set_defaults(func=_status)
    return p


def _install(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus.inline import kwin_effect

    return kwin_effect.install(system=args.system)


def _uninstall(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus.inline import kwin_effect

    return kwin_effect.uninstall(system=args.system)


def _status(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus.inline import kwin_effect

    results = kwin_effect.checks()
    for r in results:
        print(r.line())
    return 1 if any(r.ok is False for r in results) else 0
