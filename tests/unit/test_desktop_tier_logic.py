"""The desktop tier's own logic, without a desktop: its closing table (tests/desktop/summary_table.py: every
outcome in its session's row and its check's column, every xfail and failure listed with what it rests on), and
how strictly the text read off the screen must equal the text Tab inserted (screen_text.same_text)."""

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


def test_the_screens_text_must_be_the_inserted_text_but_for_listed_confusions():
    from tests.desktop.screen_text import same_text
    x = "tor that allows users to"
    assert same_text("tor that allows users to", x)
    assert same_text("ltor that allows users to", x)  # the caret before it
    assert same_text("tor that aIIows users to", x) and same_text("0K l0", "OK 10")
    assert same_text("kor that allows users to", x)  # the first character, which the caret touches
    assert not same_text("ditor that allows users to", x)  # not advanced as the user typed along
    assert not same_text("lditor that allows users to", x)
    assert not same_text("tor that allows users", x)  # cut short
    assert not same_text("tor that allows users to do", x)
    assert not same_text("ot sresu swolla taht rot", x)
    assert not same_text("tbr that allows users to", x)  # a misread past the first character
