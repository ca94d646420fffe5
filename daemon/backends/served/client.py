"""The connection to a serving engine: one kept-alive HTTP/1.1 connection
(stdlib ``http.client``), streamed answers, aborted from outside.

* **One connection.**  Requests reuse it while the server keeps it open; an
  answer read to its end leaves it ready for the next.  A stream cut short
  (a newer keystroke, a deadline, the suggestion already complete) must
  close it (HTTP/1.1 has no other way to stop a response, and closing is
  what makes the engine stop generating), so the watcher thread opens the
  next connection right away, in the background, and the next keystroke
  finds it connected.  A server may also close it after an answer without
  saying so (llama.cpp's ``llama-server`` closes the connection after every
  streamed answer while its headers offer keep-alive): in the 0.3 s after
  each answer the watcher looks a few times whether the server closed it
  (the socket turned readable) and reconnects in the background; a request
  that still meets a connection closed before any answer is sent again,
  once, on a new one.
* **Abort.**  :meth:`Server.stream` takes an ``abort`` predicate.  The
  watcher thread polls it every ``POLL_S`` while a request is in flight and,
  when it turns true, shuts the socket down: the read blocked on the
  worker's thread returns at once and the stream raises :class:`Aborted`.
  Nothing waits for the server to notice.
* **TLS** is verified (system trust store, or ``ca_file``) with host-name
  checking; there is no switch to turn verification off.
* **Bounds.**  A broken or hostile server cannot make the client wait or
  grow without end: every request, prefill included, ends after
  ``request_timeout_s`` (``REQUEST_TIMEOUT_S``), and an answer may hold at
  most ``MAX_ANSWER_BYTES``, one line (one event) at most ``MAX_LINE_BYTES``,
  and a number of lines in proportion to the tokens asked for
  (``LINES_PER_TOKEN``, ``EXTRA_LINES``).  Beyond them the request fails as a
  :class:`ServerError` (``slow`` for time, ``malformed`` for size), which the
  route counts toward its fallback to the local model.  An answer cut off
  (the server died, the connection was cut) is a ``ServerError`` too.
* **Plain HTTP** is accepted only to loopback unless the caller allows it
  (:mod:`daemon.backends.served.endpoint`, the config's ``allow_insecure_http``).
* **The bearer token** is read from a file once and sent in the
  ``Authorization`` header; it is never logged or shown (``repr`` omits it).
  A token file that other users can read or write is refused.
* **Privacy.**  Error messages never include a response body or a request
  body: both may contain typed text.
"""

from __future__ import annotations

import http.client
import json
import logging
import pathlib
import os
import select
import socket
import ssl
import stat
import threading
import time
import urllib.parse
from typing import Callable, Iterator, Optional

from .endpoint import cleartext_problem
from .wire import Event, MalformedAnswer, parse_event

log = logging.getLogger(__name__)

#: How often the watcher polls ``abort`` while a request is in flight.
POLL_S = 0.004
#: Connect and read timeout of the socket (a backstop: deadlines are the watcher's).
SOCKET_TIMEOUT_S = 30.0
#: When, after an answer, the watcher looks whether the server closed the connection (a busy
#: server may close it a while after its last byte).
CLOSE_CHECKS_S = (0.01, 0.03, 0.1, 0.3)
#: The longest one request may take, from sending to the end of its answer (prefill included).
REQUEST_TIMEOUT_S = 10.0
#: The most one answer, and one line of it (one server-sent event), may hold.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
MAX_LINE_BYTES = 256 * 1024
#: Lines an answer may have: per token asked for (its event, the blank line after it, a comment),
#: and beyond them (the first and last events, usage and timings, ``[DONE]``).
LINES_PER_TOKEN = 3
EXTRA_LINES = 64
#: What may follow ``[DONE]`` (the end of the chunked body) on a connection that stays in use.
TAIL_BYTES = 4096
#: The most a probe reads of ``/v1/models``.
PROBE_BYTES = 256 * 1024


