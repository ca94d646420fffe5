"""``ghosttype ibus``: ghosttype as an IBus input method (Wayland, and every
toolkit with an IBus module on X11).

* ``run``: the engine.  With ``--ibus`` it is the process ibus-daemon starts
  from the installed component file; without it, it registers itself with the
  session's ibus-daemon for as long as it runs (select it with
  ``ibus engine ghosttype``).
* ``install`` / ``uninstall`` (``--system`` as root: for every user) and
  ``status``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from daemon.config import default_config_path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ibus", help="ghosttype as an IBus input method (Wayland, GNOME, KDE)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="ibus_command", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="run the engine")
    run.add_argument("--config", dest="config_path", metavar="FILE", default=None,
                     help=f"config file (default: {default_config_path()})")
    run.add_argument("--ibus", action="store_true",
                     help="started by ibus-daemon from the component file (otherwise: register at run time)")
    run.add_argument("--model", default=None, help="model name or GGUF path")
    run.add_argument("--code-model", default=None, metavar="NAME|PATH", help="model for fields that look like code")
    run.add_argument("--debounce-ms", type=int, default=None, help="wait after a keystroke before asking the model")
    run.add_argument("--log-level", default=None, choices=("debug", "info", "warning", "error", "critical"))
    run.set_defaults(func=_run)
    for name, helptext in (("install", "install the engine's component file so desktops list it"),
                           ("uninstall", "remove what install wrote")):
        q = sub.add_parser(name, help=helptext)
        q.add_argument("--system", action="store_true",
                       help="for every user: /usr/share/ibus/component (needs root, and an installation "
                            "only root can change, e.g. a venv under /opt)")
        if name == "install":
            q.add_argument("--layout", metavar="LAYOUT[+VARIANT]", default=None,
                           help="keyboard layout GNOME applies while ghosttype is the input source (default: "
                                "your first GNOME keyboard layout, else the system's, e.g. de or de+nodeadkeys)")
        q.add_argument("--component-only", action="store_true",
                       help="with --system: only the IBus component file (a package's maintainer scripts: the "
                            "package owns the GNOME Shell extension's files)")
        q.set_defaults(func=_install if name == "install" else _uninstall)
    st = sub.add_parser("status", help="is ibus running, is the engine installed and selected")
    st.set_defaults(func=_status)
    return p


def _run(args: argparse.Namespace) -> int:
    from daemon.config import ConfigError
    from daemon.frontends.ibus.bus import IBusUnavailable
    from daemon.frontends.ibus.service import EngineProcess

    path = pathlib.Path(args.config_path).expanduser() if args.config_path else default_config_path()
    overrides = {"model": args.model, "code_model": args.code_model, "debounce_ms": args.debounce_ms}
    try:
        return EngineProcess(path, overrides, log_level=args.log_level, started_by_ibus=args.ibus).run()
    except (IBusUnavailable, ConfigError) as e:
        print(f"ghosttype: {e}", file=sys.stderr)
        return 2


def _install(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus import component

    return component.install(system=args.system, layout=args.layout, component_only=args.component_only)


def _uninstall(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus import component

    return component.uninstall(system=args.system, component_only=args.component_only)


def _status(args: argparse.Namespace) -> int:
    from daemon.frontends.ibus import component

    return component.print_status()
