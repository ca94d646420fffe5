"""The narrow language-model interface the CPC decoder is written against.

The decoder never sees llama.cpp: it asks a ``TokenLM`` for the next-token
log-probabilities of *several token sequences at once*.  Sequences are given
in full (stable prefix + beam tokens, without BOS); a backend is expected to
cache whatever it can (KV cache of shared prefixes, logits of sequences it has
already evaluated) so asking again for a sequence it has seen is cheap.  This
keeps the algorithm pure and lets tests drive it with scripted logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

#: Polled by backends between decode steps; returns True when the work is stale.
CancelCheck = Callable[[], bool]


class Cancelled(Exception):
    """Raised by a backend (or the decoder) when its cancel check returned True.

    The backend must leave its cache consistent before raising.
    """


@dataclass
class LMStats:
    """Counters a backend keeps so benchmarks can report work done."""

    decode_calls: int = 0  #: llama_decode (or equivalent) invocations
    tokens_decoded: int = 0  #: tokens pushed through the model, all sequences
    logits_cache_hits: int = 0  #: sequences answered without decoding

    def snapshot(self) -> "LMStats":
        return LMStats(self.decode_calls, self.tokens_decoded, self.logits_cache_hits)

    def since(self, earlier: "LMStats") -> "LMStats":
        return LMStats(
            self.decode_calls - earlier.decode_calls,
            self.tokens_decoded - earlier.tokens_decoded,
            self.logits_cache_hits - earlier.logits_cache_hits,
        )


@runtime_checkable
class TokenLM(Protocol):
    """What the decoder needs from a language model."""

    @property
    def n_vocab(self) -> int:
        """Number of rows in the logits (token ids are ``0 .. n_vocab-1``)."""

    @property
    def n_ctx(self) -> int:
        """Longest sequence (in tokens, BOS included) the backend can evaluate."""

    @property
    def stats(self) -> LMStats:
        """Live counters (mutated by the backend)."""

    def token_bytes(self) -> Sequence[Optional[bytes]]:
        """Bytes of every token id as it appears in text, or ``None`` for tokens
        that never appear in typed text (control, user-defined, unused, BOS/EOS).
        SentencePiece word-start markers are already mapped to a space."""

    def eog_ids(self) -> frozenset[int]:
        """End-of-generation token ids (EOS, EOT, ...)."""

    def tokenize(self, text: str) -> list[int]:
        """Tokenize plain text exactly as the model would see it in a prompt,
        without BOS and without parsing special tokens."""

    def logprobs(
        self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None
    ) -> np.ndarray:
        """Log-softmax of the next-token distribution after each sequence.

        Returns a float32 array of shape ``(len(seqs), n_vocab)``.  All
        sequences that need decoding are evaluated together (one batch per
        step), and tokens already in the backend's cache are not decoded
        again.  Raises :class:`Cancelled` when ``cancel()`` becomes true
        between decode steps.
        """


class WrappedLM:
    """A ``TokenLM`` in front of another (``inner``) that changes what a subclass overrides (its
    ``logprobs``) and passes on the rest: the protocol's members here, anything else (a backend's
    ``cached_tokens``, ``warm_up``, ``clear_cache``, ``close``...) through ``__getattr__``."""

    def __init__(self, inner: TokenLM) -> None:
        self.inner = inner

    @property
    def n_vocab(self) -> int:
        return self.inner.n_vocab

    @property
    def n_ctx(self) -> int:
        return self.inner.n_ctx

    @property
    def stats(self) -> LMStats:
        return self.inner.stats

    def token_bytes(self) -> Sequence[Optional[bytes]]:
        return self.inner.token_bytes()

    def eog_ids(self) -> frozenset[int]:
        return self.inner.eog_ids()

    def tokenize(self, text: str) -> list[int]:
        return self.inner.tokenize(text)

    def __getattr__(self, name: str):
        # only called for attributes not found on the wrapper
        if name == "inner":  # not yet set (during __init__ or unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)
