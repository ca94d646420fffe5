"""Which text is code (daemon.code_route.looks_like_code) and where the route
sends each request.  The real models behind a route are in
tests/llm/test_code_route_real.py."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings, strategies as st

from daemon.code_route import MIN_CHARS, WINDOW_CHARS, CodeRoute, looks_like_code
from daemon.cpc.suggestion import BeamParams, Suggestion

PYTHON = textwrap.dedent('''\
    def wrap(text, width=70, **kwargs):
        """Wrap a single paragraph of text, returning a list of wrapped lines."""
        w = TextWrapper(width=width, **kwargs)
        return w.wrap(text)

    class Shlex:
        def __init__(self, instream=None, posix=False):
            self.wordchars = ('abcdfeghijklmnopqrstuvwxyz_')
            if self.posix:
                self.wordchars += ('ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ')
            self.state = ' '
            self.pushback = deque()
            self.lineno = 1
            self.debug = 0
    ''')

C = textwrap.dedent('''\
    static int parse(const char *s, size_t n, struct token *out) {
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '\\\\') { out->escaped = 1; continue; }
            out->buf[out->len++] = s[i];
        }
        return out->len > 0 ? 0 : -1;
    }
    ''')

EMAIL = ("Hi Anna, thanks for sending the draft over so quickly. I read it on the train this morning and "
         "I think the structure works well: the introduction sets up the problem, and the second part "
         "(the one about the survey) is much clearer than in the last version. Could you send me the "
         "figures as separate files? I would like to check the labels before we submit on Friday.")

VIM_MANUAL = ("Normal mode. To start Insert mode you type the \"i\" command (i for Insert). Then you can enter "
              "the text. To get back to Normal mode, no matter what mode you are in, press the <Esc> key. "
              "============================================================================== *02.3* Moving "
              "around After you return to Normal mode, you can move around by using these keys: h left, "
              "j down, k up, l right.")

INDENTED_LICENCE = textwrap.dedent('''\
    Terms and conditions for use, reproduction, and distribution.
          1. Definitions.
          "License" shall mean the terms and conditions for use, reproduction,
          and distribution as defined by Sections 1 through 9 of this document.
          "Licensor" shall mean the copyright owner or entity authorized by
          the copyright owner that is granting the License.
    ''')


def test_code_is_code():
    assert looks_like_code(PYTHON)
    assert looks_like_code(C)
    assert looks_like_code(PYTHON + "        self.tok")  # mid-line, mid-word, as a caret leaves it


def test_prose_is_not_code():
    assert not looks_like_code(EMAIL)
    assert not looks_like_code(VIM_MANUAL)  # a ===== rule and <Esc> are not code
    assert not looks_like_code(INDENTED_LICENCE)  # indentation alone is not code


def test_a_short_field_is_never_code():
    short = "f(x) = g(y); h[z] = {}"
    assert len(short.replace(" ", "")) < MIN_CHARS
    assert not looks_like_code(short)


def test_prose_after_code_in_the_same_field_is_prose():
    """Only the text near the caret counts: an email that quotes code above its last paragraphs."""
    assert looks_like_code(EMAIL + "\n\n" + PYTHON)
    assert not looks_like_code(PYTHON + "\n\n" + EMAIL + " " + EMAIL)


@settings(deadline=None, max_examples=60)
@given(head=st.text(max_size=300), tail=st.text(min_size=WINDOW_CHARS, max_size=WINDOW_CHARS + 200))
def test_only_the_window_before_the_caret_counts(head, tail):
    assert looks_like_code(head + tail) == looks_like_code(tail)


class Recorder:
    """A completer that says who it is and records what it was asked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[str, str]] = []
        self.warming = False
        self.closed = False

    def complete(self, text, params, cancel=None, on_partial=None):
        self.calls.append(("complete", text))
        if on_partial is not None:
            on_partial(Suggestion(self.name[:1], 0.9))
        return Suggestion(self.name, 0.9)

    def prefill(self, text, params, cancel=None):
        self.calls.append(("prefill", text))

    def warm_step(self, cancel=None):
        self.calls.append(("warm", ""))
        return True

    def close(self):
        self.closed = True


def test_each_request_goes_to_the_model_its_text_calls_for():
    main, code = Recorder("main"), Recorder("code")
    route = CodeRoute(main, code)
    params = BeamParams()
    partials = []
    assert route.complete(PYTHON, params, None, partials.append).text == "code"
    assert route.complete(EMAIL, params).text == "main"
    route.prefill(C, params)
    assert main.calls == [("complete", EMAIL)]
    assert code.calls == [("complete", PYTHON), ("prefill", C)]
    assert [p.text for p in partials] == ["c"]
    assert (route.code_requests, route.main_requests) == (2, 1)


def test_background_warm_up_goes_on_in_the_model_of_the_newest_request():
    main, code = Recorder("main"), Recorder("code")
    route = CodeRoute(main, code)
    route.complete(EMAIL, BeamParams())
    main.warming, code.warming = True, False
    assert route.warming
    assert route.warm_step() and main.calls[-1] == ("warm", "")
    route.complete(PYTHON, BeamParams())
    assert not route.warming  # the code model has nothing to warm; the main model's warm-up waits
    code.warming = True
    assert route.warming and route.warm_step() and code.calls[-1] == ("warm", "")


def test_closing_the_route_closes_both_models():
    main, code = Recorder("main"), Recorder("code")
    CodeRoute(main, code).close()
    assert main.closed and code.closed
