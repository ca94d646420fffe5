"""What the desktop tier asserts about one scenario's recorded results (inside/session.py writes them).

Every check states what the user would see or get; a failure message says what was seen instead.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator, Optional

import pytest

from tests.desktop import ibus_carets, screen_text
from tests.desktop.wayland_log import AppLog

#: Pixels that must differ between "suggestion shown" and "after Esc" screenshots: a caret is ~40,
#: one short word of ghost text a few hundred, IBus's popup a few thousand.
MIN_VISIBLE_PIXELS = 60
#: A suggestion of fewer characters than a word: each grey character is at least this many pixels at the
#: tier's smallest text (16 for "tor" at 9 pt), and never fewer than a thin caret's 18 twice over.
MIN_PIXELS_PER_CHAR, MIN_SHORT_PIXELS = 14, 36


def min_visible_pixels(chars: int) -> int:
    """Pixels that must differ when Esc hides a suggestion of ``chars`` characters (a word or more:
    MIN_VISIBLE_PIXELS)."""
    return min(MIN_VISIBLE_PIXELS, max(MIN_SHORT_PIXELS, MIN_PIXELS_PER_CHAR * chars))
#: GNOME Shell holds the keyboard this long for a selected input source to become active
#: (ibusManager's _MAX_INPUT_SOURCE_ACTIVATION_TIME); the engine must register well inside it.
GNOME_ACTIVATION_MS = 4000
#: How far from the last typed character a suggestion may be drawn: the popup's top-left sits a line
#: below the caret, inline ghost text right after it.
NEAR = 60
#: What is typed into password fields: words the model completes with confidence in a plain field (its
#: suggestion there is "itor that allows users to"), so a suggestion that leaked into a password field would
#: be on screen when the field is judged from the screen.
SECRET = "Vim is a highly configurable text ed"
#: Inline ghost text (GNOME with ghosttype's Shell extension), against the text Tab inserted: how far apart
#: their starts may be (the pixel between the caret and the suggestion; one character is 7 px or more),
#: how much fainter than typed text its ink must be and how strong at least (readable), and how many pixels
#: may turn dark while it shows (a caret's worth; IBus's popup turns thousands).
START_SLACK = 2
FAINTER = 20
READABLE = 40
MAX_TURNED_DARK = 20
#: The suggestion read off the screen (OCR) against the text Tab inserted: at least this share of the
#: inserted text's characters found in order in what was read, and at most this many characters more
#: (OCR's reading of what the diff caught beside the suggestion: the caret, a sliver of the last typed
#: character, a popup's edge; an ellipsis where the text was cut).
READ_MATCH = 0.85
READ_EXTRA = 6
#: Terminals: the suggestion's first character is drawn in the block cursor (see check_screen_shows_what_tab_inserts).
TERMINALS = ("kgx", "konsole")


#: Evidence of an upstream cause found while a test runs (:func:`upstream_causes`): the test xfails on it only
#: if it then fails; None outside such a test (the evidence xfails at once).
_EVIDENCE: Optional[list[str]] = None


@contextlib.contextmanager
def upstream_causes() -> Iterator[list[str]]:
    """While a desktop test runs (conftest.py): the upstream causes its checks found. A check that finds one
    goes on; the test xfails on the first cause only when it fails, so a run in which ghosttype placed the
    suggestion despite the cause (its caret read from the accessibility bus) passes."""
    global _EVIDENCE
    _EVIDENCE = []
    try:
        yield _EVIDENCE
    finally:
        _EVIDENCE = None


def _upstream(reason: str) -> None:
    """An upstream cause of what the check may find (see :func:`upstream_causes`)."""
    if _EVIDENCE is None:
        pytest.xfail(reason)
    if reason not in _EVIDENCE:
        _EVIDENCE.append(reason)


#: Applications whose caret ghosttype reads from the accessibility bus where its plug-in draws, on these desktops
#: (daemon/frontends/ibus/a11y_caret.py): Thunderbird's compose window, whose rectangles neither desktop passes
#: on, and Firefox on KWin, which applies none of its rectangles in time.
CARET_FROM_ACCESSIBILITY = {"thunderbird": ("gnome", "kde"), "firefox": ("kde",)}


def caret_read_by_ghosttype(results: dict, app: str) -> bool:
    """ghosttype reads ``app``'s caret from the accessibility bus in this session (its plug-in draws there): a
    caret the desktop lost or the application never committed is no excuse for a suggestion off the caret (at
    GNOME's scale 2, such an excuse once hid Thunderbird's suggestion drawn at twice the caret's distance), but
    the desktop losing every application's caret is (:func:`xfail_where_the_desktop_lost_the_caret`)."""
    return results.get("plugin", True) and results.get("desktop") in CARET_FROM_ACCESSIBILITY.get(app, ())


def fail_where_the_input_method_was_lost(results: dict, app: str) -> None:
    """What a scenario saw after the input method changed under it (ibus-daemon, the engine's process or the
    engine IBus has selected) is not ghosttype's engine at work: its checks fail, on that record and not on
    what went missing, and no xfail judges it (the session runs a scenario again, once, when the desktop
    replaced ibus-daemon under it; test_sessions.py's input-method test reports that)."""
    lost = (results.get("scenarios", {}).get(app) or {}).get("input_method_lost")
    assert not lost, (f"{app}: the input method changed under the scenario: {lost['before']} -> {lost['after']}; "
                      f"the desktop's log: {lost['desktop_log']}; the engine's log: {lost['engine_log']}; "
                      f"who switched IBus's engine (a monitor of its bus): {lost.get('engine_switches', 'no record')}; "
                      f"the engine's crash: {lost.get('engine_crash', '')[:2500] or 'none written'}; the "
                      f"engine's threads: {lost.get('engine_stacks', '')[-2500:] or 'none running'}")


#: The desktop's log line that says IBus (the input method it runs: ibus-ui-gtk3 starting ibus-daemon) crashed.
IBUS_CRASHED = re.compile(r"(crash|signal|SIG[A-Z]+).*ibus|ibus.*(crash|signal|SIG[A-Z]+)", re.I)


def check_input_method_served_every_scenario(results: dict) -> None:
    lost = {app: res["input_method_lost"] for app, res in results.get("scenarios", {}).items()
            if res.get("input_method_lost")}
    assert not lost, f"the input method changed under {sorted(lost)}: " + "; ".join(
        f"{app}: {v['before']} -> {v['after']}, the desktop's log: {v['desktop_log']}, who switched IBus's engine: "
        f"{v.get('engine_switches', 'no record')}, the engine's crash: "
        f"{v.get('engine_crash', '')[:1500] or 'none written'}" for app, v in lost.items())
    again = {app: res["first_run"] for app, res in results.get("scenarios", {}).items() if res.get("first_run")}
    if not again:
        return
    crashed = {app: [line for line in first["desktop_log"] if IBUS_CRASHED.search(line)]
               for app, first in again.items()}
    assert all(crashed.values()), f"the desktop replaced ibus-daemon under {sorted(again)} and its log names no " \
                                  f"crash of IBus: {again}"
    pytest.xfail(f"IBus crashed under {sorted(again)} (the desktop's log: {crashed}); each ran again once IBus "
                 f"was back, and its checks judge that run (upstream: IBus, tests/desktop/upstream.md)")


def _scenario(results: dict, app: str) -> dict:
    fail_where_the_input_method_was_lost(results, app)
    res = results.get("scenarios", {}).get(app)
    assert res is not None, f"{app}: the session did not run this scenario (session log: {results.get('log', '')[-500:]})"
    assert "error" not in res, f"{app}: the scenario broke: {res['error']}"
    assert not str(res.get("ready", "")).startswith(("app never", "page never", "no focus")) \
        and "never settled" not in str(res.get("ready", "")), \
        f"{app}: the application was not ready for keys: {res.get('ready')}" + \
        (f"; the engine's threads then: {res['engine_stacks'][-2500:]}" if res.get("engine_stacks") else "")
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


def case_changed(text: str, typed: str) -> str:
    """Where ``text`` begins with ``typed`` but for the case of its letters: from which typed character
    on (Shift or Caps Lock held on in the compositor or the input method, not keys lost)."""
    if len(text) < len(typed) or text[:len(typed)].lower() != typed.lower():
        return ""
    first = next(i for i, (a, b) in enumerate(zip(text, typed)) if a != b)
    return f" (every key arrived, in another case from character {first + 1} on: Shift or Caps Lock stayed on)"


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
    assert text.startswith(typed), f"{app}: typed keys lost, doubled or reordered: field {text!r}, typed " \
        f"{typed!r}{case_changed(text, typed)}"
    assert text.endswith(after), f"{app}: the key after Tab ({after!r}) did not arrive: field {text!r}"
    x = text[len(typed): len(text) - len(after)]
    assert x, f"{app}: Tab inserted nothing (the engine showed {ghost[1]} chars as {ghost[0]}): field {text!r}"
    assert len(x) == ghost[1], \
        f"{app}: Tab inserted {x!r} ({len(x)} chars), but the suggestion shown last had {ghost[1]} chars ({ghost[0]})"
    n, box = res.get("diff_before_tab") or (-1, [])
    assert n >= MIN_VISIBLE_PIXELS, (
        f"{app}: Tab inserted {x!r}, a suggestion that was not on screen: the screenshot before Tab shows the same "
        f"as with no suggestion ({n} pixels differ; {res['shots'].get('6-before-tab')} vs {res['shots'].get('3-esc')})")
    check_begins_like_complete(app, x, complete, typed)
    return x


def check_begins_like_complete(app: str, x: str, complete: list[dict], typed: str) -> None:
    """What Tab inserted after ``typed`` begins with the first word `ghosttype complete` gives for the same
    text (or is the start of it), where it gives one."""
    word = complete_first_word(complete, typed)
    if word is not None:
        assert x.startswith(word) or word.startswith(x), \
            f"{app}: Tab inserted {x!r}; `ghosttype complete` for the same text begins with {word!r}"


def inserted(res: dict) -> str:
    """What Tab inserted: the field's text between what was typed and the key typed after Tab."""
    text = field_text(res)
    if not (text.startswith(res["typed"]) and text.endswith(res["after"])):
        return ""
    return text[len(res["typed"]): len(text) - len(res["after"])]


def read_off_screen(results: dict, res: dict, step: str, box: list, without: str | None = None) -> str:
    """The text tesseract reads in ``box`` of the scenario's screenshot ``step`` (of what differs there from
    screenshot ``without``, where one is named)."""
    png, other = (screen_text.local(res.get("shots", {}).get(s), results) if s else None for s in (step, without))
    assert png is not None and png.exists(), f"no screenshot {step} ({res.get('shots', {}).get(step)})"
    assert without is None or (other is not None and other.exists()), f"no screenshot {without}"
    return screen_text.read(png, box, other)


def check_screen_shows_what_tab_inserts(results: dict, app: str) -> str:
    """The suggestion on screen, read with OCR where the screen showed it (the place where the screenshot
    before Tab differs from the same field without it), says what Tab then inserted."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    x = inserted(res)
    assert x and "\t" not in x, f"{app}: Tab inserted {x!r}; nothing to compare the screen with"
    region = (res.get("inline") or {}).get("ghost")
    assert region, f"{app}: no place on screen where the suggestion showed"
    inline = app not in TERMINALS and (res.get("ghost_e") or [""])[0] == "shell"
    # inline: what the suggestion added to the field (the region was found against 3-esc, the field without it)
    seen = read_off_screen(results, res, "6-before-tab", region[1], "3-esc" if inline else None)
    if not inline:
        # Held to the share of characters read in order only: in terminals the suggestion's first character
        # stands in the block cursor and tesseract misreads the grey one after it (kgx, GNOME 51: "fbr that
        # allows users to" for "tor that allows users to", with the cursor's cell cut away too); IBus's popup
        # and the preedit share the region with the field's caret and text, read as stray glyphs at its edges
        # (KWin: ": tor that allows users to", "1 tor that allows users to |"; Firefox, its popup a line
        # below the caret: "1 i that allows users to")
        share, extra = screen_text.reads_as(seen, x)
        assert share >= READ_MATCH and extra <= READ_EXTRA, (
            f"{app}: the screen showed {seen!r} (OCR at {region[1]} of {res['shots'].get('6-before-tab')}), "
            f"Tab inserted {x!r} ({share:.0%} of it read there, {extra} characters more)")
        return seen
    if not screen_text.same_text(seen, x):  # drawn at a caret the application never let the desktop apply?
        xfail_where_the_app_did_not_report_its_caret(results, app, f"the screen showed {seen!r} for {x!r}")
    assert screen_text.same_text(seen, x), (
        f"{app}: the screen showed {seen!r} (OCR at {region[1]} of {res['shots'].get('6-before-tab')}), "
        f"Tab inserted {x!r}: not the same text (OCR may only confuse {' '.join(screen_text.CONFUSIONS)}, and "
        f"take in the caret before it)")
    return seen


def check_gone_after_tab(results: dict, app: str) -> None:
    """Right after Tab the suggestion is no longer shown as a suggestion: IBus's popup no longer shows its
    text where it stood, and inline text became the inserted text (the same place read again gives ink as
    dark as typed text, checked by check_inline_at_the_caret)."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    inl = res.get("inline") or {}
    region = inl.get("ghost")
    x = inserted(res)
    assert region and x, f"{app}: no suggestion or no inserted text to compare"
    if (res.get("ghost_e") or ["", 0])[0] != "popup":
        return
    # the popup's place below the caret's line (the line itself now holds the inserted text)
    line = (res.get("caret_regions") or [[0, region[1]]])[0][1]
    box = [region[1][0], max(region[1][1], line[3] + 1), region[1][2], region[1][3]]
    if box[1] >= box[3]:
        box = region[1]  # a popup above the caret (no room below)
    # read 0.3 s after Tab, and where it still shows there, a second after Tab: IBus's panel (a separate
    # process) redrew its popup later than that on a busy KWin once (kde-popup, kwrite: the engine had sent
    # the next suggestion 8 ms after the accept), which a user sees as a flicker, not as a suggestion left
    shots = [name for name in ("7-tab", "7b-tab") if (res.get("shots") or {}).get(name)] or ["7-tab"]
    for name in shots:
        seen = read_off_screen(results, res, name, box)
        if screen_text.reads_as(seen, x)[0] < READ_MATCH:
            return
    pytest.fail(f"{app}: a second after Tab IBus's popup still reads {seen!r} at {box} ({res['shots'].get(name)})")


def app_log(results: dict, app: str) -> AppLog | None:
    """What the application itself said on the Wayland protocol up to Tab (its WAYLAND_DEBUG log)."""
    res = results.get("scenarios", {}).get(app) or {}
    scen_err = screen_text.local(f"/out/{app}-app.err", results)
    return AppLog.read(scen_err, res.get("tab_wall_ms"))


def xfail_where_the_app_sent_no_caret(results: dict, app: str) -> None:
    """The application reported no caret at all while typed into (gnome-console on GNOME 51 in some runs): the
    desktop has nothing to draw at. Told from the application's own Wayland log only: it speaks Wayland and
    text-input-v3, and sent no cursor rectangle of any size before Tab. Or the desktop passed IBus none of the
    carets the application reported (:func:`xfail_where_the_desktop_lost_the_caret`)."""
    fail_where_the_input_method_was_lost(results, app)
    if caret_read_by_ghosttype(results, app):
        return xfail_where_the_desktop_lost_the_caret(results, app)
    log = app_log(results, app)
    evidence = log.no_caret_reported() if log is not None else None
    if evidence:
        _upstream(f"{app}: {evidence}: the desktop has no caret to draw at (upstream: gnome-console/VTE, "
                  f"tests/desktop/upstream.md)")
    xfail_where_the_desktop_lost_the_caret(results, app)


def xfail_where_the_desktop_lost_the_caret(results: dict, app: str) -> None:
    """The application reported its caret after its keys (its own Wayland log) and the desktop passed none of
    those carets to IBus (IBus's own bus, read by a monitor): GNOME Shell 51 at times stops passing any cursor
    rectangle on, for the rest of the session; or it held back the caret reported after the last key (Mutter
    passes one on at the surface's next commit, and the application painted none) (tests/desktop/upstream.md).
    Nothing ghosttype does can place a suggestion at a caret it is never told; both records come from outside
    ghosttype. Where ghosttype reads the caret itself (:func:`caret_read_by_ghosttype`), only the first: an
    application typed into earlier in the session, whose caret ghosttype does not read, lost its carets too (in
    CI's gnome-user, GNOME Shell then passed IBus no caret of any application, and none showed a suggestion)."""
    fail_where_the_input_method_was_lost(results, app)
    if caret_read_by_ghosttype(results, app):
        evidence = _session_lost_the_caret(results, app)
        if evidence:
            _upstream(f"{app}: the desktop passed IBus no caret for the rest of the session: {evidence} "
                      f"(upstream: GNOME Shell / Mutter, tests/desktop/upstream.md)")
        return
    res = results.get("scenarios", {}).get(app) or {}
    carets, log = ibus_carets.read(screen_text.local("/out/ibus-carets.log", results)), app_log(results, app)
    evidence = (ibus_carets.caret_lost(carets, log, res.get("tab_wall_ms"))
                or ibus_carets.last_caret_held_back(carets, log, res.get("tab_wall_ms")))
    if evidence:
        _upstream(f"{app}: {evidence} (upstream: GNOME Shell / Mutter, tests/desktop/upstream.md)")


def _session_lost_the_caret(results: dict, app: str) -> Optional[str]:
    """The outside records of an application typed into before ``app`` in this session, whose caret ghosttype does
    not read, whose carets the desktop passed none of on to IBus; None where there is none."""
    scenarios = results.get("scenarios", {})
    tab = (scenarios.get(app) or {}).get("tab_wall_ms")
    if tab is None:
        return None
    carets = ibus_carets.read(screen_text.local("/out/ibus-carets.log", results))
    for other, res in scenarios.items():
        if other == app or caret_read_by_ghosttype(results, other) or not res.get("tab_wall_ms") \
                or res["tab_wall_ms"] >= tab:
            continue
        evidence = ibus_carets.caret_lost(carets, app_log(results, other), res["tab_wall_ms"])
        if evidence:
            return f"{other}: {evidence}"
    return None


def xfail_where_the_app_did_not_report_its_caret(results: dict, app: str, what: str) -> None:
    """The application's own Wayland log shows that nobody could know where its caret was at Tab: it sent no
    cursor rectangle after its last key (Chromium after Esc and BackSpace), or (KWin, which applies a
    text-input-v3 rectangle only with a commit of the surface the text input is on) never committed that surface
    after its last rectangle (Firefox, which draws into a subsurface). ``what``: what the screen showed. Not where
    ghosttype reads the caret itself (:func:`caret_read_by_ghosttype`)."""
    fail_where_the_input_method_was_lost(results, app)
    if caret_read_by_ghosttype(results, app):
        return xfail_where_the_desktop_lost_the_caret(results, app)
    log = app_log(results, app)
    if log is None:
        return
    evidence = log.no_caret_after_last_key()
    if evidence is None and results.get("desktop", "").startswith("kde"):
        evidence = log.rectangle_never_committed()
    if evidence:
        _upstream(f"{app}: {what}; {evidence} (upstream, tests/desktop/upstream.md)")
    xfail_where_the_desktop_lost_the_caret(results, app)


def complete_first_word(complete: list[dict], typed: str):
    """The first word of `ghosttype complete`'s shown suggestion for ``typed`` (None: it gave none)."""
    ref = [c for c in complete if c.get("text") == typed and c.get("suggestion", "").strip() and not c.get("suppressed")]
    return first_word(ref[0]["suggestion"]) if ref else None


def check_visible_and_esc_hides(results: dict, app: str) -> None:
    """After the model's suggestion is shown, the screen shows it (screenshot differs clearly from the
    one after Esc), and Esc hides it without the engine showing it again."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
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
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    n, ghost = res.get("diff_model") or (0, [])
    assert n >= MIN_VISIBLE_PIXELS and ghost, f"{app}: no suggestion on screen to locate ({n} pixels differ)"
    region = res.get("suggestion_region")
    carets = res.get("caret_regions") or []
    if not (region and carets):
        xfail_where_the_app_sent_no_caret(results, app)  # nothing drawn inline without a caret
    assert region and carets, f"{app}: the screenshots show no suggestion or no typed character to compare"
    gap = min(box_gap(region[1], box) for _, box in carets)
    if gap > NEAR:
        xfail_where_the_app_sent_no_caret(results, app)
        xfail_where_the_app_did_not_report_its_caret(
            results, app, f"the suggestion is drawn at {region[1]}, {gap} px from the last typed character")
    assert gap <= NEAR, (f"{app}: the suggestion is drawn at {region[1]} (x0, y0, x1, y1), {gap} px from the "
                         f"caret (the last typed character changed {[box for _, box in carets]}); see "
                         f"{res['shots'].get('4-model')}")


def check_typing_through_keeps_it_visible(results: dict, app: str) -> bool:
    """Typing the character the suggestion begins with keeps a suggestion on screen (the engine
    advances it): the screenshot after that key differs clearly from the one after Esc."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    a, b = res.get("ghost_a"), res.get("ghost_b")
    assert a, f"{app}: no suggestion was shown after the phrase"
    assert b, f"{app}: after typing the next character no suggestion was shown any more"
    advanced = b[1] == a[1] - 1
    assert advanced, (f"{app}: typing the suggestion's next character did not advance it: {a[1]} characters "
                      f"before, {b[1]} after (a new suggestion replaced it)")
    n, box = res["diff_typed_through"]
    assert n >= min_visible_pixels(b[1]), (
        f"{app}: after typing a character the engine showed a suggestion ({b[1]} chars as {b[0]}, "
        f"{'advanced from ' + str(a[1]) if advanced else 'not an advance'}) but the screen did not change when Esc "
        f"hid it ({n} pixels differ): invisible to the user; see {res['shots'].get('2-typed-through')}")
    return advanced


def check_password(results: dict, app: str) -> None:
    """A password field: the engine shows nothing while its keys pass, the field holds exactly what
    was typed, and Tab is not swallowed (the application moves the focus on)."""
    res = _scenario(results, app)
    assert not res.get("shown"), f"{app}: the engine showed suggestions in a password field: {res['shown']}"
    _nothing_on_screen(res, app, "diff_esc", "1-typed", "1-esc", "after the password was typed")
    _nothing_on_screen(res, app, "diff_tab_esc", "2-tab", "2-esc", "after Tab")
    assert res.get("text_before_tab") == SECRET, \
        f"{app}: the password field holds {res.get('text_before_tab')!r}, typed {SECRET!r}"
    assert res.get("text") == SECRET, f"{app}: after Tab the password field holds {res.get('text')!r}"
    assert res.get("focus_moved_on"), f"{app}: Tab did not reach the application (the focus stayed in the field)"
    # before and after, read as a user reads them: no word the empty field's window did not show already
    # (a suggestion that Esc does not take away changes nothing at Esc, but it is words on the screen)
    empty = words_on_screen(results, res, "0-empty")
    new = {step: sorted(words_on_screen(results, res, step) - empty) for step in ("1-typed", "1-esc", "2-tab")}
    assert not any(new.values()), (f"{app}: words appeared on screen while the password was typed: {new} "
                                   f"({res['shots'].get('0-empty')} against the later screenshots)")


def check_focus_jump(results: dict, app: str) -> None:
    """A page moves the focus from the textarea, where a suggestion shows, to its password input by
    itself: the engine shows nothing from then on, the password input holds exactly what was typed,
    the textarea what was typed there (nothing inserted), and Tab reaches the page."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    assert res.get("ghost"), f"{app}: no suggestion was shown before the page moved the focus"
    assert res.get("jumped"), f"{app}: the page never moved the focus to its password input"
    assert not res.get("shown"), f"{app}: the engine showed suggestions after the focus moved to a password " \
                                 f"input: {res['shown']}"
    _nothing_on_screen(res, app, "diff_esc", "3-typed", "3-esc", "after the password was typed")
    # before and after the jump, read as a user reads them: the suggestion's words (those on screen with it,
    # not typed, gone after the jump) left the screen with the focus, and none came back while the password
    # was typed (a suggestion left standing in the textarea keeps its words on screen, Esc or not)
    shown = words_on_screen(results, res, "1-ghost")
    jumped = words_on_screen(results, res, "2-jumped")
    went = shown - jumped - screen_text.words(res.get("typed", ""))
    assert went, (f"{app}: no word of the suggestion left the screen when the focus moved: read {sorted(shown)} "
                  f"with it, {sorted(jumped)} after ({res['shots'].get('1-ghost')}, {res['shots'].get('2-jumped')})")
    back = {step: sorted(went & words_on_screen(results, res, step)) for step in ("3-typed", "3-esc")}
    assert not any(back.values()), f"{app}: the suggestion's words {sorted(went)} were on screen again: {back}"
    assert res.get("text_before_tab") == SECRET, \
        f"{app}: the password input holds {res.get('text_before_tab')!r}, typed {SECRET!r}"
    assert res.get("textarea") == res.get("typed"), f"{app}: the textarea holds {res.get('textarea')!r}"
    assert res.get("text") == SECRET, f"{app}: after Tab the password input holds {res.get('text')!r}"
    assert res.get("focus_moved_on"), f"{app}: Tab did not reach the page (the focus stayed in the input)"


def check_terminal_password(results: dict, app: str) -> None:
    """sudo's prompt in a terminal, with the default config: after each of three tries (two wrong, the words
    the model completes; the right one) the screen 1.5 s after the last key is the screen before the try (the
    prompt echoes nothing, and nothing was drawn from what was typed), and sudo took the third (every key of it
    arrived once and in order: its exit status 0 in the document)."""
    res = _scenario(results, app)
    for i in (1, 2, 3):
        n, box = res.get(f"diff_typed_{i}") or (-1, [])
        shots = res.get("shots", {})
        assert 0 <= n < MIN_VISIBLE_PIXELS, (
            f"{app}: try {i} at sudo's prompt changed {n} pixels at {box}: something showed while the password "
            f"was typed ({shots.get(f'{i}-prompt')} vs {shots.get(f'{i}-typed')})")
    assert field_text(res).strip() == "rc=0", \
        f"{app}: sudo did not take the password on the third try (the document holds {field_text(res)!r})"


#: The plug-in's methods another program may not call (KWin's effect also has Watch: the caret feed).
GUARDED = ("Hide", "Show", "Offset", "Register")


def check_foreign_calls_refused(results: dict, app: str, desktop: str) -> None:
    """Another program of the user called the plug-in while the suggestion showed: Hide, Show with its own text,
    Offset, Register (and KWin's Watch) were each refused with AccessDenied (the answers it got), the screen did
    not change (the suggestion stayed, no planted text), and Tab then inserted the suggestion."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    answers = res.get("foreign") or {}
    guarded = GUARDED + (("Watch",) if desktop.startswith("kde") else ())
    wrong = {m: a for m, a in answers.items() if (a != "org.freedesktop.DBus.Error.AccessDenied" if m in guarded
                                                  else a == "ok")}
    assert answers and not wrong, f"{app}: another program's calls were not refused: {wrong or answers}"
    n, box = res.get("diff_foreign") or (-1, [])
    assert 0 <= n < MIN_VISIBLE_PIXELS, (f"{app}: another program's calls changed {n} pixels at {box} "
                                         f"({res.get('shots', {}).get('2-after-foreign')})")
    text = field_text(res)
    assert text.startswith(res["typed"]) and text.endswith(res["after"]) and "\t" not in text, \
        f"{app}: typed keys lost, or a tab arrived: field {text!r}"
    assert inserted(res), f"{app}: after the calls Tab inserted nothing: field {text!r}"


def words_on_screen(results: dict, res: dict, step: str, whole: bool = False) -> set[str]:
    """The words read (OCR) in the application's window (``whole``: on the whole screen) on the scenario's
    screenshot ``step``."""
    png = screen_text.local(res.get("shots", {}).get(step), results)
    assert png is not None and png.exists(), f"no screenshot {step} ({res.get('shots', {}).get(step)})"
    return screen_text.read_words(png, None if whole else res.get("window_box") or None)


def _nothing_on_screen(res: dict, app: str, key: str, shown: str, esc: str, when: str) -> None:
    """From the screen: Esc, which hides any suggestion, changed (next to) nothing, over the same
    negative window as every other "nothing shown" check (the screenshot 1.5 s after the last key)."""
    n, box = res.get(key) or (-1, [])
    shots = res.get("shots", {})
    assert 0 <= n < MIN_VISIBLE_PIXELS, (
        f"{app}: {when}, Esc changed {n} pixels at {box}: something showed in the password field "
        f"({shots.get(shown)} vs {shots.get(esc)})")


def check_off_in_the_application(results: dict, app: str) -> None:
    """The user turned ghosttype off in this application ("Off in <app>"): the phrase typed there showed
    nothing (Esc changed nothing on the screen) and Tab reached the application (the field holds the phrase
    and what Tab inserts there, a tab or spaces, and nothing of a suggestion)."""
    res = _scenario(results, app)
    _nothing_on_screen(res, app, "diff_esc", "1-typed", "1-esc", "typed with ghosttype off there")
    text, typed = res.get("text") or "", res["typed"]
    assert text.rstrip(" \t\n") == typed and len(text) > len(typed), \
        f"{app}: with ghosttype off there, the field holds {text!r} after {typed!r} and Tab"


def check_on_beside_an_application_off(results: dict, app: str) -> None:
    """Right after, with that other application still off: here a suggestion showed (Esc took it off the
    screen) and Tab inserted one after the phrase."""
    res = _scenario(results, app)
    n, box = res.get("diff_esc") or (-1, [])
    assert n >= MIN_VISIBLE_PIXELS, (f"{app}: with another application off, no suggestion showed here (Esc changed "
                                     f"{n} pixels; {res['shots'].get('1-typed')} vs {res['shots'].get('1-esc')})")
    text, typed = field_text(res), res["typed"]
    assert text.startswith(typed) and len(text.strip()) > len(typed), \
        f"{app}: Tab inserted nothing after {typed!r}: the field holds {text!r}"


def check_user_session(results: dict, app: str) -> str:
    """The default config, typed as people type: every key arrived once and in order, and Tab, pressed as
    soon as the user had read the suggestion, inserted exactly the text the screen showed (read with OCR
    where Tab changed the screen: the text itself, as `check_screen_shows_what_tab_inserts` reads it, or 85%
    of it in order with at most 6 characters more)."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    typed, text = res["typed"], field_text(res)
    assert text.startswith(typed), f"{app}: typed keys lost, doubled or reordered: field {text!r}, typed {typed!r}"
    assert text.endswith(res["after"]), f"{app}: the key after Tab did not arrive: field {text!r}"
    x = inserted(res)
    assert x and "\t" not in x, (f"{app}: Tab inserted {x!r}: no suggestion was on screen "
                                  f"{res.get('shots', {}).get('1-shown')} after the user's pause")
    regions = res.get("suggestion_regions") or []
    assert regions, f"{app}: Tab changed nothing on screen"
    read = []
    for _, box in regions:  # the inserted text's place, and a popup's where it stands apart
        seen = read_off_screen(results, res, "1-shown", box)
        share, extra = screen_text.reads_as(seen, x)
        if screen_text.same_text(seen, x) or (share >= READ_MATCH and extra <= READ_EXTRA):
            return seen  # the same text (a short one with the caret touching it: "ikor" for "tor"), or most of it
        read.append((box, seen))
    pytest.fail(f"{app}: Tab inserted {x!r}, but where it changed the screen {res['shots'].get('1-shown')} "
                f"showed before: {read}")


#: The first suggestion of a fresh field, typed at the user's pace: how far (px) its ink may begin from where
#: Tab put the same text's (the caret's pixel; the interface font's bearing beside the application's), and
#: how many pixels of the typed text it may change (an antialiased edge).
USER_START_SLACK = 1
USER_COVER_SLACK = 2
#: A character's width from its line's height (the box Tab changed), to look that far left of it.
CHAR_OF_HEIGHT = 0.55


def check_user_first_suggestion_at_the_caret(results: dict, app: str) -> dict:
    """The default config, a sentence typed into a fresh field a key every 100 ms with no BackSpace: read from
    the screen (just before Tab, and right after it), the suggestion's grey ink begins within USER_START_SLACK
    px of where the text Tab inserted begins, on the application's caret or a pixel right of it (where the
    screenshot shows it), and none of the typed text's pixels changed while it showed (a suggestion drawn one
    character left, over the last typed letter, changes it)."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    regions, shots = res.get("suggestion_regions") or [], res.get("shots", {})
    where = f"see {shots.get('1-shown')} and {shots.get('2-tab')}"
    assert regions, f"{app}: Tab changed nothing on screen; {where}"
    box = regions[0][1]
    shown, tab = (screen_text.local(shots.get(k), results) for k in ("1-shown", "2-tab"))
    assert shown and tab and shown.exists() and tab.exists(), f"{app}: no screenshots; {where}"
    at = screen_text.ghost_placement(shown, tab, box, CHAR_OF_HEIGHT * (box[3] - box[1]))
    if at["ghost"] is None:
        xfail_where_the_app_did_not_report_its_caret(results, app, "no grey text on the line where Tab inserted")
        pytest.fail(f"{app}: no grey text on the line where Tab inserted text ({box}): not drawn inline; {where}")
    gap, caret = at["ghost"] - at["inserted"], at["caret"]
    # where the screen shows the caret: the suggestion's ink begins on it or within a pixel right of it
    off_caret = caret is not None and not caret[0] <= at["ghost"] <= caret[1] + 1 + USER_START_SLACK
    if abs(gap) > USER_START_SLACK or at["covered"] > USER_COVER_SLACK or off_caret:
        what = (f"the suggestion began at x={at['ghost']}, the text Tab inserted at x={at['inserted']}, the caret "
                f"stood at x={caret}")
        xfail_where_the_app_did_not_report_its_caret(results, app, what)
    assert not off_caret, (
        f"{app}: the first suggestion's ink began at x={at['ghost']}, the application's caret stands at x={caret[0]}"
        f"-{caret[1]}: {'left of it (over the typed text)' if at['ghost'] < caret[0] else 'apart from it'}; {where}")
    assert abs(gap) <= USER_START_SLACK, (
        f"{app}: the first suggestion's ink began at x={at['ghost']}, the text Tab inserted at "
        f"x={at['inserted']} ({gap:+d} px); {where}")
    assert at["covered"] <= USER_COVER_SLACK, (
        f"{app}: {at['covered']} pixels of the typed text changed while the suggestion showed (drawn over the "
        f"last typed letter?); {where}")
    return at


