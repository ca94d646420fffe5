"""``ghosttype run`` (the default command): the tray app that suggests in every
X11 application.  Command-line flags override the config file's values."""

from __future__ import annotations

import argparse
import logging
import pathlib
import sys

from daemon.commands.qt import import_qt_module
from daemon.config import STRATEGIES, default_config_path

#: The front end is chosen here, at run time, so the ``daemon`` package itself
#: never imports Qt (``ui`` depends on ``daemon``, never the other way round).
FRONTEND_MODULE = "ui.app"

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("run", help="run the autocomplete daemon (default)", description=__doc__)
    p.add_argument("--config", dest="config_path", metavar="FILE", default=None,
                   help=f"config file (default: {default_config_path()})")
    p.add_argument("--model", default=None, help="model name (smollm2, qwen2.5-coder-0.5b, gemma3-270m) or GGUF path")
    p.add_argument("--code-model", default=None, metavar="NAME|PATH",
                   help="model for fields that look like code, e.g. qwen2.5-coder-0.5b (\"\": none)")
    p.add_argument("--strategy", choices=STRATEGIES, default=None, help="decoding strategy (developer flag)")
    p.add_argument("--beam-width", type=int, default=None, help="CPC beam width k (developer flag; default 2)")
    p.add_argument("--confidence-threshold", type=float, default=None,
                   help="hide suggestions whose confidence is below this (0..1; developer flag)")
    p.add_argument("--continue-min-prob", type=float, default=None,
                   help="suggest words after the first while the chance that all is right stays above this (0..1)")
    p.add_argument("--max-tokens", type=int, default=None, help="longest suggestion in tokens")
    p.add_argument("--debounce-ms", type=int, default=None, help="wait after a keystroke before asking the model")
    p.add_argument("--log-level", default=None, choices=("debug", "info", "warning", "error", "critical"),
                   help="log level (overrides the config file's log_level)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from daemon.frontends.overlay.app import Daemon, StartupError
    from daemon.config import ConfigError

    overrides = {
        "model": args.model,
        "code_model": args.code_model,
        "strategy": args.strategy,
        "beam_width": args.beam_width,
        "confidence_threshold": args.confidence_threshold,
        "continue_min_prob": args.continue_min_prob,
        "max_tokens": args.max_tokens,
        "debounce_ms": args.debounce_ms,
    }
    path = pathlib.Path(args.config_path).expanduser() if args.config_path else default_config_path()
    frontend = import_qt_module(FRONTEND_MODULE, "the Qt front end")
    if frontend is None:
        return 2
    daemon = Daemon(path, overrides, frontend.QtFrontEnd, log_level=args.log_level)
    try:
        return daemon.run()
    except StartupError as e:
        print(f"ghosttype: {e}", file=sys.stderr)
        return 2
    except ConfigError as e:  # a bad command-line override
        print(f"ghosttype: {e}", file=sys.stderr)
        return 2
