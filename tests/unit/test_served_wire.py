"""The served backend's pure parts: request bodies (llama.cpp grammar, vLLM
structured outputs), the streamed answer's parsing, the prompt / typed split,
and the assembly of a suggestion from scripted tokens.

vLLM is not run anywhere in this suite: its request shape is checked here
against its documented API only (``structured_outputs`` in the body of
``/v1/completions``, v0.12 and later; the ``guided_*`` fields it replaced are
ignored by those versions and must not be relied on).
"""

from __future__ import annotations

import json
import math
import re
import threading

import pytest

from daemon.backends.served.client import ServerError
from daemon.backends.served.completer import _Answer, _step, split_typed
from daemon.backends.served.wire import (
    Event,
    MalformedAnswer,
    TokenEvent,
    completion_body,
    gbnf_forcing,
    gbnf_literal,
    parse_event,
    regex_forcing,
)
from daemon.cpc.suggestion import BeamParams


@pytest.mark.parametrize("text, prompt, typed", [
    ("Vim is a highly configurable te", "Vim is a highly configurable", " te"),
    ("Vim is a text ", "Vim is a text", " "),
    ("def f(n):\n    ret", "def f(n):", "\n    ret"),
    ("x = foo.ba", "x =", " foo.ba"),
    ("word", "", "word"),
    ("  lead", "", "  lead"),
    ("a  \n\n  b", "a", "  \n\n  b"),
])
def test_split_cuts_before_the_last_blank_run(text, prompt, typed):
    assert split_typed(text) == (prompt, typed)
    assert prompt + typed == text


def test_gbnf_literal_escapes_what_the_grammar_parser_reads_specially():
    assert gbnf_literal('a"b\\c\n\r\t\x01é') == '"a\\"b\\\\c\\n\\r\\t\\x01é"'
    assert gbnf_forcing(" te") == 'root ::= " te" .*'
    assert gbnf_forcing("") == "root ::= .*"


def test_llama_cpp_body_forces_the_typed_part_with_a_grammar():
    body = completion_body("llama.cpp", "Vim is a highly configurable", " te", 12, model="m")
    assert body == {"prompt": "Vim is a highly configurable", "max_tokens": 12, "temperature": 0.0,
                    "stream": True, "logprobs": 10, "model": "m", "grammar": 'root ::= " te" .*'}
    naive = completion_body("llama.cpp", "Vim", None, 4, logprobs=None)
    assert "grammar" not in naive and "logprobs" not in naive and "model" not in naive


def test_vllm_body_uses_structured_outputs_regex_not_the_removed_guided_fields():
    body = completion_body("vllm", "def f(n):", "\n    re(t", 9)
    assert body["structured_outputs"] == {"regex": regex_forcing("\n    re(t")}
    assert not any(k.startswith("guided") for k in body) and "grammar" not in body
    assert body["logprobs"] <= 20  # vLLM's default max_logprobs
    pattern = re.compile(body["structured_outputs"]["regex"])
    assert pattern.fullmatch("\n    re(turn x)\nmore")
    assert not pattern.fullmatch("\n    rex")
    json.dumps(body)  # it is a JSON body


def test_covered_tokens_follow_the_prompt_as_ids_for_llama_server_only():
    body = completion_body("llama.cpp", "Vim is a highly", "u", 9, covered=[4032, 17])
    assert body["prompt"] == ["Vim is a highly", 4032, 17] and body["grammar"] == 'root ::= "u" .*'
    assert completion_body("llama.cpp", "Vim is a highly", " configu", 9)["prompt"] == "Vim is a highly"
    with pytest.raises(ValueError):
        completion_body("vllm", "Vim is a highly", "u", 9, covered=[4032])


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="llama.cpp, vllm"):
        completion_body("tgi", "a", "b", 1)


