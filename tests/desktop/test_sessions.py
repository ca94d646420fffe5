"""ghosttype's IBus engine on the current desktops, with real applications and real keys.

* ``gnome``: GNOME Shell (51 in Debian sid) headless; ghosttype the only input source, set the way
  GNOME's Settings does (org.gnome.desktop.input-sources); keys through Mutter's RemoteDesktop API.
  ghosttype's GNOME Shell extension (installed by ``ghosttype ibus install --system``, enabled by the
  engine at the login) draws the suggestion at the caret; ``gnome-popup``: the same with the extension
  switched off by the user, so IBus's popup shows it.
* ``kde``: KDE Plasma 6's route: KWin 6 (sid) nested in Xvfb, IBus as KWin's input method the way
  Plasma's Virtual Keyboard page sets it (kwinrc InputMethod = IBus Wayland), no *_IM_MODULE
  variables, the engine chosen with ``ibus engine``; keys through KWin's org_kde_kwin_fake_input.
  ghosttype's KWin effect (built and installed by the README's KDE steps: ``install-deps.sh --kde``,
  ``ghosttype kde install --system``) draws the suggestion at the caret; ``kde-popup``: the same
  without the effect, so IBus's popup shows it.

One session per desktop runs all its scenarios (conftest.run_desktop); each test judges one
application's recorded results (checks.py says what each check means).
"""

import pytest

from tests.desktop import checks, uninstall_check

# the fixtures bound every step themselves (chroot build, install, one session per desktop)
pytestmark = [pytest.mark.desktop, pytest.mark.timeout(7200)]

#: Applications with a text field (readback: the app's own log, a saved file, a terminal line, a page, a saved
#: draft). LibreOffice Writer: a plain-text document; Thunderbird: a new message's body.
NORMAL = {
    "gnome": ["gnome-text-editor", "mousepad", "qt", "firefox", "chromium", "kgx", "writer", "thunderbird"],
    "gnome-popup": ["gnome-text-editor", "mousepad", "qt", "firefox", "chromium", "kgx"],
    "kde": ["kwrite", "qt", "gnome-text-editor", "mousepad", "firefox", "chromium", "writer", "thunderbird"],
    "kde-popup": ["kwrite", "qt", "gnome-text-editor", "firefox"],
}
# (konsole on Plasma offers its text to IBus and never sends any, and declares no terminal purpose: it cannot
# be told from a password field whose text comes late, so the engine suggests nothing there; kde-user types a
# password at sudo's prompt in it)
#: Password fields: GTK4 PasswordEntry, GTK3 invisible entry, Qt EchoMode Password, <input type=password>.
PASSWORD = {
    "gnome": ["gtk4-pw", "gtk3-pw", "qt-pw", "firefox-pw", "chromium-pw"],
    "kde": ["qt-pw", "gtk4-pw", "gtk3-pw", "firefox-pw", "chromium-pw"],
}
#: A page moves the focus from a field showing a suggestion to its password input by itself (no key).
JUMP = {"gnome": ["firefox-jump", "chromium-jump"], "kde": ["firefox-jump", "chromium-jump"]}
#: GNOME with ``ibus_display = "preedit"``: the inline route must not lose, double or reorder a typed
#: character either (the apps where it did: Chromium, Qt; GTK4 for comparison).
PREEDIT = {"gnome-preedit": ["chromium", "qt", "gnome-text-editor"]}
#: GNOME on a machine with the German layout: the engine must keep it (ö ä ü ß, y/z).
LAYOUT = {"gnome-de": ["gnome-text-editor", "qt"]}
#: GNOME's dark style: the inline suggestion must read as one on dark fields too.
DARK = {"gnome-dark": ["gnome-text-editor"]}
#: GNOME on a HiDPI monitor (scale 2) and a fractionally scaled one (1.5), KWin's effect on a HiDPI output
#: (scale 2): the inline suggestion must stand at the caret, at the text's size, on each (KWin's Firefox and
#: GNOME's Thunderbird: their caret read from the accessibility bus, in Gecko's device pixels, which the effect
#: divides by the scale and the extension brings to the stage's pixels).
SCREENS = {"gnome-hidpi": ["gnome-text-editor", "qt", "chromium", "thunderbird"],
           "gnome-frac": ["gnome-text-editor", "qt", "thunderbird"],
           "kde-hidpi": ["kwrite", "qt", "gnome-text-editor", "firefox"]}
