"""The llama.cpp backend against the real SmolLM2 model.

Decode counts are read as ``stats`` deltas around the calls under test, so
the tests do not depend on what earlier tests left in the shared backend.
"""

from __future__ import annotations

import pathlib
import threading
import time

import numpy as np
import pytest

from daemon.cpc.lm import Cancelled, TokenLM
from daemon.backends.llamacpp.llama import LlamaLM, ModelLoadError

pytestmark = pytest.mark.llm

CODE = (
    "def fibonacci(n):\n    if n < 2:\n        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n\nThe results of the experiment were"
)
PROSE = (
    "Autocomplete that runs on your own machine keeps what you type private. "
    "It reads the text before the caret, asks a small language model for the most "
    "likely continuation and shows it in grey; pressing Tab accepts it. "
) * 6


@pytest.fixture(scope="module")
def fresh(smol_model_path: pathlib.Path):
    """A second backend used as the reference: one slot, cache cleared before
    every evaluation, so each row is a from-scratch single-sequence decode."""
    lm = LlamaLM(str(smol_model_path), n_seq_max=1)
    yield lm
    lm.close()


def reference(fresh: LlamaLM, seq: list[int]) -> np.ndarray:
    fresh.clear_cache()
    return fresh.logprobs([seq])[0]


def assert_close(row: np.ndarray, ref: np.ndarray) -> None:
    """Same argmax, same top ranks, and close log-probabilities on the top 50
    (daemon/cpc/README.md: batching may move CPU results by a few tenths of a nat)."""
    assert row.argmax() == ref.argmax()
    # near-ties may swap places: each top 5 must sit inside the other's top 10
    assert set(np.argsort(-row)[:5]) <= set(np.argsort(-ref)[:10])
    assert set(np.argsort(-ref)[:5]) <= set(np.argsort(-row)[:10])
    top = np.argsort(-ref)[:50]
    assert np.abs(row[top] - ref[top]).max() < 0.6


def test_implements_the_protocol(smol_lm):
    assert isinstance(smol_lm, TokenLM)
    assert smol_lm.n_vocab == 49152
    assert smol_lm.n_ctx == 2048


def test_rows_are_log_softmax(smol_lm):
    rows = smol_lm.logprobs([smol_lm.tokenize("Hello, world"), smol_lm.tokenize("import")])
    assert rows.dtype == np.float32 and rows.shape == (2, smol_lm.n_vocab)
    np.testing.assert_allclose(np.exp(rows.astype(np.float64)).sum(axis=1), 1.0, atol=1e-4)
    assert (rows <= 0).all()


def test_batched_forks_equal_fresh_single_sequence_evaluation(smol_lm, fresh):
    s = smol_lm.tokenize(CODE)
    smol_lm.logprobs([s])
    seqs = [s + [t] for t in smol_lm.tokenize(" good bad ugly")] + [s + smol_lm.tokenize(" very good")]
    before = smol_lm.stats.snapshot()
    rows = smol_lm.logprobs(seqs)
    delta = smol_lm.stats.since(before)
    assert delta.decode_calls == 1  # all beams of the step in one llama_decode
    assert delta.tokens_decoded == sum(len(q) - len(s) for q in seqs)
    for row, q in zip(rows, seqs):
        assert_close(row, reference(fresh, q))


def test_extending_decodes_one_token_and_repeating_decodes_none(smol_lm):
    s = smol_lm.tokenize("Reuse test: the quick brown fox jumps over the lazy")
    smol_lm.logprobs([s])
    before = smol_lm.stats.snapshot()
    longer = s + [smol_lm.tokenize(" dog")[0]]
    smol_lm.logprobs([longer])
    assert smol_lm.stats.since(before).tokens_decoded == 1
    assert smol_lm.decoded_from == [(tuple(longer), len(s))]  # where, for the benchmarks
    before = smol_lm.stats.snapshot()
    smol_lm.logprobs([s])
    delta = smol_lm.stats.since(before)
    assert delta.tokens_decoded == 0 and delta.decode_calls == 0
    assert delta.logits_cache_hits == 1
    assert smol_lm.decoded_from == []


