"""A real llama.cpp server for the served-model tests, on 127.0.0.1 with the
SmolLM2 model, one thread, its output in a file the tests read; started and
stopped by PID.  Two engines:

* ``llama-server``: llama.cpp's own server (C++), the one a GPU box runs.
  ``bash .ci/llama-cpp`` builds it in the build tree of llama-cpp-python's
  own wheel (the same llama.cpp) and ``.ci/run`` passes its path in
  ``GHOSTTYPE_LLAMA_SERVER`` (else it is looked up on PATH).
* ``llama_cpp.server``: ``python -m llama_cpp.server``, llama-cpp-python's
  ``server`` extra (installed by the ``test`` extra), started through
  ``llama_cpp_server.py`` beside this file.

Both load the model as ghosttype does: unrepacked where llama.cpp has AMX
kernels (daemon/backends/llamacpp/weights.py, *No AMX tiles*).

``GHOSTTYPE_SERVED_ENGINES`` (comma-separated) narrows the engines the tests
run against; by default both, and a missing one fails its tests.
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import pathlib
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from typing import Optional

from daemon.backends.llamacpp import weights
from tests.needs import missing

#: ``python -m llama_cpp.server`` with the model loaded as ghosttype loads it
LAUNCHER = pathlib.Path(__file__).with_name("llama_cpp_server.py")
READY_TIMEOUT_S = 180.0
ENGINES = ("llama-server", "llama_cpp.server")


def engines_under_test() -> list[str]:
    chosen = [e.strip() for e in os.environ.get("GHOSTTYPE_SERVED_ENGINES", ",".join(ENGINES)).split(",") if e.strip()]
    unknown = set(chosen) - set(ENGINES)
    if unknown:
        raise ValueError(f"GHOSTTYPE_SERVED_ENGINES: unknown engine(s) {sorted(unknown)}; known: {ENGINES}")
    return chosen


def llama_server_binary() -> str:
    path = os.environ.get("GHOSTTYPE_LLAMA_SERVER") or shutil.which("llama-server")
    if not path or not os.access(path, os.X_OK):
        missing("llama-server (llama.cpp's server: bash .ci/llama-cpp builds it and prints its path last; "
                "set GHOSTTYPE_LLAMA_SERVER to it)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """One server process of ``engine``; ``start`` waits until it answers."""

    def __init__(self, model: pathlib.Path, log_dir: pathlib.Path, api_key: Optional[str] = None,
                 port: Optional[int] = None, tls: Optional[tuple[pathlib.Path, pathlib.Path]] = None,
                 engine: str = "llama_cpp.server") -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}")
        self.engine = engine
        self.binary = llama_server_binary() if engine == "llama-server" else None
        if self.binary is None:
            for module in ("llama_cpp.server", "uvicorn", "fastapi", "sse_starlette"):
                if importlib.util.find_spec(module.split(".")[0]) is None or (
                        module == "llama_cpp.server" and importlib.util.find_spec(module) is None):
                    missing(f"{module} (pip install 'llama-cpp-python[server]', part of the test extra)")
        self.model = model
        self.api_key = api_key
        self.port = port or free_port()
        self.tls = tls  #: (certificate, key) to serve https with
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"llama-server-{self.port}.log"
        self.proc: Optional[subprocess.Popen] = None
        self.starts = 0

    def command(self) -> list[str]:
        if self.binary:  # one slot: one typist, whose prompt stays cached in it
            cmd = [self.binary, "--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                   "--threads", "1", "--threads-batch", "1", "--ctx-size", "2048", "--parallel", "1", "--no-webui"]
            if weights.amx_kernels():  # the weights as ghosttype loads them (weights.py, *No AMX tiles*)
                cmd += ["--no-repack"]
            if self.api_key:
                cmd += ["--api-key", self.api_key]
            if self.tls:
                cmd += ["--ssl-cert-file", str(self.tls[0]), "--ssl-key-file", str(self.tls[1])]
            return cmd
        cmd = [sys.executable, str(LAUNCHER), "--model", str(self.model), "--host", "127.0.0.1",
               "--port", str(self.port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "2048",
               "--verbose", "false"]
        if self.api_key:
            cmd += ["--api_key", self.api_key]
        if self.tls:
            cmd += ["--ssl_certfile", str(self.tls[0]), "--ssl_keyfile", str(self.tls[1])]
        return cmd

    def start(self) -> "LlamaServer":
        cmd = self.command()
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        self.starts += 1
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.engine} exited with {self.proc.returncode}:\n{self.log()[-2000:]}")
            if self._answers():
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.engine} did not answer within {READY_TIMEOUT_S:.0f} s")

    def _answers(self) -> bool:
        if self.tls:
            context = ssl.create_default_context(cafile=str(self.tls[0]))
            conn: http.client.HTTPConnection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=2,
                                                                           context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            conn.request("GET", "/v1/models")
            resp = conn.getresponse()
            resp.read()
            # llama-server answers 503 while it loads the model
            return resp.status in (200, 401)
        except OSError:
            return False
        finally:
            conn.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        """Stop the process (its own process group, by PID) and wait for it."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    @property
    def request_line(self) -> str:
        """What the server's log (at its default verbosity) shows for each
        completion request: uvicorn's access line, or llama-server's slot
        starting a task (it does not log requests as such)."""
        return "processing task" if self.binary else "POST /v1/completions"

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""


def self_signed(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """A certificate for 127.0.0.1 signed by itself, and its key (openssl)."""
    from tests.needs import tool

    openssl = tool("openssl", "openssl")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


class CuttingRelay:
    """A TCP relay on 127.0.0.1 in front of a real server that cuts each
    connection where ``cut`` says, as a dying server or a broken network
    does: ``cut(answer_so_far)`` returns how many bytes of the server's answer
    pass before both sides are closed, or None (all of it so far).  Requests
    pass unchanged."""

    def __init__(self, port: int, cut) -> None:
        self.port = port
        self.cut = cut
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.port))
        threading.Thread(target=self._requests, args=(client, upstream), daemon=True).start()
        answer = bytearray()
        try:
            while data := upstream.recv(65536):
                at = self.cut(bytes(answer + data))
                if at is not None:
                    client.sendall(data[: max(0, at - len(answer))])
                    self.cuts += 1
                    return
                client.sendall(data)
                answer += data
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    @staticmethod
    def _requests(client: socket.socket, upstream: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        self._listener.close()


def after_done(answer: bytes) -> Optional[int]:
    """Cut right after the ``data: [DONE]`` event (before the end of the chunked body)."""
    at = answer.find(b"data: [DONE]")
    if at < 0:
        return None
    ends = [e + len(sep) for sep in (b"\r\n\r\n", b"\n\n") if (e := answer.find(sep, at)) >= 0]
    return min(ends) if ends else None


def inside_event(n: int):
    """Cut in the middle of the answer's ``n``-th event."""
    def cut(answer: bytes) -> Optional[int]:
        at = -1
        for _ in range(n):
            at = answer.find(b"data: {", at + 1)
            if at < 0:
                return None
        return at + 10
    return cut
