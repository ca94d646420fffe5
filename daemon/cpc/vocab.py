"""Byte vocabulary index: which tokens can cover a given run of typed bytes.

The coverage search asks two questions on every step, for the bytes ``r`` the
user has typed but no beam token has consumed yet:

* ``prefixes_of(r)``: tokens whose bytes are a non-empty *proper* prefix of
  ``r`` (they consume part of it and the search goes on);
* ``starting_with(r)``: tokens whose bytes start with ``r`` (equal included);
  they finish the covering, possibly overshooting into the suggestion.

Why this shape rather than a trie: "starts with r" over a byte-sorted list is
one contiguous range, found with two binary searches in C (``bisect`` over a
list of ``bytes``), and the answer is a *view* of a precomputed permutation
array, so even ``r = b" "`` (tens of thousands of tokens) costs O(log n) and
no copying.  "Is a proper prefix of r" needs at most ``max_len`` hash
look-ups of ``r[:1], r[:2], ...``.  Both are built once per vocabulary.

Vocabularies can contain the same bytes under several ids (byte-fallback
tokens next to merged ones, or duplicated pieces), so the hash maps bytes to
an *array* of ids.  Excluded tokens (``None``: control, unused, BOS/EOS) and
empty pieces are never returned: an empty piece would let the search loop
without consuming anything.
"""

from __future__ import annotations

import bisect
from typing import Optional, Sequence

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.setflags(write=False)


def _successor(prefix: bytes) -> Optional[bytes]:
    """Smallest byte string greater than every string that starts with ``prefix``.

    ``None`` when no such string exists (``prefix`` is empty or all ``0xff``).
    """
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


class VocabIndex:
    """Prefix/extension look-ups over a token vocabulary given as bytes.

    ``pieces[i]`` is the byte string of token ``i`` or ``None`` when the token
    must never be proposed.  Returned id arrays are read-only ``int64`` arrays;
    ``starting_with`` returns a view into the sorted permutation (do not keep
    it across vocabularies, do not write to it).
    """

    def __init__(self, pieces: Sequence[Optional[bytes]]) -> None:
        self.n_vocab: int = len(pieces)
        self._pieces: list[bytes] = [p or b"" for p in pieces]
        valid = [(p, i) for i, p in enumerate(pieces) if p]  # drops None and b""
        valid.sort()
        #: token ids ordered by their bytes (ties by id)
        self.sorted_ids: np.ndarray = np.fromiter((i for _, i in valid), dtype=np.int64, count=len(valid))
        self.sorted_ids.setflags(write=False)
        self._sorted_bytes: list[bytes] = [p for p, _ in valid]
        #: byte length of every token id (0 for excluded tokens)
        self.lengths: np.ndarray = np.zeros(self.n_vocab, dtype=np.int64)
        #: True for ids that may appear in text
        self.allowed: np.ndarray = np.zeros(self.n_vocab, dtype=bool)
        by_bytes: dict[bytes, list[int]] = {}
        for p, i in valid:
            self.lengths[i] = len(p)
            self.allowed[i] = True
            by_bytes.setdefault(p, []).append(i)
        self._exact: dict[bytes, np.ndarray] = {}
        for p, ids in by_bytes.items():
            arr = np.asarray(ids, dtype=np.int64)
            arr.setflags(write=False)
            self._exact[p] = arr
        self.lengths.setflags(write=False)
        self.allowed.setflags(write=False)
        #: longest token in bytes (0 for an empty vocabulary)
        self.max_len: int = max((len(p) for p, _ in valid), default=0)

    def __len__(self) -> int:
        """Number of indexed (non-excluded) tokens."""
        return len(self._sorted_bytes)

    def piece(self, token: int) -> bytes:
        """Bytes of ``token`` (``b""`` for excluded tokens)."""
        return self._pieces[token]

    def exact(self, b: bytes) -> np.ndarray:
        """Ids whose bytes equal ``b`` (usually zero or one)."""
        return self._exact.get(b, _EMPTY)

    def range_starting_with(self, b: bytes) -> tuple[int, int]:
        """Half-open range of ``sorted_ids`` whose bytes start with ``b``."""
        lo = bisect.bisect_left(self._sorted_bytes, b)
        succ = _successor(b)
        hi = len(self._sorted_bytes) if succ is None else bisect.bisect_left(self._sorted_bytes, succ, lo)
        return lo, hi

    def starting_with(self, b: bytes) -> np.ndarray:
        """Ids whose bytes start with ``b`` (``b`` itself included); a view."""
        lo, hi = self.range_starting_with(b)
        return self.sorted_ids[lo:hi]

    def count_starting_with(self, b: bytes) -> int:
        """``len(starting_with(b))`` without building the view."""
        lo, hi = self.range_starting_with(b)
        return hi - lo

    def any_starting_with(self, b: bytes) -> bool:
        """Does any token start with ``b``?  One binary search."""
        lo = bisect.bisect_left(self._sorted_bytes, b)
        return lo < len(self._sorted_bytes) and self._sorted_bytes[lo].startswith(b)

    def prefixes_of(self, b: bytes) -> np.ndarray:
        """Ids whose bytes are a non-empty proper prefix of ``b``, shortest first."""
        found = [
            ids
            for ids in (self._exact.get(b[:n]) for n in range(1, min(len(b) - 1, self.max_len) + 1))
            if ids is not None
        ]
        if not found:
            return _EMPTY
        if len(found) == 1:
            return found[0]
        return np.concatenate(found)

    def has_prefix_longer_than(self, b: bytes, min_len: int) -> bool:
        """True when some token equals ``b[:n]`` for ``min_len < n <= len(b)``.

        Used by the stable split to ask "could a token start before the cut
        and end inside the typed tail?" without building arrays.
        """
        exact = self._exact
        for n in range(min_len + 1, min(len(b), self.max_len) + 1):
            if b[:n] in exact:
                return True
        return False
