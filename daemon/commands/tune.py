"""``ghosttype tune FILE``: measure the installed models (and the served one
when the config uses a server) with the simulated user at your typing speed
on a text of yours, and write the best ``model``, ``confidence_threshold``
and ``continue_min_prob`` into the config file (its comments kept).

The text is read, typed in memory and forgotten: it is never written or
logged.  :mod:`daemon.evaluation.tune` states the search and the rule.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

from daemon.backends.llamacpp.open import load_lm, resolve
from daemon.commands.complete import one_line_errors
from daemon.evaluation.tune import CONTINUE_MIN_PROBS, MAX_WRONG_PER_100, THRESHOLDS
from daemon.usage import EXIT_USAGE, UsageError


def _floats(spec: str, what: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in spec.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{what} takes comma-separated numbers, got {spec!r}") from None
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise UsageError(f"{what} values must be between 0 and 1, got {spec!r}")
    return values


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tune", help="choose the model and suggestion gate by typing a text of yours as a simulated user",
        description="Types a stretch of FILE as a simulated user with every installed model and a grid of "
        "confidence thresholds and continuation rules, at your typing speed, and writes the best into the "
        "config file. The text is never stored.")
    p.add_argument("file", metavar="FILE", help="a text you typed yourself (UTF-8); read and forgotten")
    p.add_argument("--keys-per-s", type=float, default=10.0, metavar="K",
                   help="your typing speed in keys per second (default 10; 0: wait for every suggestion)")
    p.add_argument("--chars", type=int, default=600, metavar="N", help="characters typed per trial (default 600)")
    p.add_argument("--kind", choices=("prose", "code"), default=None,
                   help="type the text as prose (one paragraph) or code (lines kept); default: by its name")
    p.add_argument("--model", action="append", default=None, metavar="NAME|PATH",
                   help="measure this model (repeat); default: every installed one")
    p.add_argument("--thresholds", default=",".join(f"{v:g}" for v in THRESHOLDS), metavar="LIST",
                   help="confidence thresholds tried (default %(default)s)")
    p.add_argument("--continue-min-probs", default=",".join(f"{v:g}" for v in CONTINUE_MIN_PROBS), metavar="LIST",
                   help="continuation rules tried (default %(default)s)")
    p.add_argument("--max-wrong", type=float, default=MAX_WRONG_PER_100, metavar="W",
                   help="wrong suggestions per 100 keystrokes you accept at most (default %(default)g)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stretch's start (default 0)")
    p.add_argument("--config", dest="config_path", metavar="FILE", default=None,
                   help="config file to read and write (default: yours)")
    p.add_argument("--dry-run", action="store_true", help="print the choice, write nothing")
    one_line_errors(p, "ghosttype tune")
    p.set_defaults(func=run)


def _candidates(args: argparse.Namespace, config: Any) -> list[tuple[str, str]]:
    """(name, path) of the local models to measure; path "" is the served one."""
    from daemon.backends.llamacpp.models import available_models

    names = args.model or [m.name for m in available_models() if m.installed]
    out = [(name, resolve(name)) for name in names]
    if config.backend == "server" and config.server_url and not args.model:
        out.append((config.server_url, ""))
    if not out:
        raise UsageError("no model is installed (ghosttype doctor says how to install one)")
    return out


def _open_served(config: Any) -> Any:
    from daemon.commands.complete import open_served

    return open_served(argparse.Namespace(
        server=config.server_url, server_engine=config.server_engine, server_model=config.server_model,
        server_token_file=config.server_token_file, server_ca_file=config.server_ca_file,
        server_logprobs=config.server_logprobs, allow_insecure_http=config.allow_insecure_http))


def _stretch(args: argparse.Namespace, context_chars: int) -> Any:
    from daemon.evaluation.replay import choose_start
    from daemon.evaluation.simulate import as_typed, kind_of
    from daemon.evaluation.tune import Stretch

    try:
        raw = pathlib.Path(args.file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such file: {args.file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {args.file} as UTF-8 text: {exc}") from None
    text = as_typed(raw, args.kind or kind_of(args.file))
    if not text.strip():
        raise UsageError(f"{args.file} holds no text")
    start = choose_start(text, args.chars, context_chars, args.seed)
    return Stretch(text[:start + args.chars], start)


def _measure(args: argparse.Namespace, config: Any, stretch: Any) -> list:
    import dataclasses

    from daemon.cpc.beam import Decoder
    from daemon.evaluation.replay import session_config
    from daemon.evaluation.tune import tune_model

    base = dataclasses.replace(config.beam_params(), strategy="cpc")
    interval_ms = 1000.0 / args.keys_per_s if args.keys_per_s else 0.0
    thresholds = _floats(args.thresholds, "--thresholds")
    continues = _floats(args.continue_min_probs, "--continue-min-probs")
    trials = []
    for name, path in _candidates(args, config):
        served = path == ""
        lm = _open_served(config) if served else load_lm(path, n_seq_max=max(8, 2 * base.beam_width + 2))
        try:
            params = dataclasses.replace(base, beam_width=1) if served else base
            if not served:
                lm.warm_up()
            trials += tune_model(
                name, lm if served else Decoder(lm), stretch, params, interval_ms,
                make_config=lambda p: session_config(p, debounce_ms=None),
                thresholds=thresholds, continue_min_probs=continues, max_wrong=args.max_wrong,
                before_run=None if served else lm.clear_cache,
                on_trial=lambda t: print(f"  {t.run.name}: saved {100 * t.run.saved:.1f}%, "
                                         f"{t.run.wrong_per_100:.1f} wrong /100 keys", file=sys.stderr))
        finally:
            lm.close()
    return trials


def run(args: argparse.Namespace) -> int:
    from daemon.config import ConfigError, default_config_path, load_config
    from daemon.config_edit import edit_config
    from daemon.evaluation.tune import best_trial, trials_table

    try:
        if args.keys_per_s < 0:
            raise UsageError(f"--keys-per-s must be >= 0, got {args.keys_per_s:g}")
        if args.chars < 1:
            raise UsageError(f"--chars must be at least 1, got {args.chars}")
        path = pathlib.Path(args.config_path) if args.config_path else default_config_path()
        try:
            config = load_config(path)
        except ConfigError as exc:
            raise UsageError(exc.first_line) from None
        stretch = _stretch(args, config.context_chars)
        trials = _measure(args, config, stretch)
        best = best_trial(trials, args.max_wrong)
        pace = f"{args.keys_per_s:g} keys/s" if args.keys_per_s else "waiting for every suggestion"
        print(f"\n{best.run.chars} characters typed per trial, {pace}")
        print(trials_table(trials))
        print(f"\nbest: {best.model}, confidence_threshold = {best.confidence_threshold:g}, continue_min_prob = "
              f"{best.continue_min_prob:g}: {100 * best.run.saved:.1f}% keystrokes saved, "
              f"{best.run.wrong_per_100:.1f} wrong suggestions per 100 keystrokes")
        if best.run.wrong_per_100 > args.max_wrong:
            print(f"(no candidate stayed within {args.max_wrong:g} wrong per 100 keystrokes)")
        changes = {"confidence_threshold": best.confidence_threshold, "continue_min_prob": best.continue_min_prob}
        if best.model != config.server_url or config.backend != "server":
            changes["model"] = best.model
            if config.backend == "server":
                print("(the config uses a server: set backend = \"local\" to use the model chosen)")
        if args.dry_run:
            return 0
        try:
            edit_config(changes, path)
        except ConfigError as exc:
            raise UsageError(exc.first_line) from None
        print(f"written to {path}")
        return 0
    except UsageError as exc:
        print(f"ghosttype tune: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except TimeoutError as exc:
        print(f"ghosttype tune: error: {exc}", file=sys.stderr)
        return 1

