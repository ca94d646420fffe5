"""The IBus input-source menu's "Off in <application>" and "Settings...",
on the engine's state machine (no IBus): the entry names the engine's
application, toggling it writes the denylist into the config file and
applies it at once; an engine whose client names no application gets no
such entry."""

from __future__ import annotations

import pathlib

from daemon.config import Config, default_template, load_config
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.menu import PROP_OFF_IN_APP, PROP_SETTINGS
from daemon.user_actions import UserActions
from tests.daemon.test_ibus_engine import Rig, type_text


def rig_with_menu(tmp_path: pathlib.Path) -> tuple[Rig, pathlib.Path]:
    path = tmp_path / "config.toml"
    path.write_text(default_template())
    rig = Rig(Config(debounce_ms=0))
    rig.frontend.actions = UserActions(path, lambda: rig.controller.config, rig.controller.apply_config)
    return rig, path


def test_off_in_the_application_denies_it_at_once_and_on_again(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    engine, out = rig.engine("gtk3-im:mousepad")
    assert out.props[PROP_OFF_IN_APP].label == "Off in mousepad"
    assert out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_UNCHECKED
    assert out.props[PROP_SETTINGS].label == "Settings…"
    engine.property_activate(PROP_OFF_IN_APP, wire.PROP_STATE_CHECKED)
    assert out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_CHECKED
    assert load_config(path).is_denied("mousepad") and rig.controller.config.is_denied("mousepad")
    assert rig.controller.state().blocked == "denylisted application"
    type_text(engine, "Hello wor")
    assert rig.worker.requests == []  # nothing captured, nothing asked
    other, other_out = rig.engine("gtk3-im:gedit")  # another application still gets suggestions
    assert other_out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_UNCHECKED
    type_text(other, "Hi")
    assert rig.worker.last[1] == "Hi"
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gtk3-im:mousepad")
    engine.property_activate(PROP_OFF_IN_APP, wire.PROP_STATE_UNCHECKED)
    assert not load_config(path).is_denied("mousepad") and out.props[PROP_OFF_IN_APP].state == wire.PROP_STATE_UNCHECKED
    type_text(engine, "Hey")
    assert rig.worker.last[1].endswith("Hey")


def test_a_client_that_names_no_application_gets_no_off_in_entry(tmp_path: pathlib.Path) -> None:
    rig, path = rig_with_menu(tmp_path)
    engine, out = rig.engine("gnome-shell")  # every client on GNOME Wayland
    assert PROP_OFF_IN_APP not in out.props and PROP_SETTINGS in out.props
    before = path.read_bytes()
    engine.property_activate(PROP_OFF_IN_APP, wire.PROP_STATE_CHECKED)
    assert path.read_bytes() == before
