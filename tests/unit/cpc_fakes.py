"""A scripted ``TokenLM`` and toy tokenizers for testing the CPC decoder.

``ScriptedLM`` returns log-probabilities that are a deterministic function of
the token sequence (a seeded hash), optionally overridden per sequence, so
tests can compute the exact answer by brute force.  It counts calls and
records every batch so tests can assert "one batched call per step".

Two toy tokenizers cover the two families the split must handle:

* ``ChunkedTokenizer``: a GPT-2-style pre-tokenizer (regex chunks, with the
  ``\\s+(?!\\S)`` lookahead) followed by greedy longest-match inside each chunk;
* ``SentencePieceTokenizer``: no pre-tokenizer, a dummy leading space, greedy
  longest match over the whole text (tokens may span anything).

Greedy longest match is not BPE, but it shares the property the split relies
on: a token boundary that no vocabulary token can cross separates two
independently tokenized halves.
"""

from __future__ import annotations

import re
import zlib
from typing import Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from daemon.cpc.lm import Cancelled, CancelCheck, LMStats

#: GPT-2's pattern with ASCII classes (``re`` has no \\p{L}); non-ASCII
#: characters count as letters so multi-byte text forms words.
GPT2_PATTERN = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d| ?[^\s\w]+|\s+(?!\S)|\s+|_+""",
)


def _longest_match(data: bytes, vocab: Mapping[bytes, int], max_len: int) -> list[int]:
    out: list[int] = []
    pos = 0
    while pos < len(data):
        for n in range(min(max_len, len(data) - pos), 0, -1):
            tok = vocab.get(data[pos : pos + n])
            if tok is not None:
                out.append(tok)
                pos += n
                break
        else:
            raise ValueError(f"byte {data[pos]:#x} is not in the toy vocabulary")
    return out


def _first_ids(pieces: Sequence[Optional[bytes]]) -> dict[bytes, int]:
    vocab: dict[bytes, int] = {}
    for i, p in enumerate(pieces):
        if p and p not in vocab:
            vocab[p] = i
    return vocab


class ChunkedTokenizer:
    """Regex pre-tokenizer + greedy longest match within each chunk."""

    def __init__(self, pieces: Sequence[Optional[bytes]], pattern: re.Pattern = GPT2_PATTERN) -> None:
        self.vocab = _first_ids(pieces)
        self.max_len = max(len(p) for p in self.vocab)
        self.pattern = pattern

    def chunks(self, text: str) -> list[str]:
        return self.pattern.findall(text)

    def __call__(self, text: str) -> list[int]:
        out: list[int] = []
        for chunk in self.chunks(text):
            out.extend(_longest_match(chunk.encode("utf-8"), self.vocab, self.max_len))
        return out


class SentencePieceTokenizer:
    """Dummy leading space + greedy longest match over the whole text."""

    def __init__(self, pieces: Sequence[Optional[bytes]], dummy_prefix: bool = True) -> None:
        self.vocab = _first_ids(pieces)
        self.max_len = max(len(p) for p in self.vocab)
        self.dummy_prefix = dummy_prefix

    def __call__(self, text: str) -> list[int]:
        if not text:
            return []
        data = (" " + text if self.dummy_prefix else text).encode("utf-8")
        return _longest_match(data, self.vocab, self.max_len)


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max()
    return (x - m - np.log(np.exp(x - m).sum())).astype(np.float32)


class ScriptedLM:
    """Deterministic fake ``TokenLM`` (see module docstring).

    ``overrides`` maps a token sequence to ``{token: logit}``; listed tokens get
    that logit and every other token ``-1e4`` (nearly zero probability), which
    lets a test script exactly what the model "wants".
    """

    def __init__(
        self,
        pieces: Sequence[Optional[bytes]],
        *,
        eog: Iterable[int] = (),
        seed: int = 0,
        scale: float = 3.0,
        n_ctx: int = 4096,
        tokenizer: Optional[Callable[[str], list[int]]] = None,
        overrides: Optional[Mapping[tuple[int, ...], Mapping[int, float]]] = None,
    ) -> None:
        self._pieces = list(pieces)
        self._eog = frozenset(eog)
        self.seed = seed
        self.scale = scale
        self._n_ctx = n_ctx
        self._tokenizer = tokenizer or ChunkedTokenizer(self._pieces)
        self.overrides = {tuple(k): dict(v) for k, v in (overrides or {}).items()}
        self._stats = LMStats()
        self.calls = 0
        self.batches: list[list[tuple[int, ...]]] = []
        self.cancel_after: Optional[int] = None  #: raise Cancelled on this call number

    # -- TokenLM
    @property
    def n_vocab(self) -> int:
        return len(self._pieces)

    @property
    def n_ctx(self) -> int:
        return self._n_ctx

    @property
    def stats(self) -> LMStats:
        return self._stats

    def token_bytes(self) -> Sequence[Optional[bytes]]:
        return list(self._pieces)

    def eog_ids(self) -> frozenset[int]:
        return self._eog

    def tokenize(self, text: str) -> list[int]:
        return self._tokenizer(text)

    def logprobs(self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None) -> np.ndarray:
        if cancel is not None and cancel():
            raise Cancelled()
        if self.cancel_after is not None and self.calls >= self.cancel_after:
            raise Cancelled()
        self.calls += 1
        batch = [tuple(int(t) for t in s) for s in seqs]
        for s in batch:
            assert len(s) + 1 <= self._n_ctx, "sequence longer than the context"
        self.batches.append(batch)
        self._stats.decode_calls += 1
        self._stats.tokens_decoded += sum(len(s) for s in batch)
        return np.stack([self.row(s) for s in batch]) if batch else np.zeros((0, self.n_vocab), np.float32)

    # -- scripting helpers
    def logits(self, seq: Sequence[int]) -> np.ndarray:
        seq = tuple(seq)
        if seq in self.overrides:
            row = np.full(self.n_vocab, -1e4, dtype=np.float64)
            for tok, value in self.overrides[seq].items():
                row[tok] = value
            return row
        key = zlib.crc32(np.asarray(seq, dtype=np.int64).tobytes())
        rng = np.random.default_rng([self.seed, key, len(seq)])
        return rng.normal(0.0, self.scale, self.n_vocab)

    def row(self, seq: Sequence[int]) -> np.ndarray:
        """Log-softmax of the next-token distribution after ``seq``."""
        return log_softmax(self.logits(seq))
