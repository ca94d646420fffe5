"""Uninstall leaves the system as install found it: what each session's installs wrote outside home
(sid/footprint.py's snapshots around each install, taken by sid/desktop.sh) is gone or back after
`ghosttype ibus uninstall --system` (and `ghosttype kde uninstall --system` where the KWin effect was
installed), both exit 0, and IBus's registry cache lists the components it listed before."""

from __future__ import annotations

import json
import pathlib

#: What each install must be seen writing (so a snapshot that sees nothing cannot pass).
COMPONENT = "/usr/share/ibus/component/ghosttype.xml"
KWIN_PLUGINS = "/qt6/plugins/"


def check_uninstall(results: dict, desktop: str, kwin_effect: bool) -> dict:
    out = pathlib.Path(results["dir"])
    for what, expected in (("ibus", True), ("kde", kwin_effect)):
        rc_file = out / f"{what}-uninstall.rc"
        assert rc_file.exists() == expected, \
            f"{desktop}: `ghosttype {what} uninstall --system` {'did not run' if expected else 'ran'}"
        if expected:
            rc = rc_file.read_text().strip()
            log = (out / f"{what}-uninstall.log").read_text(errors="replace")
            assert rc == "0", f"{desktop}: `ghosttype {what} uninstall --system` exited {rc}: {log[-800:]}"
    report_file = out / "uninstall.json"
    assert report_file.exists(), \
        f"{desktop}: no footprint report: {(out / 'uninstall.log').read_text(errors='replace')[-800:] if (out / 'uninstall.log').exists() else 'no log'}"
    report = json.loads(report_file.read_text())
    installs = report["installs"]
    assert installs and installs[0]["touched"].get(COMPONENT) == "added", \
        f"{desktop}: `ghosttype ibus install --system` was not seen adding {COMPONENT}: {installs[:1]}"
    if kwin_effect:
        assert len(installs) == 2 and any(KWIN_PLUGINS in p and why == "added" for p, why in installs[1]["touched"].items()), \
            f"{desktop}: `ghosttype kde install --system` was not seen adding a Qt plugin: {installs[1:]}"
    assert not report["not_restored"], \
        f"{desktop}: after uninstall, not as install found it: {report['not_restored']}"
    assert report["registry_before"] == report["registry_after"], (
        f"{desktop}: IBus's registry cache listed {report['registry_before']} before install, "
        f"{report['registry_after']} after uninstall")
    return report


#: What the packages install (ghosttype-kwin's plugin is under the Qt plugin folder, KWIN_PLUGINS).
PACKAGED_ENV = "/usr/lib/ghosttype/bin/python"


def check_purge(results: dict, desktop: str, kwin_effect: bool) -> dict:
    """The packaged route (GT_PKG): `apt purge` of ghosttype's packages (and of what apt brought in for
    them) leaves the system as `apt install` found it; IBus lists no ghosttype engine any more."""
    out = pathlib.Path(results["dir"])
    rc = (out / "pkg-purge.rc").read_text().strip() if (out / "pkg-purge.rc").exists() else "not run"
    log = (out / "pkg-purge.log").read_text(errors="replace") if (out / "pkg-purge.log").exists() else ""
    assert rc == "0", f"{desktop}: apt purge exited {rc}: {log[-800:]}"
    report = json.loads((out / "uninstall.json").read_text())
    touched = report["installs"][0]["touched"]
    for path in (COMPONENT, PACKAGED_ENV):  # the component is postinst's, the environment the package's
        assert touched.get(path) == "added", f"{desktop}: apt install was not seen adding {path}"
    if kwin_effect:
        assert any(KWIN_PLUGINS in p and why == "added" for p, why in touched.items()), \
            f"{desktop}: apt install of ghosttype-kwin was not seen adding a Qt plugin"
    assert not report["not_restored"], f"{desktop}: after apt purge, not as apt install found it: {report['not_restored']}"
    assert report["registry_before"] == report["registry_after"], (
        f"{desktop}: IBus's registry cache listed {report['registry_before']} before install, "
        f"{report['registry_after']} after purge")
    ibus = (out / "pkg-purge-ibus.txt").read_text().split()
    assert "ghosttype.xml" not in ibus and ibus[-1:] == ["0"], f"{desktop}: IBus after purge: {ibus}"
    return report