#: GNOME with the window maximized, too narrow for the whole suggestion (cut at its edge), and made narrower
#: than the typed text while the suggestion shows (the desktop takes it away on its own).
WINDOWS = {"gnome-windows": ["qt-max", "qt-small", "qt-shrink"]}
#: Another program of the user calls the plug-in while the suggestion shows (refused, nothing changes).
FOREIGN = {"gnome": ["gnome-text-editor-foreign"], "kde": ["kwrite-foreign"]}
FOREIGN_CASES = [(d, a) for d in FOREIGN for a in FOREIGN[d]]
#: "Off in gnome-text-editor" (the denylist; IBus names no Wayland client, the plug-ins name the application),
#: then Firefox while the editor is still off.
OFF = {"gnome": ["gnome-text-editor-off", "firefox-on"], "kde": ["gnome-text-editor-off", "firefox-on"]}
SCENARIOS = {d: NORMAL[d] + PASSWORD.get(d, []) + JUMP.get(d, []) + FOREIGN.get(d, []) + OFF.get(d, [])
             for d in NORMAL} | PREEDIT | LAYOUT | DARK | SCREENS | WINDOWS
#: GNOME Shell with a lock screen, KWin with its screen locker: the user locks it while a suggestion shows,
#: another program waits for the plug-in's name, then the user unlocks and types on.
LOCK = {"gnome-lock": ["gnome-text-editor-lock"], "kde-lock": ["kwrite-lock"]}
LOCK_CASES = [(d, a) for d in LOCK for a in LOCK[d]]
SCENARIOS |= LOCK
SCREEN_CASES = [(d, a) for d in SCREENS for a in SCREENS[d]]
LAYOUT_CASES = [(d, a) for d in LAYOUT for a in LAYOUT[d]]
PREEDIT_CASES = [(d, a) for d in PREEDIT for a in PREEDIT[d]]
NORMAL_CASES = [(d, a) for d in NORMAL for a in NORMAL[d]]
PASSWORD_CASES = [(d, a) for d in PASSWORD for a in PASSWORD[d]]
#: Desktops that draw the suggestion inline: GNOME with ghosttype's Shell extension, KWin with its effect.
INLINE = ("gnome", "kde")
#: Grey text at the caret instead of IBus's popup.
INLINE_CASES = [(d, a) for d in INLINE for a in NORMAL[d]] + [(d, a) for d in DARK for a in DARK[d]]
#: Fields in a fixed-width font (the tier's page sets DejaVu Sans Mono; the editors' and terminals' default;
#: Thunderbird's plain-text message body).
MONOSPACE = ("gnome-text-editor", "mousepad", "kwrite", "firefox", "chromium", "kgx", "thunderbird")
#: ... and on the scaled screens (scale 2 and 1.5): the letter spacing the extension and KWin's effect give
#: each character, checked where a pixel of theirs is not a pixel of the screenshot.
MONOSPACE_CASES = [(d, a) for d, a in INLINE_CASES + SCREEN_CASES if a in MONOSPACE]
#: Without the extension or the effect: IBus's popup.
POPUP = ("gnome-popup", "kde-popup")
JUMP_CASES = [(d, a) for d in JUMP for a in JUMP[d]]

#: The user session (the default config, a key every 100 ms, Tab at once): one per desktop, with every
#: application of the normal sessions but the terminal (VTE reports no text to an input method, so with the
#: default ``ibus_terminals = "auto"`` nothing is suggested there: the user sessions type a password at sudo's
#: prompt in it instead).
USER = {"gnome-user": ["firefox", "gnome-text-editor", "qt", "chromium", "mousepad", "writer", "thunderbird"],
        "kde-user": ["firefox", "gnome-text-editor", "qt", "kwrite", "chromium", "mousepad", "writer", "thunderbird"]}
USER_CASES = [(d, a) for d in USER for a in USER[d]]
#: In the user sessions (the default config), a password typed at sudo's prompt in the desktop's terminal.
SUDO = {"gnome-user": ["kgx-sudo"], "kde-user": ["konsole-sudo"]}
SUDO_CASES = [(d, a) for d in SUDO for a in SUDO[d]]
SCENARIOS |= {d: USER[d] + SUDO[d] for d in USER}
#: A click into another field: Firefox, where the page says which field has the focus; on KWin (its fake
#: input places the pointer; GNOME's RemoteDesktop gave the tier no working pointer, see inside/session.py).
CLICK_CASES = [("kde-user", "firefox")]

