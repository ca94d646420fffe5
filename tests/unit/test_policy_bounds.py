"""The bounds on what a gate or length rule could gain (tests.research.policy_bounds),
counted exactly on scripted suggestions."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.research import policy_bounds as pb
from tests.research.user_policy import Policy, evaluate

TEXT = "the cat sat on the mat"


def run_of(suggest, text: str = TEXT) -> dict:
    """A collected run whose suggestion at each position is ``suggest(pos)``."""
    records = {p: {"text": suggest(p), "confidence": 1.0, "tail": [], "features": None} for p in range(len(text))}
    return {"file": "t.txt", "kind": "prose", "text": text, "start": 0, "records": records}


def test_the_right_part_ends_where_a_word_of_the_text_ends():
    assert pb.right_word_end("the cat sat", "the cats ran") == 4  # "the ": "cat" goes on as "cats"
    assert pb.right_word_end("the cat sat", "the cat ran") == 8
    assert pb.right_word_end("cat", "cat") == 3  # the text ends there
    assert pb.right_word_end("dog", "cat") == 0
    assert pb.right_chars("the cat sat", "the cats ran") == 7


def test_foresight_length_turns_word_by_word_accepts_into_one_tab():
    run = run_of(lambda p: TEXT[p:] + " dog")  # right to the end, then a wrong word
    full = evaluate([run], Policy(0.0, 0.0))
    # 't' typed, then Ctrl+Right for each of he, cat, sat, on, the, mat: the whole ghost is never right
    assert (full.keystrokes, full.accepts, full.word_accepts, full.wrong_ghosts) == (7, 0, 6, 0)
    cut = pb.foresight_run([run], Policy(0.6, 0.1), gate=False, length=True)
    assert (cut.keystrokes, cut.accepts, cut.word_accepts) == (2, 1, 0)  # 't', then Tab
    assert pb.foresight_run([run], Policy(0.6, 0.1), gate=True, length=False).keystrokes == 7
    assert pb.any_char_run([run]).keystrokes == 2


def test_foresight_gate_hides_exactly_the_wrong_suggestions():
    run = run_of(lambda p: "xyz")
    shown = evaluate([run], Policy(0.0, 0.0))
    assert (shown.keystrokes, shown.wrong_ghosts) == (len(TEXT), len(TEXT) - 1)
    gated = pb.foresight_run([run], Policy(0.0, 0.0), gate=True, length=False)
    assert (gated.keystrokes, gated.wrong_ghosts) == (len(TEXT), 0)


def test_the_learned_cut_keeps_words_while_their_joint_probability_holds():
    text = "tor that allows users"
    ends = pb.piece_ends(text, 3)
    assert pb.learned_cut(text, 3, ends, [0.9, 0.5, 0.9], 0.45) == "tor that allows"
    assert pb.learned_cut(text, 3, ends, [0.9, 0.5, 0.9], 0.46) == "tor that"
    assert pb.learned_cut(text, 3, ends, [0.4, 1.0, 1.0], 0.5) == "tor"  # the first word always stays


def test_word_features_take_each_words_own_tokens():
    record = {"text": "tor that allows users", "confidence": 0.5,
              "tail": [[8, math.log(0.9)], [15, math.log(0.5)], [21, math.log(0.25)]]}
    first = 3
    ends = pb.piece_ends(record["text"], first)
    assert ends == [8, 15, 21]
    rows = pb.piece_features(record, first, ends)
    col = {n: i for i, n in enumerate(pb.FEATURE_NAMES)}
    assert rows.shape == (3, len(pb.FEATURE_NAMES))
    assert rows[:, col["word_logprob"]] == pytest.approx([math.log(0.9), math.log(0.5), math.log(0.25)])
    assert rows[:, col["logprob_so_far"]] == pytest.approx(np.cumsum([math.log(0.9), math.log(0.5), math.log(0.25)]))
    assert rows[:, col["last_piece"]].tolist() == [0.0, 0.0, 1.0]
    assert rows[0, col["log_confidence"]] == pytest.approx(math.log(0.5))
    # one token spanning two words: the first takes its log-probability, the sum counts it once
    spanning = {**record, "tail": [[15, math.log(0.4)]]}
    rows = pb.piece_features(spanning, first, [8, 15])
    assert rows[:, col["word_logprob"]] == pytest.approx([math.log(0.4), math.log(0.4)])
    assert rows[:, col["logprob_so_far"]] == pytest.approx([0.0, math.log(0.4)])


def test_length_examples_stop_at_the_first_wrong_word_and_skip_a_wrong_first_word():
    text = "the cat sat on the mat"
    run = {"text": text, "records": {
        4: {"text": "cat sat in a", "confidence": 0.9, "tail": []},  # " sat" right, " in" wrong
        8: {"text": "dog", "confidence": 0.9, "tail": []},  # first word wrong: the gate's question
    }}
    x, y = pb.length_examples([run])
    assert y.tolist() == [1.0, 0.0]
    assert x.shape == (2, len(pb.FEATURE_NAMES))


def test_the_command_prints_every_bound_and_the_held_out_comparison(tmp_path, capsys):
    files = []
    for i, tail in enumerate([" dog", " on the"]):
        run = run_of(lambda p, tail=tail: TEXT[p:p + 8] + tail)
        run["records"] = {str(k): v for k, v in run["records"].items()}
        run["file"] = f"t{i}.txt"
        path = tmp_path / f"t{i}.json"
        path.write_text(json.dumps(run))
        files.append(str(path))
    assert pb.main(files) == 0
    out = capsys.readouterr().out
    for label in ("gate off", "shipped: threshold 0.6 continue 0.1", "foresight gate and length", "any character",
                  "leave one text out", "pooled"):
        assert label in out
