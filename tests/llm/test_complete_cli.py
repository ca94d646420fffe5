"""``ghosttype complete`` end to end on the real SmolLM2 model, through the real
entry point in a fresh interpreter (as a user or script would run it)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = "The weather today is sunny and warm, so we decided to go to the bea"


def ghosttype(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}  # must work headless
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
    )


@pytest.fixture(scope="module", autouse=True)
def _needs_model(smol_model_path: pathlib.Path) -> None:
    """Fail (with the reason) when the model or llama.cpp is missing."""
    import llama_cpp  # noqa: F401  (a dependency)


def test_json_shape_and_plain_output_agree():
    out = ghosttype("complete", "--text", TEXT, "--max-tokens", "4", "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert isinstance(obj["suggestion"], str)
    assert 0.0 <= obj["confidence"] <= 1.0
    assert obj["suppressed"] is False
    assert obj["strategy"] == "cpc" and obj["beam_width"] == 2
    assert {"complete", "load"} <= set(obj["timings_ms"])
    assert all(isinstance(v, float) and v >= 0 for v in obj["timings_ms"].values())
    assert obj["tokens_decoded"] > 0 and obj["model_calls"] >= 1
    assert 1 <= obj["tokens_generated"] <= 4 + 8  # covering tokens + at most 4 continuation tokens
    assert obj["model"].endswith(".gguf")
    # Plain mode prints exactly the same suggestion (decoding is deterministic).
    plain = ghosttype("complete", "--text", TEXT, "--max-tokens", "4")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == obj["suggestion"] + "\n"


def test_stdin_is_read_verbatim():
    a = ghosttype("complete", "--max-tokens", "3", "--strategy", "naive", "--json", stdin=TEXT)
    b = ghosttype("complete", "--max-tokens", "3", "--strategy", "naive", "--json", "--text", TEXT)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert json.loads(a.stdout)["suggestion"] == json.loads(b.stdout)["suggestion"]


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_empty_or_blank_text_gives_empty_suggestion(text):
    out = ghosttype("complete", "--text", text, "--json", "--max-tokens", "3")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert isinstance(obj["suggestion"], str)
    if text == "":
        assert obj["suggestion"] == "" and obj["tokens_decoded"] == 0


def test_confidence_threshold_one_suppresses_plain_output():
    out = ghosttype("complete", "--text", TEXT, "--max-tokens", "3", "--confidence-threshold", "1", "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    if obj["confidence"] < 1.0:
        assert obj["suppressed"] is True
        plain = ghosttype("complete", "--text", TEXT, "--max-tokens", "3", "--confidence-threshold", "1")
        assert plain.returncode == 0 and plain.stdout == "\n"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--strategy", "greedy"], "strategy"),
        (["--beam-width", "0"], "beam_width"),
        (["--beam-width", "two"], "beam-width"),
        (["--confidence-threshold", "2"], "confidence_threshold"),
        (["--model", "/nonexistent/model.gguf"], "model"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    out = ghosttype("complete", "--text", "hello", *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("flag, value, setting", [
    ("--max-tokens", "0", "max_tokens"), ("--max-tokens", "65", "max_tokens"), ("--beam-width", "9", "beam_width"),
    ("--context-chars", "10", "context_chars"), ("--continue-min-prob", "-0.5", "continue_min_prob"),
    ("--confidence-threshold", "1.5", "confidence_threshold"),
])
def test_an_out_of_range_flag_gets_the_config_files_error_before_any_model_loads(flag, value, setting, tmp_path):
    """``--max-tokens 0`` once loaded the model and printed nothing: every knob's flag is refused by the
    config's table, in the config file's words, before the model (here a path that does not exist) is looked at."""
    out = ghosttype("complete", "--text", "hello", "--model", str(tmp_path / "absent.gguf"), flag, value)
    config = tmp_path / "config.toml"
    config.write_text(f"{setting} = {value}\n", encoding="utf-8")
    check = ghosttype("config", "--check", str(config))
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    reason = check.stderr.strip().splitlines()[-1].split(f"{config}:1: ", 1)[-1]
    assert reason.startswith(f"{setting}: must be between"), check.stderr
    assert out.stderr.strip() == f"ghosttype complete: error: command line: {reason}"


def test_corrupt_model_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 64)
    out = ghosttype("complete", "--text", "hello", "--model", str(bad))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
