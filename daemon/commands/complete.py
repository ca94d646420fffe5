"""``ghosttype complete``: one suggestion for a text, from the command line.

The text is everything before the caret, taken verbatim from ``--text`` or
standard input (a trailing newline is part of the text: use ``printf`` or
``--text`` rather than ``echo``).  Prints the suggestion, or with ``--json``
one object::

    {"suggestion": str, "confidence": float, "suppressed": bool,
     "strategy": str, "beam_width": int, "model": str,
     "timings_ms": {"load": ms, "complete": ms, ...decoder phases},
     "tokens_decoded": int, "model_calls": int, "tokens_generated": int,
     "stable_tokens": int}

``suggestion`` is the decoder's text even when it is suppressed by
``--confidence-threshold`` (``suppressed`` says so); the plain output prints
nothing for a suppressed suggestion, as the overlay would show nothing.

Bad input (unknown strategy, beam width below 1, missing or unreadable model)
prints one error line on stderr and exits with status 2.  Needs no display: it
never imports Qt or pynput.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any, NoReturn

from daemon.backends.llamacpp.open import load_lm, resolve
from daemon.cpc.limits import span
from daemon.cpc.suggestion import STRATEGIES, BeamParams
from daemon.usage import EXIT_USAGE, UsageError

_DEFAULTS = BeamParams()
#: The flags of :func:`add_decoding_arguments` that override the decoder's
#: knobs of the same name (:class:`~daemon.cpc.suggestion.BeamParams`).
DECODING_FLAGS = ("max_tokens", "confidence_threshold", "continue_min_prob", "context_chars")


def one_line_errors(parser: argparse.ArgumentParser, prog: str) -> None:
    """Make ``parser`` report argument errors as one line (no usage dump) with
    exit status 2, like every other input error of these commands."""

    def error(message: str) -> NoReturn:
        print(f"{prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)

    parser.error = error  # type: ignore[method-assign]


def add_decoding_arguments(p: argparse.ArgumentParser) -> None:
    """Flags shared by ``complete`` and ``eval``."""
    p.add_argument("--model", default=None, metavar="NAME|PATH",
                   help="model name (smollm2, qwen2.5-coder-0.5b, gemma3-270m) or GGUF path; default smollm2")
    p.add_argument("--max-tokens", type=int, default=_DEFAULTS.max_tokens, metavar="N",
                   help=f"tokens generated after the typed text is covered ({span('max_tokens')}, default {_DEFAULTS.max_tokens})")
    p.add_argument("--confidence-threshold", type=float, default=_DEFAULTS.confidence_threshold,
                   metavar="P", help="suppress suggestions less likely than P (0..1) to be accepted "
                        f"(default {_DEFAULTS.confidence_threshold:g}; 0: never)")
    p.add_argument("--continue-min-prob", type=float, default=_DEFAULTS.continue_min_prob, metavar="P",
                   help="suggest words after the first while the chance that all of it is right stays at or "
                        f"above P (default {_DEFAULTS.continue_min_prob:g}; 0: up to --max-tokens)")
    p.add_argument("--context-chars", type=int, default=_DEFAULTS.context_chars, metavar="N",
                   help=f"characters before the caret given to the model ({span('context_chars')}, default {_DEFAULTS.context_chars})")
    add_server_arguments(p)


def add_server_arguments(p: argparse.ArgumentParser) -> None:
    """``--server`` and its companions (``complete`` and ``eval``)."""
    s = p.add_argument_group("served model")
    s.add_argument("--server", default=None, metavar="URL",
                   help="ask the serving engine at URL (OpenAI-compatible /v1/completions) instead of "
                        "loading a model; the text is sent there")
    s.add_argument("--server-engine", default="llama.cpp", choices=("llama.cpp", "vllm"),
                   help="the engine at URL: its way of forcing the typed characters (default llama.cpp)")
    s.add_argument("--server-model", default="", metavar="NAME", help="model name sent to the server")
    s.add_argument("--server-token-file", default="", metavar="FILE", help="file holding the bearer token")
    s.add_argument("--server-ca-file", default="", metavar="FILE",
                   help="CA certificates for an https URL (default: the system's)")
    s.add_argument("--server-no-logprobs", dest="server_logprobs", action="store_false",
                   help="do not ask for log-probabilities (faster on llama-cpp-python's server; no confidence gate)")
    s.add_argument("--allow-insecure-http", action="store_true",
                   help="accept an http:// URL on another machine (the text and token cross the network in clear)")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "complete",
        help="print one suggestion for the text on stdin or --text",
        description="Complete TEXT (everything before the caret) and print the suggestion.",
    )
    p.add_argument("--text", default=None, help="the text before the caret (default: read stdin)")
    p.add_argument("--strategy", default=_DEFAULTS.strategy, metavar="{" + ",".join(STRATEGIES) + "}",
                   help=f"naive decoding, single-token healing, or coverage beam search (default {_DEFAULTS.strategy})")
    p.add_argument("--beam-width", type=int, default=_DEFAULTS.beam_width, metavar="K",
                   help=f"beams kept by the cpc search ({span('beam_width')}, default {_DEFAULTS.beam_width})")
    add_decoding_arguments(p)
    p.add_argument("--json", action="store_true", help="print a JSON object with confidence, timings and counters")
    one_line_errors(p, "ghosttype complete")
    p.set_defaults(func=run)


def make_params(args: argparse.Namespace, strategy: str, beam_width: int, *, progressive: bool = False) -> BeamParams:
    """The request knobs of the command line.  One-shot requests (``complete``,
    the quality benchmark) use the full context window at once; only a typing
    session (``progressive``) answers from the window near the caret while
    the full one is prefilled (:mod:`daemon.cpc.progressive`)."""
    flags = {name: getattr(args, name) for name in DECODING_FLAGS}
    try:
        return dataclasses.replace(_DEFAULTS, strategy=strategy, beam_width=beam_width, **flags,
                                   quick_context_chars=_DEFAULTS.quick_context_chars if progressive else 0)
    except ValueError as exc:  # the words of a config file's error: "command line: max_tokens: must be ..."
        raise UsageError(f"command line: {exc}") from None


def open_served(args: argparse.Namespace) -> Any:
    """The ``ServedCompleter`` of ``--server``; a server that cannot be
    reached (or refuses the token) is a UsageError with its reason."""
    from daemon.backends.served.client import Server, ServerError, read_token
    from daemon.backends.served.completer import ServedCompleter

    try:
        token = read_token(args.server_token_file) if args.server_token_file else None
        server = Server(args.server, token, args.server_ca_file, allow_insecure_http=args.allow_insecure_http)
    except (ServerError, ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    problem = server.probe()
    if problem is not None:
        server.close()
        raise UsageError(problem)
    return ServedCompleter(server, args.server_engine, args.server_model, logprobs=args.server_logprobs)


def read_text(args: argparse.Namespace) -> str:
    if args.text is not None:
        return args.text
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("give the text before the caret with --text or on standard input")
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"standard input is not valid UTF-8 (byte {exc.start})") from None


def complete_once(lm: Any, text: str, params: BeamParams) -> dict:
    """Run one request and return the JSON object described in the module doc
    (without ``model`` and the load time)."""
    from daemon.cpc.beam import Decoder

    decoder = Decoder(lm)
    before = lm.stats.snapshot()
    t0 = time.perf_counter()
    sug = decoder.complete(text, params)
    total_ms = (time.perf_counter() - t0) * 1000.0
    work = lm.stats.since(before)
    return _result(sug, params, total_ms, work.tokens_decoded, work.decode_calls)


def served_once(completer: Any, text: str, params: BeamParams) -> dict:
    """:func:`complete_once` against a served model: ``model_calls`` counts
    requests, ``tokens_decoded`` the tokens the server streamed back."""
    requests, tokens = completer.requests, completer.tokens
    t0 = time.perf_counter()
    sug = completer.complete(text, params)
    total_ms = (time.perf_counter() - t0) * 1000.0
    return _result(sug, params, total_ms, completer.tokens - tokens, completer.requests - requests)


def _result(sug: Any, params: BeamParams, total_ms: float, tokens_decoded: int, model_calls: int) -> dict:
    return {
        "suggestion": sug.text,
        "confidence": float(sug.confidence),
        "suppressed": bool(sug.suppressed),
        "strategy": params.strategy,
        "beam_width": params.beam_width,
        "timings_ms": {"complete": total_ms, **{k: float(v) for k, v in sug.timings_ms.items()}},
        "tokens_decoded": tokens_decoded,
        "model_calls": model_calls,
        "tokens_generated": sug.tokens_generated,
        "stable_tokens": sug.stable_tokens,
    }


def empty_result(params: BeamParams) -> dict:
    """The answer for an empty text: nothing to complete, no model work."""
    return {
        "suggestion": "",
        "confidence": 0.0,
        "suppressed": False,
        "strategy": params.strategy,
        "beam_width": params.beam_width,
        "timings_ms": {"complete": 0.0},
        "tokens_decoded": 0,
        "model_calls": 0,
        "tokens_generated": 0,
        "stable_tokens": 0,
    }


def _run_served(args: argparse.Namespace, text: str, params: BeamParams) -> dict:
    from daemon.backends.served.client import ServerError

    t0 = time.perf_counter()
    completer = open_served(args)
    load_ms = (time.perf_counter() - t0) * 1000.0
    try:
        result = served_once(completer, text, params)
    except ServerError as exc:
        raise UsageError(str(exc)) from None
    finally:
        completer.close()
    result["timings_ms"]["load"] = load_ms
    return result


def run(args: argparse.Namespace) -> int:
    try:
        params = make_params(args, args.strategy, args.beam_width)
        model_path = args.server or resolve(args.model)
        text = read_text(args)
        if args.server and text:
            result = _run_served(args, text, params)
        elif text == "":
            result = empty_result(params)
            result["timings_ms"]["load"] = 0.0
        else:
            t0 = time.perf_counter()
            lm = load_lm(model_path, n_seq_max=max(8, params.beam_width + 1))
            load_ms = (time.perf_counter() - t0) * 1000.0
            try:
                result = complete_once(lm, text, params)
            finally:
                close = getattr(lm, "close", None)
                if close is not None:
                    close()
            result["timings_ms"]["load"] = load_ms
        result["model"] = model_path
    except UsageError as exc:
        print(f"ghosttype complete: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print("" if result["suppressed"] else result["suggestion"])
    return 0
