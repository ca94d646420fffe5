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
* **The bearer token** is read from a file once and sent in the
  ``Authorization`` header; it is never logged or shown (``repr`` omits it).
* **Privacy.**  Error messages never include a response body or a request
  body: both may contain typed text.
"""

from __future__ import annotations

import http.client
import json
import logging
import pathlib
import select
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Callable, Iterator, Optional

from .wire import Event, MalformedAnswer, parse_event

log = logging.getLogger(__name__)

#: How often the watcher polls ``abort`` while a request is in flight.
POLL_S = 0.004
#: Connect and read timeout of the socket (a backstop: deadlines are the watcher's).
SOCKET_TIMEOUT_S = 30.0
#: When, after an answer, the watcher looks whether the server closed the connection (a busy
#: server may close it a while after its last byte).
CLOSE_CHECKS_S = (0.01, 0.03, 0.1, 0.3)


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
    """The bearer token stored in ``path`` (surrounding whitespace removed)."""
    p = pathlib.Path(path).expanduser()
    try:
        token = p.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ServerError("refused", f"cannot read the server token file {p}: {e.strerror or e}") from None
    if not token or any(c in token for c in "\r\n"):
        raise ServerError("refused", f"the server token file {p} must hold one non-empty line")
    return token


class Server:
    """A serving engine at ``url`` (``http://host:port`` or ``https://...``,
    optionally with a path prefix before ``/v1``)."""

    def __init__(self, url: str, token: Optional[str] = None, ca_file: str = "",
                 connect_timeout: float = 5.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server URL must look like http://host:port or https://host, got {url!r}")
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

    def stream(self, body: dict, abort: Callable[[], bool]) -> Iterator[Event]:
        """POST ``body`` to ``/v1/completions`` and yield its events.  Raises
        :class:`Aborted` once ``abort()`` is true, :class:`ServerError` for
        everything else that goes wrong.  Closing the generator early closes
        the connection (the engine stops generating)."""
        payload = json.dumps(body).encode("utf-8")
        with self._lock:
            finished = False
            try:
                resp = self._send(payload, abort)
                self._check_status(resp)
                while True:
                    try:
                        line = resp.readline()
                    except (OSError, http.client.HTTPException) as e:
                        raise self._failure(abort, e) from None
                    if not line:
                        if abort():
                            raise Aborted()
                        raise ServerError("malformed", "the answer ended without [DONE]")
                    try:
                        event = parse_event(line)
                    except MalformedAnswer as e:
                        raise ServerError("malformed", f"{self.url}: {e}") from None
                    if event is None:
                        continue
                    yield event
                    if event.done and not event.tokens and line.strip() == b"data: [DONE]":
                        resp.read()  # the end of the chunked body: the connection stays usable
                        finished = not resp.will_close
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

    def _send(self, payload: bytes, abort: Callable[[], bool]) -> http.client.HTTPResponse:
        """POST ``payload`` and return the answer's headers (lock held).  A kept
        connection the server closed before answering (no status line came)
        is replaced and the request sent once more: the server never saw it."""
        for attempt in (1, 2):
            kept = self._conn if self._conn is not None and self._conn.sock is not None else None
            conn = self._connected(inline=True)
            reused = conn is kept
            self._arm(abort, conn.sock)
            try:
                conn.request("POST", self._base + "/v1/completions", payload, self._headers)
                return conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                if attempt == 2 or not reused or abort():
                    raise self._failure(abort, e) from None
                log.debug("the server had closed the kept connection; sending on a new one")
                self.stale_resends += 1
                conn.close()
            except (OSError, http.client.HTTPException) as e:
                raise self._failure(abort, e) from None
        raise AssertionError("unreachable")

    def _check_status(self, resp: http.client.HTTPResponse) -> None:
        if resp.status == 200:
            return
        if resp.status in (401, 403):
            raise ServerError("refused", f"{self.url} refused the request (HTTP {resp.status}): "
                                         "check server_token_file (the bearer token)")
        raise ServerError("http", f"{self.url} answered HTTP {resp.status} {resp.reason}")

    def _failure(self, abort: Callable[[], bool], e: BaseException) -> Exception:
        if abort():
            return Aborted()
        if isinstance(e, (http.client.HTTPException, ValueError)) and not isinstance(e, http.client.RemoteDisconnected):
            return ServerError("malformed", f"{self.url}: not an HTTP answer ({type(e).__name__})")
        return ServerError("unreachable", f"connection to {self.url} lost ({type(e).__name__})")

    def probe(self, timeout: float = 2.0) -> Optional[str]:
        """None when the server answers ``GET /v1/models`` (with the token),
        else why not.  Uses a connection of its own, so it never waits for a
        completion in flight."""
        conn = self._new_connection(timeout)
        try:
            conn.request("GET", self._base + "/v1/models", headers=self._headers)
            resp = conn.getresponse()
            resp.read()
            self._check_status(resp)
            return None
        except ServerError as e:
            return str(e)
        except ssl.SSLCertVerificationError as e:
            return (f"the certificate of {self.url} is not trusted ({e.verify_message or e.reason}): "
                    "set server_ca_file to the CA that signed it")
        except (OSError, http.client.HTTPException) as e:
            return f"cannot reach {self.url} ({type(e).__name__})"
        finally:
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
                            try:
                                sock.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
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
