"""Suggestions from a served model: the worker's ``Completer`` over a
:class:`~daemon.backends.served.client.Server`.

A serving engine returns a handful of log-probabilities per generated token,
not whole next-token rows, so it cannot stand behind the decoder's
``TokenLM``; this completer replaces the decoder instead and lets the engine
do the coverage search with its own constrained decoding:

1. **Prompt and typed part.**  The context window is cut like the local
   decoder's (:class:`~daemon.cpc.window.ContextWindow`, so the engine's
   prompt cache survives typing) and split at the last place where a
   non-blank character is followed by whitespace: everything before it is the
   prompt, the rest (the blank run and the characters typed after it) must
   start the continuation.  Pre-tokenizers of byte-level BPE models (GPT-2,
   Llama 3, Qwen, SmolLM2) always cut a chunk there, so the prompt's tokens
   are the ones the whole text would have, and the model never sees a broken
   token split.  (The client has no tokenizer: the local decoder's finer,
   token-exact split inside a word is not available.)
2. **Covering and continuation** are one greedy generation under a grammar
   (llama.cpp) or regular expression (vLLM) that forces the typed part:
   coverage search with beam width 1 done by the engine.  The next keystroke
   in the same word starts from the covering tokens the last answer chose
   (llama-server: sent as token ids after the prompt, :class:`_Covering`),
   so the engine forces only the new characters; the answer is the same.  The answer is
   streamed; the suggestion is what follows the typed part, cut by the same
   rules as the local decoder's (newline in single-line mode, sentence end,
   broken UTF-8, ``max_tokens``, ``continue_min_prob``), and the stream is
   closed as soon as the suggestion is complete.
3. **Confidence.**  The gate (:mod:`daemon.cpc.confidence`) gets the local
   decoder's signals, estimated from one greedy path: the word's
   log-probability is the sum over its tokens; the margin and the share,
   which the local search takes from competing words, come from the
   competing tokens the engine listed at the first token that adds
   suggestion bytes (the chosen one against the best other allowed one; its
   probability among the allowed ones).  The engine's log-probabilities at the
   positions inside the typed part are over the whole vocabulary (the
   servers report them before the grammar), so they are renormalised over
   the listed alternatives that spell the typed bytes; alternatives beyond
   the ``TOP_LOGPROBS`` listed are missing from the sum, which makes the
   renormalised probability an upper bound and the entropy a lower bound.
   Without log-probabilities (an engine that sends none, or
   ``logprobs=False``: llama-cpp-python's server computes them in Python,
   about 0.1 s per token on this project's CPU) there is no gate: every
   suggestion is shown, with confidence 1.
4. **Deadline.**  With ``deadline_ms`` set, a request whose first word has
   not arrived by then is aborted and raises ``ServerError("slow")`` (the
   route answers that keystroke from the local model).  Every request, the
   prefill included, also ends after the server's ``request_timeout_s``
   whatever it receives (:mod:`daemon.backends.served.client`).  A newer
   keystroke (``cancel``) aborts the request at once either way.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from dataclasses import dataclass
from typing import Callable, Optional

from daemon.cpc.beam import first_word_done, word_end
from daemon.cpc.confidence import WordSignals, typed_word, word_confidence
from daemon.cpc.lm import Cancelled, CancelCheck
from daemon.cpc.stopping import stop_position
from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.cpc.utf8 import decode_prefix
from daemon.cpc.window import ContextWindow

from .client import Aborted, Server, ServerError
from .wire import TOP_LOGPROBS, TokenEvent, completion_body

_BOUNDARY = re.compile(r"(?<=\S)\s+\S*\Z")


def split_typed(text: str) -> tuple[str, str]:
    """(prompt, typed): ``text`` cut before its last blank run that follows a
    non-blank character; without one the whole text is typed."""
    m = _BOUNDARY.search(text)
    if m is None:
        return "", text
    return text[: m.start()], text[m.start():]


@dataclass(frozen=True)
class _Step:
    """One position of the answer, seen through the alternatives the engine listed."""

    logprob: Optional[float]  #: log P(chosen token) among the allowed alternatives
    entropy: float = 0.0  #: of the allowed alternatives (a lower bound: only the listed ones)
    margin: Optional[float] = None  #: chosen minus the best other allowed alternative
    share: float = 1.0  #: P(chosen) among the allowed alternatives


def _step(tok: TokenEvent, rest: bytes) -> _Step:
    """The position of ``tok`` where the alternatives must spell ``rest`` (the
    typed bytes still to cover; ``b""``: every alternative is allowed)."""
    if tok.logprob is None:
        return _Step(None)
    allowed = {tok.text: tok.logprob}
    for text, lp in tok.top.items():
        b = text.encode("utf-8")
        if b and (rest.startswith(b) or b.startswith(rest)):
            allowed[text] = lp
    top = max(allowed.values())
    # Inside the typed part the engine's numbers ignore the constraint: renormalise.
    # After it every token is allowed and they are already normalised.
    z = top + math.log(sum(math.exp(v - top) for v in allowed.values())) if rest else 0.0
    entropy = -sum(math.exp(v - z) * (v - z) for v in allowed.values())
    others = [v for k, v in allowed.items() if k != tok.text]
    margin = tok.logprob - max(others) if others else None
    return _Step(tok.logprob - z, max(0.0, entropy), margin, math.exp(tok.logprob - z))


class _Answer:
    """The suggestion being assembled from one streamed answer."""

    def __init__(self, text: str, typed: str, params: BeamParams) -> None:
        self.text = text
        self.typed = typed.encode("utf-8")
        self.params = params
        self.data = bytearray()  # everything generated, the typed part included
        self.tokens = 0
        self.produced = 0  # tokens after the covering
        self.word_lp: Optional[float] = 0.0  # log P of the tokens up to the first word's end
        self.first: Optional[_Step] = None  # the first token that adds suggestion bytes
        self.fw: Optional[int] = None  # bytes of the first word, once it is whole
        self.signals: Optional[WordSignals] = None
        self.confidence = 0.0
        self.joint = 0.0
        self.limit = math.log(params.continue_min_prob) if params.continue_min_prob > 0 else -math.inf
        self.final: Optional[int] = None  # where the suggestion ends, once known
        self.tail: list[tuple[int, float]] = []

    @property
    def gen(self) -> bytes:
        return bytes(self.data[len(self.typed):])

    def add(self, tok: TokenEvent) -> None:
        """One token; sets ``final`` when the suggestion is complete."""
        piece = tok.text.encode("utf-8")
        at = len(self.data)
        covering = at < len(self.typed)
        if covering:
            rest = self.typed[at:]
            if not piece or not (rest.startswith(piece) or piece.startswith(rest)):
                raise ServerError("malformed", "the answer does not continue the typed text "
                                               "(the server ignored the constraint)")
            step = _step(tok, rest)
        else:
            step = _step(tok, b"")
            self.produced += 1
        lp = step.logprob
        self.tokens += 1
        counted = False
        if self.fw is None:
            self.fw = first_word_done(self.gen, piece) if at > len(self.typed) else None
            if self.fw is not None:
                self._word_done()  # this token follows the word: free, as in the local decoder
            else:
                self.word_lp = None if (lp is None or self.word_lp is None) else self.word_lp + lp
                if self.first is None and at + len(piece) > len(self.typed):
                    self.first = step
        else:
            self.joint += lp if lp is not None else 0.0
            if self.joint < self.limit:
                self.final = word_end(self.gen, piece, self.fw)
                return
            counted = lp is not None
        self.data += piece
        if counted:
            self.tail.append((len(self.gen), float(lp)))  # type: ignore[arg-type]
        cut = self._cut(self.gen)
        if cut is not None:
            self.final = cut
        elif self.produced >= int(self.params.max_tokens):
            self.final = len(self.gen)

    def _cut(self, data: bytes) -> Optional[int]:
        at = stop_position(data, self.params.single_line, self.params.stop_at_sentence_end)
        head, broken = decode_prefix(data)
        if broken:
            bad = len(head.encode("utf-8"))
            at = bad if at is None else min(at, bad)
        return at

    def _word_done(self) -> None:
        assert self.fw is not None
        word_text, _ = decode_prefix(self.gen[: self.fw])
        if self.word_lp is None or self.first is None or self.first.logprob is None:
            self.signals, self.confidence = None, 1.0  # no log-probabilities: no gate
        else:
            typed_chars, in_context = typed_word(self.text, word_text)
            self.signals = WordSignals(
                word_logprob=self.word_lp, margin=self.first.margin, share=self.first.share,
                first_logprob=self.first.logprob, first_entropy=self.first.entropy,
                word_chars=len(word_text), typed_chars=typed_chars,
                in_context=in_context)
            self.confidence = word_confidence(self.signals)
        self.joint = math.log(max(self.confidence, 1e-300))

    def finish(self) -> None:
        """The answer ended (or was cut): the first word is whatever came."""
        if self.fw is None and len(self.data) > len(self.typed):
            data = self.gen if self.final is None else self.gen[: self.final]
            self.fw = first_word_done(data, b"")
            if self.fw is not None:
                self._word_done()

    def suggestion(self, partial: bool, timings: dict) -> Suggestion:
        data = self.gen if self.final is None else self.gen[: self.final]
        if partial and self.fw is not None:
            data = data[: word_end(data, data[-1:], self.fw)]  # the last word may still grow
        shown, _ = decode_prefix(data) if self.fw is not None else ("", False)
        confidence = self.confidence if shown else 0.0
        tail = tuple((len(decode_prefix(self.gen[:end])[0]), lp) for end, lp in self.tail)
        return Suggestion(
            text=shown, confidence=confidence,
            suppressed=bool(shown) and confidence < self.params.confidence_threshold,
            remainder=self.typed, tokens_generated=self.tokens, steps=self.tokens,
            timings_ms=timings, signals=self.signals, tail=tail,
        )


@dataclass(frozen=True)
class _Covering:
    """The start of the covering the last answer chose: its whole tokens
    inside the typed part, after ``prompt``.  A request with the same prompt
    whose typed part extends ``typed`` (the next keystroke in the word) sends
    them as token ids after the prompt and forces only the rest: the engine
    neither evaluates nor searches them again.  That changes nothing in the
    answer: at each of those positions the tokens the longer typed part
    allows are a subset of those the shorter one allowed, and the token
    chosen there lies inside the shorter typed part, so it is allowed by
    both and stays the most likely; their log-probabilities are the ones
    streamed before (the same logits), seen through the new typed part."""

    prompt: str
    typed: bytes
    tokens: tuple[TokenEvent, ...]


class ServedCompleter:
    """The worker's ``Completer`` for a served model; see the module docstring.
    Used from one thread (the worker's) at a time."""

    warming = False  #: no background prefill: the engine keeps its own prompt cache

    def __init__(self, server: Server, engine: str = "llama.cpp", model: str = "",
                 deadline_ms: float = 0.0, logprobs: bool = True) -> None:
        self.server = server
        self.logprobs = TOP_LOGPROBS if logprobs else None
        self.engine = engine
        self.model = model
        self.deadline_s = max(0.0, float(deadline_ms)) / 1000.0
        self._window = ContextWindow()
        self.requests = 0  #: requests sent (benchmarks)
        self.tokens = 0  #: tokens received
        self.cancelled = 0  #: requests aborted by ``cancel`` (a newer keystroke)
        self.failed = 0  #: requests that ended in a ServerError (benchmarks)
        self.reused = 0  #: covering tokens sent as ids instead of being generated again (benchmarks)
        self.covering_tokens = 0  #: tokens received inside the typed part (generated under the constraint)
        self._covering: Optional[_Covering] = None

    def warm_step(self, cancel: Optional[CancelCheck] = None) -> bool:
        return False

    def close(self) -> None:
        self.server.close()

    def _split(self, text: str, params: BeamParams) -> tuple[str, Optional[str]]:
        window = self._window.window(text, int(params.context_chars))
        if params.strategy == "naive":
            return window, None
        return split_typed(window)

    def prefill(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None) -> None:
        """Have the engine evaluate the prompt part of ``text`` (one token
        generated), so the first keystroke in a field finds it cached."""
        if not text.strip():
            return
        prompt, _ = self._split(text, params)
        if prompt:
            body = completion_body(self.engine, prompt, None, 1, self.model, logprobs=None)
            self._run(body, cancel, lambda _tok: False)

    def _run(self, body: dict, cancel: Optional[CancelCheck], on_token: Callable[[TokenEvent], bool],
             late: Callable[[], bool] = lambda: False) -> None:
        """Stream ``body``, giving each token to ``on_token`` until it returns
        True (enough: the stream is closed).  Raises Cancelled, or
        ServerError("slow") when ``late()`` turned true."""
        self.requests += 1

        def abort() -> bool:
            return bool(cancel is not None and cancel()) or late()

        try:
            with contextlib.closing(self.server.stream(body, abort)) as events:
                for event in events:
                    for tok in event.tokens:
                        self.tokens += 1
                        if on_token(tok):
                            return
        except Aborted:
            if cancel is not None and cancel():
                self.cancelled += 1
                raise Cancelled() from None
            self.failed += 1
            raise ServerError("slow", f"no suggestion from {self.server.url} within "
                                      f"{self.deadline_s * 1000:.0f} ms") from None
        except ServerError:
            self.failed += 1
            raise
        if cancel is not None and cancel():
            self.cancelled += 1
            raise Cancelled()

    def _reusable(self, prompt: str, typed: bytes) -> tuple[TokenEvent, ...]:
        """The last answer's covering tokens, when this request may start from them (see :class:`_Covering`)."""
        last = self._covering
        if last is None or not prompt or last.prompt != prompt or not typed.startswith(last.typed):
            return ()
        return last.tokens

    def complete(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        t0 = time.perf_counter()
        if not text.strip():
            return Suggestion(text="", confidence=0.0, timings_ms={"total": 0.0})
        prompt, typed = self._split(text, params)
        answer = _Answer(prompt + (typed or ""), typed or "", params)
        reused = self._reusable(prompt, answer.typed) if typed is not None else ()
        for tok in reused:
            answer.add(tok)
        chain = list(reused)  # this answer's covering so far: whole tokens inside the typed part, with ids
        deadline = time.monotonic() + self.deadline_s if self.deadline_s else None
        first_ms: list[float] = []

        def on_token(tok: TokenEvent) -> bool:
            had_word = answer.fw is not None
            self.covering_tokens += len(answer.data) < len(answer.typed)
            if len(chain) == answer.tokens and len(answer.data) + len(tok.text.encode("utf-8")) <= len(answer.typed) \
                    and tok.id is not None:
                chain.append(tok)
            answer.add(tok)
            if answer.fw is not None and on_partial is not None:
                if not had_word:
                    first_ms.append((time.perf_counter() - t0) * 1000.0)
                if answer.final is None:
                    on_partial(answer.suggestion(True, {}))
            return answer.final is not None

        def late() -> bool:
            return deadline is not None and answer.fw is None and time.monotonic() > deadline

        done = sum(len(t.text.encode("utf-8")) for t in reused)
        rest = answer.typed[done:].decode("utf-8") if typed is not None else None
        max_tokens = len(answer.typed) - done + int(params.max_tokens) + 1
        body = completion_body(self.engine, prompt, rest, max_tokens, self.model, self.logprobs,
                               covered=[t.id for t in reused if t.id is not None])
        self.reused += len(reused)
        try:
            self._run(body, cancel, on_token, late)
        finally:
            self._covering = _Covering(prompt, answer.typed, tuple(chain)) if chain else None
        answer.finish()
        timings = {"total": round((time.perf_counter() - t0) * 1000.0, 3)}
        if first_ms:
            timings["first_word"] = round(first_ms[0], 3)
        return answer.suggestion(False, timings)


__all__ = ["ServedCompleter", "split_typed"]
