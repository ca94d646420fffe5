"""The served backend against real llama.cpp servers (``llama-server`` and
``python -m llama_cpp.server``, each with SmolLM2 on 127.0.0.1, one thread;
``served_server.py``): every test that talks to a server runs against both.

Only the malformed and slow answers come from a small local HTTP stub: that
is what those tests are about.  vLLM is not run (its request shape is checked
in ``tests/unit/test_served_wire.py``).
"""

from __future__ import annotations

import http.server
import json
import logging
import pathlib
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from typing import Iterator

import psutil
import pytest

from daemon.backends.served.client import Server, ServerError
from daemon.backends.served.completer import ServedCompleter
from daemon.backends.served.route import SLOW_AFTER, ServedRoute
from daemon.cpc.beam import Decoder
from daemon.cpc.lm import Cancelled
from daemon.cpc.suggestion import BeamParams
from daemon.worker import SuggestionWorker
from tests.llm.served_server import CuttingRelay, LlamaServer, after_done, engines_under_test, inside_event

pytestmark = pytest.mark.slow

GATE_OFF = BeamParams(confidence_threshold=0.0)
KEY_GAP_S = 0.1  # between two keystrokes at 10 keys/s
LONG = BeamParams(max_tokens=64, single_line=False, stop_at_sentence_end=False, continue_min_prob=0.0,
                  confidence_threshold=0.0)
PROSE = ("Vim is a highly configurable text editor built to make creating and changing any kind of text "
         "very efficient. It is included as \"vi\" with most UNIX systems and with Apple OS X. ")


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="module")
def server_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("served")


