"""Fields that look like code get the code model (``code_model``).

A small code model suggests code better than a small general one and prose
worse: for a simulated user who waits for each suggestion, Qwen2.5-Coder-0.5B
saved 52% of the keystrokes on this project's code texts where SmolLM2 saved
44%.  It is also slower per token, so whether it pays depends on the machine
and the typing pace (daemon/evaluation/README.md, *Keystrokes saved*: on 2 cores it wins at 5
keys/s and loses keystrokes at 10).

With ``code_model`` set, :class:`CodeRoute` is the worker's ``Completer``:
each request goes to the code model's decoder when the text before the caret
looks like code (:func:`looks_like_code`), otherwise to the main model's.
Each decoder keeps its own prompt cache, so a field that stays code (or
prose) keeps its cache warm; a misjudged window costs one uncached prompt.

The test is cheap (one pass over at most ``WINDOW_CHARS`` characters, a few
microseconds) and leans to prose: a prose field sent to the code model loses
more than a code field left on the main model.  It was chosen on windows of
Python, C and shell sources against licence texts, READMEs and the Vim
manual: indented lines and the symbols code is made of (brackets,
``=``, ``;``, ``_``), with runs such as ``=====`` counted once.

All methods run on the worker thread.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from daemon.cpc.lm import CancelCheck
from daemon.cpc.suggestion import BeamParams, Completer, Suggestion

#: Characters before the caret the test looks at.
WINDOW_CHARS = 600
#: Fewer non-space characters than this are never called code (a chat box's "f(x)").
MIN_CHARS = 40
#: Share of code symbols among the non-space characters that makes a window code ...
SYMBOLS_ALONE = 0.06
#: ... or, in a window of at least ``MIN_LINES`` lines of which ``INDENTED`` start indented, this share.
SYMBOLS_INDENTED = 0.025
MIN_LINES = 3
INDENTED = 0.4

_CODE_SYMBOLS = frozenset("{}[]()=;<>_")
_RUNS = re.compile(r"(\S)\1{2,}")
_INDENTED_LINE = re.compile(r"(?:  +|\t)\S")


def looks_like_code(text: str) -> bool:
    """Whether the last ``WINDOW_CHARS`` characters of ``text`` read as code
    (see the module docstring)."""
    window = _RUNS.sub(r"\1", text[-WINDOW_CHARS:])
    solid = [c for c in window if not c.isspace()]
    if len(solid) < MIN_CHARS:
        return False
    symbols = sum(c in _CODE_SYMBOLS for c in solid) / len(solid)
    if symbols >= SYMBOLS_ALONE:
        return True
    lines = window.split("\n")[1:]  # the first may start mid-line
    if len(lines) < MIN_LINES:
        return False
    indented = sum(1 for line in lines if _INDENTED_LINE.match(line)) / len(lines)
    return indented >= INDENTED and symbols >= SYMBOLS_INDENTED


class CodeRoute:
    """The worker's ``Completer`` with a code model beside the main one (see
    the module docstring).  ``is_code`` decides per request."""

    def __init__(self, main: Completer, code: Completer,
                 is_code: Callable[[str], bool] = looks_like_code) -> None:
        self.main = main
        self.code = code
        self._is_code = is_code
        self._last: Completer = main  # the decoder of the newest request: background warm-up goes on there
        self.code_requests = 0  #: completions and prefills sent to the code model (tests, benchmarks)
        self.main_requests = 0

    def _pick(self, text: str) -> Completer:
        if self._is_code(text):
            self.code_requests += 1
            self._last = self.code
        else:
            self.main_requests += 1
            self._last = self.main
        return self._last

    def complete(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        return self._pick(text).complete(text, params, cancel, on_partial)

    def prefill(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None) -> None:
        self._pick(text).prefill(text, params, cancel)

    @property
    def warming(self) -> bool:
        return bool(getattr(self._last, "warming", False))

    def warm_step(self, cancel: Optional[CancelCheck] = None) -> bool:
        step = getattr(self._last, "warm_step", None)
        return bool(step(cancel)) if step is not None else False

    def close(self) -> None:
        for decoder in (self.main, self.code):
            close = getattr(decoder, "close", None)
            if close is not None:
                close()


__all__ = ["CodeRoute", "looks_like_code"]
