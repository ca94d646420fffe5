"""Issue 28's last three candidates, measured with the patient simulated user
(``ghosttype eval --simulate-user --key-interval-ms 0``) on the corpus.

Each candidate wraps the decoder the SuggestionWorker calls and runs through
the same :func:`daemon.evaluation.simulate.simulate_files` as ``ghosttype
eval --simulate-user``, so a candidate and the baseline differ only in the
wrapper:

``stable``
    Show only what stays the same from one request to the next: the previous
    request's suggestion (the decoder's text, shown or withheld by the gate),
    advanced by what the user typed since, against the new one
    (:func:`stable_rule`; ``--mode`` says what happens where they disagree or
    where there is no previous suggestion to compare with).
``title``
    A first line with the application's window title (:data:`TITLES`) in front
    of the model's context, inside the same ``context_chars``.
``earlier``
    The tail of what the user typed earlier in this session in another field,
    then a blank line, in front of the field's own text, inside the same
    ``context_chars`` (``--earlier-from``: which text that was).

``baseline`` runs the shipped decoder the same way (the same figures as
``ghosttype eval --simulate-user --no-baselines --key-interval-ms 0``).
``--empty-field`` types the same span into an empty field instead of one that
already holds the text before it: where the field's own text is short, a
header has room to matter.

``stable-sweep`` replays the ``stable`` rule offline over the suggestions
``tests.research.user_policy collect`` saved (the patient user's path, as
``user_policy`` replays it), for every mode and threshold at once, next to the
shipped gate's own sweep, and prints each variant's gain over the gate's
curve at the same wrong rate: it chose the mode on the tuning part.

    python -m tests.research.context_candidates baseline FILE... [--confidence-threshold P] [--empty-field]
    python -m tests.research.context_candidates stable FILE... [--mode cut] [--rescue-min P] [--confidence-threshold P]
    python -m tests.research.context_candidates title FILE... [--empty-field]
    python -m tests.research.context_candidates earlier FILE... [--earlier-from other|same-kind] [--earlier-chars 400]
    python -m tests.research.context_candidates stable-sweep DIR/*.json

Every live command takes ``--chars`` (1000), ``--seed`` (0), ``--model``
(smollm2), ``--key-interval-ms`` (0: the patient user) and ``--json OUT``.
The texts are benchmark texts; what is typed stays in memory (``--json``
writes only the figures).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import sys
import tomllib
from typing import Any, Callable, Optional, Sequence

from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.cpc.window import ContextWindow

_WORD_CHAR = re.compile(r"\w")
CORPUS = pathlib.Path(__file__).resolve().parent.parent / "corpus"

# --------------------------------------------------------------------------- stable across keystrokes

#: What the rule does with a new suggestion (gate: the confidence gate passes it;
#: agreed: its part the previous suggestion agrees on, :func:`agreed_part`):
#: ``cut``: gated, then cut to the agreed part where there is a previous suggestion;
#: ``strict``: gated and agreed, nothing without a previous suggestion;
#: ``rescue``: gated as shipped, and the agreed part where the gate withholds it;
#: ``stable``: the agreed part, no gate; ``stable-or-gate``: the agreed part, the gate without a previous suggestion.
MODES = ("cut", "strict", "rescue", "stable", "stable-or-gate")


def agreed_part(new: str, prior: str) -> str:
    """The beginning of ``new`` that ``prior`` agrees on, not ending inside a
    word and without trailing blanks; "" unless it holds at least ``new``'s
    first word (what the accept-word key inserts)."""
    from daemon.controller import next_word

    end = len(os.path.commonprefix([new, prior]))
    if end == len(new):
        return new
    if end and _WORD_CHAR.match(new[end - 1]) and _WORD_CHAR.match(new[end]):
        while end and _WORD_CHAR.match(new[end - 1]):
            end -= 1
    agreed = new[:end].rstrip()
    first = next_word(new).rstrip()
    return agreed if agreed.strip() and len(agreed) >= len(first) else ""


def advanced(raw: str, typed: str) -> Optional[str]:
    """The previous suggestion ``raw`` after the user typed ``typed``: what is
    left of it, or None when it did not predict ``typed`` or is used up."""
    if raw.startswith(typed) and len(raw) > len(typed):
        return raw[len(typed):]
    return None


def stable_rule(mode: str, new: str, passes: bool, prior: Optional[str]) -> str:
    """What is shown of the new suggestion ``new`` (``passes``: the gate lets
    it through) given ``prior``, the previous one advanced (None: nothing to
    compare with); see :data:`MODES`."""
    agreed = "" if prior is None or not new else agreed_part(new, prior)
    gated = new if passes else ""
    if mode == "cut":
        return gated if prior is None else (agreed if passes else "")
    if mode == "strict":
        return agreed if passes else ""
    if mode == "rescue":
        return gated or agreed
    if mode == "stable":
        return agreed
    if mode == "stable-or-gate":
        return gated if prior is None else agreed
    raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")


#: Characters of the field's text before a request that must match to tell what was typed since the last one.
_OVERLAP = 200


def typed_since(before: str, now: str, longest: int) -> Optional[str]:
    """What was typed after the field held ``before`` to make it hold ``now``
    (at most ``longest`` characters), or None.  The field's buffer may have
    dropped characters from the front of either, so the texts are matched
    by their ends."""
    for n in range(min(longest, len(now)) + 1):
        head = now[:len(now) - n]
        if head and before.endswith(head[-_OVERLAP:]):
            return now[len(now) - n:]
    return None


class StableAcrossKeys:
    """The decoder, showing only what :func:`stable_rule` keeps of each
    suggestion (partial ones too).  The previous request is the last one that
    finished.  ``rescue_min``: a suggestion of lower confidence is treated as
    having no previous one to agree with (with ``rescue``: a second, lower
    gate for the agreed part)."""

    def __init__(self, inner: Any, mode: str, rescue_min: float = 0.0) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        self.inner = inner
        self.mode = mode
        self.rescue_min = rescue_min
        self._last: Optional[tuple[str, str]] = None  #: (text before the caret, the decoder's suggestion)

    def complete(self, text: str, params: BeamParams, cancel: Any = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        prior = None
        if self._last is not None:
            before, raw = self._last
            typed = typed_since(before, text, len(raw))
            prior = None if typed is None else advanced(raw, typed)

        def shown(s: Suggestion) -> Suggestion:
            t = stable_rule(self.mode, s.text, not s.suppressed, prior if s.confidence >= self.rescue_min else None)
            return dataclasses.replace(s, text=t, suppressed=False) if t else dataclasses.replace(s, suppressed=True)

        s = self.inner.complete(text, params, cancel, None if on_partial is None else lambda p: on_partial(shown(p)))
        self._last = (text, s.text)
        return shown(s)

    def prefill(self, text: str, params: BeamParams, cancel: Any = None) -> None:
        self.inner.prefill(text, params, cancel)

    def __getattr__(self, name: str) -> Any:  # warm_step, warming, used_near_window, ...
        return getattr(self.inner, name)


# --------------------------------------------------------------------------- a header in the context


class ContextHeader:
    """The decoder, given ``header`` followed by the field's text, cut so that
    both together stay within ``context_chars``.  The field's part keeps a
    coarse-stepped start (:class:`~daemon.cpc.window.ContextWindow`) as the
    decoder's own window does, so the prompt's cache survives typing."""

    def __init__(self, inner: Any, header: str) -> None:
        self.inner = inner
        self.header = header
        self._window = ContextWindow()

    def context(self, text: str, params: BeamParams) -> str:
        budget = int(params.context_chars) - len(self.header)
        if budget < 1:
            raise ValueError("the header leaves no room for the field's text")
        return self.header + self._window.window(text, budget)

    def complete(self, text: str, params: BeamParams, cancel: Any = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        return self.inner.complete(self.context(text, params), params, cancel, on_partial)

    def prefill(self, text: str, params: BeamParams, cancel: Any = None) -> None:
        self.inner.prefill(self.context(text, params), params, cancel)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


#: The window title of the editor each corpus text would be typed in: its
#: source file's name (tests/corpus/MANIFEST.toml; NEWS.gz as the uncompressed
#: NEWS, a pydoc topic as the reStructuredText file of that name), in Mousepad
#: for prose ("NAME - Mousepad", its title bar) and GNOME Text Editor for code
#: ("NAME - Text Editor").
TITLES = {
    "news_core.txt": "NEWS - Mousepad",
    "news_library.txt": "NEWS - Mousepad",
    "doc_exceptions.txt": "exceptions.rst - Mousepad",
    "doc_import.txt": "import.rst - Mousepad",
    "readme_jansson.txt": "README.rst - Mousepad",
    "readme_debian_python.txt": "README.Debian - Mousepad",
    "zpipe.c": "zpipe.c - Text Editor",
    "gzjoin.c": "gzjoin.c - Text Editor",
    "json_process.c": "json_process.c - Text Editor",
    "sched.py": "sched.py - Text Editor",
    "colorsys.py": "colorsys.py - Text Editor",
    "fnmatch.py": "fnmatch.py - Text Editor",
}


def manifest() -> list[dict]:
    return tomllib.loads((CORPUS / "MANIFEST.toml").read_text(encoding="utf-8"))["file"]


def earlier_source(file_name: str, how: str) -> str:
    """The corpus text the user typed in another field before ``file_name``:
    ``other``: the one before it among the texts of the same part typed the
    same way (prose or code; MANIFEST order, the first takes the last);
    ``same-kind``: the first text of the same MANIFEST kind in the other part."""
    from daemon.evaluation.simulate import kind_of

    files = manifest()
    me = next(f for f in files if f["name"] == file_name)
    if how == "other":
        group = [f["name"] for f in files if f["part"] == me["part"] and kind_of(f["name"]) == kind_of(file_name)]
        return group[group.index(file_name) - 1]
    if how == "same-kind":
        return next(f["name"] for f in files if f["kind"] == me["kind"] and f["part"] != me["part"])
    raise ValueError(f"unknown --earlier-from {how!r}")


def typed_tail(file_name: str, chars: int, seed: int, context_chars: int, tail_chars: int) -> str:
    """The end of what the simulated user types of corpus text ``file_name``
    with these settings: its last ``tail_chars`` characters, from the first
    line start (code) or word start (prose) among them."""
    from daemon.evaluation.replay import choose_start
    from daemon.evaluation.simulate import as_typed, kind_of

    text = as_typed((CORPUS / file_name).read_text(encoding="utf-8"), kind_of(file_name))
    start = choose_start(text, chars, context_chars, seed)
    end = min(len(text), start + chars)
    tail = text[max(start, end - tail_chars):end]
    if kind_of(file_name) == "code":
        return tail[tail.find("\n") + 1:]
    return tail[tail.find(" ") + 1:]


def typed_span(name: str, raw: str, chars: int, seed: int, context_chars: int) -> str:
    """Only the span of text ``name`` that ``simulate_files`` types on the
    whole text: typed alone, into an empty field (a prose span's trailing
    blank is dropped, as the simulated user's prose never ends with one)."""
    from daemon.evaluation.replay import choose_start
    from daemon.evaluation.simulate import as_typed, kind_of

    text = as_typed(raw, kind_of(name))
    start = choose_start(text, chars, context_chars, seed)
    return as_typed(text[start:start + chars], kind_of(name))


# --------------------------------------------------------------------------- offline sweep of the stable rule


def sweep_stable(runs: Sequence[dict], variants: Sequence[tuple[str, float, float]],
                 continue_min: float = BeamParams().continue_min_prob) -> list[tuple[tuple[str, float, float], Any]]:
    """(variant, pooled UserRun) for each (mode, threshold, rescue_min), replayed over
    ``user_policy collect`` records; mode ``gate`` is the shipped rule."""
    out = []
    for variant in variants:
        out.append((variant, _pooled([replay_stable(r, *variant, continue_min) for r in runs])))
    return out


def replay_stable(run: dict, mode: str, threshold: float, rescue_min: float, continue_min: float) -> Any:
    """The patient user's path through one text of ``user_policy collect``
    under :func:`stable_rule` (or the shipped gate, mode ``gate``)."""
    from tests.research.user_policy import Policy, confidence, replay, shown_text

    text, records = run["text"], run["records"]
    last: list[tuple[int, str]] = []  #: where the previous request was made, and its suggestion

    def show(p: int) -> str:
        raw = shown_text(records[p], text[:p], Policy(0.0, continue_min))
        c = confidence(records[p], None)
        passes = bool(raw) and c >= threshold
        if mode == "gate":
            return raw if passes else ""
        prior = advanced(last[0][1], text[last[0][0]:p]) if last else None
        last[:] = [(p, raw)]
        return stable_rule(mode, raw, passes, prior if c >= rescue_min else None)

    return replay(text, run["start"], records, Policy(threshold, continue_min), show=show)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from tests.research.user_policy import load

    runs = load(args.files)
    thresholds = [float(x) for x in args.thresholds.split(",")]
    variants = [(m, t, 0.0) for m in ("gate", *MODES) for t in thresholds]
    variants += [("rescue", t, lo) for t in thresholds for lo in thresholds if 0 < lo < t]
    kinds = sorted({r["kind"] for r in runs})
    results = {kind: dict(sweep_stable([r for r in runs if r["kind"] == kind], variants)) for kind in kinds}
    curves = {k: sorted((results[k][("gate", t, 0.0)].wrong_per_100, results[k][("gate", t, 0.0)].saved)
                        for t in thresholds) for k in kinds}
    print(f"{'mode':15} {'threshold':>9} {'rescue_min':>10}  " + "  ".join(f"{k:>14}" for k in [*kinds, "all"])
          + "  " + "  ".join(f"{'gain ' + k:>10}" for k in kinds))
    best = None
    for v in variants:
        pooled = _pooled([results[k][v] for k in kinds])
        gains = [results[k][v].saved - on_curve(curves[k], results[k][v].wrong_per_100) for k in kinds]
        print(f"{v[0]:15} {v[1]:9.2f} {v[2]:10.2f}  " + "  ".join(
            f"{100 * u.saved:5.1f}% / {u.wrong_per_100:4.1f}" for u in [*(results[k][v] for k in kinds), pooled])
            + "  " + "  ".join(f"{100 * g:+10.1f}" for g in gains))
        if v[0] != "gate" and (best is None or min(gains) > best[1]):
            best = (v, min(gains))
    if best is not None:
        print(f"\nthe largest gain over the gate's own curve at the same wrong rate, on the kind it gains least: "
              f"{best[0][0]} threshold {best[0][1]:g} rescue_min {best[0][2]:g} ({100 * best[1]:+.1f} points)")
    return 0


def on_curve(curve: Sequence[tuple[float, float]], wrong: float) -> float:
    """Keystrokes saved on the piecewise-linear ``curve`` ((wrong per 100, saved), by wrong) at ``wrong``;
    the nearest end outside it."""
    if wrong <= curve[0][0]:
        return curve[0][1]
    for (w0, s0), (w1, s1) in zip(curve, curve[1:]):
        if wrong <= w1:
            return s0 + (s1 - s0) * (wrong - w0) / (w1 - w0) if w1 > w0 else max(s0, s1)
    return curve[-1][1]


def _pooled(runs: Sequence[Any]) -> Any:
    from daemon.evaluation.simulate import UserRun

    total = UserRun(name="all")
    for u in runs:
        total.add(u)
    return total


# --------------------------------------------------------------------------- live runs


def _cmd_live(args: argparse.Namespace) -> int:
    import json

    from daemon.backends.llamacpp.open import resolve
    from daemon.evaluation.simulate import simulate_files

    params = BeamParams(confidence_threshold=args.confidence_threshold)
    files = [(pathlib.Path(f).name, pathlib.Path(f).read_text(encoding="utf-8")) for f in args.files]
    if args.empty_field:
        files = [(name, typed_span(name, raw, args.chars, args.seed, params.context_chars)) for name, raw in files]
    wrap: Optional[Callable[[str, Any], Any]] = None
    label = "none (the shipped decoder)"
    if args.cmd == "stable":
        def wrap(name: str, decoder: Any) -> Any:
            return StableAcrossKeys(decoder, args.mode, args.rescue_min)
        label = f"stable, mode {args.mode}" + (f", rescue_min {args.rescue_min:g}" if args.rescue_min else "")
    elif args.cmd == "title":
        def wrap(name: str, decoder: Any) -> Any:
            return ContextHeader(decoder, TITLES[name] + "\n")
        label = "window title line"
    elif args.cmd == "earlier":
        def wrap(name: str, decoder: Any) -> Any:
            source = earlier_source(name, args.earlier_from)
            tail = typed_tail(source, args.chars, args.seed, params.context_chars, args.earlier_chars)
            print(f"{name}: earlier text from {source}, {len(tail)} chars")
            return ContextHeader(decoder, tail + "\n\n")
        label = f"earlier text ({args.earlier_from}, {args.earlier_chars} chars)"
    field = ", typed into an empty field" if args.empty_field else ""
    print(f"candidate: {label}, threshold {params.confidence_threshold:g}{field}")
    obj = simulate_files(args.model, resolve(args.model), files, params, chars=args.chars, seed=args.seed,
                         key_interval_ms=args.key_interval_ms, baselines=False, wrap=wrap)
    obj["settings"].update(candidate=label, empty_field=args.empty_field)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(obj, indent=1) + "\n")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.research.context_candidates",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("baseline", "stable", "title", "earlier"):
        c = sub.add_parser(name)
        c.add_argument("files", nargs="+")
        c.add_argument("--chars", type=int, default=1000)
        c.add_argument("--seed", type=int, default=0)
        c.add_argument("--model", default="smollm2")
        c.add_argument("--key-interval-ms", type=float, default=0.0, help="0 (default): the patient user")
        c.add_argument("--confidence-threshold", type=float, default=BeamParams().confidence_threshold)
        c.add_argument("--json", metavar="OUT")
        c.add_argument("--empty-field", action="store_true",
                       help="type the same span into an empty field (default: as ghosttype eval, the field "
                            "already holds the text before it)")
        if name == "stable":
            c.add_argument("--mode", choices=MODES, default="cut")
            c.add_argument("--rescue-min", type=float, default=0.0,
                           help="the agreed part counts only for suggestions of at least this confidence")
        if name == "earlier":
            c.add_argument("--earlier-from", choices=("other", "same-kind"), default="other")
            c.add_argument("--earlier-chars", type=int, default=400)
        c.set_defaults(func=_cmd_live)
    s = sub.add_parser("stable-sweep")
    s.add_argument("files", nargs="+")
    s.add_argument("--thresholds", default="0.2,0.3,0.4,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.9")
    s.set_defaults(func=_cmd_sweep)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
