"""The desktop tier's closing table (tests/desktop/summary_table.py): every outcome lands in its session's row
and its check's column, and every xfail and failure is listed with what it rests on."""

from tests.desktop.summary_table import Outcome, outcome, render


def test_each_outcome_in_its_row_and_column_with_the_evidence_numbered():
    rows = [
        outcome("test_suggestion_is_drawn_at_the_caret", {"desktop": "gnome", "app": "firefox"}, False, True, None,
                "def f():\nE   AssertionError: drawn 80 px from the caret\nE   assert 80 <= 6"),
        outcome("test_suggestion_is_drawn_at_the_caret", {"desktop": "kde", "app": "firefox"}, False, False,
                "WAYLAND_DEBUG: no wl_surface commit after set_cursor_rectangle"),
        outcome("test_suggestion_is_visible_and_esc_hides_it", {"desktop": "kde", "app": "firefox"}, True, False, None),
        outcome("test_readme_install_command_works_on_debian_sid", {}, True, False, None),
    ]
    assert rows[0] == Outcome("gnome firefox", "caret", "FAIL", "AssertionError: drawn 80 px from the caret")
    assert rows[1].result == "xfail" and rows[1].check == "caret"
    text = render(rows).splitlines()
    header = text[1].split()
    assert header == ["session", "app", "esc", "caret", "readme"]
    assert text[3].split() == ["gnome", "firefox", "-", "FAIL[1]", "-"]
    assert text[4].split() == ["kde", "firefox", "pass", "xfail[2]", "-"]
    assert text[5].split() == ["sid", "-", "-", "pass"]
    assert text[6] == "2 pass, 1 FAIL, 1 xfail"
    assert text[7] == "[1] gnome firefox / caret: FAIL: AssertionError: drawn 80 px from the caret"
    assert text[8] == "[2] kde firefox / caret: xfail: WAYLAND_DEBUG: no wl_surface commit after set_cursor_rectangle"


def test_no_desktop_test_ran_prints_nothing():
    assert render([]) == ""
