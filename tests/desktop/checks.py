"""What the desktop tier asserts about one scenario's recorded results (inside/session.py writes them).

Every check states what the user would see or get; a failure message says what was seen instead.
"""

from __future__ import annotations

import re

#: Pixels that must differ between "suggestion shown" and "after Esc" screenshots: a caret is ~40,
#: one short word of ghost text a few hundred, IBus's popup a few thousand.
MIN_VISIBLE_PIXELS = 60
#: GNOME Shell holds the keyboard this long for a selected input source to become active
#: (ibusManager's _MAX_INPUT_SOURCE_ACTIVATION_TIME); the engine must register well inside it.
GNOME_ACTIVATION_MS = 4000
#: How far from the last typed character a suggestion may be drawn: the popup's top-left sits a line
#: below the caret, inline ghost text right after it.
NEAR = 60
SECRET = "correct horse battery sta"
#: Inline ghost text (GNOME with ghosttype's Shell extension), against the text Tab inserted: how far apart
#: their starts may be (the pixel between the caret and the suggestion; one character is 7 px or more),
#: how much fainter than typed text its ink must be and how strong at least (readable), and how many pixels
#: may turn dark while it shows (a caret's worth; IBus's popup turns thousands).
START_SLACK = 2
FAINTER = 20
READABLE = 40
MAX_TURNED_DARK = 20


def _scenario(results: dict, app: str) -> dict:
    res = results.get("scenarios", {}).get(app)
    assert res is not None, f"{app}: the session did not run this scenario (session log: {results.get('log', '')[-500:]})"
    assert "error" not in res, f"{app}: the scenario broke: {res['error']}"
    assert not str(res.get("ready", "")).startswith(("app never", "page never", "no focus")) \
        and "never settled" not in str(res.get("ready", "")), \
        f"{app}: the application was not ready for keys: {res.get('ready')}"
    return res


def field_text(res: dict) -> str:
    text = res.get("text", "")
    if text.endswith("\n"):  # a saved file's final newline, a terminal line's Return
        text = text[:-1]
    return text


def first_word(s: str) -> str:
    """The suggestion's first word, with the spaces before it ("" when it has none)."""
    stripped = s.lstrip()
    lead = s[: len(s) - len(stripped)]
    return lead + (stripped.split()[0] if stripped.split() else "")


def check_tab_inserts_the_shown_suggestion(results: dict, app: str, complete: list[dict]) -> str:
    """The field after typing (with Esc and BackSpace on the way, and typing along the suggestion before
    Tab), Tab and "!" holds exactly typed + X + "!": every typed key arrived once and in order, Tab
    inserted X (no tab character), X has the length of the last suggestion the engine showed (the
    engine logs lengths only), the suggestion was on screen when Tab was pressed (the screenshot before
    Tab differs clearly from the one with the same field text and no suggestion), and X begins with the
    first word that `ghosttype complete` gives for the same text."""
    res = _scenario(results, app)
    typed, after, text = res["typed"], res["after"], field_text(res)
    ghost = res.get("ghost_e")
    assert ghost, f"{app}: no suggestion was shown after the last key before Tab; field holds {text!r}"
    assert "\t" not in text, f"{app}: a tab character reached the application: {text!r}"
    assert text.startswith(typed), f"{app}: typed keys lost, doubled or reordered: field {text!r}, typed {typed!r}"
    assert text.endswith(after), f"{app}: the key after Tab ({after!r}) did not arrive: field {text!r}"
    x = text[len(typed): len(text) - len(after)]
    assert x, f"{app}: Tab inserted nothing (the engine showed {ghost[1]} chars as {ghost[0]}): field {text!r}"
    assert len(x) == ghost[1], \
        f"{app}: Tab inserted {x!r} ({len(x)} chars), but the suggestion shown last had {ghost[1]} chars ({ghost[0]})"
    n, box = res.get("diff_before_tab") or (-1, [])
    assert n >= MIN_VISIBLE_PIXELS, (
        f"{app}: Tab inserted {x!r}, a suggestion that was not on screen: the screenshot before Tab shows the same "
        f"as with no suggestion ({n} pixels differ; {res['shots'].get('6-before-tab')} vs {res['shots'].get('3-esc')})")
    word = complete_first_word(complete, typed)
    if word is not None:
        assert x.startswith(word) or word.startswith(x), \
            f"{app}: Tab inserted {x!r}; `ghosttype complete` for the same text begins with {word!r}"
    return x


def complete_first_word(complete: list[dict], typed: str):
    """The first word of `ghosttype complete`'s shown suggestion for ``typed`` (None: it gave none)."""
    ref = [c for c in complete if c.get("text") == typed and c.get("suggestion", "").strip() and not c.get("suppressed")]
    return first_word(ref[0]["suggestion"]) if ref else None