def word_starts_before_and_after_tab(at: dict, x: str) -> tuple[list[int], list[int]]:
    """Where each word of the suggestion ``x`` began while it showed (its grey ink), and where each began once
    Tab inserted it (the ink Tab made darker), from :func:`screen_text.ghost_placement`'s ``at``."""
    grey = at["ghost_columns"]
    char = (grey[-1] - grey[0] + 1) / max(len(x), 1)  # the suggestion showed X (after Tab more may follow it)
    return screen_text.runs_apart(grey, char), screen_text.runs_apart(at["inserted_columns"], char)


def check_user_first_suggestion_as_wide_as_the_field(results: dict, app: str) -> None:
    """The default config, a fresh field in a fixed-width font, a sentence typed a key every 100 ms: its first
    suggestion (read from the screen before Tab: its grey ink) is drawn as wide as the field's text, each of its
    words beginning where Tab then put the same word (the ink Tab made darker), counted from the first."""
    at = check_user_first_suggestion_at_the_caret(results, app)
    res = _scenario(results, app)
    x, shots = inserted(res), res.get("shots", {})
    ghost, typed = word_starts_before_and_after_tab(at, x)
    # two words are enough: the second's start is the first word and a space away (a fixed-width space is
    # about twice a proportional one), and the first's is read without the caret (ghost_placement)
    words_stand_where_typed(app, x, ghost, typed, f"see {shots.get('1-shown')} and {shots.get('2-tab')}", since=0)