def test_parse_event_reads_openai_stream_chunks():
    chunk = {"choices": [{"text": " editor", "index": 0, "finish_reason": None,
                          "logprobs": {"tokens": [" editor"], "token_logprobs": [-1.9],
                                       "top_logprobs": [{"-": -0.8, " editor": -1.9}]}}]}
    ev = parse_event(b"data: " + json.dumps(chunk).encode() + b"\r\n")
    assert ev == Event(tokens=(TokenEvent(" editor", -1.9, {"-": -0.8, " editor": -1.9}),), done=False)
    assert parse_event(b"data: [DONE]\n") == Event(done=True)
    assert parse_event(b"\r\n") is None and parse_event(b": keep-alive\n") is None
    plain = {"choices": [{"text": "ab", "finish_reason": "length"}]}
    assert parse_event(b"data: " + json.dumps(plain).encode()) == Event(tokens=(TokenEvent("ab"),), done=True)


def test_parse_event_reads_llama_server_logprobs_content():
    chunk = {"choices": [{"text": " lazy", "index": 0, "finish_reason": None, "logprobs": {"content": [
        {"id": 16116, "token": " lazy", "bytes": [32, 108, 97, 122, 121], "logprob": -0.05,
         "top_logprobs": [{"id": 16116, "token": " lazy", "logprob": -0.05}, {"id": 1, "token": " la", "logprob": -4.0}]}]}}]}
    ev = parse_event(b"data: " + json.dumps(chunk).encode())
    assert ev == Event(tokens=(TokenEvent(" lazy", -0.05, {" lazy": -0.05, " la": -4.0}, 16116),))
    chunk["choices"][0]["text"] = " laz"  # the text held back part of a token: keep the text, drop the numbers
    assert parse_event(b"data: " + json.dumps(chunk).encode()) == Event(tokens=(TokenEvent(" laz"),))


@pytest.mark.parametrize("line", [
    b"data: {not json",
    b"data: [1, 2]",
    b'data: {"choices": []}',
    b'data: {"error": {"message": "secret typed text"}}',
    b'data: {"choices": [{"text": "ab", "logprobs": {"tokens": ["a"], "token_logprobs": [-1], "top_logprobs": [{}]}}]}',
])
def test_malformed_events_raise_without_quoting_the_payload(line):
    with pytest.raises(MalformedAnswer) as err:
        parse_event(line)
    assert "secret" not in str(err.value) and "typed" not in str(err.value)


def test_renormalisation_keeps_only_alternatives_that_spell_the_typed_bytes():
    # After "configurable" with " edi" typed: "-" is listed but forbidden.
    tok = TokenEvent(" editor", -1.9, {"-": -0.8, " editor": -1.9, " ed": -3.0, " mode": -3.3})
    step = _step(tok, b" edi")
    z = math.log(sum(math.exp(v) for v in (-1.9, -3.0)))
    assert step.logprob == pytest.approx(-1.9 - z)
    assert step.logprob > tok.logprob  # the forbidden "-" no longer takes mass
    assert 0 < step.entropy < math.log(2) + 1e-9
    assert step.margin == pytest.approx(1.1) and step.share == pytest.approx(math.exp(-1.9 - z))
    free = _step(tok, b"")  # after the typed part: the engine's numbers as they are
    assert free.logprob == -1.9 and free.margin == pytest.approx(-1.1)


def _assemble(text, typed, pieces, params=BeamParams(confidence_threshold=0.0)):
    answer = _Answer(text, typed, params)
    for piece, lp in pieces:
        answer.add(TokenEvent(piece, lp, {piece: lp}))
        if answer.final is not None:
            break
    answer.finish()
    return answer.suggestion(False, {})


def test_suggestion_is_what_follows_the_typed_part_cut_at_the_sentence_end():
    s = _assemble("The quick brown fox jumps over the la", " la",
                  [(" lazy", -0.1), (" dog", -0.2), (".", -0.3), (" The", -0.5), (" end", -0.1)])
    assert s.text == "zy dog."
    assert s.remainder == b" la" and s.signals is not None and s.signals.margin is None  # one listed
    assert 0.0 < s.confidence <= 1.0


def test_newline_ends_a_single_line_suggestion_even_when_the_typed_part_has_one():
    s = _assemble("def f(n):\n    ret", "\n    ret", [("\n", -0.1), ("   ", -0.1), (" return", -0.1),
                                                      (" n", -0.2), ("\n", -0.1), ("x", -0.1)])
    assert s.text == "urn n"


