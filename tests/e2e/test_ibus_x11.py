"""The IBus engine end to end on X11: a real ibus-daemon, GTK3 and GTK4 apps
using the IBus IM module, real keystrokes (xdotool) and the real SmolLM2 model."""

from __future__ import annotations

import pathlib
import signal

import pytest

from daemon.controller import next_word
from tests.e2e.ibus_desktop import CONFIG, grey_pixels, ibus_desktop, ibus_session, wait_for_preedit  # noqa: F401
from tests.e2e.xserver import negative_window, stays, wait_until, xvfb  # noqa: F401  (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.llm]

TYPED = "The quick brown fox jumps over the la"


@pytest.mark.parametrize("gtk", ["3", "4"])
def test_suggestion_is_preedit_after_the_caret_and_tab_commits_it_once(ibus_desktop, gtk):
    app = ibus_desktop.start_app(gtk)
    ibus_desktop.type(TYPED)
    ghost = wait_for_preedit(app)
    assert app.field()["text"] == TYPED  # the preedit is not part of the text
    # Drawn in the engine's grey (GHOST_COLOUR, as the toolkit rounds it): its glyphs' cores are one grey.
    assert grey_pixels(ibus_desktop.display) > 3 * len(ghost.strip())
    ibus_desktop.key("Tab")
    assert wait_until(lambda: app.field()["text"] == TYPED + ghost and not app.field()["preedit"], timeout=10), \
        app.state()
    assert app.focus() == "first"  # the Tab was swallowed: focus stayed in the field
    ibus_desktop.type("!")
    assert wait_until(lambda: app.field()["text"] == TYPED + ghost + "!", timeout=10), app.state()
    assert "\t" not in app.field()["text"]


def test_escape_dismisses_and_the_next_tab_is_the_applications(ibus_desktop):
    app = ibus_desktop.start_app("3")
    ibus_desktop.type(TYPED)
    wait_for_preedit(app)
    ibus_desktop.key("Escape")
    assert wait_until(lambda: not app.field()["preedit"], timeout=10), app.state()
    assert app.field()["text"] == TYPED
    assert grey_pixels(ibus_desktop.display) < 10  # typed text is black: the grey was the suggestion
    ibus_desktop.key("Tab")
    assert wait_until(lambda: app.focus() == "second", timeout=10), app.state()  # GTK moved focus on Tab
    assert app.field()["text"] == TYPED


def test_ctrl_right_accepts_one_word(ibus_desktop):
    app = ibus_desktop.start_app("3")
    ibus_desktop.type(TYPED)
    ghost = wait_for_preedit(app)
    word = next_word(ghost)
    ibus_desktop.key("ctrl+Right")
    expected = TYPED + word
    assert wait_until(lambda: app.field()["text"] == expected, timeout=10), (ghost, app.state())
    # The rest of the suggestion stays shown after the word (the preedit at
    # the moment of the key may have grown past ``ghost``: it starts with it).
    assert word != ghost, f"a one-word suggestion {ghost!r}: no rest to check"
    assert wait_until(lambda: (p := app.field()["preedit"]) and p.startswith(ghost[len(word):]), timeout=10), \
        (ghost, word, app.state())


def test_password_field_gets_no_suggestion(ibus_desktop):
    app = ibus_desktop.start_app("3")
    app.signal(signal.SIGUSR2)
    assert wait_until(lambda: app.focus() == "password", timeout=10), app.state()
    assert wait_until(lambda: "capture off in this window (password field)" in ibus_desktop.engine_output(),
                      timeout=10), ibus_desktop.engine_output()
    ibus_desktop.type("correct horse battery sta")
    assert wait_until(lambda: len(app.field("password")["text"]) == len("correct horse battery sta"), timeout=10)
    window = negative_window()
    assert stays(lambda: app.field("password")["preedits"] == 0, window), \
        f"a suggestion in a password field within {window:.1f} s"
    # The same text in a normal field gets a suggestion.
    app.signal(signal.SIGUSR1)
    assert wait_until(lambda: app.focus() == "second", timeout=10)
    ibus_desktop.type("correct horse battery sta")
    wait_for_preedit(app, "second")
    assert app.field("password")["preedits"] == 0


