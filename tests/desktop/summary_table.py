"""The table printed at the end of a desktop tier run: one row per session and application, one column per
check, each cell pass / FAIL / xfail (with its evidence, numbered below the table) / skip / - (not run there).

conftest.py records each desktop test's outcome (``record``) and prints :func:`render` in pytest's terminal
summary, so the end of `.ci/run`'s output says at a glance what each session showed.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Column headings for the tests of test_sessions.py, test_readme_sid.py and test_suite_sid.py.
CHECKS = {
    "test_tab_inserts_exactly_the_shown_suggestion_and_keys_arrive_once_in_order": "tab",
    "test_the_screen_shows_the_text_tab_inserts_and_not_after_tab": "screen",
    "test_suggestion_is_visible_and_esc_hides_it": "esc",
    "test_suggestion_is_drawn_at_the_caret": "caret",
    "test_typing_the_suggestions_next_char_keeps_it_visible": "through",
    "test_password_field_shows_nothing_and_tab_goes_through": "password",
    "test_focus_moving_to_a_password_input_without_a_key_shows_nothing": "jump",
    "test_preedit_display_keeps_typed_keys_and_tab_inserts_the_suggestion": "preedit",
    "test_the_keyboard_layout_is_kept_and_tab_inserts_the_suggestion": "layout",
    "test_the_engine_registers_inside_gnomes_activation_window": "register",
    "test_grey_text_on_the_carets_line_starting_where_tab_inserts_it": "inline",
    "test_in_a_fixed_width_field_the_suggestions_characters_are_as_wide_as_the_typed_ones": "mono",
    "test_the_desktop_draws_the_suggestion_at_the_caret_on_hidpi_and_fractional_scales": "scale",
    "test_gnome_draws_the_suggestion_at_the_caret_of_a_maximized_window": "maximized",
    "test_gnome_cuts_the_suggestion_at_a_narrow_windows_edge_and_tab_inserts_what_shows": "cut",
    "test_without_the_extension_or_the_effect_ibus_popup_shows_it": "popup",
    "test_default_config_at_typing_speed_tab_inserts_what_the_screen_showed": "user",
    "test_default_config_a_fresh_fields_first_suggestion_starts_at_the_caret_over_no_typed_letter": "user-caret",
    "test_a_click_into_another_field_takes_the_suggestion_away": "click",
    "test_default_config_the_suggestion_stands_at_the_typed_text_and_esc_takes_it_away": "user-esc",
    "test_uninstall_leaves_the_system_as_install_found_it": "uninstall",
    "test_a_password_typed_at_sudos_prompt_in_a_terminal_shows_nothing": "sudo",
    "test_another_programs_calls_to_the_plugin_are_refused": "foreign",
    "test_off_in_an_application_turns_suggestions_off_there_and_leaves_the_next_one_on": "off-in",
    "test_the_packages_files_are_roots_in_their_own_places_with_no_bytecode": "pkg-files",
    "test_ghosttype_kwin_depends_on_exactly_the_kwin_it_was_built_for": "pkg-kwin",
    "test_apt_refuses_ghosttype_kwin_beside_another_kwin_and_names_the_one_it_needs": "pkg-other-kwin",
    "test_lintian_finds_no_errors": "lintian",
    "test_a_new_user_installs_the_packages_without_a_compiler_and_setup_keeps_their_layouts": "pkg-setup",
    "test_the_packages_installed_again_over_themselves_keep_the_users_config_and_the_running_engine": "pkg-upgrade",
    "test_the_packages_removed_while_the_session_runs_leave_the_desktop_and_the_users_settings": "pkg-removed",
    "test_apt_purge_leaves_the_system_as_apt_install_found_it": "pkg-purge",
    "test_tab_is_a_tab_once_the_desktop_took_the_suggestion_away": "taken-away",
    "test_ibus_popup_is_drawn_at_the_caret": "popup-caret",
    "test_locking_the_screen_hands_the_plugins_name_to_nobody_and_shows_no_suggestion": "lock",
    "test_readme_install_command_works_on_debian_sid": "readme",
    "test_ghosttype_complete_answers_after_the_readme_install": "complete",
    "test_ci_run_passes_inside_debian_sid": "suite",
    "test_the_input_method_served_every_scenario": "im",
    "test_default_config_a_fixed_width_fields_first_suggestion_is_as_wide_as_its_text": "user-mono",
}


@dataclass(frozen=True)
class Outcome:
    row: str  #: "gnome firefox", "kde", "sid" (tests of no session)
    check: str  #: a heading of CHECKS (or the test's own name)
    result: str  #: "pass", "FAIL", "xfail", "skip"
    why: str = ""  #: an xfail's evidence, a failure's first line


def outcome(test_name: str, params: dict, passed: bool, failed: bool, xfail_reason: str | None,
            longrepr: str = "") -> Outcome:
    """One test's outcome, from its name, its parameters (desktop, app) and pytest's report."""
    row = " ".join(str(params[k]) for k in ("desktop", "app") if params.get(k)) or "sid"
    check = CHECKS.get(test_name, test_name)
    if xfail_reason is not None:
        return Outcome(row, check, "xfail", xfail_reason)
    if failed:
        first = next((line for line in longrepr.splitlines() if line.startswith("E ")), "")
        return Outcome(row, check, "FAIL", first[2:].strip()[:200])
    return Outcome(row, check, "pass" if passed else "skip")


def render(outcomes: list[Outcome]) -> str:
    """The session x check table, then each xfail's evidence and each failure's first line, numbered."""
    if not outcomes:
        return ""
    checks = [c for c in dict.fromkeys(CHECKS.values()) if any(o.check == c for o in outcomes)]
    checks += [c for c in dict.fromkeys(o.check for o in outcomes) if c not in checks]
    rows = list(dict.fromkeys(o.row for o in outcomes))
    cells: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    for o in outcomes:
        cell = o.result
        if o.result in ("xfail", "FAIL") and o.why:
            notes.append(f"[{len(notes) + 1}] {o.row} / {o.check}: {o.result}: {o.why}")
            cell = f"{o.result}[{len(notes)}]"
        cells[(o.row, o.check)] = cell
    table = [["session app", *checks]] + [[r, *(cells.get((r, c), "-") for c in checks)] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in table]
    counts = {k: sum(o.result == k for o in outcomes) for k in ("pass", "FAIL", "xfail", "skip")}
    lines.insert(1, "-" * len(lines[0]))
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items() if n))
    return "\n".join(["desktop tier: session x check", *lines, *notes])
