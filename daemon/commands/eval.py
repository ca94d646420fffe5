"""``ghosttype eval``: the benchmarks a user can run on their own text.

Four modes (the benchmarks and their figures: daemon/evaluation/README.md):

quality (default)
    ``ghosttype eval FILE... [--strategies naive,heal,cpc1,cpc2,cpc4]
    [--offsets 150] [--kind mid|any] [--seed 0] [--context-chars 1500]
    [--max-tokens 8] [--confidence-threshold P] [--threshold-sweep LIST]
    [--model M]... [--json OUT]`` prints one table per file and model (and,
    with ``--threshold-sweep``, what each threshold would withhold).  ``--json`` writes
    ``{"settings", "cases": [...], "summary": {STRATEGY: {...}}, "runs": [...]}``;
    ``summary`` pools every case of the run (with one file and one model it is
    that table), ``runs`` has one summary per file and model.

replay (``--replay``)
    ``ghosttype eval FILE... --replay [--chars 400] [--strategy cpc
    --beam-width 2]`` types each file through the daemon's request path, once
    with the chosen strategy and once with naive decoding, and prints keystroke
    latency percentiles, model calls and re-evaluated tokens per keystroke, and
    the p50 ratio.  ``--json`` writes ``{"replay": {STRATEGY: {...}},
    "ratio_p50": x}`` (the last file's run when several are given, all runs
    under ``"runs"``).

cold start (``--cold-start``)
    ``ghosttype eval FILE... --cold-start [--offsets N] [--seed S]
    [--context-chars C]`` times the first suggestion after focusing a field
    with ``C`` characters before the caret and nothing of them in the model's
    cache (:mod:`daemon.evaluation.coldstart`).  ``--json`` writes
    ``{"cold_start": {"p50_ms", "p95_ms", "p50_final_ms", "p95_final_ms",
    "n", ...}, "load": K}``.

simulated user (``--simulate-user``)
    ``ghosttype eval FILE... --simulate-user [--chars 1000]
    [--key-interval-ms 100] [--no-baselines]`` types ``--chars`` characters
    of each file as a simulated user who accepts a suggestion whenever it is
    exactly what they were about to type (:mod:`daemon.evaluation.simulate`
    states the policy), with the configured strategy, naive decoding and an
    editor's word completion (no model), and prints keystrokes saved, accepts
    and wrong suggestions seen per 100 keystrokes.  ``--json`` writes
    ``{"settings", "runs": [...], "pooled": {SUGGESTER: {...}}}``.
    ``--learn-from DIR_OR_FILE`` (repeatable) first fills the memory of the
    user's words from those files (bounded: :mod:`daemon.evaluation.learn`)
    and types with it mixed into the model, as the daemon does with
    ``learn`` on; ``--learn-typed`` also learns what the simulated user
    types, line by line, as the daemon does.

``--load K`` (replay and cold start) runs beside K spinning processes;
``--key-interval-ms`` paces the replay's keys like a person typing and
counts stale suggestions; ``--batch-threads N`` fixes the batch threads.

many typists on one server (``--typists``)
    ``ghosttype eval FILE... --server URL --typists N [--chars 200]
    [--key-interval-ms 100]`` has N simulated typists type at once, each at
    10 keys/s through its own daemon path and connection
    (:mod:`daemon.evaluation.typists`), and prints the first ghost's p50/p95
    per keystroke, the share of keys that showed one and the requests
    served per second.  ``--json`` writes ``{"typists": {...}, "settings"}``.

vocabulary look-ups (``--vocab-bench``)
    ``ghosttype eval [FILE...] --vocab-bench [--model M]...`` times
    ``VocabIndex.prefixes_of`` / ``starting_with`` on remainders sampled from
    the files plus the worst cases ``" "``, ``"e"``, ``"\\n"``; without
    ``--model`` it runs on every installed known model.

Errors in the input (unknown strategy, missing file or model) print one line
and exit with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
from typing import Any, Optional

from daemon.backends.llamacpp.open import load_lm, resolve
from daemon.commands.complete import add_server_arguments, make_params, one_line_errors, open_served
from daemon.cpc.limits import span
from daemon.cpc.suggestion import STRATEGIES, BeamParams
from daemon.evaluation.offsets import OFFSET_KINDS, choose_offsets
from daemon.evaluation.progress import terminal_progress
from daemon.evaluation.quality import (
    DEFAULT_STRATEGIES,
    QualityRun,
    parse_strategies,
    run_quality,
    summary_json,
)
from daemon.usage import EXIT_USAGE, UsageError

_DEFAULTS = BeamParams()
#: What a served model runs (``--server``): naive decoding and the engine's CPC.
SERVED_STRATEGIES = ("naive", "cpc1")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "eval",
        help="measure suggestion quality, keystroke latency or vocabulary look-ups on your own text",
        description="Benchmarks on reference texts: quality at cursor offsets (default), "
        "typing replay (--replay), vocabulary look-ups (--vocab-bench).",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="reference texts (UTF-8)")
    p.add_argument("--model", action="append", default=None, metavar="NAME|PATH",
                   help="model name or GGUF path; repeat to compare models (default smollm2)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write every case and the summary to OUT")
    p.add_argument("--seed", type=int, default=0, help="seed of the offset choice (default 0)")
    p.add_argument("--context-chars", type=int, default=_DEFAULTS.context_chars, metavar="N",
                   help=f"characters before the cursor given to the model ({span('context_chars')}, default {_DEFAULTS.context_chars})")
    p.add_argument("--max-tokens", type=int, default=_DEFAULTS.max_tokens, metavar="N",
                   help=f"tokens generated after the covering ({span('max_tokens')}, default {_DEFAULTS.max_tokens})")
    p.add_argument("--confidence-threshold", type=float, default=_DEFAULTS.confidence_threshold, metavar="P",
                   help="suppress below this confidence and count withheld right/wrong suggestions "
                        f"(default {_DEFAULTS.confidence_threshold:g})")
    p.add_argument("--continue-min-prob", type=float, default=_DEFAULTS.continue_min_prob, metavar="P",
                   help="suggest words after the first while the chance that all of it is right stays at or "
                        f"above P (default {_DEFAULTS.continue_min_prob:g}; 0: up to --max-tokens)")
    q = p.add_argument_group("quality")
    q.add_argument("--strategies", default=DEFAULT_STRATEGIES, metavar="LIST",
                   help=f"comma-separated naive, heal, cpcK (default {DEFAULT_STRATEGIES})")
    q.add_argument("--offsets", type=int, default=150, metavar="N", help="cursor offsets per file (default 150)")
    q.add_argument("--threshold-sweep", default=None, metavar="LIST",
                   help="also report what each of these confidence thresholds (comma-separated, "
                        "0..1) would withhold, from the same run")
    q.add_argument("--kind", choices=OFFSET_KINDS, default="mid",
                   help="mid: inside a word (both neighbours are word characters); any: every offset (default mid)")
    r = p.add_argument_group("replay")
    r.add_argument("--replay", action="store_true", help="type the text through the daemon's request path")
    r.add_argument("--chars", type=int, default=None, metavar="N",
                   help="characters typed per file (default 400; --simulate-user: 1000)")
    r.add_argument("--preload-chars", type=int, default=None, metavar="N",
                   help="characters already in the field before typing starts (default: context-chars minus "
                   "chars, so the typed text stays inside the context window)")
    r.add_argument("--strategy", default="cpc", metavar="{" + ",".join(STRATEGIES) + "}",
                   help="strategy compared against naive (default cpc)")
    r.add_argument("--beam-width", type=int, default=_DEFAULTS.beam_width, metavar="K",
                   help=f"beam width of the compared strategy (default {_DEFAULTS.beam_width})")
    r.add_argument("--key-interval-ms", type=float, default=None, metavar="MS",
                   help="press a key every MS milliseconds, as a person types, instead of one key "
                        "after the other once the daemon is idle (measures stale suggestions; "
                        "default 0, i.e. wait; --simulate-user: 100, and 0 waits)")
    c = p.add_argument_group("cold start")
    c.add_argument("--cold-start", action="store_true",
                   help="time the first suggestion after focusing a field with --context-chars of text "
                        "before the caret and nothing of it in the model's cache (--offsets per file)")
    b = p.add_argument_group("replay and cold start")
    b.add_argument("--load", type=int, default=0, metavar="K",
                   help="run beside K processes spinning on the CPU (started and stopped by the command)")
    b.add_argument("--batch-threads", type=int, default=0, metavar="N",
                   help="threads for batch decodes (prefill, beam steps); default 0: every decode by load "
                        "(a fixed N keeps one-token steps at the model's base thread count)")
    u = p.add_argument_group("simulated user")
    u.add_argument("--simulate-user", action="store_true",
                   help="type each file as a simulated user who accepts right suggestions: keystrokes saved")
    u.add_argument("--no-baselines", dest="baselines", action="store_false",
                   help="skip the naive-decoding and word-completion baselines")
    u.add_argument("--code-model", default=None, metavar="NAME|PATH",
                   help="a second model for the text that looks like code (the daemon's code_model)")
    u.add_argument("--learn-from", action="append", default=None, metavar="DIR_OR_FILE",
                   help="fill the memory of the user's words (the daemon's learn setting) from these files "
                        "(a folder: its files, sorted) before typing; repeatable.  Bounded: at most the "
                        "memory's 200,000 characters in all, 1 MB of each file, 10,000 files and 5 s of "
                        "reading; binary and non-UTF-8 files are skipped")
    u.add_argument("--learn-typed", action="store_true",
                   help="also learn what the simulated user types, line by line, as the daemon's learn setting "
                        "does (the default learn = \"session\"); without --learn-from the memory starts empty")
    u.add_argument("--virtual-clock", action="store_true",
                   help="press the keys on a clock that the model's work advances (SmolLM2's cost on this "
                        "project's machine) instead of the wall clock: the same figures every run")
    u.add_argument("--empty-field", action="store_true",
                   help="type each span into an empty field (default: the text before it is already there, "
                        "up to --context-chars)")
    u.add_argument("--learn-params", default=None, metavar="SPEC",
                   help="how much the memory is trusted, for benchmarks: comma-separated NAME=VALUE of "
                        "the fields of CacheParams (daemon/memory/cache_lm.py): lam_max, beta, min_order, ramp, "
                        "max_order, lam_word, beta_word, min_order_word, ramp_word for a word's continuation, and "
                        "trust_prior, trust_share for how the trust in the memory as a whole follows what is "
                        "typed (trust_prior=1: always whole); history.min_context, history.min_chars, "
                        "history.max_chars, history.context_weight for history completion "
                        "(daemon/memory/history.py), or history=off")
    add_server_arguments(p)
    t = p.add_argument_group("many typists (with --server)")
    t.add_argument("--typists", type=int, default=None, metavar="N",
                   help="N simulated typists at once, one connection each, at --key-interval-ms "
                        "(default 100: 10 keys/s), --chars each (default 200)")
    v = p.add_argument_group("vocabulary look-ups")
    v.add_argument("--vocab-bench", action="store_true", help="time the vocabulary index look-ups")
    one_line_errors(p, "ghosttype eval")
    p.set_defaults(func=run)


def _read_files(paths: list[str]) -> list[tuple[str, str]]:
    out = []
    for name in paths:
        path = pathlib.Path(name)
        try:
            out.append((path.name, path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise UsageError(f"no such file: {name}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {name} as UTF-8 text: {exc}") from None
    return out


def _write_json(path: str, obj: dict) -> None:
    try:
        pathlib.Path(path).write_text(json.dumps(obj, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _models(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(display name, path) per requested model; resolved before any work starts."""
    names = args.model or ["smollm2"]
    return [(name, resolve(name)) for name in names]


