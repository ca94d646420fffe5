"""What ``ghosttype doctor`` learns from the desktop's plug-in (:mod:`daemon.frontends.ibus.inline.plugin_probe`),
over a private ``dbus-daemon`` with a stand-in compositor (the Peer of test_shell_ghost, which answers
``Version`` as extension.js and ghosteffect.cpp do): an extension or effect older than this engine's
protocol gets a failing line that says so and how to fix it, as the engine itself refuses it."""

from __future__ import annotations

import pytest

from daemon.frontends.ibus.inline import kwin_effect, plugin_probe, shell_extension
from daemon.frontends.ibus.inline.plugin_probe import Probe, probe
from daemon.frontends.ibus.inline.shell_ghost import BUS_NAME, KWIN_NAME, PROTOCOL, SHELL_NAME
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)
from tests.daemon.test_shell_ghost import Peer


@pytest.mark.parametrize("version", [PROTOCOL, PROTOCOL - 1])
def test_the_plugins_protocol_is_read_from_inside_the_compositor(bus_address, version):
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    shell.version = version
    try:
        found = probe(SHELL_NAME, bus_address)
        assert found == Probe(compositor=True, answering=True, version=version)
        assert found.older is (version < PROTOCOL)
        assert probe(KWIN_NAME, bus_address) == Probe(compositor=False, answering=False)
    finally:
        shell.close()


def test_a_name_held_outside_the_compositor_is_not_the_plugin_and_is_not_asked(bus_address):
    shell = Peer(bus_address, (SHELL_NAME,))
    squatter = Peer(bus_address, (BUS_NAME,))
    try:
        assert probe(SHELL_NAME, bus_address) == Probe(compositor=True, answering=False)
        assert squatter.handshake == []  # its Version was never asked
    finally:
        shell.close()
        squatter.close()


@pytest.fixture
def installed_and_enabled(monkeypatch, tmp_path):
    monkeypatch.setattr(shell_extension, "installed", lambda env=None: [tmp_path / "ext"])
    monkeypatch.setattr(shell_extension, "user_state", lambda env=None: "enabled")


@pytest.mark.parametrize("version, ok", [(PROTOCOL, True), (PROTOCOL - 1, False)])
def test_doctor_says_when_gnome_shell_runs_an_older_extension(bus_address, monkeypatch, installed_and_enabled,
                                                             version, ok):
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus_address)
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    shell.version = version
    try:
        (result,) = shell_extension.checks({})
    finally:
        shell.close()
    assert result.ok is ok, result
    if ok:
        assert "drawn at the caret" in result.detail
    else:
        assert f"protocol {version}" in result.detail and f"needs {PROTOCOL}" in result.detail
        assert "popup" in result.detail and result.hint == "log out and in"


def test_doctor_says_when_kwin_runs_an_older_effect(bus_address, monkeypatch, tmp_path):
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus_address)
    monkeypatch.setattr(kwin_effect, "installed", lambda env=None: [tmp_path / "ghosttype.so"])
    monkeypatch.setattr(kwin_effect, "kwin_version", lambda: None)
    monkeypatch.setattr(kwin_effect, "loaded", lambda: True)
    kwin = Peer(bus_address, (KWIN_NAME, BUS_NAME))
    kwin.version = PROTOCOL - 1
    try:
        (result,) = kwin_effect.checks({})
    finally:
        kwin.close()
    assert result.ok is False and f"protocol {PROTOCOL - 1}" in result.detail
    assert "ghosttype kde install" in result.hint
    assert plugin_probe.older_line("x", Probe(True, True, 0)).startswith("x speaks protocol unknown")
