"""``code_model`` with the real models: the runtime loads Qwen2.5-Coder beside
SmolLM2, code goes to Qwen and prose to SmolLM2, a code model that cannot be
loaded leaves SmolLM2 suggesting everywhere, and ``ghosttype eval
--simulate-user --code-model`` types a code file through both."""

from __future__ import annotations

import json
import logging
import textwrap

import pytest

from daemon.code_route import CodeRoute
from daemon.config import Config
from daemon.cpc.beam import Decoder
from daemon.cpc.suggestion import BeamParams
from daemon.runtime import make_decoder_factory
from tests.llm.test_eval_cli import ghosttype

QWEN = "qwen2.5-coder-0.5b"
GATE_OFF = BeamParams(confidence_threshold=0.0, max_tokens=4)

CODE = textwrap.dedent('''\
    import os


    def read_config(path):
        """Return the lines of the file at path, without comments."""
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\\n") for line in f]
        return [line for line in lines if not line.startswith("#")]


    def main(argv):
        for path in argv[1:]:
            for line in read_config(path):
                print(line)
        return 0


    if __name__ == "__main__":
        sys.exit(main(sys.argv))
    ''')

PROSE = ("Thanks for the notes from Tuesday. I went through the list with the team this morning and we agree "
         "on most of it: the release moves to the second week of March, and the documentation gets a proper "
         "review before then. The one open question is the migration guide; could you ask the support people ")


@pytest.fixture(scope="module")
def route():
    route = make_decoder_factory(Config(code_model=QWEN))()
    try:
        yield route
    finally:
        route.close()


def test_the_runtime_puts_the_code_model_beside_the_main_one(route, smol_model_path):
    assert isinstance(route, CodeRoute)
    assert route.main.lm.model_path == smol_model_path
    assert route.code.lm.model_path.name == "qwen2.5-coder-0.5b.gguf"
    assert route.code.lm.n_vocab != route.main.lm.n_vocab


def test_code_is_completed_by_the_code_model_and_prose_by_the_main_one(route):
    code_before, main_before = route.code.lm.stats.snapshot(), route.main.lm.stats.snapshot()
    text = CODE + "\n\ndef write_config(path, lin"
    s = route.complete(text, GATE_OFF)
    assert route.code.lm.stats.since(code_before).tokens_decoded > 0
    assert route.main.lm.stats.since(main_before).tokens_decoded == 0
    assert s.text  # "es" and on: the covering of "lin" is the code model's
    alone = route.code.complete(text, GATE_OFF)
    assert s.text.split()[0] == alone.text.split()[0]

    code_before, main_before = route.code.lm.stats.snapshot(), route.main.lm.stats.snapshot()
    assert route.complete(PROSE + "to wri", GATE_OFF).text
    assert route.main.lm.stats.since(main_before).tokens_decoded > 0
    assert route.code.lm.stats.since(code_before).tokens_decoded == 0
    assert (route.code_requests, route.main_requests) == (1, 1)


def test_a_code_model_that_cannot_be_loaded_leaves_the_main_model_everywhere(tmp_path, caplog):
    missing = tmp_path / "no-such-model.gguf"
    with caplog.at_level(logging.WARNING, logger="daemon.runtime"):
        decoder = make_decoder_factory(Config(code_model=str(missing)))()
    assert isinstance(decoder, Decoder)
    assert decoder.complete(PROSE + "to wri", GATE_OFF).text
    assert any("code_model" in r.getMessage() and "no-such-model.gguf" in r.getMessage() for r in caplog.records)


def test_eval_simulates_a_user_with_a_code_model(tmp_path):
    source = tmp_path / "tool.py"
    source.write_text(CODE * 3, encoding="utf-8")
    out_json = tmp_path / "u.json"
    out = ghosttype("eval", str(source), "--simulate-user", "--chars", "60", "--key-interval-ms", "0",
                    "--context-chars", "600", "--no-baselines", "--code-model", QWEN, "--json", str(out_json),
                    timeout=300)
    assert out.returncode == 0, out.stderr
    obj = json.loads(out_json.read_text(encoding="utf-8"))
    assert obj["settings"]["code_model"] == QWEN
    line = next(x for x in out.stdout.splitlines() if "requests to the code model" in x)
    code, total = (int(w) for w in line.split(":")[1].split()[0:3:2])
    assert total > 0 and code == total  # the whole file is code
    (run,) = obj["runs"]
    assert run["keystrokes"] + run["accepted_chars"] - run["accepts"] - run["word_accepts"] == 60


def test_doctor_checks_the_code_model(tmp_path):
    from daemon.doctor import run_checks

    config = tmp_path / "config.toml"
    config.write_text(f'code_model = "{tmp_path / "no-such-model.gguf"}"\n', encoding="utf-8")
    results = {r.name: r for r in run_checks(config, env={})}
    assert results["model"].ok
    assert results["code model"].ok is False and "no-such-model.gguf" in results["code model"].detail
    config.write_text(f'code_model = "{QWEN}"\n', encoding="utf-8")
    results = {r.name: r for r in run_checks(config, env={})}
    assert results["code model"].ok and QWEN in results["code model"].detail


@pytest.mark.parametrize("extra, message", [
    ((), "--code-model works with --simulate-user"),
    (("--simulate-user", "--server", "http://127.0.0.1:9"), "--code-model runs in ghosttype"),
])
def test_eval_refuses_a_code_model_it_would_not_use(tmp_path, extra, message):
    source = tmp_path / "tool.py"
    source.write_text(CODE, encoding="utf-8")
    out = ghosttype("eval", str(source), "--code-model", QWEN, *extra)
    assert out.returncode == 2 and message in out.stderr, out.stderr