# Known failures: none is marked xfail in advance. A check calls pytest.xfail itself only when the run's own
# record shows the upstream cause (checks.py: the application sent no cursor rectangle, or said its caret
# was one key behind where its text went, or KWin put IBus's popup where the empty field's caret was), so a
# run without that cause must pass; and only when the test then fails (conftest.py), so a run in which ghosttype
# placed the suggestion despite the cause (Thunderbird's caret read from the accessibility bus) passes. Every
# cause, and where it is reported, is in tests/desktop/README.md.


@pytest.mark.parametrize("desktop, app", NORMAL_CASES)
def test_tab_inserts_exactly_the_shown_suggestion_and_keys_arrive_once_in_order(desktops, sid, desktop, app):
    results = desktops(desktop, SCENARIOS[desktop])
    if desktop in INLINE:  # the inline suggestion: nothing is drawn without a caret, and Tab stays a Tab
        checks.xfail_where_the_app_sent_no_caret(results, app)
    checks.check_tab_inserts_the_shown_suggestion(results, app, sid.complete)


@pytest.mark.parametrize("desktop, app", NORMAL_CASES)
def test_the_screen_shows_the_text_tab_inserts_and_not_after_tab(desktops, desktop, app):
    results = desktops(desktop, SCENARIOS[desktop])
    if desktop in INLINE:
        checks.xfail_where_the_app_sent_no_caret(results, app)
    checks.check_screen_shows_what_tab_inserts(results, app)
    checks.check_gone_after_tab(results, app)


