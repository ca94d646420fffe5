"""The memory's pieces (daemon/memory/store.py): bounded, oldest first, the newest growing with its stretch,
checked against a plain list that does the same by the letter of the docstring."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.memory.store import MAX_PIECE_CHARS, MIN_PIECE_CHARS, Memory

TOKENS = [object(), object(), object()]

#: (text, which stretch: None or an index into TOKENS) or "clear"
operations = st.lists(
    st.one_of(
        st.tuples(st.text(alphabet="ab \n", max_size=40), st.one_of(st.none(), st.integers(0, len(TOKENS) - 1))),
        st.just("clear"),
    ),
    max_size=40,
)


def oracle(ops, max_chars: int, max_piece: int) -> list[str]:
    pieces: list[str] = []
    newest = None
    for op in ops:
        if op == "clear":
            pieces, newest = [], None
            continue
        text, which = op
        token = None if which is None else TOKENS[which]
        if token is not None and token is newest and pieces and len(pieces[-1]) + len(text) <= max_piece:
            text = pieces.pop() + text
        elif len(text.strip()) < MIN_PIECE_CHARS:
            continue
        pieces.append(text[-max_chars:])
        while sum(map(len, pieces)) > max_chars:
            pieces.pop(0)
        newest = token
    return pieces


@settings(max_examples=300, deadline=None)
@given(operations, st.integers(20, 200))
def test_pieces_are_the_oracles_and_the_bound_holds(ops, max_chars):
    memory = Memory(max_chars)
    generations = {memory.generation}
    for op in ops:
        if op == "clear":
            memory.clear()
        else:
            before = memory.generation
            kept = memory.add(op[0], None if op[1] is None else TOKENS[op[1]])
            assert kept == (memory.generation != before)
        generations.add(memory.generation)
        assert len(memory) == sum(map(len, memory.pieces())) <= max_chars
    assert list(memory.pieces()) == oracle(ops, max_chars, MAX_PIECE_CHARS)


def test_a_stretch_grows_its_own_piece_only_and_a_full_piece_goes_on_in_a_new_one():
    memory = Memory()
    mail, notes = object(), object()
    assert memory.add("Dear Mireille,", mail)
    assert memory.add("\nthanks", mail)  # too short alone, but it goes on with the piece
    assert memory.pieces() == ("Dear Mireille,\nthanks",)
    assert memory.add("meeting notes, Friday", notes)
    assert memory.add("\nsee you soon", mail)  # the mail's piece is no longer the newest: a piece of its own
    assert memory.pieces() == ("Dear Mireille,\nthanks", "meeting notes, Friday", "\nsee you soon")
    long = "x" * (MAX_PIECE_CHARS - 4)
    assert memory.add(long, notes) and memory.add("a" * 8, notes)  # a new piece, not the full one grown
    assert memory.pieces()[-2:] == (long, "a" * 8)
    memory.clear()
    assert not memory.add("\nok", notes)  # after forget nothing grows