def test_prefix_change_decodes_only_after_the_common_prefix(smol_lm, fresh):
    a = smol_lm.tokenize(PROSE + "The first version was written in")
    smol_lm.logprobs([a])
    tail = smol_lm.tokenize(" a different ending for the second request")
    b = a[:-5] + tail
    before = smol_lm.stats.snapshot()
    row = smol_lm.logprobs([b])[0]
    assert smol_lm.stats.since(before).tokens_decoded == len(tail)
    assert smol_lm.decoded_from == [(tuple(b), len(a) - 5)]
    assert_close(row, reference(fresh, b))


def test_same_request_gives_identical_results(smol_model_path):
    with LlamaLM(str(smol_model_path)) as one, LlamaLM(str(smol_model_path)) as two:
        s = one.tokenize(CODE)
        for lm in (one, two):
            lm.logprobs([s])
        seqs = [s + [t] for t in (264, 1247, 30)]
        np.testing.assert_array_equal(one.logprobs(seqs), two.logprobs(seqs))


def test_cancel_stops_after_the_current_chunk_and_keeps_the_cache_consistent(
    smol_model_path, fresh
):
    with LlamaLM(str(smol_model_path), chunk_tokens=32) as lm:
        s = lm.tokenize(PROSE)
        assert len(s) > 3 * 32
        checks = []

        def cancel_after_first_chunk() -> bool:
            checks.append(1)
            return len(checks) > 1

        with pytest.raises(Cancelled):
            lm.logprobs([s], cancel_after_first_chunk)
        assert lm.stats.decode_calls == 1 and lm.stats.tokens_decoded == 32
        # The partial prefill is kept: the next call decodes only the rest.
        row = lm.logprobs([s])[0]
        assert lm.stats.tokens_decoded == len(s)
        assert_close(row, reference(fresh, s))


def test_cancel_from_another_thread_returns_promptly(smol_model_path):
    """Once another thread sets the flag, at most the chunk already in flight
    is decoded (counted in decode calls, not wall time).  The other thread
    sets it once the first chunk is decoded; the prefill waits for it at its
    third chunk at the latest, so a fast machine cannot finish first."""
    with LlamaLM(str(smol_model_path), chunk_tokens=32) as lm:
        s = lm.tokenize(PROSE * 2)
        assert len(s) > 6 * 32
        flag = threading.Event()
        calls_when_set: list[int] = []
        checks: list[int] = []

        def trip() -> None:
            while lm.stats.decode_calls < 1:
                time.sleep(0.001)
            calls_when_set.append(lm.stats.decode_calls)
            flag.set()

        def cancelled() -> bool:
            checks.append(1)
            if len(checks) == 3:
                assert flag.wait(60), "the other thread never set the flag"
            return flag.is_set()

        other = threading.Thread(target=trip, daemon=True)
        other.start()
        with pytest.raises(Cancelled):
            lm.logprobs([s], cancelled)
        other.join(60)
        assert calls_when_set and lm.stats.decode_calls - calls_when_set[0] <= 1
        assert lm.stats.tokens_decoded < len(s)


def test_token_bytes_round_trip_tokenize(smol_lm):
    pieces = smol_lm.token_bytes()
    assert len(pieces) == smol_lm.n_vocab
    for text in (
        "plain ASCII, with punctuation; and  two spaces.\n\tindented",
        "naïve café — Größe, 東京で 🎉 ok",
        CODE,
    ):
        toks = smol_lm.tokenize(text)
        assert b"".join(pieces[t] for t in toks) == text.encode("utf-8")
    assert all(p is None or (isinstance(p, bytes) and p) for p in pieces)
    assert [p for p in pieces if p is not None and b"\0" in p] == [b"\0"]  # the byte token only


def test_special_tokens_have_no_bytes(smol_lm):
    pieces = smol_lm.token_bytes()
    eog = smol_lm.eog_ids()
    assert eog and all(pieces[t] is None for t in eog)
    # <|im_start|> is a control token: never typed text
    assert pieces[1] is None
    assert smol_lm.tokenize("<|im_start|>") != [1]


def test_too_long_sequence_and_bad_token_ids_are_rejected(smol_lm):
    with pytest.raises(ValueError, match="context window"):
        smol_lm.logprobs([[28] * (smol_lm.n_ctx + 1)])
    with pytest.raises(ValueError, match="vocabulary"):
        smol_lm.logprobs([[smol_lm.n_vocab]])


