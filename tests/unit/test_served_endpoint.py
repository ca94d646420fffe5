"""Who may receive typed text: ``http://`` only to loopback unless the config
says ``allow_insecure_http = true``, and a token file only its owner can read."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from daemon.backends.served.client import Server, ServerError, read_token
from daemon.backends.served.endpoint import cleartext_problem, is_loopback
from daemon.config import Config, ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST", True), ("10.0.0.2", False), ("192.168.1.5", False), ("gpu-box", False),
    ("localhost.example.com", False), ("::ffff:10.0.0.1", False), ("0.0.0.0", False),
])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_cleartext_only_to_loopback_unless_allowed():
    assert cleartext_problem("http://127.0.0.1:8080") is None
    assert cleartext_problem("http://[::1]:8080/v1") is None
    assert cleartext_problem("https://gpu-box/v1") is None
    problem = cleartext_problem("http://gpu-box:8080")
    assert problem is not None and "in clear" in problem and "allow_insecure_http = true" in problem
    assert cleartext_problem("http://gpu-box:8080", allow_insecure_http=True) is None


def test_config_refuses_http_to_another_machine():
    with pytest.raises(ConfigError) as err:
        Config(backend="server", server_url="http://gpu-box:8080")
    assert "server_url" in str(err.value) and "allow_insecure_http" in str(err.value)
    assert Config(backend="server", server_url="http://gpu-box:8080", allow_insecure_http=True).server_url
    assert Config(backend="server", server_url="https://gpu-box").server_url
    assert Config(backend="server", server_url="http://127.0.0.1:8080").server_url


def test_config_check_says_it(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('backend = "server"\nserver_url = "http://10.1.2.3:8080"\n')
    out = subprocess.run([sys.executable, "-m", "daemon", "config", "--check", str(path)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 1 and "allow_insecure_http" in out.stderr and "10.1.2.3" in out.stderr
    path.write_text('backend = "server"\nserver_url = "http://10.1.2.3:8080"\nallow_insecure_http = true\n')
    out = subprocess.run([sys.executable, "-m", "daemon", "config", "--check", str(path)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr


def test_the_client_refuses_http_to_another_machine():
    with pytest.raises(ValueError, match="allow_insecure_http"):
        Server("http://10.1.2.3:8080")
    Server("http://10.1.2.3:8080", allow_insecure_http=True).close()
    Server("http://127.0.0.1:9").close()


def test_the_command_line_refuses_http_to_another_machine():
    """``ghosttype complete --server``: a usage error with the reason."""
    out = subprocess.run([sys.executable, "-m", "daemon", "complete", "--server", "http://10.1.2.3:8080",
                          "--text", "The quick brown fox"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "in clear" in out.stderr and out.stdout == ""


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_a_token_file_open_to_others_is_refused(tmp_path, mode):
    token = tmp_path / "token"
    token.write_text("secret-token-4711\n")
    token.chmod(mode)
    with pytest.raises(ServerError) as err:
        read_token(str(token))
    assert err.value.kind == "refused" and f"chmod 600 {token}" in str(err.value)
    assert "4711" not in str(err.value)


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_token_file_of_its_owner_only_is_read(tmp_path, mode):
    token = tmp_path / "token"
    token.write_text("secret-token-4711\n")
    token.chmod(mode)
    assert read_token(str(token)) == "secret-token-4711"
