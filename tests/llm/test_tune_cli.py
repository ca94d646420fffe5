"""``ghosttype tune`` end to end on the real SmolLM2 model: a short text, a
grid of two thresholds and two continuation rules, the patient simulated user
(so the run takes seconds and does not depend on the machine's speed).  The
config file gets values from the grid with the user's comments kept, and the
text is in no file the command wrote nor in its output."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = (
    "Dear Marguerite, the quarterly lantern festival moves to the riverside meadow this year. "
    "Please bring the lantern festival banners to the riverside meadow by Friday evening. "
    "The lantern festival committee thanks you, and the riverside meadow awaits your banners.\n"
)
CONFIG = '# my settings, by hand\nmodel = "smollm2"  # the small one\n\n# confidence_threshold = 0.6\n'


def _tune(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[var] = str(tmp_path / var.lower())
    return subprocess.run([sys.executable, "-m", "daemon", "tune", *args], input="", capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def test_tune_writes_grid_values_keeps_comments_and_stores_no_text(tmp_path, smol_model_path):
    text_dir = tmp_path / "mine"
    text_dir.mkdir()
    text = text_dir / "letter.txt"
    text.write_text(TEXT, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")

    out = _tune(tmp_path, str(text), "--model", "smollm2", "--chars", "120", "--keys-per-s", "0",
                "--thresholds", "0.5,0.7", "--continue-min-probs", "0.1,0.3", "--config", str(config))
    assert out.returncode == 0, out.stderr

    written = config.read_text(encoding="utf-8")
    assert written.startswith("# my settings, by hand\n")
    assert 'model = "smollm2"  # the small one' in written
    assert "# confidence_threshold = 0.6" in written
    values = tomllib.loads(written)
    assert values["model"] == "smollm2"
    assert values["confidence_threshold"] in (0.5, 0.7)
    assert values["continue_min_prob"] in (0.1, 0.3)
    assert "best: smollm2" in out.stdout

    pieces = [TEXT[i:i + 16] for i in range(0, len(TEXT) - 16, 16)]
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != text:
            content = path.read_bytes().decode("utf-8", errors="replace")
            assert not any(p in content for p in pieces), f"{path} holds some of the text"
    assert not any(p in out.stdout + out.stderr for p in pieces)


def test_tune_refuses_a_missing_file_and_writes_nothing(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    out = _tune(tmp_path, str(tmp_path / "missing.txt"), "--model", "smollm2", "--config", str(config))
    assert out.returncode == 2
    assert "no such file" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert config.read_text(encoding="utf-8") == CONFIG


def test_tune_reports_a_broken_config_in_one_line_and_writes_nothing(tmp_path):
    config = tmp_path / "config.toml"
    broken = CONFIG + "beam_width = -3\n"
    config.write_text(broken, encoding="utf-8")
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    out = _tune(tmp_path, str(text), "--model", "smollm2", "--config", str(config))
    assert out.returncode == 2, out.stderr
    assert "beam_width" in out.stderr and "Traceback" not in out.stderr
    assert config.read_text(encoding="utf-8") == broken