def _one_model(args: argparse.Namespace, params: BeamParams) -> list[tuple[str, str]]:
    """The model of a typing session: the server's URL with ``--server``."""
    if args.server:
        if args.model:
            raise UsageError("give --server or --model, not both")
        return [(args.server, "")]
    return _models(args)


def _served_params(args: argparse.Namespace, params: BeamParams) -> BeamParams:
    """A served model's search is a beam of one (named cpc1 in the tables)."""
    return dataclasses.replace(params, beam_width=1) if args.server and params.strategy == "cpc" else params


def run_quality_mode(args: argparse.Namespace) -> int:
    from daemon.evaluation.report import quality_table, sweep_table

    if not args.files:
        raise UsageError("give at least one FILE to evaluate")
    thresholds = _thresholds(args.threshold_sweep)
    if args.server and args.strategies == DEFAULT_STRATEGIES:
        args.strategies = ",".join(SERVED_STRATEGIES)
    try:
        strategies = parse_strategies(args.strategies)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.offsets < 1:
        raise UsageError(f"--offsets must be at least 1, got {args.offsets}")
    if args.server and any(s.name not in SERVED_STRATEGIES for s in strategies):
        raise UsageError(f"with --server, --strategies takes {' and '.join(SERVED_STRATEGIES)} (the engine's "
                         "constrained decoding is a beam of one)")
    base = make_params(args, "cpc", max(s.beam_width for s in strategies))
    files = _read_files(args.files)
    models = [(args.server, "")] if args.server else _models(args)
    n_seq = max(8, max(s.beam_width for s in strategies) + 1)
    from daemon.cpc.beam import Decoder  # after validation: errors stay instant

    all_cases: list[dict] = []
    runs: list[dict] = []
    pooled = QualityRun(strategies, [], [])
    for model_name, model_path in models:
        lm = open_served(args) if args.server else load_lm(model_path, n_seq_max=n_seq)
        try:
            decoder = lm if args.server else Decoder(lm)
            for file_name, text in files:
                offsets = choose_offsets(text, args.offsets, args.kind, args.seed)
                if not offsets:
                    print(f"{file_name}: no {args.kind} offsets, skipped", file=sys.stderr)
                    continue
                result = run_quality(decoder, text, offsets, strategies, base,
                                     on_case=terminal_progress(f"{file_name} [{model_name}]"))
                summaries = result.summaries()
                prefill = sum(result.prefill_ms) / len(result.prefill_ms)
                print(
                    f"\n{file_name}  model={model_name}  offsets={len(offsets)} kind={args.kind} "
                    f"seed={args.seed}  context={args.context_chars} chars  max_tokens={args.max_tokens}  "
                    f"threshold={args.confidence_threshold:g}"
                )
                print(quality_table(summaries))
                print(f"(mean prefill per offset, shared by the strategies: {prefill:.0f} ms)")
                run_json = {"file": file_name, "model": model_name, "offsets": len(offsets),
                            "mean_prefill_ms": prefill, "summary": summary_json(summaries)}
                if thresholds:
                    sweeps = result.sweep(thresholds)
                    print(sweep_table(sweeps))
                    run_json["threshold_sweep"] = {
                        name: [dataclasses.asdict(r) for r in rows] for name, rows in sweeps.items()
                    }
                runs.append(run_json)
                pooled.cases.extend(result.cases)
                all_cases.extend({"file": file_name, "model": model_name, **c.to_json()} for c in result.cases)
        finally:
            lm.close()
    if args.json_out:
        _write_json(args.json_out, {
            "settings": {
                "kind": args.kind, "offsets": args.offsets, "seed": args.seed,
                "context_chars": args.context_chars, "max_tokens": args.max_tokens,
                "confidence_threshold": args.confidence_threshold,
                "strategies": [s.name for s in strategies],
            },
            "cases": all_cases,
            "summary": summary_json(pooled.summaries()),
            "runs": runs,
        })
    return 0