#: How far from the typed text the user sessions' suggestion may stand: inline text starts a pixel or two after
#: the last typed character, IBus's popup right below its line.
USER_NEAR = 8


def check_user_sees_and_dismisses(results: dict, app: str) -> None:
    """The default config at typing speed, more typed after Tab: the suggestion showed (Esc changed the screen)
    within USER_NEAR px of the typed text, and nothing showed again in the 1.5 s after Esc."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    region, typed = res.get("more_suggestion"), res.get("more_typed") or []
    shots = res.get("shots", {})
    assert region and region[0] >= MIN_VISIBLE_PIXELS, \
        f"{app}: Esc changed nothing after the user's pause: no suggestion showed ({shots.get('5-more-shown')})"
    assert typed, f"{app}: the typed text changed nothing on screen ({shots.get('4-before-more')})"
    gap = min(box_gap(region[1], box) for _, box in typed)
    assert gap <= USER_NEAR, (f"{app}: the suggestion {region[1]} stood {gap} px from the typed text "
                              f"{[b for _, b in typed]} ({shots.get('5-more-shown')})")
    n, box = res.get("diff_more_later") or (-1, [])
    assert 0 <= n < MIN_VISIBLE_PIXELS, f"{app}: after Esc something showed again ({n} pixels at {box})"


#: Pixels a suggestion of a word or more changes when it goes (a caret appearing in the clicked field: ~40).
WORD_PIXELS = 150


def check_click_into_another_field(results: dict, app: str) -> None:
    """A click into another field while a suggestion shows: the suggestion went from the screen with the
    click (150 px or more changed inside a place that changed, its focus ring left out), nothing shows afterwards (Esc changes under 60 px), the first field
    kept exactly its text, and Tab in the clicked field inserted nothing there (it is a Tab again)."""
    res = _scenario(results, app)
    assert res.get("clicked_into") == "u", f"{app}: the click did not land in the page's second field " \
                                           f"(focus: {res.get('clicked_into')!r}); see {res['shots'].get('5-clicked')}"
    before, clicked = (screen_text.local(res["shots"].get(k), results) for k in ("4-before-click", "5-clicked"))
    went = [(screen_text.changed_inside(before, clicked, box), box) for _, box in res.get("click_regions") or []]
    assert any(n >= WORD_PIXELS for n, _ in went), (
        f"{app}: no suggestion went from the screen at the click (pixels changed inside each place that changed, "
        f"focus rings left out: {went}); see {res['shots'].get('4-before-click')}")
    n, box = res.get("diff_click_esc") or (-1, [])
    assert 0 <= n < MIN_VISIBLE_PIXELS, f"{app}: after the click Esc changed {n} pixels at {box}: something still showed"
    before = field_text(res) + res["typed_more"]
    assert res.get("text_after_click") == before, \
        f"{app}: the first field holds {res.get('text_after_click')!r} after the click, typed {before!r}"
    assert res.get("other_field") == "", f"{app}: Tab inserted {res.get('other_field')!r} into the clicked field"


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
    extension or KWin effect) where it is there, ``popup`` (IBus's, drawn by GNOME Shell or IBus's panel)
    where the user switched it off or did not install it."""
    res = _scenario(results, app)
    ghost = res.get("ghost_e")
    assert ghost, f"{app}: no suggestion was shown before Tab"
    assert ghost[0] == expected, f"{app}: the suggestion was shown as {ghost[0]}, expected {expected}"