def check_visible_and_esc_hides(results: dict, app: str) -> None:
    """After the model's suggestion is shown, the screen shows it (screenshot differs clearly from the
    one after Esc), and Esc hides it without the engine showing it again."""
    res = _scenario(results, app)
    assert res.get("ghost_d"), f"{app}: the engine showed no suggestion after BackSpace (the model's path)"
    n, box = res["diff_model"]
    assert n >= MIN_VISIBLE_PIXELS, (
        f"{app}: the engine showed a suggestion ({res['ghost_d'][1]} chars as {res['ghost_d'][0]}) but the screen "
        f"did not change when Esc hid it ({n} pixels differ): the user saw no suggestion (or Esc did not hide it); "
        f"see {res['shots'].get('4-model')} and {res['shots'].get('5-esc')}")
    assert not res.get("shown_after_esc"), f"{app}: a suggestion was shown again right after Esc: {res['shown_after_esc']}"


def box_gap(a: list, b: list) -> int:
    """Pixels between two boxes (x0, y0, x1, y1); 0 when they touch or overlap."""
    return max(0, max(a[0], b[0]) - min(a[2], b[2]), max(a[1], b[1]) - min(a[3], b[3]))


def check_drawn_at_the_caret(results: dict, app: str) -> None:
    """The suggestion is drawn where the user types: the largest place where the screen changed when
    Esc hid it (inline ghost text after the caret, or a popup just below) lies within NEAR px of the
    last typed character (the screen change between the field with and without it)."""
    res = _scenario(results, app)
    n, ghost = res.get("diff_model") or (0, [])
    assert n >= MIN_VISIBLE_PIXELS and ghost, f"{app}: no suggestion on screen to locate ({n} pixels differ)"
    region = res.get("suggestion_region")
    carets = res.get("caret_regions") or []
    assert region and carets, f"{app}: the screenshots show no suggestion or no typed character to compare"
    gap = min(box_gap(region[1], box) for _, box in carets)
    assert gap <= NEAR, (f"{app}: the suggestion is drawn at {region[1]} (x0, y0, x1, y1), {gap} px from the "
                         f"caret (the last typed character changed {[box for _, box in carets]}); see "
                         f"{res['shots'].get('4-model')}")


def check_typing_through_keeps_it_visible(results: dict, app: str) -> bool:
    """Typing the character the suggestion begins with keeps a suggestion on screen (the engine
    advances it): the screenshot after that key differs clearly from the one after Esc."""
    res = _scenario(results, app)
    a, b = res.get("ghost_a"), res.get("ghost_b")
    assert a, f"{app}: no suggestion was shown after the phrase"
    assert b, f"{app}: after typing the next character no suggestion was shown any more"
    advanced = b[1] == a[1] - 1
    n, box = res["diff_typed_through"]
    assert n >= MIN_VISIBLE_PIXELS, (
        f"{app}: after typing a character the engine showed a suggestion ({b[1]} chars as {b[0]}, "
        f"{'advanced from ' + str(a[1]) if advanced else 'not an advance'}) but the screen did not change when Esc "
        f"hid it ({n} pixels differ): invisible to the user; see {res['shots'].get('2-typed-through')}")
    return advanced


def check_password(results: dict, app: str) -> None:
    """A password field: the engine shows nothing while its keys pass, the field holds exactly what
    was typed, and Tab is not swallowed (the application moves the focus on)."""
    res = _scenario(results, app)
    assert not res.get("shown"), f"{app}: the engine showed suggestions in a password field: {res['shown']}"
    assert res.get("text_before_tab") == SECRET, \
        f"{app}: the password field holds {res.get('text_before_tab')!r}, typed {SECRET!r}"
    assert res.get("text") == SECRET, f"{app}: after Tab the password field holds {res.get('text')!r}"
    assert res.get("focus_moved_on"), f"{app}: Tab did not reach the application (the focus stayed in the field)"


def check_focus_jump(results: dict, app: str) -> None:
    """A page moves the focus from the textarea, where a suggestion shows, to its password input by
    itself: the engine shows nothing from then on, the password input holds exactly what was typed,
    the textarea what was typed there (nothing inserted), and Tab reaches the page."""
    res = _scenario(results, app)
    assert res.get("ghost"), f"{app}: no suggestion was shown before the page moved the focus"
    assert res.get("jumped"), f"{app}: the page never moved the focus to its password input"
    assert not res.get("shown"), f"{app}: the engine showed suggestions after the focus moved to a password " \
                                 f"input: {res['shown']}"
    assert res.get("text_before_tab") == SECRET, \
        f"{app}: the password input holds {res.get('text_before_tab')!r}, typed {SECRET!r}"
    assert res.get("textarea") == res.get("typed"), f"{app}: the textarea holds {res.get('textarea')!r}"
    assert res.get("text") == SECRET, f"{app}: after Tab the password input holds {res.get('text')!r}"
    assert res.get("focus_moved_on"), f"{app}: Tab did not reach the page (the focus stayed in the input)"


