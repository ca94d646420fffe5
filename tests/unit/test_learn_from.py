"""``ghosttype eval --learn-from`` (daemon.evaluation.learn): a huge or odd folder is read within its
bounds, and ``--learn-params`` sets the cache's weights and history completion's."""

from __future__ import annotations

import pytest

from daemon.evaluation.learn import eval_memory, learn_from, parse_learn_params, read_text
from daemon.memory.cache_lm import CacheParams
from daemon.memory.history import HistoryParams
from daemon.memory.store import Memory
from daemon.usage import UsageError


def as_is(text: str, name: str) -> str:
    return text


def test_files_are_learned_in_path_order_and_hidden_folders_are_left_out(tmp_path):
    (tmp_path / "b.txt").write_text("second file of the user")
    (tmp_path / "a.txt").write_text("first file of the user")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("hidden folder text here")
    (tmp_path / ".hidden.txt").write_text("a hidden file's text here")
    memory = Memory()
    learned = learn_from([str(tmp_path)], memory, as_is)
    assert memory.pieces() == ("first file of the user", "second file of the user")
    assert (learned.files, learned.skipped, learned.stopped) == (2, 0, "")


def test_binary_undecodable_and_empty_files_are_skipped(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"ELF\0\1\2 binary bytes")
    (tmp_path / "b.txt").write_bytes("caf\xe9 latin-1 text here".encode("latin-1"))
    (tmp_path / "c.txt").write_text("")
    (tmp_path / "d.txt").write_text("the one text file here")
    memory = Memory()
    learned = learn_from([str(tmp_path)], memory, as_is)
    assert memory.pieces() == ("the one text file here",)
    assert (learned.files, learned.skipped) == (1, 3)


def test_a_file_is_read_only_up_to_the_limit_and_a_character_cut_there_is_dropped(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("é" * 10)  # two bytes each
    assert read_text(path, limit=5) == "éé"
    assert read_text(path, limit=6) == "ééé"


def test_reading_stops_at_the_memory_s_size(tmp_path):
    for i in range(5):
        (tmp_path / f"{i}.txt").write_text(f"file {i} " + "x" * 33)  # 40 characters
    memory = Memory(max_chars=100)
    learned = learn_from([str(tmp_path)], memory, as_is)
    assert len(memory) == 100 and learned.chars == 100 and learned.files == 3  # the third cut to 20
    assert learned.stopped == "the memory is full (100 characters)"


def test_reading_stops_after_so_many_files_and_so_many_seconds(tmp_path):
    for i in range(20):
        (tmp_path / f"{i:02}.txt").write_text(f"file number {i} of many")
    learned = learn_from([str(tmp_path)], Memory(), as_is, max_files=7)
    assert learned.files == 7 and learned.stopped == "after 7 files"
    ticks = iter(range(1000))
    learned = learn_from([str(tmp_path)], Memory(), as_is, clock=lambda: next(ticks), max_seconds=3)
    assert learned.files == 3 and learned.stopped == "after 3 s"


def test_learn_params_set_the_cache_and_history_completion():
    cache, history = parse_learn_params("lam_max=0.3,history.min_context=24,history.max_chars=40")
    assert cache == CacheParams(lam_max=0.3)
    assert history == HistoryParams(min_context=24, max_chars=40)
    assert parse_learn_params(None) == (CacheParams(), HistoryParams())
    assert parse_learn_params("history=off") == (CacheParams(), None)
    for bad, why in (("history.nope=3", "history.min_context"), ("lam_max=x", "takes a number"),
                     ("history=maybe", "on or off"), ("history=off,history.min_context=3", "no history"),
                     ("history.min_context=0", "min_context")):
        with pytest.raises(ValueError, match=why):
            parse_learn_params(bad)


def test_eval_memory_checks_its_flags_before_reading(tmp_path):
    with pytest.raises(UsageError, match="goes with --learn-from"):
        eval_memory(None, "lam_max=0.1", server=False)
    with pytest.raises(UsageError, match="without --server"):
        eval_memory([str(tmp_path)], None, server=True)
    with pytest.raises(UsageError, match="no such file"):
        eval_memory([str(tmp_path / "missing")], None, server=False)
    (tmp_path / "a.txt").write_text("what the user wrote before")
    memory, cache, history, learned = eval_memory([str(tmp_path)], "history=off", server=False)
    assert memory.pieces() == ("what the user wrote before",) and history is None and learned.files == 1
    assert eval_memory(None, None, server=False) == (None, None, None, None)
    with pytest.raises(UsageError, match="without --server"):
        eval_memory(None, None, server=True, learn_typed=True)
    memory, cache, history, learned = eval_memory(None, "lam_max=0.3", server=False, learn_typed=True)
    assert memory.pieces() == () and cache == CacheParams(lam_max=0.3) and history == HistoryParams()
    assert learned is None  # nothing read: the memory learns only what the simulated user types