def check_inline_at_the_caret(results: dict, app: str, dark: bool = False, scale: float = 1.0) -> dict:
    """GNOME with ghosttype's Shell extension, KWin with its effect: the suggestion is grey text on the caret's
    line starting at the caret. Against the field without it (after Esc) and the screen right after Tab inserted it: the
    suggestion's pixels lie on the inserted text's line, start where the inserted text starts, their ink is
    fainter than the inserted (typed) text's yet readable, and no pixel turned dark while it showed (no box).
    ``dark``: GNOME's dark style, where the field itself must be dark. ``scale``: the monitor's, so many
    screenshot pixels to a logical one (the unit of the caret the application reports)."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    if (res.get("ghost_e") or [""])[0] != "shell":
        xfail_where_the_app_did_not_report_its_caret(results, app, "the suggestion was not drawn at the caret")
    check_display(results, app, "shell")
    xfail_where_the_app_sent_no_caret(results, app)
    inl = res.get("inline") or {}
    g, t = inl.get("ghost"), inl.get("inserted")
    shots = res.get("shots", {})
    where = f"see {shots.get('6-before-tab')}, {shots.get('7-tab')} and {shots.get('3-esc')}"
    assert g and t, f"{app}: no suggestion ({g}) or no inserted text ({t}) on screen to compare; {where}"
    gb, tb = g[1], t[1]
    gy, ty = (gb[1] + gb[3]) / 2, (tb[1] + tb[3]) / 2
    assert tb[1] <= gy <= tb[3] and gb[1] <= ty <= gb[3], \
        f"{app}: the suggestion {gb} is not on the line of the text Tab inserted {tb} (x0, y0, x1, y1); {where}"
    if abs(gb[0] - tb[0]) > START_SLACK * scale:
        xfail_where_the_app_did_not_report_its_caret(
            results, app, f"the suggestion starts at x={gb[0]}, the text Tab inserted at x={tb[0]}")
        pytest.fail(f"{app}: the suggestion starts at x={gb[0]}, the text Tab inserted at x={tb[0]}; {where}")
    if dark:
        assert inl["background"] < 100, f"{app}: the field is not dark (brightness {inl['background']}); {where}"
    assert inl["turned_dark"] <= MAX_TURNED_DARK * scale * scale, \
        f"{app}: {inl['turned_dark']} pixels turned dark while the suggestion showed (a box?); {where}"
    assert READABLE <= inl["ghost_contrast"] <= inl["typed_contrast"] - FAINTER, (
        f"{app}: the suggestion's ink has contrast {inl['ghost_contrast']} to the field (background brightness "
        f"{inl['background']}), typed text {inl['typed_contrast']}: it must read as a suggestion; {where}")
    return inl


#: A fixed-width field: how far a word of the suggestion may begin from where the same word begins once Tab
#: inserted it, counted from the second word (the caret Tab moved away touches the first): sub-pixel
#: rounding; a proportional font is off by many pixels a word ("tor that allows users to" is 288 px in
#: DejaVu Sans Mono at 20 px, 208 in DejaVu Sans).
MONO_SLACK_PX = 3


def words_apart(ghost: list[int], typed: list[int], words: int, since: int = 1) -> list[int]:
    """How far each word of the suggestion after word ``since`` (counted from 0: by default from the third
    on) stands from where it stands typed, both counted from that word's start."""
    return [(g - ghost[since]) - (t - typed[since]) for g, t in zip(ghost[since + 1:words], typed[since + 1:words])]


