"""What goes over the wire to a serving engine, and what comes back.

Requests use the OpenAI-compatible ``/v1/completions`` endpoint, streamed
(server-sent events), greedy (temperature 0), with per-token
log-probabilities.  The typed characters after the last stable boundary are
forced by the engine's own constrained decoding:

* llama.cpp (``llama-server`` and ``python -m llama_cpp.server``): a GBNF
  ``grammar``, ``root ::= "<typed>" .*``;
* vLLM (v0.12 and later): ``"structured_outputs": {"regex": ...}`` in the
  body; the older ``guided_regex`` field was removed in v0.12 and is ignored
  since, so it is not sent.  vLLM caps ``logprobs`` at its ``max_logprobs``
  (20 by default).

Nothing here does I/O; :mod:`daemon.backends.served.client` sends the bodies
and feeds the answer's lines to :func:`parse_event`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

ENGINES = ("llama.cpp", "vllm")
#: Alternatives asked for per position (vLLM's default max_logprobs is 20).
TOP_LOGPROBS = 10


class MalformedAnswer(ValueError):
    """The server's answer is not the completions stream this module expects."""


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (quotes included)."""
    out = []
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def gbnf_forcing(typed: str) -> str:
    """A grammar whose sentences start with ``typed`` and go on freely."""
    return f"root ::= {gbnf_literal(typed)} .*" if typed else "root ::= .*"


def regex_forcing(typed: str) -> str:
    """A regular expression (vLLM's structured outputs) for the same language."""
    return re.escape(typed) + r"[\s\S]*"


def completion_body(engine: str, prompt: str, typed: Optional[str], max_tokens: int,
                    model: str = "", logprobs: Optional[int] = TOP_LOGPROBS, covered: Sequence[int] = ()) -> dict:
    """The JSON body of one streamed request: continue ``prompt``, the
    continuation starting with ``typed`` (None: unconstrained, naive decoding).
    ``covered``: token ids that follow the prompt text (llama-server's mixed
    prompt, ``[text, id, ...]``), the start of the covering an earlier answer
    chose; ``typed`` is then what is left to force after them."""
    if engine not in ENGINES:
        raise ValueError(f"unknown serving engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if covered and engine != "llama.cpp":
        raise ValueError("token ids in the prompt are llama-server's (engine llama.cpp)")
    body: dict = {
        "prompt": [prompt, *(int(t) for t in covered)] if covered else prompt,
        "max_tokens": int(max_tokens),
        "temperature": 0.0,
        "stream": True,
    }
    if logprobs:
        body["logprobs"] = int(logprobs)
    if model:
        body["model"] = model
    if typed is not None:
        if engine == "vllm":
            body["structured_outputs"] = {"regex": regex_forcing(typed)}
        else:
            body["grammar"] = gbnf_forcing(typed)
    return body


@dataclass(frozen=True)
class TokenEvent:
    """One generated token of a streamed answer."""

    text: str
    logprob: Optional[float] = None  #: log P(token) as the engine reports it (None: not reported)
    #: the engine's alternatives at this position: token text -> log-probability
    top: dict = field(default_factory=dict)
    #: the token's id in the engine's vocabulary, where it says (llama-server); None otherwise
    id: Optional[int] = None


@dataclass(frozen=True)
class Event:
    """One parsed server-sent event: tokens, and whether the answer ended."""

    tokens: tuple[TokenEvent, ...] = ()
    done: bool = False  #: ``[DONE]`` or a ``finish_reason``


def parse_event(line: bytes) -> Optional[Event]:
    """One line of the event stream; None for lines that carry no data
    (blank separators, comments, ``event:`` fields).  Raises
    :class:`MalformedAnswer` with a message that never quotes the payload
    (it may echo typed text)."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return None
    data = line[5:].strip()
    if data == b"[DONE]":
        return Event(done=True)
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise MalformedAnswer("an event is not JSON") from None
    if not isinstance(obj, dict):
        raise MalformedAnswer("an event is not a JSON object")
    if "error" in obj:
        raise MalformedAnswer("the server reported an error inside the stream")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedAnswer("an event has no choices")
    choice = choices[0]
    text = choice.get("text")
    if not isinstance(text, str):
        raise MalformedAnswer("an event's choice has no text")
    tokens = _tokens(text, choice.get("logprobs"))
    return Event(tokens=tokens, done=choice.get("finish_reason") is not None)


def _tokens(text: str, logprobs: object) -> tuple[TokenEvent, ...]:
    """The tokens of one choice: from its OpenAI-style ``logprobs`` (``tokens``,
    ``token_logprobs``, ``top_logprobs``: llama-cpp-python, vLLM) or
    llama-server's (``content``: a list of ``token``, ``logprob``,
    ``top_logprobs``) when present, else the text as one piece."""
    if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
        return _content_tokens(text, logprobs["content"])
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("tokens"), list):
        return (TokenEvent(text),) if text else ()
    names = logprobs["tokens"]
    values = logprobs.get("token_logprobs") or [None] * len(names)
    tops = logprobs.get("top_logprobs") or [None] * len(names)
    if not (len(values) == len(tops) == len(names)) or not all(isinstance(n, str) for n in names):
        raise MalformedAnswer("an event's logprobs do not line up with its tokens")
    if "".join(names) != text:
        raise MalformedAnswer("an event's tokens do not spell its text")
    out = []
    for name, value, top in zip(names, values, tops):
        lp = float(value) if isinstance(value, (int, float)) else None
        alts = {k: float(v) for k, v in top.items() if isinstance(k, str) and isinstance(v, (int, float))} \
            if isinstance(top, dict) else {}
        out.append(TokenEvent(name, lp, alts))
    return tuple(out)


def _content_tokens(text: str, content: list) -> tuple[TokenEvent, ...]:
    out = []
    for item in content:
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            raise MalformedAnswer("an event's logprobs content is not a list of tokens")
        lp = item.get("logprob")
        alts = {}
        for alt in item.get("top_logprobs") or []:
            if isinstance(alt, dict) and isinstance(alt.get("token"), str) and isinstance(alt.get("logprob"), (int, float)):
                alts[alt["token"]] = float(alt["logprob"])
        tid = item.get("id")
        out.append(TokenEvent(item["token"], float(lp) if isinstance(lp, (int, float)) else None, alts,
                              tid if isinstance(tid, int) and not isinstance(tid, bool) else None))
    if "".join(t.text for t in out) != text:  # e.g. a character split across tokens: keep the text
        return (TokenEvent(text),) if text else ()
    return tuple(out)
