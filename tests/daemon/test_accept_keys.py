"""The overlay's accept keys (daemon.frontends.overlay.accept_keys): the grab follows what the sink
drew, a swallowed key asks the controller and types its answer, our own typing never reaches the
controller as the user's."""

from __future__ import annotations

from daemon.capture.events import KeyEvent, Kind
from daemon.config import Config
from daemon.cpc.suggestion import Suggestion
from tests.daemon.fakes import FakeFocus, FakeInjector, FakeSuppressor, ManualWorker, RecordingSink, overlay
from tests.daemon.test_controller import EDITOR, listener_events


class Desk:
    def __init__(self):
        self.sink = RecordingSink(draws=False)  # drawn when the test says so
        self.sup, self.inj, self.worker = FakeSuppressor(), FakeInjector(), ManualWorker()
        self.c, self.keys = overlay(Config(debounce_ms=0), self.sink, self.sup, self.inj, worker=self.worker,
                                    focus=FakeFocus(EDITOR))
        self.inj.echo = self.listener
        self.seen: list[KeyEvent] = []  # what reached the controller
        on_key = self.c.on_key
        self.c.on_key = lambda e: (self.seen.append(e), on_key(e))
        self.c.start()

    def listener(self, text):
        for e in listener_events(text):
            self.keys.on_key(e)

    def suggest(self, typed, answer):
        self.listener(typed)
        self.c.on_result(self.worker.last[0], Suggestion(answer, 0.9), True)


def test_the_keys_are_grabbed_once_the_sink_drew_the_suggestion_and_let_go_when_it_is_hidden():
    d = Desk()
    d.suggest("ab", "cd")
    assert d.sink.visible == "cd" and not d.sup.armed  # shown, not drawn yet: Tab is the application's
    d.sink.draw()
    assert d.sup.armed and d.keys.armed
    d.listener("x")  # typed past it: hidden
    assert d.sink.visible == "" and not d.sup.armed
    d.sink.draws = True
    d.c.on_result(d.worker.last[0], Suggestion("yz", 0.9), True)
    assert d.sup.armed
    d.sink.draws = lambda text: ""  # the next one cannot be drawn at all
    d.listener("y")
    d.sink.draw()
    assert not d.sup.armed


def test_a_swallowed_tab_types_what_the_controller_answers_and_its_echo_is_dropped():
    d = Desk()
    d.sink.draws = True
    d.suggest("ab", "cd")
    n = len(d.seen)
    assert d.sup.press("tab")
    assert d.inj.typed == ["cd"] and d.c.buffer_text == "abcd" and not d.sup.armed
    assert len(d.seen) == n and d.keys.counters["echo"] == 2  # "c", "d" came back and stopped here


def test_a_swallowed_key_with_nothing_to_accept_is_the_applications():
    d = Desk()
    d.suggest("ab", "cd")
    d.sink.draw()
    on_grabbed = d.sup.on_key
    d.listener("x")  # the suggestion went as the keys came
    assert on_grabbed("ctrl+right") is False  # handed back: the X11 suppressor replays it
    assert on_grabbed("tab") is None and d.inj.typed == ["\t"]  # a Tab is typed as the Tab it was
    d.keys.on_key(KeyEvent(Kind.TAB, name="tab"))  # X11's record of the grabbed press, beside the typed one
    assert [e.kind for e in d.seen].count(Kind.TAB) == 1  # the controller hears one Tab
    assert d.c.buffer_text == "abx\t"
    assert d.keys.counters["tab_passed_on"] == 1


def test_the_listeners_copy_of_a_swallowed_press_stops_here():
    d = Desk()
    d.sink.draws = True
    d.inj.echo = None
    d.suggest("ab", "cd")
    n = len(d.seen)
    d.keys.on_key(KeyEvent(Kind.TAB, name="tab"))  # X11 records the grabbed press first...
    assert d.sup.press("tab")  # ...then the grab reports it
    assert len(d.seen) == n and d.keys.counters["swallowed"] == 1 and d.c.buffer_text == "abcd"
    d.keys.on_key(KeyEvent(Kind.TAB, name="tab"))  # a real Tab afterwards
    assert d.seen[-1].kind is Kind.TAB and d.c.buffer_text == "abcd\t"


def test_a_failed_typing_forgets_the_buffer():
    d = Desk()
    d.sink.draws = True
    d.suggest("ab", "cd")

    def broken(text):
        raise OSError("XTest missing")

    d.inj.type_text = broken
    assert d.sup.press("tab")
    assert d.c.buffer_text == "" and d.sink.visible == "" and not d.sup.armed