@pytest.fixture(scope="module", params=engines_under_test())
def engine(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def llama_server(smol_model_path, server_dir, engine) -> Iterator[LlamaServer]:
    srv = LlamaServer(smol_model_path, server_dir, engine=engine).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def served(llama_server) -> Iterator[ServedCompleter]:
    completer = ServedCompleter(Server(llama_server.url))
    try:
        yield completer
    finally:
        completer.close()


def first_word(text: str) -> str:
    return text.split()[0] if text.split() else ""


@pytest.mark.parametrize("text", [
    "The quick brown fox jumps over the la",  # mid-word
    "Vim is a highly configurable text ",  # after a space
    "def fibonacci(n):\n    if n < 2:\n        ret",  # inside code
])
def test_suggestion_continues_the_typed_text_like_local_cpc(served, smol_lm, text):
    """The engine's grammar-forced greedy search finds the word the local
    coverage search with beam width 1 finds (first word: batching may reorder
    near-ties, see test_llama_backend.py)."""
    remote = served.complete(text, GATE_OFF)
    local = Decoder(smol_lm).complete(text, BeamParams(beam_width=1, confidence_threshold=0.0))
    assert remote.text, "the server suggested nothing"
    assert not remote.text[0].isspace(), "the typed blank or word part came back"
    assert first_word(remote.text) == first_word(local.text)
    assert remote.signals is not None and 0.0 < remote.confidence <= 1.0


def test_the_next_key_in_a_word_starts_from_the_last_covering(llama_server, engine):
    """A word typed a character at a time: llama-server is sent the covering
    tokens its last answer chose (ids after the prompt) and generates only
    what the new characters need, and every suggestion is the one a fresh
    request gets.  llama_cpp.server's stream carries no token ids: there
    nothing is reused."""
    base, word = PROSE + "It is", " configurable"
    reusing = ServedCompleter(Server(llama_server.url))
    fresh_covering = 0
    try:
        for i in range(1, len(word) + 1):
            s = reusing.complete(base + word[:i], GATE_OFF)
            fresh = ServedCompleter(Server(llama_server.url))
            try:
                f = fresh.complete(base + word[:i], GATE_OFF)
            finally:
                fresh.close()
            fresh_covering += fresh.covering_tokens
            assert s.text == f.text and abs(s.confidence - f.confidence) < 0.01, word[:i]  # batching noise
    finally:
        reusing.close()
    if engine == "llama-server":
        assert reusing.reused >= len(word) // 2
        assert reusing.covering_tokens <= 0.75 * fresh_covering
    else:
        assert reusing.reused == 0 and reusing.covering_tokens == fresh_covering


@pytest.mark.skipif("llama-server" not in engines_under_test(),
                    reason="GHOSTTYPE_SERVED_ENGINES leaves llama.cpp's own server out (the proxy needs it)")
def test_the_large_vocabulary_proxy_is_served(server_dir, tmp_path):
    """The served benchmark's proxy (``proxy_model.py``: two random layers
    with Qwen2.5's 151,936-token vocabulary) is written, llama-server serves
    it, and a typed word is forced through the grammar over that vocabulary."""
    import importlib.util

    from tests.llm.proxy_model import VOCAB_FILE, write_proxy
    from tests.llm.served_server import llama_server_binary
    from tests.needs import missing

    vocab = pathlib.Path(llama_server_binary()).parent / VOCAB_FILE
    if not vocab.exists():
        missing(f"{vocab} (bash .ci/llama-cpp keeps it beside the server it builds)")
    if importlib.util.find_spec("gguf") is None:
        missing("gguf (pip install gguf, part of the test extra)")
    srv = LlamaServer(write_proxy(vocab, tmp_path / "proxy.gguf"), server_dir, engine="llama-server").start()
    completer = ServedCompleter(Server(srv.url))
    try:
        s = completer.complete("Vim is a highly configurable xqzv", GATE_OFF)
        assert s.remainder == b" xqzv" and s.tokens_generated >= 2 and completer.covering_tokens >= 1
    finally:
        completer.close()
        srv.stop()


def test_the_grammar_is_obeyed_for_an_unlikely_typed_word(served):
    """No model continues "configurable" with " xqzv" by itself: the answer
    spells it only because the grammar forces it (an answer that does not is
    refused as malformed), and the suggestion is what comes after it."""
    s = served.complete("Vim is a highly configurable xqzv", GATE_OFF)
    assert s.remainder == b" xqzv"
    assert s.tokens_generated >= 2


@pytest.fixture
def patient(llama_server) -> Iterator[ServedCompleter]:
    """A completer that waits a minute for an answer, not ``REQUEST_TIMEOUT_S``: llama_cpp.server
    computes each token's alternatives in Python (64 tokens with ``logprobs`` took 3.1 s where
    1.4 s without them, on a 2-core Xeon), and a CI machine running the suite in sid beside this
    one took over 10 s for ``LONG``; what is measured here is the cancel, not the pace."""
    completer = ServedCompleter(Server(llama_server.url, request_timeout_s=60.0))
    try:
        yield completer
    finally:
        completer.close()


def test_cancel_stops_generation_on_the_server(patient, llama_server):
    served = patient
    proc = psutil.Process(llama_server.pid)

    def cpu() -> float:
        t = proc.cpu_times()
        return t.user + t.system

    served.prefill(PROSE, LONG)  # the prompt is cached: what follows is generation only
    c0, t0 = cpu(), time.monotonic()
    full = served.complete(PROSE, LONG)
    full_cpu, full_s = cpu() - c0, time.monotonic() - t0
    assert full.tokens_generated >= 32, "the uncancelled request should run long"
    stop = threading.Event()
    when: list[float] = []

    def partial(_s) -> None:
        if not stop.is_set():
            when.append(time.monotonic())
            stop.set()

    with pytest.raises(Cancelled):
        served.complete(PROSE, LONG, cancel=stop.is_set, on_partial=partial)
    aborted_after = time.monotonic() - when[0]
    c1 = cpu()
    time.sleep(1.0)
    after_cpu = cpu() - c1
    assert aborted_after < 0.25 * full_s, (
        f"the request took {aborted_after:.2f} s to abort (the whole request {full_s:.2f} s)")
    assert after_cpu < 0.25 * full_cpu, (
        f"the server kept working after the stream was closed: {after_cpu:.2f} CPU-s "
        f"(the whole request took {full_cpu:.2f})")
    assert served.cancelled == 1
    assert served.complete("The quick brown fox jumps over the la", GATE_OFF).text  # still serving


def test_newest_keystroke_cancels_the_request_in_flight(served):
    results: list[tuple[int, str, bool]] = []
    worker = SuggestionWorker(served, on_result=lambda rid, s, final: results.append((rid, s.text, final)),
                              debounce_ms=0)
    worker.start()
    try:
        worker.submit(1, PROSE, LONG)
        wait_for(lambda: any(r[0] == 1 for r in results), 60, "the first request's first word")
        worker.submit(2, "The quick brown fox jumps over the la", GATE_OFF)
        assert worker.wait_idle(60)
    finally:
        worker.stop()
    assert worker.stats.cancelled == 1 and served.cancelled == 1
    wait_for(lambda: not served.server._watcher.is_alive(), 5, "the stopped worker to close the connection")
    assert not any(rid == 1 and final for rid, _t, final in results)
    assert [t for rid, t, final in results if rid == 2 and final][0]


def test_one_kept_alive_connection(served, engine):
    """No keystroke pays for a connection: an answer read to its end leaves
    the connection open for the next request (llama_cpp.server), and one the
    server closes after its answer anyway (llama-server closes it after every
    streamed answer) or one cut short is replaced in the background, between
    keystrokes (``KEY_GAP_S`` apart, a fast typist's pace)."""
    server = served.server
    served.prefill(PROSE, GATE_OFF)
    opened, inline = server.connects, server.inline_connects
    for text in (PROSE + "It ", PROSE + "It is ", "The quick brown fox jumps over the la",
                 "The quick brown fox jumps over the laz"):
        if engine == "llama-server":  # it closes the connection after every streamed answer
            wait_for(lambda: not server._answered and server._conn is not None and server._conn.sock is not None,
                     2.0, "the connection to be replaced in the background")
        time.sleep(KEY_GAP_S)
        served.complete(text, GATE_OFF)
    assert server.inline_connects == inline, "a request had to open its own connection"
    assert server.stale_resends == 0, "a request met a connection the server had closed"
    assert server.connects - opened <= 4  # at most one per request (each completion above was cut short)
    if engine == "llama_cpp.server":  # it keeps connections open: an answer read to its end reuses one
        served.prefill(PROSE + "It was ", GATE_OFF)
        before = server.connects
        time.sleep(KEY_GAP_S)
        served.prefill(PROSE + "It was a ", GATE_OFF)
        assert server.connects == before


def test_fallback_when_the_server_dies_and_return_when_it_answers_again(smol_model_path, smol_lm, server_dir,
                                                                         engine, caplog):
    srv = LlamaServer(smol_model_path, server_dir, engine=engine).start()
    statuses: list[tuple[str, str]] = []
    completer = ServedCompleter(Server(srv.url))
    route = ServedRoute(completer, Decoder(smol_lm), on_status=lambda s, m: statuses.append((s, m)), retry_s=0.3)
    text = "The quick brown fox jumps over the la"
    caplog.set_level(logging.INFO, logger="daemon.backends.served")
    try:
        assert route.complete(text, GATE_OFF).text and completer.requests == 1
        srv.stop()
        fallback = route.complete(text, GATE_OFF)
        assert fallback.text, "the local model should have answered"
        assert not route.on_server and route.switches == 1
        assert len(statuses) == 1 and statuses[0][0] == "ready"
        assert "does not answer" in statuses[0][1] and "local model" in statuses[0][1]
        for _ in range(3):
            assert route.complete(text, GATE_OFF).text
        assert completer.requests == 2, "requests went to a server known to be down"
        assert len(statuses) == 1, "the switch must be said once"
        srv.start()
        back = ("ready", f"suggestions from the server {srv.url}")
        # the probe thread switches back, then says so: the status is the last thing it does
        wait_for(lambda: statuses[-1] == back, 60, "the route to return to the server and say so")
        assert route.on_server and len(statuses) == 2
        assert route.complete(text, GATE_OFF).text and completer.requests == 3
    finally:
        route.close()
        srv.stop()
    said = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
    assert len(said) == 1 and "answers again" in caplog.text


def test_an_answer_cut_off_mid_stream_is_a_server_error(llama_server, smol_lm):
    """The connection to a real server is cut inside its answer (as when the
    server dies or the network breaks): the request fails as a lost
    connection, and the route answers from the local model at once."""
    relay = CuttingRelay(llama_server.port, inside_event(3))
    completer = ServedCompleter(Server(relay.url))
    route = ServedRoute(ServedCompleter(Server(relay.url)), Decoder(smol_lm), retry_s=60)
    try:
        with pytest.raises(ServerError) as err:
            completer.complete(PROSE, LONG)
        assert err.value.kind == "unreachable" and relay.cuts == 1
        assert route.complete(PROSE, LONG).text, "the local model answers"
        assert not route.on_server and route.switches == 1 and relay.cuts == 2
    finally:
        completer.close()
        route.close()
        relay.close()


def test_an_answer_cut_off_after_its_end_stands(llama_server):
    """Cut after ``[DONE]`` (before the end of the HTTP body): the answer was
    whole, so the prefill succeeds; the connection is not used again."""
    relay = CuttingRelay(llama_server.port, after_done)
    completer = ServedCompleter(Server(relay.url))
    try:
        completer.prefill(PROSE, GATE_OFF)
        assert relay.cuts == 1
        assert completer.complete("The quick brown fox jumps over the la", GATE_OFF).text
    finally:
        completer.close()
        relay.close()


def test_wrong_token_is_refused_with_a_clear_error(smol_model_path, server_dir, engine, tmp_path, caplog):
    srv = LlamaServer(smol_model_path, server_dir, api_key="right-token-4711", engine=engine).start()
    caplog.set_level(logging.DEBUG)
    try:
        wrong = Server(srv.url, token="wrong-token-0815")
        problem = wrong.probe()
        assert problem is not None and "HTTP 401" in problem and "server_token_file" in problem
        with pytest.raises(ServerError) as err:
            ServedCompleter(wrong).complete("The quick brown fox jumps over the la", GATE_OFF)
        assert err.value.kind == "refused"
        wrong.close()
        token_file = tmp_path / "token"
        token_file.write_text("wrong-token-0815\n")
        token_file.chmod(0o600)
        out = subprocess.run([sys.executable, "-m", "daemon", "complete", "--server", srv.url,
                              "--server-token-file", str(token_file), "--text", "The quick brown fox"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "refused" in out.stderr and "HTTP 401" in out.stderr
        assert "0815" not in out.stderr + out.stdout
        right = ServedCompleter(Server(srv.url, token="right-token-4711"))
        assert right.complete("The quick brown fox jumps over the la", GATE_OFF).text
        right.close()
    finally:
        srv.stop()
    assert "4711" not in caplog.text and "0815" not in caplog.text


#: What a hostile stub sends at most (and for at most ``HOSTILE_S``): without the client's bounds it
#: would go on reading all of it.
HOSTILE_BYTES = 64 * 1024 * 1024
HOSTILE_S = 20.0
#: Each mode's piece, sent again and again (``endless_tail``: after a whole answer and its [DONE]).
HOSTILE = {
    "endless_line": b"a" * 65536,  # one event that never ends its line
    "endless_events": b'data: {"choices": [{"text": ""}]}\n\n: keep-alive\n\n',  # events without tokens
    "trickle": b" ",  # one byte every 0.1 s: the socket's timeout never fires
    "endless_tail": b"x" * 65536,
}


class _Stub(http.server.BaseHTTPRequestHandler):
    """Answers /v1/models; /v1/completions as ``mode`` says: ``hang`` (headers,
    then nothing), ``garbage`` (a stream of non-JSON events), ``closes`` (a
    whole answer, then the connection closed), or one of ``HOSTILE``."""

    mode = "hang"
    release = threading.Event()
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        body = b'{"data": []}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self.mode == "garbage":
            self._whole_body(b"data: {this is not json\n\n")
            return
        if self.mode == "closes":  # a whole answer, then the connection closed (as llama-server does)
            events = [{"choices": [{"text": t, "finish_reason": f}]} for t, f in ((" lazy", None), (" dog", "length"))]
            self._whole_body(b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events) + b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
            return
        if self.mode in HOSTILE:
            self._endless(HOSTILE[self.mode])
            return
        self.wfile.flush()
        self.release.wait(30)

    def _endless(self, piece: bytes) -> None:
        """``piece`` again and again, as chunks, until the client hangs up or the caps."""
        if self.mode == "endless_line":
            self._chunk(b'data: {"choices": [{"text": "')
        elif self.mode == "endless_tail":
            self._chunk(b'data: {"choices": [{"text": " lazy dog", "finish_reason": "length"}]}\n\ndata: [DONE]\n\n')
        sent, t0 = 0, time.monotonic()
        try:
            while sent < HOSTILE_BYTES and time.monotonic() - t0 < HOSTILE_S and not self.release.is_set():
                self._chunk(piece)
                sent += len(piece)
                if self.mode == "trickle":
                    time.sleep(0.1)
        except OSError:
            pass  # the client hung up: what the bounds are for

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _whole_body(self, data: bytes) -> None:
        """``data`` as the one chunk of the chunked body, and its end."""
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))


@pytest.fixture
def stub() -> Iterator[tuple[str, type]]:
    handler = type("Stub", (_Stub,), {"release": threading.Event()})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        handler.release.set()
        httpd.shutdown()
        httpd.server_close()


def test_a_hanging_server_never_blocks_typing(stub, smol_lm):
    url, handler = stub
    handler.mode = "hang"
    completer = ServedCompleter(Server(url), deadline_ms=200)
    statuses: list[tuple[str, str]] = []
    route = ServedRoute(completer, Decoder(smol_lm), on_status=lambda s, m: statuses.append((s, m)), retry_s=60)
    text = "The quick brown fox jumps over the la"
    try:
        for i in range(SLOW_AFTER):
            t0 = time.monotonic()
            with pytest.raises(ServerError) as err:
                completer.complete(text, GATE_OFF)
            assert err.value.kind == "slow" and time.monotonic() - t0 < 3.0  # the stub holds it 30 s
        for i in range(SLOW_AFTER):
            assert route.complete(text, GATE_OFF).text, "the local model answers the slow keystroke"
            assert route.on_server == (i < SLOW_AFTER - 1)
        assert len(statuses) == 1 and "does not answer" in statuses[0][1]
    finally:
        route.close()
    # Without a deadline, the newest keystroke still aborts a hanging request at once.
    patient = ServedCompleter(Server(url))
    worker = SuggestionWorker(patient, on_result=lambda *a: None, debounce_ms=0)
    worker.start()
    try:
        worker.submit(1, text, GATE_OFF)
        wait_for(lambda: worker.stats.submitted == 1 and patient.requests == 1, 10, "the request to start")
        time.sleep(0.3)
        t0 = time.monotonic()
        worker.cancel()
        wait_for(lambda: patient.cancelled == 1, 5, "the hanging request to be aborted")
        assert time.monotonic() - t0 < 3.0  # the stub holds it 30 s
    finally:
        worker.stop()
        patient.close()


def test_a_connection_closed_under_a_request_is_not_an_error(stub, monkeypatch):
    """The server closes the kept connection after its answer, and the next
    request meets the closed connection (the close came after every check):
    it goes out again, once, on a new connection, and gets its answer."""
    from daemon.backends.served import client

    url, handler = stub
    handler.mode = "closes"
    monkeypatch.setattr(client, "CLOSE_CHECKS_S", ())  # no background check in this test
    completer = ServedCompleter(Server(url))
    server = completer.server
    text = "The quick brown fox jumps over the la"
    try:
        assert completer.complete(text, GATE_OFF).text == "zy dog"
        wait_for(lambda: server._conn.sock.recv(1, socket.MSG_PEEK) == b"", 5, "the stub to close its end")
        with server._lock:
            server._answered = False  # as if closed after the look before each request
        assert completer.complete(text, GATE_OFF).text == "zy dog"
        assert server.stale_resends == 1 and server.connects == 2
        # the next time, the look before the request sees the closed connection: no resend
        wait_for(lambda: server._conn.sock.recv(1, socket.MSG_PEEK) == b"", 5, "the stub to close its end")
        assert completer.complete(text, GATE_OFF).text == "zy dog"
        assert server.stale_resends == 1 and server.connects == 3
    finally:
        completer.close()


def _bounded_failure(url: str, request_timeout_s: float = 1.0) -> tuple[ServerError, float, int]:
    """One request to ``url``: the error it ended with, seconds taken, and the peak of memory
    allocated meanwhile (tracemalloc: every thread of this process, the stub's included)."""
    completer = ServedCompleter(Server(url, request_timeout_s=request_timeout_s))
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(ServerError) as err:
            completer.complete("The quick brown fox jumps over the la", GATE_OFF)
        return err.value, time.monotonic() - t0, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        completer.close()


@pytest.mark.parametrize("mode,kind", [("endless_line", "malformed"), ("endless_events", "malformed"),
                                       ("trickle", "slow")])
def test_a_hostile_server_streaming_without_end(stub, smol_lm, mode, kind):
    """A server that streams without end (one endless line, events without
    tokens, a byte at a time) costs a bounded time and memory, and the local
    model takes over: at once for an answer too big, after ``SLOW_AFTER``
    requests for one too slow."""
    url, handler = stub
    handler.mode = mode
    error, seconds, peak = _bounded_failure(url)
    assert seconds < HOSTILE_S / 4, f"the request took {seconds:.1f} s"
    assert peak < 16 * 1024 * 1024, f"{peak / 2**20:.0f} MiB allocated while reading the answer"
    assert error.kind == kind
    route = ServedRoute(ServedCompleter(Server(url, request_timeout_s=1.0)), Decoder(smol_lm), retry_s=60)
    try:
        for i in range(SLOW_AFTER if kind == "slow" else 1):
            assert route.complete("The quick brown fox jumps over the la", GATE_OFF).text, "the local model answers"
        assert not route.on_server and route.switches == 1
    finally:
        route.close()


def test_an_endless_tail_after_the_answer_is_not_read(stub):
    """Bytes without end after ``[DONE]``: the answer stands, at most
    ``TAIL_BYTES`` more are read, and the connection is not used again."""
    url, handler = stub
    handler.mode = "endless_tail"
    completer = ServedCompleter(Server(url, request_timeout_s=5.0))
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        completer.prefill("The quick brown fox jumps over the ", GATE_OFF)  # read to [DONE]
        seconds, peak = time.monotonic() - t0, tracemalloc.get_traced_memory()[1]
        assert completer.server._conn is None or completer.server._conn.sock is None, "the connection was kept"
    finally:
        tracemalloc.stop()
        completer.close()
    assert seconds < 2.0 and peak < 16 * 1024 * 1024


def test_a_prefill_has_a_deadline_and_counts_toward_the_fallback(stub, smol_lm):
    """A prefill the server never answers ends after the request timeout, and
    ``SLOW_AFTER`` of them in a row hand the route to the local model."""
    url, handler = stub
    handler.mode = "hang"
    route = ServedRoute(ServedCompleter(Server(url, request_timeout_s=0.5)), Decoder(smol_lm), retry_s=60)
    try:
        for i in range(SLOW_AFTER):
            t0 = time.monotonic()
            route.prefill("The quick brown fox jumps over the ", GATE_OFF)
            assert time.monotonic() - t0 < 5.0  # the stub holds it 30 s
            assert route.on_server == (i < SLOW_AFTER - 1)
    finally:
        route.close()


def test_a_malformed_answer_switches_to_the_local_model_at_once(stub, smol_lm):
    url, handler = stub
    handler.mode = "garbage"
    route = ServedRoute(ServedCompleter(Server(url)), Decoder(smol_lm), retry_s=60)
    try:
        assert route.complete("The quick brown fox jumps over the la", GATE_OFF).text
        assert not route.on_server and route.switches == 1
    finally:
        route.close()


def test_nothing_typed_reaches_either_log(llama_server, caplog):
    marker = "Quetzalcoatl marmalade zeppelin"
    caplog.set_level(logging.DEBUG)
    completer = ServedCompleter(Server(llama_server.url))
    try:
        completer.prefill(f"Notes: {marker} and ", GATE_OFF)
        completer.complete(f"Notes: {marker} and the quick brown fox jumps over the la", GATE_OFF)
    finally:
        completer.close()
    assert marker not in caplog.text
    log = llama_server.log()
    assert llama_server.request_line in log, "the server's log should show the requests (and nothing more)"
    assert "Quetzalcoatl" not in log and "marmalade" not in log


def test_runtime_builds_the_served_route_from_the_config(llama_server):
    from daemon.config import Config
    from daemon.runtime import make_decoder_factory

    statuses: list[tuple[str, str]] = []
    config = Config(backend="server", server_url=llama_server.url, server_fallback="none", server_deadline_ms=10_000)
    route = make_decoder_factory(config, lambda s, m: statuses.append((s, m)))()
    try:
        assert isinstance(route, ServedRoute) and route.on_server and route.local is None
        route.announce()
        assert statuses == [("ready", f"suggestions from the server {llama_server.url}")]
        assert route.complete("The quick brown fox jumps over the la", GATE_OFF).text
    finally:
        route.close()


def _served_eval(url: str, tmp_path, *flags: str) -> tuple[str, dict]:
    """``ghosttype eval`` of a short prose file against ``url``: its output and its ``--json``."""
    ref = tmp_path / "prose.txt"
    ref.write_text(PROSE * 3)
    result = tmp_path / "eval.json"
    out = subprocess.run([sys.executable, "-m", "daemon", "eval", str(ref), "--server", url, *flags,
                          "--json", str(result)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout, json.loads(result.read_text())


def test_complete_and_eval_commands_take_a_server(llama_server, tmp_path):
    out = subprocess.run([sys.executable, "-m", "daemon", "complete", "--server", llama_server.url, "--json",
                          "--text", "The quick brown fox jumps over the la"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert obj["model"] == llama_server.url and obj["suggestion"] and obj["model_calls"] == 1
    _, obj = _served_eval(llama_server.url, tmp_path, "--offsets", "2", "--context-chars", "200")
    summary = obj["summary"]
    assert set(summary) == {"naive", "cpc1"} and summary["cpc1"]["n"] == 2


def test_eval_typists_on_one_server(llama_server, tmp_path):
    """``eval --typists``: two typists on one server, 20 keys each, at 4 keys/s: at 10 keys/s a
    server on a loaded 2-core machine (the suite in sid beside this one) may answer no request
    before the next key cancels it, and this checks what the mode counts, not the server's pace."""
    stdout, obj = _served_eval(llama_server.url, tmp_path, "--typists", "2", "--chars", "20",
                               "--key-interval-ms", "250")
    assert "first ghost p50/p95 ms" in stdout and "served/s" in stdout
    typists = obj["typists"]
    assert obj["settings"]["typists"] == 2 and obj["settings"]["key_interval_ms"] == 250
    assert typists["typists"] == 2 and typists["keys"] == 40 and len(typists["per_typist"]) == 2
    assert typists["model_keys"] >= 2 and typists["requests"] >= 2  # the first key of each needs the model
    assert typists["failed"] == 0 and typists["served"] >= 1 and typists["served_per_s"] > 0
    assert typists["seconds"] >= 1.9  # 20 keys 0.1 s apart
    out = subprocess.run([sys.executable, "-m", "daemon", "eval", str(tmp_path / "prose.txt"), "--typists", "2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--server" in out.stderr


def test_doctor_says_where_suggestions_come_from(llama_server):
    from daemon.config import Config
    from daemon.doctor import check_suggestion_source
    from tests.llm.served_server import free_port

    local = check_suggestion_source(Config())
    assert local.ok and "local model" in local.detail
    up = check_suggestion_source(Config(backend="server", server_url=llama_server.url))
    assert up.ok and llama_server.url in up.detail and "sent there" in up.detail
    down = check_suggestion_source(Config(backend="server", server_url=f"http://127.0.0.1:{free_port()}"))
    assert down.ok is False and "cannot reach" in down.detail


def test_the_prompt_is_cut_where_the_tokenizer_always_cuts(smol_lm):
    """``split_typed``'s prompt tokenizes to a prefix of the whole text's
    tokens, whatever is typed next (SmolLM2's byte-level BPE; random cuts of
    the evaluation texts and random continuations, as in test_split_real.py)."""
    import random

    from daemon.backends.served.completer import split_typed
    from tests.llm.test_split_real import PIECES, _texts

    rng = random.Random(0)
    texts = _texts()
    failures = []
    for _ in range(300):
        source = rng.choice(texts)
        cut = rng.randrange(1, len(source))
        text = source[max(0, cut - 200):cut]
        prompt, typed = split_typed(text)
        stable = smol_lm.tokenize(prompt) if prompt else []
        conts = [""] + ["".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 4))) for _ in range(3)]
        for cont in conts:
            if smol_lm.tokenize(text + cont)[: len(stable)] != stable:
                failures.append((prompt[-20:], typed, cont))
    assert failures == [], f"{len(failures)} prompts re-tokenized differently, e.g. {failures[:3]}"


def test_without_logprobs_there_is_no_gate(llama_server):
    completer = ServedCompleter(Server(llama_server.url), logprobs=False)
    try:
        s = completer.complete("The quick brown fox jumps over the la", BeamParams(confidence_threshold=0.99))
    finally:
        completer.close()
    assert s.text and s.signals is None and s.confidence == 1.0 and not s.suppressed


def test_tls_is_verified(smol_model_path, server_dir, engine, tmp_path):
    """A server whose certificate no trusted authority signed is refused; with
    that certificate as ``server_ca_file`` the same server is used."""
    from tests.llm.served_server import self_signed

    cert, key = self_signed(tmp_path)
    srv = LlamaServer(smol_model_path, server_dir, tls=(cert, key), engine=engine).start()
    try:
        untrusted = Server(srv.url)
        problem = untrusted.probe()
        assert problem is not None and "not trusted" in problem and "server_ca_file" in problem
        with pytest.raises(ServerError) as err:
            ServedCompleter(untrusted).complete("The quick brown fox jumps over the la", GATE_OFF)
        assert err.value.kind == "unreachable" and "TLS" in str(err.value)
        untrusted.close()
        trusted = ServedCompleter(Server(srv.url, ca_file=str(cert)))
        assert trusted.server.probe() is None
        assert trusted.complete("The quick brown fox jumps over the la", GATE_OFF).text
        trusted.close()
    finally:
        srv.stop()