def test_max_tokens_counts_tokens_after_the_covering():
    pieces = [(" a", -0.1)] + [(" w", -0.01)] * 20
    s = _assemble("x a", " a", pieces, BeamParams(max_tokens=3, confidence_threshold=0.0, continue_min_prob=0.0))
    assert s.text == " w w w"


def test_an_answer_that_ignores_the_constraint_is_malformed():
    with pytest.raises(ServerError) as err:
        _assemble("Vim te", " te", [(" mode", -0.1)])
    assert err.value.kind == "malformed"


def test_no_logprobs_means_no_gate():
    answer = _Answer("foo ba", " ba", BeamParams(confidence_threshold=0.99))
    for piece in (" bar", " baz"):
        answer.add(TokenEvent(piece))
    answer.finish()
    s = answer.suggestion(False, {})
    assert s.text.startswith("r") and s.confidence == 1.0 and not s.suppressed and s.signals is None


def test_partial_ends_at_a_word_end():
    answer = _Answer("foo ba", " ba", BeamParams(confidence_threshold=0.0, continue_min_prob=0.0))
    for piece in (" bar", " qu"):
        answer.add(TokenEvent(piece, -0.1, {}))
    assert answer.suggestion(True, {}).text == "r"  # " qu" may still grow


def test_server_settings_are_validated_and_restart_the_worker():
    from daemon.config import Config, ConfigError, parse_config

    with pytest.raises(ConfigError, match="needs a server_url"):
        Config(backend="server")
    with pytest.raises(ConfigError, match="server_url"):
        parse_config('backend = "server"\nserver_url = "gpu-box:8080"\n')
    cfg = parse_config('backend = "server"\nserver_url = "https://gpu-box/llm"\nserver_engine = "vllm"\n')
    assert cfg.server_url == "https://gpu-box/llm" and cfg.server_fallback == "local"
    assert cfg.worker_settings() != Config().worker_settings()
    assert Config(debounce_ms=40).worker_settings() == Config().worker_settings()


def test_without_logprobs_the_request_asks_for_none():
    from daemon.backends.served.client import Server
    from daemon.backends.served.completer import ServedCompleter

    server = Server("http://127.0.0.1:9")
    try:
        assert ServedCompleter(server, logprobs=False).logprobs is None
        assert ServedCompleter(server).logprobs == 10
    finally:
        server.close()


class _SlowServed:
    """A served completer whose every request misses its deadline, on a
    server that answers its probe (the route's logic only; the real server
    and a hanging one are in tests/llm/test_served.py)."""

    class server:  # noqa: N801
        url = "http://slow.example"

        @staticmethod
        def probe(timeout: float = 2.0):
            return None

    def complete(self, *args, **kwargs):
        raise ServerError("slow", "no suggestion within 250 ms")

    def close(self) -> None:
        pass


class _Local:
    def complete(self, *args, **kwargs):
        from daemon.cpc.suggestion import Suggestion

        return Suggestion(text="local", confidence=1.0)


class _RecordedWaits(threading.Event):
    """The probe thread's stop event, recording how long each wait was asked to be."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, timeout=None):
        self.asked.append(timeout)
        return super().wait(min(timeout, 0.01) if timeout is not None else None)


def test_a_server_left_for_slowness_is_retried_later_each_time():
    """The first wait before probing a server left for slowness is slow_retry_s, doubled each
    time (what the probe thread is told, not how long the machine took to run it)."""
    import time

    from daemon.backends.served.route import SLOW_AFTER, ServedRoute

    route = ServedRoute(_SlowServed(), _Local(), retry_s=0.01, slow_retry_s=0.3)
    route._stop = waits = _RecordedWaits()
    try:
        first_waits = []
        for n in range(1, 3):
            for _ in range(SLOW_AFTER):
                assert route.complete("x", BeamParams()).text == "local"
            assert route.switches == n
            deadline = time.monotonic() + 10
            while not route.on_server and time.monotonic() < deadline:
                time.sleep(0.01)
            assert route.on_server
            first_waits.append(waits.asked[0])
            waits.asked.clear()
        assert first_waits == [0.3, 0.6]
    finally:
        route.close()