def test_empty_request_and_empty_sequence(smol_lm):
    assert smol_lm.logprobs([]).shape == (0, smol_lm.n_vocab)
    row = smol_lm.logprobs([[]])[0]
    assert np.isfinite(row).all()


def test_more_sequences_than_slots(smol_model_path, fresh):
    with LlamaLM(str(smol_model_path), n_seq_max=2) as lm:
        s = lm.tokenize("Many beams at once:")
        seqs = [s + [t] for t in (264, 1247, 30, 3000, 711)]
        rows = lm.logprobs(seqs)
        for row, q in zip(rows, seqs):
            assert_close(row, reference(fresh, q))


def test_concurrent_callers_get_the_same_answers(smol_lm):
    texts = ["Thread one writes", "Thread two writes something else", "A third text"]
    expected = [smol_lm.logprobs([smol_lm.tokenize(t)])[0] for t in texts]
    got: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        got[i] = smol_lm.logprobs([smol_lm.tokenize(texts[i])])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for i, row in enumerate(expected):
        np.testing.assert_array_equal(got[i], row)


def test_load_prints_nothing(smol_model_path, capfd):
    with LlamaLM(str(smol_model_path), n_ctx=256, n_seq_max=1, chunk_tokens=8) as lm:
        lm.logprobs([lm.tokenize("quiet")])
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_closed_backend_raises(smol_model_path):
    lm = LlamaLM(str(smol_model_path), n_ctx=256, n_seq_max=1, chunk_tokens=8)
    lm.close()
    lm.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        lm.logprobs([[1]])


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda d, src: d / "missing.gguf", id="missing"),
        pytest.param(lambda d, src: _write(d / "text.gguf", b"this is not a model\n" * 10), id="not-gguf"),
        pytest.param(lambda d, src: _write(d / "empty.gguf", b""), id="empty"),
        pytest.param(lambda d, src: _write(d / "magic.gguf", b"GGUF"), id="magic-only"),
        pytest.param(lambda d, src: _write(d / "trunc.gguf", src.read_bytes()[: 1 << 20]), id="truncated"),
        pytest.param(
            lambda d, src: _write(d / "garbage.gguf", b"GGUF" + bytes(range(256)) * 64), id="garbage-header"
        ),
        pytest.param(lambda d, src: d, id="directory"),
    ],
)
def test_bad_model_files_give_one_line_errors(tmp_path, smol_model_path, make, capfd):
    path = make(tmp_path, smol_model_path)
    with pytest.raises(ModelLoadError) as info:
        LlamaLM(str(path), n_ctx=256, n_seq_max=1, chunk_tokens=8)
    message = str(info.value)
    assert message and "\n" not in message and str(path) in message
    out, err = capfd.readouterr()
    assert err == ""


def _write(path: pathlib.Path, data: bytes) -> pathlib.Path:
    path.write_bytes(data)
    return path


def test_sentencepiece_vocabulary_round_trips_whitespace_runs():
    """Gemma 3 keeps runs of spaces/newlines as USER_DEFINED tokens: they are
    ordinary text and must have bytes (SentencePiece markers become spaces)."""
    from daemon.backends.llamacpp.models import resolve_model

    try:
        path = resolve_model("gemma3-270m")
    except ModelLoadError as exc:  # .ci/run installs it
        pytest.fail(str(exc), pytrace=False)
    with LlamaLM(str(path), n_ctx=256, n_seq_max=2, chunk_tokens=16) as lm:
        assert lm.adds_bos
        pieces = lm.token_bytes()
        for text in ("Hello world, naïve 東京 🎉", "  two leading spaces\n\nx", "def f(x):\n    return x"):
            assert b"".join(pieces[t] for t in lm.tokenize(text)) == text.encode("utf-8")
        s = lm.tokenize("The quick brown fox jumps over the lazy dog")
        lm.logprobs([s])
        before = lm.stats.snapshot()
        lm.logprobs([s + lm.tokenize(" again")[:1]])
        assert lm.stats.since(before).tokens_decoded == 1
