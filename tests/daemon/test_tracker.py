from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.tracker import InjectionEcho, InputTracker


def ch(c: str) -> KeyEvent:
    return KeyEvent(Kind.CHAR, char=c)


def K(kind: Kind) -> KeyEvent:
    return KeyEvent(kind)


def type_text(t: InputTracker, s: str) -> None:
    for c in s:
        t.feed(ch(c))


def test_typing_backspace_enter_tab():
    t = InputTracker(100)
    type_text(t, "héllo")
    t.feed(K(Kind.BACKSPACE))
    t.feed(K(Kind.ENTER))
    t.feed(K(Kind.TAB))
    assert t.text == "héll\n\t"


def test_keys_that_leave_text_alone():
    t = InputTracker(100)
    type_text(t, "ab")
    g = t.generation
    for kind in (Kind.DELETE, Kind.MODIFIER, Kind.OTHER, Kind.ESCAPE):
        t.feed(K(kind))
    assert t.text == "ab" and t.generation == g


def test_caret_moves_reset_and_replace_rereads():
    for kind in (Kind.CARET_MOVED, Kind.FOCUS_CHANGED, Kind.SHORTCUT):
        t = InputTracker(100)
        type_text(t, "abc")
        t.feed(K(kind))
        assert t.text == ""
    t = InputTracker(5)
    t.replace("0123456789")
    assert t.text == "56789"


def test_bound_keeps_the_tail():
    t = InputTracker(4)
    type_text(t, "abcdefg")
    assert t.text == "defg"


def test_typed_since_follows_appends_only():
    t = InputTracker(4)
    type_text(t, "ab")
    snap = t.snapshot()
    assert t.typed_since(snap) == ""
    type_text(t, "cd")
    assert t.typed_since(snap) == "cd"
    t.accept("e")
    assert t.typed_since(snap) == "cde"  # more than survived? no: 3 <= 4
    type_text(t, "fg")
    assert t.typed_since(snap) is None  # scrolled out of the bound
    snap = t.snapshot()
    t.feed(K(Kind.BACKSPACE))
    assert t.typed_since(snap) is None


def test_generation_changes_with_content():
    t = InputTracker(10)
    gens = {t.generation}
    for ev in (ch("a"), K(Kind.BACKSPACE), K(Kind.ENTER), K(Kind.CARET_MOVED)):
        t.feed(ev)
        assert t.generation not in gens
        gens.add(t.generation)


events = st.one_of(
    st.builds(ch, st.characters(blacklist_categories=("Cs",))),
    st.sampled_from([K(k) for k in Kind if k is not Kind.CHAR]),
    st.text(max_size=8).map(lambda s: ("accept", s)),
    st.text(max_size=30).map(lambda s: ("replace", s)),
)


@settings(max_examples=300, deadline=None)
@given(bound=st.integers(1, 12), stream=st.lists(events, max_size=80))
def test_matches_reference_model(bound, stream):
    """The ring buffer equals an unbounded list model cut to its last
    ``bound`` characters, after every event, and never exceeds the bound."""
    t = InputTracker(bound)
    model: list[str] = []
    for ev in stream:
        if isinstance(ev, tuple):
            op, s = ev
            if op == "accept":
                t.accept(s)
                model.extend(s)
            else:
                t.replace(s)
                model = list(s)
        else:
            t.feed(ev)
            if ev.kind is Kind.CHAR:
                model.append(ev.char)
            elif ev.kind is Kind.ENTER:
                model.append("\n")
            elif ev.kind is Kind.TAB:
                model.append("\t")
            elif ev.kind is Kind.BACKSPACE:
                model = model[-bound:][:-1]
            elif ev.kind in (Kind.CARET_MOVED, Kind.FOCUS_CHANGED, Kind.SHORTCUT):
                model = []
        model = model[-bound:]
        assert len(t) <= bound
        assert t.text == "".join(model)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_echo_is_consumed_once_in_order():
    clock = Clock()
    e = InjectionEcho(clock)
    e.expect("a\nb")
    assert not e.consume(ch("x"))  # real typing is not echo
    assert e.consume(ch("a"))
    assert e.consume(K(Kind.ENTER))
    assert not e.consume(K(Kind.MODIFIER))  # shift pressed by the injector: not text
    assert e.consume(ch("b"))
    assert not e.consume(ch("b"))  # only once


def test_echo_resynchronises_and_expires():
    clock = Clock()
    e = InjectionEcho(clock, grace_s=1.0, per_char_s=0.0)
    e.expect("abcd")
    assert e.consume(ch("c"))  # "a", "b" were lost
    assert e.consume(ch("d"))
    e.expect("xy")
    clock.t = 1.5
    assert not e.consume(ch("x"))  # expired: it is the user typing now