def _thresholds(spec: Optional[str]) -> list[float]:
    if not spec:
        return []
    try:
        values = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--threshold-sweep takes comma-separated numbers, got {spec!r}") from None
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise UsageError(f"--threshold-sweep values must be between 0 and 1, got {spec!r}")
    return values


def run_vocab_mode(args: argparse.Namespace) -> int:
    from daemon.evaluation.report import vocab_table
    from daemon.evaluation.vocab_bench import run_vocab_bench
    from daemon.backends.llamacpp.models import available_models

    files = _read_files(args.files)
    if args.model:
        models = _models(args)
    else:
        models = [(m.name, resolve(m.name)) for m in available_models() if m.installed]
    results = []
    for model_name, model_path in models:
        lm = load_lm(model_path, n_seq_max=1)
        try:
            res = run_vocab_bench(model_name, lm, [t for _, t in files], seed=args.seed,
                                  context_chars=args.context_chars)
        finally:
            lm.close()
        print(
            f"\nmodel={model_name}  vocabulary={res.n_vocab} tokens ({res.indexed_tokens} indexed)  "
            f"index built in {res.build_ms:.0f} ms  sampled remainders={res.remainders} "
            f"(mean {res.mean_remainder_bytes:.1f} bytes)"
        )
        print(vocab_table(res.rows))
        results.append(res)
    if args.json_out:
        _write_json(args.json_out, {"vocab": [dataclasses.asdict(r) for r in results]})
    return 0


