"""A real llama.cpp server for the served-model tests: ``python -m
llama_cpp.server`` (llama-cpp-python's ``server`` extra, installed by the
``test`` extra) on 127.0.0.1 with the SmolLM2 model, one thread, its verbose
logging off, its output in a file the tests read.  Started and stopped by PID.
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import pathlib
import signal
import socket
import ssl
import subprocess
import sys
import time
from typing import Optional

from tests.needs import missing

READY_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """One ``llama_cpp.server`` process; ``start`` waits until it answers."""

    def __init__(self, model: pathlib.Path, log_dir: pathlib.Path, api_key: Optional[str] = None,
                 port: Optional[int] = None, tls: Optional[tuple[pathlib.Path, pathlib.Path]] = None) -> None:
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

    def start(self) -> "LlamaServer":
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
               "--port", str(self.port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "2048",
               "--verbose", "false"]
        if self.api_key:
            cmd += ["--api_key", self.api_key]
        if self.tls:
            cmd += ["--ssl_certfile", str(self.tls[0]), "--ssl_keyfile", str(self.tls[1])]
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        self.starts += 1
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}:\n{self.log()[-2000:]}")
            if self._answers():
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {READY_TIMEOUT_S:.0f} s")

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
