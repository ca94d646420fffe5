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