class ServerError(Exception):
    """The server did not give a usable answer.  ``kind``: ``unreachable``
    (cannot connect, connection lost), ``refused`` (HTTP 401/403: token),
    ``http`` (another error status), ``malformed`` (not a completions stream)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Aborted(Exception):
    """The ``abort`` predicate turned true; the connection was closed."""


def read_token(path: str) -> str:
    """The bearer token stored in ``path`` (surrounding whitespace removed).
    Refused when the file gives other users any access (as ssh refuses a
    private key): the token lets anyone send text to the server as you."""
    p = pathlib.Path(path).expanduser()
    try:
        with open(p, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if mode & 0o077:
                raise ServerError("refused", f"the server token file {p} is open to other users "
                                             f"(mode {stat.S_IMODE(mode):03o}): chmod 600 {p}")
            token = f.read(64 * 1024).decode("utf-8").strip()
    except OSError as e:
        raise ServerError("refused", f"cannot read the server token file {p}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ServerError("refused", f"the server token file {p} is not UTF-8 text") from None
    if not token or any(c in token for c in "\r\n"):
        raise ServerError("refused", f"the server token file {p} must hold one non-empty line")
    return token


class Server:
    """A serving engine at ``url`` (``http://host:port`` or ``https://...``,
    optionally with a path prefix before ``/v1``).  ``http://`` to a host
    that is not loopback raises ValueError unless ``allow_insecure_http``."""

    def __init__(self, url: str, token: Optional[str] = None, ca_file: str = "",
                 connect_timeout: float = 5.0, allow_insecure_http: bool = False,
                 request_timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server URL must look like http://host:port or https://host, got {url!r}")
        problem = cleartext_problem(url, allow_insecure_http)
        if problem is not None:
            raise ValueError(problem)
        self.request_timeout_s = float(request_timeout_s)
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
        base = parts.path.rstrip("/")
        if base.endswith("/v1"):
            base = base[:-3]
        self._base = base
        self._host = parts.hostname
        self._port = parts.port
        self._tls = parts.scheme == "https"
        self._ssl = ssl.create_default_context(cafile=ca_file or None) if self._tls else None
        self._connect_timeout = connect_timeout
        self._headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._conn: Optional[http.client.HTTPConnection] = None
        # whether the connection has carried a whole answer: a new TLS connection may be readable
        # before its first request (the server's session tickets), one past an answer only when closed
        self._answered = False
        self._lock = threading.Lock()  # the connection: one request at a time, or the watcher reconnecting
        self._watch = threading.Condition()
        self._abort: Optional[Callable[[], bool]] = None  # the request in flight's predicate
        self._sock: Optional[socket.socket] = None  # its socket (the watcher shuts it down)
        self._reconnect = False
        self._checks: list[float] = []  # when to look whether the server closed the connection
        self._closed = False
        self.connects = 0  #: connections opened (tests and benchmarks)
        self.inline_connects = 0  #: of which a request had to open itself (not in the background)
        self.stale_resends = 0  #: requests sent again because the kept connection was closed under them
        self._watcher = threading.Thread(target=self._watch_loop, name="ghosttype-server-watch", daemon=True)
        self._watcher.start()

    def __repr__(self) -> str:  # never the token
        return f"Server({self.url!r})"

    # ------------------------------------------------------------------ connections

    def _new_connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._tls:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._ssl)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _connected(self, inline: bool = False) -> http.client.HTTPConnection:
        """The kept-alive connection, opened if needed (call with the lock
        held; ``inline``: for a request, which then waits for it)."""
        if self._conn is not None and self._conn.sock is not None and self._answered and _peer_closed(self._conn.sock):
            self._conn.close()
        if self._conn is None or self._conn.sock is None:
            if self._conn is not None:
                self._conn.close()
            conn = self._new_connection(self._connect_timeout)
            try:
                conn.connect()
            except ssl.SSLError as e:
                conn.close()
                why = getattr(e, "verify_message", "") or e.reason or e
                raise ServerError("unreachable", f"TLS with {self.url} failed ({why}): check server_ca_file") from None
            except OSError as e:
                conn.close()
                raise ServerError("unreachable", f"cannot connect to {self.url}: {e.strerror or e}") from None
            assert conn.sock is not None
            conn.sock.settimeout(SOCKET_TIMEOUT_S)
            self._conn = conn
            self._answered = False
            self.connects += 1
            self.inline_connects += inline
        return self._conn

    def _drop(self) -> None:
        """Close the connection and let the watcher open the next one (lock held)."""
        if self._conn is not None:
            self._conn.close()
        with self._watch:
            self._reconnect = not self._closed
            self._watch.notify_all()

    def close(self) -> None:
        with self._watch:
            self._closed = True
            self._watch.notify_all()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ------------------------------------------------------------------ requests

    def stream(self, body: dict, abort: Callable[[], bool], timeout_s: Optional[float] = None) -> Iterator[Event]:
        """POST ``body`` to ``/v1/completions`` and yield its events.  Raises
        :class:`Aborted` once ``abort()`` is true, ``ServerError("slow")``
        after ``timeout_s`` (default ``request_timeout_s``), and
        :class:`ServerError` for everything else that goes wrong, an answer
        beyond the bounds included.  Closing the generator early closes the
        connection (the engine stops generating)."""
        payload = json.dumps(body).encode("utf-8")
        req = _Request(self.url, abort, self.request_timeout_s if timeout_s is None else timeout_s,
                       int(body.get("max_tokens") or 1))
        with self._lock:
            finished = False
            try:
                resp = self._send(payload, req)
                self._check_status(resp)
                while True:
                    try:
                        line = resp.readline(MAX_LINE_BYTES + 1)
                    except (OSError, http.client.HTTPException, ValueError) as e:
                        raise req.failure(e) from None
                    if not line:
                        raise req.ended() or ServerError("malformed", "the answer ended without [DONE]")
                    req.count(line)
                    try:
                        event = parse_event(line)
                    except MalformedAnswer as e:
                        raise ServerError("malformed", f"{self.url}: {e}") from None
                    if event is None:
                        continue
                    yield event
                    if event.done and not event.tokens and line.strip() == b"data: [DONE]":
                        finished = _read_tail(resp)  # the connection stays usable if the body ended
                        self._answered = True
                        return
            finally:
                self._disarm()
                if not finished:
                    self._drop()
                else:
                    with self._watch:  # did the server close it after all?
                        now = time.monotonic()
                        self._checks = [now + delay for delay in CLOSE_CHECKS_S]
                        self._watch.notify_all()

    def _send(self, payload: bytes, req: "_Request") -> http.client.HTTPResponse:
        """POST ``payload`` and return the answer's headers (lock held).  A kept
        connection the server closed before answering (no status line came)
        is replaced and the request sent once more: the server never saw it."""
        for attempt in (1, 2):
            kept = self._conn if self._conn is not None and self._conn.sock is not None else None
            conn = self._connected(inline=True)
            reused = conn is kept
            self._arm(req.stop, conn.sock)
            try:
                conn.request("POST", self._base + "/v1/completions", payload, self._headers)
                return conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                if attempt == 2 or not reused or req.stop():
                    raise req.failure(e) from None
                log.debug("the server had closed the kept connection; sending on a new one")
                self.stale_resends += 1
                conn.close()
            except (OSError, http.client.HTTPException, ValueError) as e:
                raise req.failure(e) from None
        raise AssertionError("unreachable")

    def _check_status(self, resp: http.client.HTTPResponse) -> None:
        if resp.status == 200:
            return
        if resp.status in (401, 403):
            raise ServerError("refused", f"{self.url} refused the request (HTTP {resp.status}): "
                                         "check server_token_file (the bearer token)")
        raise ServerError("http", f"{self.url} answered HTTP {resp.status} {resp.reason}")

    def probe(self, timeout: float = 2.0) -> Optional[str]:
        """None when the server answers ``GET /v1/models`` (with the token),
        else why not.  Uses a connection of its own, so it never waits for a
        completion in flight; the exchange ends after ``timeout`` to connect
        and ``timeout`` more for the answer (at most ``PROBE_BYTES`` read)."""
        conn = self._new_connection(timeout)
        cut: Optional[threading.Timer] = None
        try:
            conn.connect()
            assert conn.sock is not None
            cut = threading.Timer(timeout, _shut, (conn.sock,))
            cut.daemon = True
            cut.start()
            conn.request("GET", self._base + "/v1/models", headers=self._headers)
            resp = conn.getresponse()
            resp.read(PROBE_BYTES)
            self._check_status(resp)
            return None
        except ServerError as e:
            return str(e)
        except ssl.SSLCertVerificationError as e:
            return (f"the certificate of {self.url} is not trusted ({e.verify_message or e.reason}): "
                    "set server_ca_file to the CA that signed it")
        except (OSError, http.client.HTTPException, ValueError) as e:
            return f"cannot reach {self.url} ({type(e).__name__})"
        finally:
            if cut is not None:
                cut.cancel()
            conn.close()

    # ------------------------------------------------------------------ the watcher

    def _arm(self, abort: Callable[[], bool], sock: Optional[socket.socket]) -> None:
        with self._watch:
            self._abort, self._sock = abort, sock
            self._watch.notify_all()

    def _disarm(self) -> None:
        with self._watch:
            self._abort, self._sock = None, None

    def _watch_loop(self) -> None:
        while True:
            with self._watch:
                while self._abort is None and not self._reconnect and not self._closed:
                    if not self._checks:
                        self._watch.wait()
                    elif time.monotonic() < self._checks[0]:
                        self._watch.wait(self._checks[0] - time.monotonic())
                    else:
                        self._checks.pop(0)
                        self._reconnect = True  # _preconnect reconnects only if the server closed it
                if self._closed:
                    return
                abort, sock, reconnect = self._abort, self._sock, self._reconnect
            if abort is not None:
                if self._poll(abort):
                    with self._watch:
                        if self._sock is sock and sock is not None:
                            _shut(sock)
                            self._abort = None  # shut down once; the reader clears the rest
                else:
                    time.sleep(POLL_S)
            elif reconnect:
                self._preconnect()

    @staticmethod
    def _poll(abort: Callable[[], bool]) -> bool:
        try:
            return bool(abort())
        except Exception:  # a broken predicate must not kill the watcher
            log.exception("abort check failed")
            return True

    def _preconnect(self) -> None:
        """Open the next connection while nothing else uses the lock (a kept
        one stays, unless the server closed it)."""
        with self._watch:
            self._reconnect = False
        if not self._lock.acquire(blocking=False):
            return  # a request is opening its own
        try:
            if not self._closed:
                self._connected()
        except ServerError:
            pass  # the next request reports it
        finally:
            self._lock.release()


def _peer_closed(sock: socket.socket) -> bool:
    """Whether the server closed an idle kept connection: nothing is due on
    it between answers, so a readable socket (end of stream, a TLS close
    alert, or stray bytes that make it unusable anyway) is a closed one."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _shut(sock: socket.socket) -> None:
    """End ``sock``'s exchange from another thread: a read blocked on it returns at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _read_tail(resp: http.client.HTTPResponse) -> bool:
    """Read what follows ``[DONE]`` (at most ``TAIL_BYTES``); whether the
    body ended there and the connection can carry the next request."""
    try:
        resp.read(TAIL_BYTES)
    except (OSError, http.client.HTTPException, ValueError):
        return False  # cut off after its last event: the answer is whole, the connection is not
    return resp.isclosed() and not resp.will_close


class _Request:
    """The bounds of one request: its caller's ``abort``, its deadline, and
    the size of its answer (lines in proportion to ``max_tokens``)."""

    def __init__(self, url: str, abort: Callable[[], bool], timeout_s: float, max_tokens: int) -> None:
        self.url = url
        self.abort = abort
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.max_lines = LINES_PER_TOKEN * max(1, max_tokens) + EXTRA_LINES
        self.lines = 0
        self.bytes = 0

    def stop(self) -> bool:
        """The watcher's predicate: the caller aborted, or the deadline passed."""
        return bool(self.abort()) or time.monotonic() > self.deadline

    def ended(self) -> Optional[Exception]:
        """Why the request was stopped from outside, if it was."""
        if self.abort():
            return Aborted()
        if time.monotonic() > self.deadline:
            return ServerError("slow", f"{self.url} did not finish its answer within {self.timeout_s:g} s")
        return None

    def failure(self, e: BaseException) -> Exception:
        """What a failed send or read means for the caller."""
        stopped = self.ended()
        if stopped is not None:
            return stopped
        lost = (http.client.IncompleteRead, http.client.RemoteDisconnected)  # cut off, or closed unanswered
        if isinstance(e, lost) or not isinstance(e, (http.client.HTTPException, ValueError)):
            return ServerError("unreachable", f"connection to {self.url} lost ({type(e).__name__})")
        return ServerError("malformed", f"{self.url}: not an HTTP answer ({type(e).__name__})")

    def count(self, line: bytes) -> None:
        """One line read: raises ``ServerError("malformed")`` beyond the bounds."""
        self.lines += 1
        self.bytes += len(line)
        if len(line) > MAX_LINE_BYTES:
            raise ServerError("malformed", f"{self.url} sent a line longer than {MAX_LINE_BYTES} bytes")
        if self.bytes > MAX_ANSWER_BYTES:
            raise ServerError("malformed", f"{self.url} sent an answer longer than {MAX_ANSWER_BYTES} bytes")
        if self.lines > self.max_lines:
            raise ServerError("malformed", f"{self.url} sent more than {self.max_lines} lines "
                                           "for the tokens asked for")
