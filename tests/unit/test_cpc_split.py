"""Stable/unstable split: the invariant on toy tokenizers of both families.

Invariant: ``lead + T == stable bytes + remainder`` and, for every
continuation C, ``tokenize(T + C)`` starts with the stable tokens.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.split import MAX_WORD_BYTES, Split, split_stable, word_start
from daemon.cpc.vocab import VocabIndex
from tests.unit.cpc_fakes import ChunkedTokenizer, SentencePieceTokenizer

ALPHABET = "ab c.!?1\n\t_é中'"


def base_pieces() -> list[bytes]:
    """Every byte of the alphabet, so any text over it can be tokenized."""
    singles = sorted({bytes([b]) for ch in ALPHABET for b in ch.encode("utf-8")})
    return singles


_text = st.text(alphabet=ALPHABET, min_size=0, max_size=24)
_piece = st.text(alphabet=ALPHABET, min_size=2, max_size=6).map(lambda s: s.encode("utf-8"))


def check_invariant(tokenize, pieces, text, continuations):
    index = VocabIndex(pieces)
    tokens = tokenize(text)
    split = split_stable(tokens, text, pieces, index)
    assert split.lead + text.encode("utf-8") == split.stable_bytes(pieces) + split.remainder
    if split.tail:  # the text's own tokens after the stable ones, spelling the remainder
        n = len(split.stable)
        assert tuple(tokens[n : n + len(split.tail)]) == split.tail
        assert b"".join(pieces[t] for t in split.tail) == split.remainder
    for cont in continuations:
        after = tokenize(text + cont)
        assert tuple(after[: len(split.stable)]) == split.stable, (text, cont, split)
    return split


@st.composite
def vocab_text_conts(draw):
    """A text, continuations, and a vocabulary that includes random substrings
    of text + continuation: those are the tokens that could merge across the cut."""
    text = draw(_text)
    conts = draw(st.lists(_text, min_size=1, max_size=4))
    extra = draw(st.lists(_piece, max_size=10))
    for cont in conts:
        whole = (text + cont).encode("utf-8")
        for _ in range(draw(st.integers(0, 6))):
            if len(whole) < 2:
                break
            i = draw(st.integers(0, len(whole) - 2))
            n = draw(st.integers(2, min(6, len(whole) - i)))
            extra.append(whole[i : i + n])
    return text, conts, extra


@settings(max_examples=500, deadline=None)
@given(vocab_text_conts())
def test_invariant_chunked_pretokenizer(case):
    text, conts, extra = case
    pieces = base_pieces() + extra + [None]
    check_invariant(ChunkedTokenizer(pieces), pieces, text, conts)


@settings(max_examples=500, deadline=None)
@given(vocab_text_conts())
def test_invariant_sentencepiece_style(case):
    text, conts, extra = case
    pieces = base_pieces() + extra + [b" " + p for p in extra]
    check_invariant(SentencePieceTokenizer(pieces), pieces, text, conts)


@settings(max_examples=300, deadline=None)
@given(vocab_text_conts())
def test_invariant_without_dummy_prefix(case):
    text, conts, extra = case
    pieces = base_pieces() + extra
    check_invariant(SentencePieceTokenizer(pieces, dummy_prefix=False), pieces, text, conts)


def word_vocab() -> list[bytes]:
    words = [b"hello", b" hello", b" world", b" wor", b" w", b"\n\n", b"\n\n\n", b"  ", b" Vi", b"Vi",
             b"12", b" 1", b"..", b" caf", b"\xc3\xa9", b" the", b" there"]
    return sorted({bytes([b]) for b in range(256)} | set(words))


def test_keeps_everything_before_the_last_word():
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    split = check_invariant(tok, pieces, "hello world wor", ["ld", "d!", " x", "\n"])
    assert split.remainder == b" wor"
    assert b"".join(pieces[t] for t in split.stable) == b"hello world"


def test_whitespace_lookahead_case():
    """"\\n\\n\\nVi": the newline run must not be stable ("\\n\\n" + "\\n" + "Vi")."""
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    text = "hello\n\n\nVi"
    split = check_invariant(tok, pieces, text, ["m", " x", "\n"])
    assert split.remainder == b"\n\n\nVi"
    split = check_invariant(tok, pieces, "hello\n\n\n", ["Vi", "\n", " "])
    assert split.remainder == b"\n\n\n"


def test_text_endings():
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    cases = {
        "hello world ": b" ",
        "hello world  ": b"  ",
        "hello world.": b".",
        "hello world..": b"..",
        "hello 12": b" 12",
        "hello caf\u00e9": b" caf\xc3\xa9",
        "hello world\n": b"\n",
    }
    for text, remainder in cases.items():
        split = check_invariant(tok, pieces, text, ["a", " b", ".", "1", "\n", "\u00e9"])
        assert split.remainder == remainder, text


def test_vocabulary_rule_backs_off_over_mergeable_tokens():
    """Without a pre-tokenizer a token "d t" could merge across the word start."""
    pieces = word_vocab() + [b"d t"]
    tok = SentencePieceTokenizer(pieces, dummy_prefix=False)
    split = check_invariant(tok, pieces, "hello world t", ["he", "here", " x"])
    assert split.remainder.endswith(b"d t")


def test_inserted_leading_space_is_reported_as_lead():
    pieces = word_vocab()
    tok = SentencePieceTokenizer(pieces)
    split = check_invariant(tok, pieces, "hello world wor", ["ld"])
    assert split.lead == b" "
    assert split.stable_bytes(pieces) == b" hello world"
    assert split.remainder == b" wor"


def test_single_word_and_empty_text():
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    assert split_stable(tok("hello"), "hello", pieces) == Split((), b"hello")
    assert split_stable([], "", pieces) == Split((), b"")
    split = split_stable(tok("hello wor"), "hello wor", pieces)
    assert split.remainder == b" wor" and b"".join(pieces[t] for t in split.tail) == b" wor"


def test_long_final_run_is_capped():
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    text = "hello " + "x" * (MAX_WORD_BYTES + 20)
    split = check_invariant(tok, pieces, text, ["x", " y"])
    assert len(split.remainder) < MAX_WORD_BYTES


def test_tokens_that_do_not_match_the_text_end_the_stable_part():
    pieces = word_vocab()
    tok = ChunkedTokenizer(pieces)
    tokens = tok("hello world wor")
    tokens[1] = pieces.index(b" there")  # a backend that normalised " world"
    split = split_stable(tokens, "hello world wor", pieces)
    assert split.stable == tuple(tokens[:1])
    assert split.remainder == b" world wor"


def test_word_start():
    assert word_start("") == 0
    assert word_start("abc") == 0
    assert word_start("ab cd") == 2
    assert word_start("ab  cd") == 2
    assert word_start("ab cd ") == 5
    assert word_start("ab cd.") == 5
    assert word_start("ab cd ..") == 5
    assert word_start("foo(bar") == 4
    assert word_start("x\n\n\nVi") == 1


def test_remainder_is_bounded_in_runs_without_a_safe_boundary():
    from daemon.cpc.split import MAX_REMAINDER_BYTES

    pieces = word_vocab() + [b"xx", b"xxx", b"xxxx", b" xx"]
    tok = ChunkedTokenizer(pieces)
    text = "hello " + "x" * 300
    split = split_stable(tok(text), text, pieces)
    assert 0 < len(split.remainder) <= MAX_REMAINDER_BYTES
    assert not split.exact
    assert split_stable(tok("hello wor"), "hello wor", pieces).exact
    assert split.stable_bytes(pieces) + split.remainder == text.encode()