def run_simulate_user_mode(args: argparse.Namespace) -> int:
    from daemon.backends.llamacpp.models import DEFAULT_MODEL
    from daemon.evaluation.learn import eval_memory
    from daemon.evaluation.simulate import simulate_files

    if not args.files:
        raise UsageError("give at least one FILE for --simulate-user")
    chars = 1000 if args.chars is None else args.chars
    interval = 100.0 if args.key_interval_ms is None else args.key_interval_ms
    if chars < 1:
        raise UsageError(f"--chars must be at least 1, got {chars}")
    if interval < 0:
        raise UsageError(f"--key-interval-ms must be >= 0, got {interval}")
    params = make_params(args, args.strategy, args.beam_width, progressive=True)
    files = _read_files(args.files)
    (model_name, model_path), *rest = _one_model(args, params)
    if rest:
        raise UsageError("--simulate-user takes one --model")
    if args.virtual_clock and (args.server or args.code_model or model_name != DEFAULT_MODEL or not interval):
        raise UsageError("--virtual-clock has the cost of SmolLM2 at a typing pace: give it without --server, "
                         "--code-model, another --model or --key-interval-ms 0")
    code_model = (args.code_model, resolve(args.code_model)) if args.code_model else None
    memory, cache_params, history_params, learned = eval_memory(args.learn_from, args.learn_params, bool(args.server),
                                                                args.learn_typed)
    served = open_served(args) if args.server else None
    obj = simulate_files(model_name, model_path, files, _served_params(args, params), chars=chars, seed=args.seed,
                         key_interval_ms=interval, baselines=args.baselines, served=served, code_model=code_model,
                         memory=memory, cache_params=cache_params, history_params=history_params,
                         empty_field=args.empty_field, learn_typed=args.learn_typed,
                         virtual_clock=args.virtual_clock)
    if learned is not None:
        obj["settings"]["learn_from"] = {**learned.to_json(), "params": dataclasses.asdict(cache_params),
                                         "history": dataclasses.asdict(history_params) if history_params else None}
    if args.json_out:
        _write_json(args.json_out, obj)
    return 0