def words_stand_where_typed(app: str, x: str, ghost: list[int], typed: list[int], where: str, since: int = 1) -> None:
    """The fixed-width judgement of both checks below: every word of the suggestion ``x`` read off the screen
    where it showed (``ghost``) and where Tab put it (``typed``), and each word after word ``since`` within
    MONO_SLACK_PX of where it stands typed, counted from that word (:func:`words_apart`)."""
    words = len(x.split())
    assert words >= since + 2 and len(ghost) >= words and len(typed) >= words, \
        f"{app}: {x!r} has {words} words; read off the screen: the suggestion's begin at {ghost}, typed at {typed}; {where}"
    apart = words_apart(ghost, typed, words, since)
    assert all(abs(d) <= MONO_SLACK_PX for d in apart), (
        f"{app}: the suggestion's words begin {apart} px from where the same words begin typed (counted from word "
        f"{since + 1}): its characters are not as wide as the field's; {where}")


def check_as_wide_as_the_field(results: dict, app: str, scale: float = 1.0) -> None:
    """In a field whose font is fixed-width, the suggestion is drawn in one as wide: each of its words begins
    where the same word begins once Tab inserted it (read from the screenshots, the field without the
    suggestion against each; within the box of both, so a caret beside either changes nothing). ``scale``: the
    monitor's, as for :func:`check_inline_at_the_caret`."""
    inl = check_inline_at_the_caret(results, app, scale=scale)
    res = _scenario(results, app)
    x, shots = inserted(res), res.get("shots", {})
    (gx0, gy0, gx1, gy1), (tx0, ty0, tx1, ty1) = inl["ghost"][1], inl["inserted"][1]
    box = [min(gx0, tx0), min(gy0, ty0), max(gx1, tx1), max(gy1, ty1)]
    esc, shown, tab = (screen_text.local(shots.get(k), results) for k in ("3-esc", "6-before-tab", "7-tab"))
    # a character's width from the narrower of the two (after Tab a new suggestion may show beside X)
    char = min(gx1 - gx0, tx1 - tx0) / max(len(x), 1)
    ghost, typed = (screen_text.word_starts(esc, png, box, char) for png in (shown, tab))
    words_stand_where_typed(app, x, ghost, typed, f"see {shots.get('6-before-tab')} and {shots.get('7-tab')}")


