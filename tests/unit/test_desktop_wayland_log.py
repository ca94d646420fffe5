"""The desktop tier's reading of an application's own Wayland log (tests/desktop/wayland_log.py), on logs in
libwayland's line formats: ``interface@id`` and 32-bit milliseconds (before 1.23), ``interface#id`` with a
queue name and the time of day (1.24, as Debian sid's applications write it)."""

from tests.desktop.wayland_log import DAY, AppLog, before, parse

OLD = """\
[1000123.456]  -> wl_display@1.get_registry(new id wl_registry@2)
[1000123.500] wl_registry@2.global(1, "wl_compositor", 6)
[1000130.000] zwp_text_input_v3@33.enter(wl_surface@20)
[1000140.000] wl_keyboard@9.key(55, 123, 30, 1)
[1000141.000]  -> zwp_text_input_v3@33.set_cursor_rectangle(100, 20, 1, 17)
[1000141.100]  -> zwp_text_input_v3@33.commit()
[1000142.000]  -> wl_surface@20.commit()
[1000150.000] wl_keyboard@9.key(56, 130, 30, 0)
"""
NEW = """\
[06:00:04.748604] {Default Queue}  -> wl_display#1.get_registry(new id wl_registry#2)
[06:00:04.750000] {Default Queue} wl_registry#2.global(1, "wl_compositor", 6)
[06:00:05.821606] {Default Queue} zwp_text_input_v3#33.enter(wl_surface#20)
[06:00:08.184836] {Default Queue}  -> zwp_text_input_v3#33.set_cursor_rectangle(100, 20, 1, 17)
[06:00:08.184900] {Default Queue}  -> zwp_text_input_v3#33.commit()
[06:00:08.190000] {Default Queue}  -> wl_surface#31.commit()
[06:00:09.178560] {Default Queue} wl_keyboard#9.key(307, 4088216, 42, 1)
[06:00:09.300000] {Default Queue} discarded zwp_text_input_v3#33.done(4)
"""
#: 06:00:09.000 UTC on some day, in epoch milliseconds
BEFORE_THE_KEY = 20_000 * DAY + (6 * 3600 + 9) * 1000


def test_both_formats_parse_alike():
    old, new = parse(OLD), parse(NEW)
    assert [(m.iface, m.name, m.sent) for m in old[:2]] == [("wl_display", "get_registry", True),
                                                         ("wl_registry", "global", False)]
    assert [(m.iface, m.oid, m.name) for m in new] == [
        ("wl_display", 1, "get_registry"), ("wl_registry", 2, "global"), ("zwp_text_input_v3", 33, "enter"),
        ("zwp_text_input_v3", 33, "set_cursor_rectangle"), ("zwp_text_input_v3", 33, "commit"),
        ("wl_surface", 31, "commit"), ("wl_keyboard", 9, "key")]


def test_a_caret_reported_and_committed_is_no_evidence_of_anything():
    log = AppLog(OLD)
    assert log.speaks_wayland and log.uses_text_input
    assert log.cursor_rectangles() == [(100, 20, 1, 17)] and log.text_input_surface() == 20
    assert log.no_caret_reported() is None
    assert log.no_caret_after_last_key() is None
    assert log.rectangle_never_committed() is None


def test_evidence_from_the_applications_own_messages():
    new = AppLog(NEW)
    # the surface the text input is on (20) is never committed after the rectangle; a subsurface (31) is
    assert "wl_surface@20" in new.rectangle_never_committed()
    # a key press after the last rectangle, and no rectangle after it
    assert "no set_cursor_rectangle after its last key press" in new.no_caret_after_last_key()
    empty = AppLog(OLD.replace("set_cursor_rectangle(100, 20, 1, 17)", "set_cursor_rectangle(0, 0, 0, 0)"))
    assert "no zwp_text_input_v3.set_cursor_rectangle" in empty.no_caret_reported()


def test_no_log_or_a_log_without_wayland_is_no_evidence():
    for text in ("", "Gtk-Message: 12:00:01.000: Failed to load module\n"):
        log = AppLog(text)
        assert not log.speaks_wayland
        assert log.no_caret_reported() is None and log.no_caret_after_last_key() is None
        assert log.rectangle_never_committed() is None


def test_the_log_is_cut_at_tab():
    # cut before the key press at 06:00:09.178: the rectangle is the last thing, nothing to xfail on
    assert AppLog(NEW, until=BEFORE_THE_KEY).no_caret_after_last_key() is None
    assert AppLog(NEW, until=BEFORE_THE_KEY + 1000).no_caret_after_last_key() is not None
    assert AppLog(OLD, until=1000149).no_caret_after_last_key() is None  # 32-bit milliseconds
    assert before(4294967290, 5) and not before(5, 4294967290)  # across the 32-bit wrap
    assert before(DAY - 10, 5, DAY) and not before(5, DAY - 10, DAY)  # across midnight
