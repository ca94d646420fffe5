"""``learn`` end to end on X11: the real daemon (SmolLM2, the default
``learn = "session"``) with real keys in a Qt window on a private
accessibility bus, and an xterm that the denylist names.

A name typed in an ordinary field comes back as a suggestion in another
field, which shows the memory at work; words typed in the password field and
in the denylisted window never do, though they are typed the same way.
"""

from __future__ import annotations

import pytest

from tests.e2e.a11y import a11y, focus_requests, read_state  # noqa: F401  (the fixture)
from tests.e2e.test_daemon_e2e import field_text, overlay_geometry, qt_desktop, wait_overlay_stable  # noqa: F401
from tests.e2e.xserver import start_app, wait_until, xdotool, xvfb  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.llm]

LEARNED = "Please send the invoice to Brunhilde Okonkwo-Vasquez today."
SECRET = "Zygomorphic Quillfeather"
MASTER = "Thermocline Abernathy"


def focus(session, state, name: str, window: str = "") -> None:
    """Have the fields app focus its field ``name`` by itself.  Where that does not come (CI, once, for the
    editor after the denylisted window closed, on a machine busy with other work), what each part did is
    printed: whether the app took its request, which window has the X focus (Qt moves the focus only inside
    its active window); then ``window`` is given the X focus once more and the request repeated."""
    requests = focus_requests(session)
    for _ in range(2 if window else 1):
        requests.write_text(name)
        if wait_until(lambda: read_state(state).get("focus") == name, timeout=10):
            return
        seen = (f"{name} not focused after 10 s: the app's state says {read_state(state).get('focus')!r}, its "
                f"request {'unread' if requests.exists() else 'taken'}, the X focus on window "
                f"{xdotool(session.display, 'getwindowfocus').strip()} (the fields window: {window or '?'})")
        print(seen)
        if window:
            xdotool(session.display, "windowfocus", "--sync", window)
    raise AssertionError(seen)


def not_focus_lines(log: str) -> str:
    """What the memory and the field did (the memory's pieces, the field's corrections of the buffer), then
    the daemon's log without its AT-SPI focus lines, which filled a red run's message (sid's suite beside the
    main suite, and on a host with both cores busy: the name came back as "asquel"; the daemon's log showed
    the key listener 14 keys behind the field, the buffer taken from the field, the late keys added to it a
    second time and the sentence learned in three pieces: late keys are now waited for,
    daemon/controller/focus.py, and a correction no longer splits the stretch, daemon/memory/learner.py)."""
    lines = [line for line in log.splitlines() if "AT-SPI focus" not in line]
    marks = [line for line in lines if "memory index" in line or "the field" in line]
    return "\n".join(marks[-20:]) + "\n...\n" + "\n".join(lines)[-2000:]


def suggestion_after(session, state, daemon, typed: str) -> str:
    """Type ``typed`` into the editor at a user's pace and return what Tab
    inserted after it ("" when nothing was suggested)."""
    before = field_text(state, "editor")
    accepted = len(daemon.accepted())
    xdotool(session.display, "type", "--delay", "80", typed)
    if wait_overlay_stable(session.display, timeout=20) is None:
        return ""
    xdotool(session.display, "key", "Tab")
    assert wait_until(lambda: len(daemon.accepted()) > accepted, timeout=10), daemon.output()
    length = daemon.accepted()[-1]
    want = len(before) + len(typed) + length
    assert wait_until(lambda: len(field_text(state, "editor")) >= want, timeout=10)
    return field_text(state, "editor")[len(before) + len(typed):]


def test_words_of_ordinary_fields_come_back_and_secrets_never_do(qt_desktop, tmp_path) -> None:
    session, state, daemon = qt_desktop
    xdotool(session.display, "type", "--delay", "60", LEARNED)
    focus(session, state, "password")  # the stretch in the normal field ends: it is learned
    assert wait_until(lambda: "capture off in this window (password field)" in daemon.output(), timeout=5)
    xdotool(session.display, "type", "--delay", "60", SECRET + " " + SECRET)
    manager = start_app(session.display, ["xterm", "-class", "KeePassXC", "-geometry", "40x5+300+300", "-e", "sh",
                                          "-c", f"stty -icanon -echoctl; exec cat > {tmp_path / 'manager.txt'}"],
                        wm_class="KeePassXC")
    try:
        xdotool(session.display, "windowfocus", "--sync", str(manager.window))
        assert wait_until(lambda: "capture off in this window (denylisted application)" in daemon.output(),
                          timeout=5), daemon.output()
        xdotool(session.display, "type", "--delay", "60", MASTER + " " + MASTER)
    finally:
        manager.stop()
    (window,) = xdotool(session.display, "search", "--class", "qt_fields").split()[-1:]
    xdotool(session.display, "windowfocus", "--sync", window)
    focus(session, state, "editor", window)

    # SmolLM2 alone finishes "Okonkwo-V" with "an" (`ghosttype complete`); the memory knows the name
    learned = suggestion_after(session, state, daemon, "Could you ask Brunhilde Okonkwo-V")
    assert learned.startswith("asquez"), (learned, not_focus_lines(daemon.output())[-3000:])
    secret = suggestion_after(session, state, daemon, " and Zygomorphic Quil")
    assert "feather" not in secret, secret
    master = suggestion_after(session, state, daemon, " or Thermocline Aber")
    assert "nathy" not in master, master
    assert SECRET not in field_text(state, "editor") and MASTER not in field_text(state, "editor")