def run_replay_mode(args: argparse.Namespace) -> int:
    from daemon.evaluation.replay import replay_files

    args.chars = 400 if args.chars is None else args.chars
    args.key_interval_ms = 0.0 if args.key_interval_ms is None else args.key_interval_ms
    if not args.files:
        raise UsageError("give at least one FILE to replay")
    if args.chars < 1:
        raise UsageError(f"--chars must be at least 1, got {args.chars}")
    params = _served_params(args, make_params(args, args.strategy, args.beam_width, progressive=True))
    files = _read_files(args.files)
    (model_name, model_path), *rest = _one_model(args, params)
    if rest:
        raise UsageError("--replay takes one --model")
    if args.preload_chars is not None and args.preload_chars < 0:
        raise UsageError(f"--preload-chars must be >= 0, got {args.preload_chars}")
    _check_load_args(args)
    obj = replay_files(model_name, model_path, files, params, chars=args.chars, seed=args.seed,
                       preload_chars=args.preload_chars, load=args.load,
                       key_interval_ms=args.key_interval_ms, batch_threads=args.batch_threads,
                       served=open_served(args) if args.server else None)
    if args.json_out:
        _write_json(args.json_out, obj)
    return 0


def _check_load_args(args: argparse.Namespace) -> None:
    if args.load < 0:
        raise UsageError(f"--load must be >= 0, got {args.load}")
    if args.batch_threads < 0:
        raise UsageError(f"--batch-threads must be >= 0, got {args.batch_threads}")
    if args.key_interval_ms < 0:
        raise UsageError(f"--key-interval-ms must be >= 0, got {args.key_interval_ms}")