def test_focus_change_clears_the_suggestion_and_the_new_field_starts_afresh(ibus_desktop):
    app = ibus_desktop.start_app("3")
    ibus_desktop.type(TYPED)
    wait_for_preedit(app)
    app.signal(signal.SIGUSR1)
    assert wait_until(lambda: app.focus() == "second" and not app.field("first")["preedit"], timeout=10), \
        app.state()
    assert app.field("first")["text"] == TYPED  # the suggestion was not committed into the field it left
    ibus_desktop.type("Thank you very much for your hel")
    ghost = wait_for_preedit(app, "second")
    ibus_desktop.key("Tab")
    assert wait_until(lambda: app.field("second")["text"] == "Thank you very much for your hel" + ghost,
                      timeout=10), app.state()
    assert app.field("first")["text"] == TYPED


def test_denylisted_application_gets_nothing(ibus_desktop):
    app = ibus_desktop.start_app("3", prgname="keepassxc")  # GTK names the IBus client gtk3-im:keepassxc
    # ibus-daemon learns that the engine wants client names (FocusInId) only
    # after its first focus-in: the denylist applies from the next focus on.
    app.signal(signal.SIGUSR1)
    assert wait_until(lambda: app.focus() == "second", timeout=10), app.state()
    assert wait_until(lambda: "capture off in this window (denylisted application)" in ibus_desktop.engine_output(),
                      timeout=10), ibus_desktop.engine_output()
    ibus_desktop.type(TYPED)
    assert wait_until(lambda: app.field("second")["text"] == TYPED, timeout=10)
    window = negative_window()
    assert stays(lambda: app.field("second")["preedits"] == 0, window), \
        f"a suggestion in a denylisted application within {window:.1f} s: {app.state()}"
    ibus_desktop.key("Tab")  # nothing visible: the application's Tab
    assert wait_until(lambda: app.focus() == "password", timeout=10), app.state()
    assert app.field("second")["preedits"] == 0


def test_config_reload_disables_and_typed_text_never_reaches_disk_or_logs(xvfb, tmp_path):
    """At debug level: neither the typed marker nor the suggestion shown for
    it reaches any file the engine wrote (the test app's own record of its
    field aside)."""
    with ibus_session(xvfb, tmp_path, installed=False,
                      config_text=CONFIG.replace('log_level = "info"', 'log_level = "debug"')) as desktop:
        _disable_and_scan(desktop)


def _disable_and_scan(ibus_desktop) -> None:
    app = ibus_desktop.start_app("3")
    marker = "Zebrafinch quantumleap, Zebrafinch quantumleap, Zebrafinch quan"
    ibus_desktop.type(marker)
    suggested = wait_for_preedit(app).strip()
    assert len(suggested) >= 4, repr(suggested)  # long enough to be found if it leaked
    config = ibus_desktop.tmp / "config.toml"
    config.write_text(config.read_text() + "enabled = false\n")
    assert wait_until(lambda: "status: disabled" in ibus_desktop.engine_output(), timeout=10), \
        ibus_desktop.engine_output()
    assert wait_until(lambda: not app.field()["preedit"], timeout=10)
    shown = app.field()["preedits"]
    ibus_desktop.type(" and more words he")
    assert wait_until(lambda: app.field()["text"].endswith("more words he"), timeout=10)
    window = negative_window()
    assert stays(lambda: app.field()["preedits"] == shown, window), \
        f"disabled, yet a suggestion within {window:.1f} s: {app.state()}"  # nothing more is suggested
    home = pathlib.Path(ibus_desktop.env["HOME"])
    leaks = [f"{p}: {what}" for p in [*home.rglob("*"), ibus_desktop.engine_log] if p.is_file() and "gtk" not in p.name
             for what, needle in (("typed", b"Zebrafinch"), ("suggested", suggested.encode()))
             if needle in p.read_bytes()]
    assert leaks == []
    assert "suggestion shown as" in ibus_desktop.engine_output()  # the debug log was written


def test_a_model_that_fails_to_load_leaves_typing_untouched(xvfb, tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    config = CONFIG.replace('log_level = "info"', f'log_level = "info"\nmodel = "{broken}"')
    with ibus_session(xvfb, tmp_path, installed=False, config_text=config, wait_for="status: error") as desktop:
        app = desktop.start_app("3")
        desktop.type(TYPED)
        assert wait_until(lambda: app.field()["text"] == TYPED, timeout=10), app.state()
        desktop.key("Tab")
        assert wait_until(lambda: app.focus() == "second", timeout=10), app.state()
        assert app.field()["preedits"] == 0
        assert "status: error" in desktop.engine_output()