#: What the screen of a session must be (its monitors as the desktop reported them after the session set them:
#: Mutter's DisplayConfig, KWin's wl_output to a client): the scale of every monitor, and how many there are.
SCREENS = {"gnome-hidpi": (2.0, 1), "gnome-frac": (1.5, 1), "kde-hidpi": (2.0, 1)}
#: The suggestion's ink against the inserted text's: how much taller or shorter its box may be (the same
#: characters in the interface font against the application's; a ghost sized for another scale is 2x off).
HEIGHT_RATIO = (0.6, 1.6)


def check_screens(results: dict, desktop: str) -> list:
    """The session ran on the screens it is about (a scale the desktop did not apply tests nothing)."""
    scale, count = SCREENS[desktop]
    monitors = (results.get("setup") or {}).get("monitors") or []
    assert len(monitors) == count and all(abs(m[3] - scale) < 0.01 for m in monitors), \
        f"{desktop}: the monitors are {monitors} (connector, x, y, scale), expected {count} at scale {scale}"
    return monitors


def check_inline_on_these_screens(results: dict, desktop: str, app: str) -> dict:
    """On a HiDPI or a fractionally scaled monitor: the inline suggestion passes every check of
    :func:`check_inline_at_the_caret` (the caret's line, where Tab inserts, fainter, no box) and is drawn at
    the application's text size (not at another scale's)."""
    monitors = check_screens(results, desktop)
    inl = check_inline_at_the_caret(results, app, scale=monitors[0][3])
    g, t = inl["ghost"][1], inl["inserted"][1]
    ratio = (g[3] - g[1]) / max(1, t[3] - t[1])
    assert HEIGHT_RATIO[0] <= ratio <= HEIGHT_RATIO[1], \
        f"{app}: the suggestion is {g[3] - g[1]} px high, the text Tab inserted {t[3] - t[1]} px ({g}, {t})"
    return inl


