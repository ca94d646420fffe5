"""Progress lines of long eval runs: format, ETA, and silence off a terminal."""

from __future__ import annotations

import io

from daemon.evaluation.progress import Progress, format_duration, progress_line, terminal_progress


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_durations_and_eta():
    assert format_duration(5.4) == "5s"
    assert format_duration(185) == "3m05s"
    assert format_duration(3720) == "1h02m"
    assert progress_line("f.py", 0, 10, 0.0) == "f.py 0/10  elapsed 0s"
    assert progress_line("f.py", 2, 10, 30.0) == "f.py 2/10  elapsed 30s  ETA 2m00s"
    assert progress_line("f.py", 10, 10, 150.0) == "f.py 10/10  elapsed 2m30s"


def test_progress_redraws_in_place_and_ends_with_a_newline():
    now = [0.0]
    out = FakeTty()
    p = Progress("t", out, clock=lambda: now[0])
    now[0] = 10.0
    p(1, 3)
    now[0] = 30.0
    p(3, 3)
    assert out.getvalue() == "\rt 1/3  elapsed 10s  ETA 20s\rt 3/3  elapsed 30s         \n"


def test_nothing_when_the_stream_is_not_a_terminal():
    assert terminal_progress("t", io.StringIO()) is None
    assert isinstance(terminal_progress("t", FakeTty()), Progress)
