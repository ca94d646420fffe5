"""``ghosttype eval`` end to end on the real SmolLM2 model: quality JSON schema,
replay JSON schema, the vocabulary benchmark, and error exits.  Small runs (a
few offsets, 4 tokens) so the file takes seconds, not minutes."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from daemon.evaluation.metrics import gets_next_word, matched_chars
from daemon.evaluation.offsets import choose_offsets

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = (
    "Vim is a text editor. To start editing a file, type vim followed by the name of the file.\n"
    "When you want to leave the editor, press Escape and type a colon followed by quit.\n"
    "The insert command lets you type new text; the normal mode lets you move around.\n"
)
CASE_KEYS = {"offset", "strategy", "suggestion", "reference", "matched", "confidence", "suppressed", "ms"}
SUMMARY_KEYS = {"mean_matched", "median_matched", "word_completion", "n"}


def ghosttype(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        input="", capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout,
    )


@pytest.fixture(scope="module")
def text_file(tmp_path_factory: pytest.TempPathFactory, smol_model_path: pathlib.Path) -> pathlib.Path:
    import llama_cpp  # noqa: F401  (a dependency)
    path = tmp_path_factory.mktemp("eval") / "sample.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_quality_json_schema_and_scores(text_file, tmp_path):
    out_json = tmp_path / "q.json"
    out = ghosttype(
        "eval", str(text_file), "--strategies", "naive,heal,cpc2", "--offsets", "3",
        "--kind", "mid", "--seed", "1", "--max-tokens", "4", "--json", str(out_json),
        "--threshold-sweep", "0,1",
    )
    assert out.returncode == 0, out.stderr
    for name in ("naive", "heal", "cpc2", "mean matched", "word compl.", "withheld right"):
        assert name in out.stdout
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    offsets = choose_offsets(TEXT, 3, "mid", 1)
    assert len(obj["cases"]) == 3 * 3
    for case in obj["cases"]:
        assert CASE_KEYS <= set(case)
        assert case["offset"] in offsets
        assert TEXT[case["offset"] :].startswith(case["reference"])
        assert case["matched"] == matched_chars(case["suggestion"], case["reference"])
        assert case["next_word"] == gets_next_word(case["suggestion"], TEXT[case["offset"] :])
        assert case["ms"] > 0 and 0.0 <= case["confidence"] <= 1.0
    assert set(obj["summary"]) == {"naive", "heal", "cpc2"}
    for name, s in obj["summary"].items():
        rows = [c for c in obj["cases"] if c["strategy"] == name]
        assert SUMMARY_KEYS <= set(s) and s["n"] == 3
        assert s["mean_matched"] == pytest.approx(sum(c["matched"] for c in rows) / 3)
        assert 0.0 <= s["word_completion"] <= 1.0
    assert obj["runs"][0]["file"] == "sample.txt" and obj["runs"][0]["summary"] == obj["summary"]
    for name, (none, every) in obj["runs"][0]["threshold_sweep"].items():
        shown = [c for c in obj["cases"] if c["strategy"] == name and c["suggestion"]]
        assert none["shown"] == len(shown) and none["withheld_right"] + none["withheld_wrong"] == 0
        assert every["withheld_right"] + every["withheld_wrong"] == sum(c["confidence"] < 1 for c in shown)


def test_quality_is_deterministic(text_file, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        out = ghosttype("eval", str(text_file), "--strategies", "cpc1", "--offsets", "2",
                        "--max-tokens", "3", "--json", str(path))
        assert out.returncode == 0, out.stderr
    strip = lambda o: [(c["offset"], c["suggestion"]) for c in o["cases"]]  # noqa: E731
    assert strip(json.loads(a.read_text())) == strip(json.loads(b.read_text()))


def test_replay_json_schema(text_file, tmp_path):
    out_json = tmp_path / "r.json"
    out = ghosttype("eval", str(text_file), "--replay", "--chars", "12", "--max-tokens", "4",
                    "--context-chars", "200", "--json", str(out_json))
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    assert set(obj["replay"]) == {"cpc2", "naive"}
    for stats in obj["replay"].values():
        assert {"p50_ms", "p95_ms", "calls_per_key", "prompt_tokens_reeval_midword"} <= set(stats)
        assert stats["keys"] == 12 and stats["model_keys"] + stats["typed_through"] == 12
        assert 0 <= stats["p50_ms"] <= stats["p95_ms"]
        assert stats["calls_per_key"] > 0 and stats["tokens_per_key"] > 0
    assert obj["ratio_p50"] == pytest.approx(
        obj["replay"]["cpc2"]["p50_ms"] / obj["replay"]["naive"]["p50_ms"], rel=1e-6
    )
    assert "p50" in out.stdout and "ratio" in out.stdout
    assert obj["runs"][0]["preload_chars"] == 200 - 12


def test_paced_replay_under_load_reports_stale_suggestions(text_file, tmp_path):
    out_json = tmp_path / "l.json"
    out = ghosttype("eval", str(text_file), "--replay", "--chars", "10", "--max-tokens", "4",
                    "--context-chars", "200", "--strategy", "naive", "--load", "1",
                    "--key-interval-ms", "60", "--json", str(out_json))
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    assert obj["load"] == 1 and obj["key_interval_ms"] == 60
    stats = obj["replay"]["naive"]
    assert stats["keys"] == 10 and isinstance(stats["stale_shown"], int) and stats["stale_shown"] >= 0
    assert "stale shown" in out.stdout and "load=1" in out.stdout


def test_cold_start_json_schema(tmp_path):
    long_text = tmp_path / "long.txt"
    long_text.write_text(TEXT * 4, encoding="utf-8")  # ~1,000 characters
    out_json = tmp_path / "c.json"
    out = ghosttype("eval", str(long_text), "--cold-start", "--offsets", "2", "--seed", "3",
                    "--context-chars", "600", "--max-tokens", "4", "--json", str(out_json))
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    cold = obj["cold_start"]
    assert {"p50_ms", "p95_ms", "p50_final_ms", "p95_final_ms", "n"} <= set(cold)
    assert cold["n"] == 2 and cold["shown"] <= 2 and cold["near_window"] == 2
    assert 0 < cold["p50_final_ms"] <= cold["p95_final_ms"]
    if cold["shown"] == cold["n"]:
        # Each start's first suggestion comes no later than its final one.  (With
        # some starts withheld the two percentiles are over different starts and
        # need not be ordered.)
        assert 0 < cold["p50_ms"] <= cold["p50_final_ms"] + 1e-6
    elif cold["shown"]:
        assert 0 < cold["p50_ms"] <= cold["p95_ms"]
    else:  # every suggestion withheld by the confidence gate: no percentile, not NaN
        assert cold["p50_ms"] is None and cold["p95_ms"] is None
    assert "cold starts" in out.stdout


def test_vocab_bench_runs(text_file, tmp_path):
    out_json = tmp_path / "v.json"
    out = ghosttype("eval", str(text_file), "--vocab-bench", "--model", "smollm2", "--json", str(out_json))
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    (res,) = obj["vocab"]
    assert res["model"] == "smollm2" and res["n_vocab"] > 40000 and res["remainders"] > 0
    inputs = {(r["lookup"], r["inputs"]) for r in res["rows"]}
    for lookup in ("prefixes_of", "starting_with"):
        assert {(lookup, "sampled"), (lookup, "b' '"), (lookup, "b'e'"), (lookup, "b'\\n'")} <= inputs
    for r in res["rows"]:
        assert 0 < r["p50_us"] <= r["p99_us"] <= r["max_us"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--strategies", "naive,beam3"], "strategy"),
        (["--strategies", "cpc0"], "strategy"),
        (["--kind", "middle"], "kind"),
        (["--offsets", "0"], "offsets"),
        (["--model", "/nonexistent.gguf"], "model"),
        (["--threshold-sweep", "0.2,high"], "threshold-sweep"),
        (["--threshold-sweep", "1.5"], "threshold-sweep"),
        (["--simulate-user", "--virtual-clock", "--key-interval-ms", "0"], "virtual-clock"),
        (["--simulate-user", "--virtual-clock", "--code-model", "smollm2"], "virtual-clock"),
        (["--simulate-user", "--learn-params", "history=off"], "--learn-from"),
        (["--simulate-user", "--learn-from", ".", "--learn-params", "history=maybe"], "history"),
        (["--simulate-user", "--learn-from", ".", "--learn-params", "history.min_context=0"], "min_context"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(text_file, args, needle):
    out = ghosttype("eval", str(text_file), *args)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in out.stderr


def test_missing_file_is_one_line_and_exit_2(tmp_path):
    out = ghosttype("eval", str(tmp_path / "missing.txt"))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "missing.txt" in out.stderr


def test_simulate_user_types_the_text_with_the_model_and_both_baselines(tmp_path):
    text = tmp_path / "prose.txt"
    text.write_text(TEXT * 2, encoding="utf-8")
    out_json = tmp_path / "u.json"
    out = ghosttype("eval", str(text), "--simulate-user", "--chars", "80", "--key-interval-ms", "0",
                    "--context-chars", "300", "--json", str(out_json), timeout=300)
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    runs = {r["name"]: r for r in obj["runs"]}
    assert set(runs) == {"cpc2", "naive", "field words"}
    for r in runs.values():
        assert r["chars"] == 80 and r["file"] == "prose.txt"
        # Every keystroke typed one character or accepted at least one.
        assert r["keystrokes"] + r["accepted_chars"] - r["accepts"] - r["word_accepts"] == r["chars"]
        assert r["saved"] == pytest.approx(1 - r["keystrokes"] / 80)
    # The text repeats itself: by its second half the model has seen every word once.
    assert runs["cpc2"]["accepts"] + runs["cpc2"]["word_accepts"] > 0
    assert runs["cpc2"]["keystrokes"] < 80
    assert set(obj["pooled"]) == set(runs)
    assert "keystrokes" in out.stdout and "field words" in out.stdout


def test_simulate_user_on_the_virtual_clock_gives_the_same_figures_every_run(tmp_path):
    """At 10 keys/s on the wall clock the same command saves a different share each run; on the virtual clock
    (the model's work counted, not timed) it is the same run every time."""
    text = tmp_path / "prose.txt"
    text.write_text(TEXT * 2, encoding="utf-8")
    figures = []
    for i in range(2):
        out_json = tmp_path / f"v{i}.json"
        out = ghosttype("eval", str(text), "--simulate-user", "--no-baselines", "--chars", "80", "--virtual-clock",
                        "--context-chars", "300", "--json", str(out_json), timeout=300)
        assert out.returncode == 0, out.stderr
        obj = json.loads(out_json.read_text(encoding="utf-8"))
        assert obj["settings"]["virtual_clock"]["decode_ms"] > 0 and "(virtual clock)" in out.stdout
        (run,) = obj["runs"]
        figures.append({k: v for k, v in run.items() if k != "seconds"})
    assert figures[0] == figures[1] and figures[0]["keystrokes"] < 80


def test_simulate_user_learns_from_files_and_reports_what_it_read(tmp_path):
    """``--learn-from``: the memory filled from the user's files, wired as the daemon wires it (the cache in
    the model's rows, history completion where the decoder shows nothing); the JSON says what was read."""
    text = tmp_path / "prose.txt"
    text.write_text(TEXT, encoding="utf-8")
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "a.txt").write_text(TEXT, encoding="utf-8")  # the user typed this before
    (earlier / "b.bin").write_bytes(b"\0\1binary")
    out_json = tmp_path / "u.json"
    out = ghosttype("eval", str(text), "--simulate-user", "--no-baselines", "--chars", "80", "--key-interval-ms",
                    "0", "--empty-field", "--learn-from", str(earlier), "--json", str(out_json), timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"learned {len(' '.join(TEXT.split())):,} characters from 1 file (1 skipped" in out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    learned = obj["settings"]["learn_from"]
    assert (learned["files"], learned["skipped"], learned["history"]["min_context"]) == (1, 1, 8)
    (run,) = obj["runs"]
    # every word of the text is in the memory: most of it comes from there
    assert run["saved"] > 0.5, run


def test_simulate_user_learns_what_it_types_with_learn_typed(tmp_path):
    """``--learn-typed``: the controller learns what the simulated user types, as the daemon does with
    ``learn`` on: a line typed into the first file is suggested in the second."""
    line = "result = frobnicate_quaternion(alpha_vector, beta_offset)\n"
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(line, encoding="utf-8")
    saved = {}
    for flags in ((), ("--learn-typed",)):
        out_json = tmp_path / "u.json"
        out = ghosttype("eval", str(tmp_path / "a.py"), str(tmp_path / "b.py"), "--simulate-user", "--no-baselines",
                        "--chars", "200", "--key-interval-ms", "0", "--empty-field", *flags, "--json",
                        str(out_json), timeout=300)
        assert out.returncode == 0, out.stderr
        obj = json.loads(out_json.read_text(encoding="utf-8"))
        assert obj["settings"]["learn_typed"] == bool(flags) and "learn_from" not in obj["settings"]
        saved[flags] = {r["file"]: r["saved"] for r in obj["runs"]}
    without, learning = saved[()], saved[("--learn-typed",)]
    assert learning["a.py"] == without["a.py"]  # nothing learned yet while the first file is typed
    assert learning["b.py"] > without["b.py"] + 0.3, saved