@pytest.mark.parametrize("desktop, app", NORMAL_CASES)
def test_suggestion_is_visible_and_esc_hides_it(desktops, desktop, app):
    checks.check_visible_and_esc_hides(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", NORMAL_CASES)
def test_suggestion_is_drawn_at_the_caret(desktops, desktop, app):
    checks.check_drawn_at_the_caret(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", NORMAL_CASES)
def test_typing_the_suggestions_next_char_keeps_it_visible(desktops, desktop, app):
    checks.check_typing_through_keeps_it_visible(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", PASSWORD_CASES)
def test_password_field_shows_nothing_and_tab_goes_through(desktops, desktop, app):
    checks.check_password(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", JUMP_CASES)
def test_focus_moving_to_a_password_input_without_a_key_shows_nothing(desktops, desktop, app):
    checks.check_focus_jump(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", PREEDIT_CASES)
def test_preedit_display_keeps_typed_keys_and_tab_inserts_the_suggestion(desktops, sid, desktop, app):
    checks.check_tab_inserts_the_shown_suggestion(desktops(desktop, SCENARIOS[desktop]), app, sid.complete)


@pytest.mark.parametrize("desktop, app", LAYOUT_CASES)
def test_the_keyboard_layout_is_kept_and_tab_inserts_the_suggestion(desktops, sid, desktop, app):
    checks.check_layout(desktops(desktop, SCENARIOS[desktop]), app, sid.complete)


@pytest.mark.parametrize("desktop", ["gnome", "gnome-de"])
def test_the_engine_registers_inside_gnomes_activation_window(desktops, desktop):
    """gnome-de starts with both CPUs kept busy."""
    checks.check_registered_in_time(desktops(desktop, SCENARIOS[desktop]))


@pytest.mark.parametrize("desktop, app", INLINE_CASES)
def test_grey_text_on_the_carets_line_starting_where_tab_inserts_it(desktops, desktop, app):
    checks.check_inline_at_the_caret(desktops(desktop, SCENARIOS[desktop]), app, dark=desktop in DARK)


@pytest.mark.parametrize("desktop, app", MONOSPACE_CASES)
def test_in_a_fixed_width_field_the_suggestions_characters_are_as_wide_as_the_typed_ones(desktops, desktop, app):
    checks.check_as_wide_as_the_field(desktops(desktop, SCENARIOS[desktop]), app,
                                      scale=checks.SCREENS.get(desktop, (1.0,))[0])


@pytest.mark.parametrize("desktop, app", SCREEN_CASES)
def test_the_desktop_draws_the_suggestion_at_the_caret_on_hidpi_and_fractional_scales(desktops, sid, desktop, app):
    results = desktops(desktop, SCENARIOS[desktop])
    checks.check_inline_on_these_screens(results, desktop, app)
    checks.check_tab_inserts_the_shown_suggestion(results, app, sid.complete)


def test_gnome_draws_the_suggestion_at_the_caret_of_a_maximized_window(desktops, sid):
    results = desktops("gnome-windows", SCENARIOS["gnome-windows"])
    checks.check_inline_at_the_caret(results, "qt-max")
    checks.check_tab_inserts_the_shown_suggestion(results, "qt-max", sid.complete)


def test_gnome_cuts_the_suggestion_at_a_narrow_windows_edge_and_tab_inserts_what_shows(desktops, sid):
    checks.check_cut_at_the_windows_edge(desktops("gnome-windows", SCENARIOS["gnome-windows"]), "qt-small",
                                         sid.complete)


def test_tab_is_a_tab_once_the_desktop_took_the_suggestion_away(desktops):
    checks.check_tab_after_the_desktop_hid_it(desktops("gnome-windows", SCENARIOS["gnome-windows"]), "qt-shrink")


@pytest.mark.parametrize("desktop, app", [(d, a) for d in POPUP for a in NORMAL[d]])
def test_without_the_extension_or_the_effect_ibus_popup_shows_it(desktops, desktop, app):
    checks.check_display(desktops(desktop, SCENARIOS[desktop]), app, "popup")


@pytest.mark.parametrize("desktop, app", [(d, a) for d in POPUP for a in NORMAL[d]])
def test_ibus_popup_is_drawn_at_the_caret(desktops, desktop, app):
    checks.check_popup_at_the_caret(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", USER_CASES)
def test_default_config_at_typing_speed_tab_inserts_what_the_screen_showed(desktops, desktop, app):
    checks.check_user_session(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", USER_CASES)
def test_default_config_a_fresh_fields_first_suggestion_starts_at_the_caret_over_no_typed_letter(desktops, desktop, app):
    checks.check_user_first_suggestion_at_the_caret(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", [c for c in USER_CASES if c[1] in MONOSPACE])
def test_default_config_a_fixed_width_fields_first_suggestion_is_as_wide_as_its_text(desktops, desktop, app):
    checks.check_user_first_suggestion_as_wide_as_the_field(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", [c for c in USER_CASES if c not in CLICK_CASES])
def test_default_config_the_suggestion_stands_at_the_typed_text_and_esc_takes_it_away(desktops, desktop, app):
    checks.check_user_sees_and_dismisses(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", CLICK_CASES)
def test_a_click_into_another_field_takes_the_suggestion_away(desktops, desktop, app):
    checks.check_click_into_another_field(desktops(desktop, SCENARIOS[desktop]), app)


#: Sessions whose installs are followed outside home: GNOME (the engine and its Shell extension), KWin (the
#: engine and the KWin effect built against sid's KWin).
UNINSTALL_CASES = [("gnome", False), ("kde", True)]


@pytest.mark.parametrize("desktop, kwin_effect", UNINSTALL_CASES)
def test_uninstall_leaves_the_system_as_install_found_it(desktops, desktop, kwin_effect):
    uninstall_check.check_uninstall(desktops(desktop, SCENARIOS[desktop]), desktop, kwin_effect)


@pytest.mark.parametrize("desktop, app", SUDO_CASES)
def test_a_password_typed_at_sudos_prompt_in_a_terminal_shows_nothing(desktops, desktop, app):
    checks.check_terminal_password(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop, app", FOREIGN_CASES)
def test_another_programs_calls_to_the_plugin_are_refused(desktops, desktop, app):
    checks.check_foreign_calls_refused(desktops(desktop, SCENARIOS[desktop]), app, desktop)


@pytest.mark.parametrize("desktop, app", LOCK_CASES)
def test_locking_the_screen_hands_the_plugins_name_to_nobody_and_shows_no_suggestion(desktops, desktop, app):
    checks.check_lock_screen(desktops(desktop, SCENARIOS[desktop]), app)


@pytest.mark.parametrize("desktop", sorted(OFF))
def test_off_in_an_application_turns_suggestions_off_there_and_leaves_the_next_one_on(desktops, desktop):
    results = desktops(desktop, SCENARIOS[desktop])
    off, on = OFF[desktop]
    checks.check_off_in_the_application(results, off)
    checks.check_on_beside_an_application_off(results, on)


@pytest.mark.parametrize("desktop", sorted(SCENARIOS))
def test_the_input_method_served_every_scenario(desktops, desktop):
    """The same ibus-daemon and engine served each scenario from start to end (each scenario's checks fail on a
    change under it too). Where the desktop replaced a crashed input method under a scenario, the session ran it
    once more: that passes here only as an xfail on the desktop's own log naming IBus's crash."""
    checks.check_input_method_served_every_scenario(desktops(desktop, SCENARIOS[desktop]))