def check_cut_at_the_windows_edge(results: dict, app: str, complete: list[dict]) -> str:
    """A window too narrow for the whole suggestion, read off the screen: the suggestion was drawn up to an
    ellipsis (OCR of where it showed before Tab), its pixels end inside the window, and Tab inserted exactly
    the characters shown before the ellipsis: the field holds typed + X + "!", X beginning like `ghosttype
    complete`'s first word. (Where the text Tab inserted went is not compared: it runs past the narrow
    field, which then scrolls.)"""
    res = _scenario(results, app)
    check_display(results, app, "shell")
    typed, after, text = res["typed"], res["after"], field_text(res)
    assert text.startswith(typed) and text.endswith(after) and "\t" not in text, \
        f"{app}: typed keys lost, doubled or reordered, or a tab arrived: field {text!r}"
    x = inserted(res)
    assert x, f"{app}: Tab inserted nothing: field {text!r}"
    region, window = (res.get("inline") or {}).get("ghost"), res.get("window_box")
    assert region and window, f"{app}: no suggestion ({region}) or window ({window}) found on screen"
    assert region[1][2] <= window[2], \
        f"{app}: the suggestion {region[1]} runs past the window {window} (x0, y0, x1, y1)"
    seen = read_off_screen(results, res, "6-before-tab", region[1])
    head = screen_text.before_ellipsis(seen)
    assert head is not None, (f"{app}: the screen showed {seen!r} at {region[1]} of {res['shots'].get('6-before-tab')}: "
                              f"no ellipsis, the suggestion was not cut at the window's edge")
    assert screen_text.same_text(head, x), (
        f"{app}: the screen showed {seen!r} (cut at the window's edge), Tab inserted {x!r}: not the characters "
        f"shown before the ellipsis")
    check_begins_like_complete(app, x, complete, typed)
    return x