def run_cold_start_mode(args: argparse.Namespace) -> int:
    from daemon.cpc.beam import Decoder
    from daemon.evaluation.coldstart import run_cold_start
    from daemon.evaluation.load import BusyLoad
    from daemon.evaluation.replay import session_config
    from daemon.evaluation.report import cold_start_table

    if not args.files:
        raise UsageError("give at least one FILE for --cold-start")
    if args.offsets < 1:
        raise UsageError(f"--offsets must be at least 1, got {args.offsets}")
    args.key_interval_ms = 0.0 if args.key_interval_ms is None else args.key_interval_ms
    _check_load_args(args)
    params = make_params(args, args.strategy, args.beam_width, progressive=True)
    config = session_config(params)
    files = _read_files(args.files)
    (model_name, model_path), *rest = _models(args)
    if rest:
        raise UsageError("--cold-start takes one --model")
    lm = load_lm(model_path, n_seq_max=max(8, params.beam_width + 1), batch_threads=args.batch_threads)
    runs: list[dict] = []
    try:
        lm.warm_up()  # as the daemon does after loading
        decoder = Decoder(lm)
        for file_name, text in files:
            with BusyLoad(args.load):
                result = run_cold_start(decoder, lm, config, text, args.offsets, args.seed,
                                        progress=terminal_progress(f"{file_name} cold start"))
            print(f"\n{file_name}  model={model_name}  {result.n} cold starts (seed {args.seed})  "
                  f"context={params.context_chars} chars  load={args.load}")
            print(cold_start_table(result))
            runs.append({"file": file_name, "model": model_name, "load": args.load, "cold_start": result.as_json()})
    finally:
        lm.close()
    if args.json_out:
        _write_json(args.json_out, {"cold_start": runs[-1]["cold_start"], "load": args.load, "runs": runs})
    return 0


def run_typists_mode(args: argparse.Namespace) -> int:
    from daemon.evaluation.typists import run_typists, typists_table

    if not args.server:
        raise UsageError("--typists measures a server: give --server URL")
    if not args.files:
        raise UsageError("give at least one FILE for --typists")
    chars = 200 if args.chars is None else args.chars
    interval = 100.0 if args.key_interval_ms is None else args.key_interval_ms
    if args.typists < 1 or chars < 1 or interval <= 0:
        raise UsageError("--typists, --chars and --key-interval-ms must be positive")
    params = _served_params(args, make_params(args, args.strategy, args.beam_width, progressive=True))
    files = _read_files(args.files)
    open_served(args).close()  # the server answers (else a usage error with the reason), before N threads
    result = run_typists(lambda: open_served(args), files, params, args.typists, chars, seed=args.seed,
                         key_interval_ms=interval)
    print(f"\n{args.server}  {args.typists} typists, one key every {interval:g} ms each, {chars} chars each "
          f"(files: {', '.join(name for name, _ in files)}; seed {args.seed})  context={params.context_chars} chars  "
          f"max_tokens={params.max_tokens}")
    print(typists_table(result))
    if args.json_out:
        _write_json(args.json_out, {
            "settings": {"server": args.server, "typists": args.typists, "chars": chars, "key_interval_ms": interval,
                         "seed": args.seed, "context_chars": params.context_chars, "max_tokens": params.max_tokens,
                         "logprobs": args.server_logprobs, "files": [name for name, _ in files]},
            "typists": result.to_json(),
        })
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        if sum((args.replay, args.vocab_bench, args.cold_start, args.simulate_user, args.typists is not None)) > 1:
            raise UsageError("choose one of --replay, --cold-start, --simulate-user, --typists and --vocab-bench")
        if args.typists is not None:
            return run_typists_mode(args)
        if args.server and (args.vocab_bench or args.cold_start):
            raise UsageError("--server works with the quality, --replay and --simulate-user modes")
        if args.code_model and not args.simulate_user:
            raise UsageError("--code-model works with --simulate-user")
        if args.code_model and args.server:
            raise UsageError("--code-model runs in ghosttype: give it without --server")
        if (args.learn_from or args.learn_typed or args.learn_params or args.empty_field) and not args.simulate_user:
            raise UsageError("--learn-from, --learn-typed and --empty-field work with --simulate-user")
        if args.simulate_user:
            return run_simulate_user_mode(args)
        if args.vocab_bench:
            return run_vocab_mode(args)
        if args.replay:
            return run_replay_mode(args)
        if args.cold_start:
            return run_cold_start_mode(args)
        return run_quality_mode(args)
    except UsageError as exc:
        print(f"ghosttype eval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except TimeoutError as exc:  # the replay's (or cold start's) worker stopped answering
        print(f"ghosttype eval: error: {exc}", file=sys.stderr)
        return 1
