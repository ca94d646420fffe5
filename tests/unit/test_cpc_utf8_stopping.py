"""UTF-8 prefix decoding and stop rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from daemon.cpc.stopping import stop_position
from daemon.cpc.utf8 import decode_prefix


@given(st.binary(max_size=24))
def test_decode_prefix_is_the_longest_valid_prefix(data):
    text, broken = decode_prefix(data)
    encoded = text.encode("utf-8")
    assert data.startswith(encoded)
    # brute force: no longer prefix decodes
    for n in range(len(encoded) + 1, len(data) + 1):
        try:
            data[:n].decode("utf-8")
        except UnicodeDecodeError:
            continue
        raise AssertionError(f"prefix of {n} bytes decodes but was cut at {len(encoded)}")
    rest = data[len(encoded):]
    if not rest:
        assert not broken
    else:
        # "broken" exactly when no continuation can make the rest valid
        can_finish = any((rest + extra).startswith(rest) and _valid(rest + extra) for extra in _completions(rest))
        assert broken == (not can_finish)


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _completions(rest: bytes):
    yield from (b"\x80" * n for n in range(0, 4))
    yield from (b"\xa0" + b"\x80" * n for n in range(0, 3))
    yield from (b"\x90" + b"\x80" * n for n in range(0, 3))


@given(st.text(max_size=12), st.integers(0, 3))
def test_decode_prefix_never_cuts_a_character(text, drop):
    data = text.encode("utf-8")
    cut = data[: max(0, len(data) - drop)]
    out, broken = decode_prefix(cut)
    assert text.startswith(out) and not broken


def test_stop_rules():
    assert stop_position(b"abc\ndef", single_line=True, sentence_end=False) == 3
    assert stop_position(b"abc\ndef", single_line=False, sentence_end=False) is None
    assert stop_position(b"one. Two", single_line=True, sentence_end=True) == 4
    assert stop_position(b"one.", single_line=True, sentence_end=True) is None  # no space yet
    assert stop_position(b"e.g.x", single_line=True, sentence_end=True) is None
    assert stop_position(b'he said "hi." Then', single_line=False, sentence_end=True) == 13
    assert stop_position(b"why? no", single_line=False, sentence_end=False) is None
    assert stop_position(b"why?\nno", single_line=True, sentence_end=True) == 4
    assert stop_position(b"a\r\nb", single_line=True, sentence_end=False) == 1