def check_tab_after_the_desktop_hid_it(results: dict, app: str) -> None:
    """The desktop took the suggestion off the screen on its own (the application made its window narrower than
    the typed text while the suggestion showed: no room at the caret): Tab then reached the application as a
    Tab (the focus moved on to the next field) and inserted nothing, for nothing was on screen to accept."""
    res = _scenario(results, app)
    ghost = res.get("ghost")
    assert ghost and ghost[0] == "shell", f"{app}: no suggestion drawn at the caret before the window shrank: {ghost}"
    assert res.get("resized"), f"{app}: the application never made its window narrower"
    n, box = res.get("diff_shrunk") or (-1, [])
    assert n >= MIN_VISIBLE_PIXELS, f"{app}: the window did not change on screen when it shrank ({n} pixels)"
    text = field_text(res)
    assert text == res["typed"], (
        f"{app}: after the desktop took the suggestion away, Tab inserted {text[len(res['typed']):]!r} "
        f"(field {text!r}): text that was no longer on screen ({res['shots'].get('2-shrunk')})")
    assert res.get("focus_after_tab") == "password", \
        f"{app}: Tab did not reach the application (the focus is on {res.get('focus_after_tab')!r})"


#: IBus's popup against the caret (the last typed character's place: the caret before and after it): its box may
#: start this many px outside that place (Qt reports a 10 px box centred on its caret, and IBus's panel on KWin
#: puts the popup at that box's left: 6 px), stand this far below (or above) the caret's line at most (on a dark
#: field, a terminal's, GNOME Shell's dark box hardly changes the screen, and what changed is its text, 16 px
#: below the line), and its text start this far inside the box at most (the box's own padding: GNOME Shell's
#: 8 px, the 15 px of KWin's IBus panel, whose handle comes first).
POPUP_SLACK = 6
POPUP_BELOW = 18
POPUP_PADDING = 22


def check_popup_at_the_caret(results: dict, app: str) -> None:
    """IBus's popup (without the extension or the effect) stands at the caret, read off the screen: what Esc
    took away below the caret's line (or above it) is a box that starts where the last typed character is
    (between the caret before and after it, 6 px either side), right below the line (or right above it: POPUP_BELOW),
    and its text starts within the box's padding (so a suggestion shifted inside its box is off the caret as
    much as a box shifted off it)."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    assert (res.get("ghost_d") or [""])[0] == "popup", f"{app}: the model's suggestion was not in IBus's popup"
    region, carets = res.get("suggestion_region"), res.get("caret_regions") or []
    assert region and carets, f"{app}: the screenshots show no popup or no typed character to compare"
    caret = min((b for _, b in carets), key=lambda b: box_gap(region[1], b))
    shown, esc = (screen_text.local(res["shots"].get(k), results) for k in ("4-model", "5-esc"))
    x0, y0, x1, y1 = region[1]
    # the popup alone: what changed below the caret's line, else above it (the region may hold the caret too)
    box = (screen_text.changed_box(shown, esc, [x0, caret[3], x1, y1]) if y1 > caret[3] else None) \
        or (screen_text.changed_box(shown, esc, [x0, y0, x1, caret[1]]) if y0 < caret[1] else None)
    where = f"popup {box}, last typed character {caret} (x0, y0, x1, y1); see {res['shots'].get('4-model')}"
    off = box is None or box[0] < caret[0] - POPUP_SLACK or box[0] > caret[2] + POPUP_SLACK \
        or not (box[1] - caret[3] <= POPUP_BELOW if box[1] >= caret[3] else caret[1] - box[3] <= POPUP_BELOW)
    if off:
        xfail_where_the_app_did_not_report_its_caret(results, app, f"IBus's popup stands at {box}, off the caret")
    assert not off, f"{app}: IBus's popup does not stand at the caret: {where}"
    text = screen_text.text_left(shown, box)
    assert text is not None and text - box[0] <= POPUP_PADDING, \
        f"{app}: the popup's text starts at x={text}, {None if text is None else text - box[0]} px inside its box: {where}"


#: A lock screen covers the whole screen: at least this many pixels change when it comes.
LOCKED_PIXELS = 100_000


def check_lock_screen(results: dict, app: str) -> None:
    """The user locked the screen while a suggestion showed, and unlocked it: the screen locked (the desktop's
    screen saver said so: GNOME Shell's org.gnome.ScreenSaver, KWin's org.freedesktop.ScreenSaver; and the screen
    changed), the plug-in's name stayed the compositor's throughout (the bus daemon's account), so the other
    program that asked for it waited in vain and got no message from anyone; no word of the suggestion stood on
    the lock screen (OCR); after the unlock the suggestion is drawn at the caret again and Tab inserts it."""
    xfail_where_the_desktop_lost_the_caret(results, app)  # nothing can be drawn at a caret never told
    res = _scenario(results, app)
    assert res.get("locked") and res.get("unlocked"), f"{app}: the screen did not lock and unlock: {res}"
    shell = res.get("shell_owner")
    assert shell and res.get("squatter_request") == 2, \
        f"{app}: another program asking for the plug-in's name got answer {res.get('squatter_request')} (2: queued)"
    assert res.get("owner_locked") == shell == res.get("owner_unlocked"), (
        f"{app}: the plug-in's name was not the compositor's ({shell}) across the lock: locked "
        f"{res.get('owner_locked')!r}, unlocked {res.get('owner_unlocked')!r}")
    assert not res.get("squatter_got"), f"{app}: the program waiting for the name got {res['squatter_got']}"
    shots = [screen_text.local(res.get("shots", {}).get(k), results) for k in ("1-shown", "2-locked")]
    assert all(p is not None and p.exists() for p in shots), f"{app}: screenshots missing: {shots}"
    n = screen_text.changed_pixels(*shots)
    assert n > LOCKED_PIXELS, f"{app}: the screen hardly changed when it locked ({n} pixels; {shots})"
    with_it = words_on_screen(results, res, "1-shown") - words_on_screen(results, res, "0-app") \
        - screen_text.words(res.get("typed", ""))
    assert with_it, f"{app}: no word of the suggestion was read on screen before the lock"
    on_lock = words_on_screen(results, res, "2-locked", whole=True) & with_it
    assert not on_lock, f"{app}: the lock screen showed the suggestion's words {sorted(on_lock)}"
    ghost = res.get("ghost_after")
    assert ghost and ghost[0] == "shell", f"{app}: after the unlock no suggestion was drawn at the caret: {ghost}"
    text = field_text(res)
    x = inserted(res)
    assert text.startswith(res["typed"]) and text.endswith(res["after"]) and x and "\t" not in x, \
        f"{app}: after the unlock Tab did not insert the suggestion: field {text!r}"