def check_layout(results: dict, app: str, complete: list[dict]) -> str:
    """On a machine with the German layout, with the engine selected: the physical keys typed hold
    exactly what that layout types (ö ä ü ß on their keys, y and z swapped against US keyboards), and
    Tab inserts the suggestion the engine showed for that text, which begins with `ghosttype
    complete`'s first word for it (the engine tracked the same characters the application got)."""
    res = _scenario(results, app)
    typed, text = res["typed"], field_text(res)
    assert text.startswith(typed), (f"{app}: the German layout's keys typed {text[:len(typed)]!r}, expected "
                                    f"{typed!r}: the engine's layout is not the machine's ({results.get('layout')})")
    ghost = res.get("ghost_e")
    assert ghost, f"{app}: no suggestion was shown after the German text; field holds {text!r}"
    assert text.endswith(res["after"]), f"{app}: the key after Tab did not arrive: field {text!r}"
    x = text[len(typed): len(text) - len(res["after"])]
    assert len(x) == ghost[1] and "\t" not in x, \
        f"{app}: Tab inserted {x!r}, but the suggestion shown had {ghost[1]} chars ({ghost[0]})"
    word = complete_first_word(complete, typed)
    assert word is not None, f"`ghosttype complete` gave no suggestion for {typed!r} to compare with"
    assert x.startswith(word) or word.startswith(x), \
        f"{app}: Tab inserted {x!r}; `ghosttype complete` for the same text begins with {word!r}"
    return x


def check_registered_in_time(results: dict) -> int:
    """The engine ibus-daemon started registered with it inside GNOME's activation window (the
    engine logs the time from its process start; the model loads afterwards)."""
    setup = results.get("setup") or {}
    line = setup.get("registered", "")
    m = re.search(r"registered with ibus-daemon (\d+) ms", line)
    assert m, f"the engine logged no registration time (engine start: {setup.get('engine_start')!r})"
    ms = int(m.group(1))
    assert ms < GNOME_ACTIVATION_MS, (f"the engine registered {ms} ms after its start, with {setup.get('busy', 0)} "
                                      f"busy processes: GNOME holds keys only {GNOME_ACTIVATION_MS} ms")
    return ms


def check_display(results: dict, app: str, expected: str) -> None:
    """The engine showed the suggestion before Tab with ``expected``: ``shell`` (ghosttype's GNOME Shell
    extension) where it is enabled, ``popup`` (IBus's, drawn by GNOME Shell) where the user switched it off."""
    res = _scenario(results, app)
    ghost = res.get("ghost_e")
    assert ghost, f"{app}: no suggestion was shown before Tab"
    assert ghost[0] == expected, f"{app}: the suggestion was shown as {ghost[0]}, expected {expected}"


def check_inline_at_the_caret(results: dict, app: str, dark: bool = False) -> dict:
    """GNOME with ghosttype's Shell extension: the suggestion is grey text on the caret's line starting at the
    caret. Against the field without it (after Esc) and the screen right after Tab inserted it: the
    suggestion's pixels lie on the inserted text's line, start where the inserted text starts, their ink is
    fainter than the inserted (typed) text's yet readable, and no pixel turned dark while it showed (no box).
    ``dark``: GNOME's dark style, where the field itself must be dark."""
    res = _scenario(results, app)
    check_display(results, app, "shell")
    inl = res.get("inline") or {}
    g, t = inl.get("ghost"), inl.get("inserted")
    shots = res.get("shots", {})
    where = f"see {shots.get('6-before-tab')}, {shots.get('7-tab')} and {shots.get('3-esc')}"
    assert g and t, f"{app}: no suggestion ({g}) or no inserted text ({t}) on screen to compare; {where}"
    gb, tb = g[1], t[1]
    gy, ty = (gb[1] + gb[3]) / 2, (tb[1] + tb[3]) / 2
    assert tb[1] <= gy <= tb[3] and gb[1] <= ty <= gb[3], \
        f"{app}: the suggestion {gb} is not on the line of the text Tab inserted {tb} (x0, y0, x1, y1); {where}"
    assert abs(gb[0] - tb[0]) <= START_SLACK, \
        f"{app}: the suggestion starts at x={gb[0]}, the text Tab inserted at x={tb[0]}; {where}"
    if dark:
        assert inl["background"] < 100, f"{app}: the field is not dark (brightness {inl['background']}); {where}"
    assert inl["turned_dark"] <= MAX_TURNED_DARK, \
        f"{app}: {inl['turned_dark']} pixels turned dark while the suggestion showed (a box?); {where}"
    assert READABLE <= inl["ghost_contrast"] <= inl["typed_contrast"] - FAINTER, (
        f"{app}: the suggestion's ink has contrast {inl['ghost_contrast']} to the field (background brightness "
        f"{inl['background']}), typed text {inl['typed_contrast']}: it must read as a suggestion; {where}")
    return inl
