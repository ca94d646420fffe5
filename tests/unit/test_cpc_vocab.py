"""VocabIndex against a brute-force scan over random small vocabularies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.vocab import VocabIndex

# Small alphabet with 0x00 and 0xff so range edges (successor of b"\xff") are hit.
_byte = st.sampled_from([0x00, 0x20, 0x61, 0x62, 0x63, 0xC3, 0xA9, 0xFE, 0xFF])
_piece = st.lists(_byte, min_size=0, max_size=5).map(bytes)
_vocab = st.lists(st.one_of(st.none(), _piece), min_size=0, max_size=40)
_query = st.lists(_byte, min_size=0, max_size=7).map(bytes)


def brute_prefixes(pieces, b):
    return sorted(i for i, p in enumerate(pieces) if p and len(p) < len(b) and b.startswith(p))


def brute_starting(pieces, b):
    return sorted(i for i, p in enumerate(pieces) if p and p.startswith(b))


@settings(max_examples=300, deadline=None)
@given(_vocab, _query)
def test_lookups_match_brute_force(pieces, b):
    index = VocabIndex(pieces)
    assert sorted(index.prefixes_of(b).tolist()) == brute_prefixes(pieces, b)
    assert sorted(index.starting_with(b).tolist()) == brute_starting(pieces, b)
    assert index.count_starting_with(b) == len(brute_starting(pieces, b))
    assert sorted(index.exact(b).tolist()) == sorted(i for i, p in enumerate(pieces) if p and p == b)


@settings(max_examples=200, deadline=None)
@given(_vocab, _query, st.integers(0, 8))
def test_has_prefix_longer_than(pieces, b, min_len):
    index = VocabIndex(pieces)
    expected = any(p and min_len < len(p) <= len(b) and b.startswith(p) for p in pieces)
    assert index.has_prefix_longer_than(b, min_len) == expected


def test_duplicates_none_and_empty_pieces():
    pieces = [b"a", None, b"ab", b"a", b"", b"abc", None]
    index = VocabIndex(pieces)
    assert sorted(index.prefixes_of(b"abc").tolist()) == [0, 2, 3]
    assert sorted(index.starting_with(b"a").tolist()) == [0, 2, 3, 5]
    assert index.starting_with(b"").tolist() == index.sorted_ids.tolist()
    assert 1 not in index.sorted_ids and 4 not in index.sorted_ids and 6 not in index.sorted_ids
    assert index.max_len == 3 and len(index) == 4
    assert index.lengths.tolist() == [1, 0, 2, 1, 0, 3, 0]
    assert index.piece(1) == b"" and index.piece(5) == b"abc"


def test_starting_with_is_a_view_not_a_copy():
    pieces = [bytes([32, c]) for c in range(97, 123)] + [b"x"]
    index = VocabIndex(pieces)
    view = index.starting_with(b" ")
    assert len(view) == 26
    assert np.shares_memory(view, index.sorted_ids)
    assert not view.flags.writeable


def test_prefixes_of_needs_proper_prefix_and_respects_max_len():
    index = VocabIndex([b"ab", b"a", b"abcdef"])
    assert sorted(index.prefixes_of(b"ab").tolist()) == [1]  # b"ab" itself is not proper
    assert sorted(index.prefixes_of(b"abcdefg").tolist()) == [0, 1, 2]
    assert index.prefixes_of(b"").tolist() == [] and index.prefixes_of(b"a").tolist() == []


def test_empty_vocabulary():
    index = VocabIndex([None, b""])
    assert index.max_len == 0
    assert index.starting_with(b"a").tolist() == [] and index.prefixes_of(b"ab").tolist() == []


@settings(max_examples=200, deadline=None)
@given(_vocab, _query)
def test_any_starting_with(pieces, b):
    index = VocabIndex(pieces)
    assert index.any_starting_with(b) == bool(brute_starting(pieces, b))
