"""The IBus input-source menu on the engine's state machine (no IBus).

ibus-daemon hands the engine a panel's menu activation and an input
context's own ``PropertyActivate`` (any IBus client, under a client name it
chose) as the same call, so the engine treats every activation as possibly
foreign: "Off in <application>" shows the denylist but never writes it (the
settings window does), and the menu cannot switch on what the config file
switches off.  An engine whose client names no application gets no "Off in"
entry."""

from __future__ import annotations

import pathlib

from daemon.config import Config, default_template, load_config
from daemon.config_edit import edit_config
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.menu import PROP_ENABLED, PROP_OFF_IN_APP, PROP_PAUSED, PROP_SETTINGS
from daemon.user_actions import UserActions
from tests.daemon.test_ibus_engine import Rig, type_text


def rig_with_menu(tmp_path: pathlib.Path, config: Config = Config(debounce_ms=0)) -> tuple[Rig, pathlib.Path]:
    path = tmp_path / "config.toml"
    path.write_text(default_template())
    rig = Rig(config)
    rig.frontend.actions = UserActions(path, lambda: rig.controller.config, rig.controller.apply_config)
    return rig, path


def test_an_input_contexts_property_activate_cannot_change_the_denylist(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    before = path.read_bytes()
    # A client that named itself after a password manager, and one that is what it says.
    for client, denied in (("gtk3-im:keepassxc", True), ("gtk3-im:mousepad", False)):
        engine, out = rig.engine(client)
        app = client.split(":")[1]
        for state in (wire.PROP_STATE_UNCHECKED, wire.PROP_STATE_CHECKED, wire.PROP_STATE_UNCHECKED):
            engine.property_activate(PROP_OFF_IN_APP, state)
            assert path.read_bytes() == before, f"{client}: the config file changed"
            assert rig.controller.config.is_denied(app) is denied
            entry = out.props[PROP_OFF_IN_APP]
            assert entry.state == (wire.PROP_STATE_CHECKED if denied else wire.PROP_STATE_UNCHECKED)
            assert entry.label == f"Off in {app}" and not entry.sensitive  # shown, not a switch
    keepassxc, _ = rig.engine("gtk3-im:keepassxc")
    requests = len(rig.worker.requests)
    type_text(keepassxc, "hunter2 secret")
    assert rig.controller.state().blocked == "denylisted application"
    assert len(rig.worker.requests) == requests  # still nothing captured, nothing asked


def test_the_settings_window_changes_the_denylist_and_the_menu_shows_it(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    engine, out = rig.engine("gtk3-im:mousepad")
    assert out.props[PROP_SETTINGS].label == "Settings…"
    assert out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_UNCHECKED
    # What the window's Save writes, applied as the config watcher applies it.
    rig.controller.apply_config(edit_config({"denylist": [*load_config(path).denylist, "mousepad"]}, path))
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gtk3-im:mousepad")  # back from the window
    assert out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_CHECKED
    assert rig.controller.state().blocked == "denylisted application"
    type_text(engine, "Hello wor")
    assert rig.worker.requests == []
    other, other_out = rig.engine("gtk3-im:gedit")  # another application still gets suggestions
    assert other_out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_UNCHECKED
    type_text(other, "Hi")
    assert rig.worker.last[1] == "Hi"


def test_the_menu_cannot_switch_on_what_the_config_file_switches_off(tmp_path: pathlib.Path) -> None:
    rig, _ = rig_with_menu(tmp_path, Config(debounce_ms=0, enabled=False))
    engine, out = rig.engine()
    engine.property_activate(PROP_ENABLED, wire.PROP_STATE_CHECKED)
    assert not rig.controller.state().enabled
    assert out.props[PROP_ENABLED].state == wire.PROP_STATE_UNCHECKED  # the panel is told again
    type_text(engine, "Hello")
    assert rig.worker.requests == []


def test_the_menu_switches_off_and_pauses_for_the_session(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    before = path.read_bytes()
    engine, out = rig.engine()
    engine.property_activate(PROP_ENABLED, wire.PROP_STATE_UNCHECKED)
    assert not rig.controller.state().enabled
    engine.property_activate(PROP_ENABLED, wire.PROP_STATE_CHECKED)  # the config says enabled: back on
    engine.property_activate(PROP_PAUSED, wire.PROP_STATE_CHECKED)
    assert rig.controller.state().paused
    type_text(engine, "Hello")
    assert rig.worker.requests == []
    engine.property_activate(PROP_PAUSED, wire.PROP_STATE_UNCHECKED)
    type_text(engine, " you")
    assert rig.worker.last[1].endswith(" you")
    assert path.read_bytes() == before  # nothing of this is written


def test_a_client_that_names_no_application_gets_no_off_in_entry(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    engine, out = rig.engine("gnome-shell")  # every client on GNOME Wayland
    assert PROP_OFF_IN_APP not in out.props and PROP_SETTINGS in out.props
    before = path.read_bytes()
    engine.property_activate(PROP_OFF_IN_APP, wire.PROP_STATE_CHECKED)
    assert path.read_bytes() == before
