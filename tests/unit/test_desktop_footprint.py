"""The desktop tier's install footprint (tests/desktop/sid/footprint.py): what an install added, changed or
removed outside home, and whether uninstall put each back, against hand-made listings."""

import importlib.util
import pathlib

spec = importlib.util.spec_from_file_location(
    "footprint", pathlib.Path(__file__).parents[1] / "desktop" / "sid" / "footprint.py")
footprint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(footprint)

D = ["d", 0, 1, 10, ""]
COMP = ["f", 120, 5, 11, ""]
CACHE = ["f", 900, 7, 12, "aa"]
CACHE2 = ["f", 950, 8, 13, "bb"]


def test_an_install_adds_a_file_and_a_directory_and_rewrites_a_hashed_one():
    before = {"/usr/share/ibus/component": D, "/etc/x.conf": CACHE}
    after = {"/usr/share/ibus/component": ["d", 0, 9, 10, ""], "/usr/share/ibus/component/ghosttype.xml": COMP,
             "/usr/share/gnome-shell/extensions/g": D, "/etc/x.conf": CACHE2}
    assert footprint.changed(before, after) == {
        "/usr/share/ibus/component/ghosttype.xml": "added", "/usr/share/gnome-shell/extensions/g": "added",
        "/etc/x.conf": "changed"}


def test_restored_only_when_each_path_is_as_before():
    assert footprint.restored("/a", None, None) == ""
    assert footprint.restored("/a", None, COMP) == "left behind"
    assert footprint.restored("/a", D, None) == "removed, was there before"
    assert footprint.restored("/etc/x.conf", CACHE, ["f", 900, 99, 77, "aa"]) == ""  # same content, new inode
    assert footprint.restored("/etc/x.conf", CACHE, CACHE2) == "content differs"
    assert footprint.restored("/usr/lib/libx.so", COMP, ["f", 120, 6, 11, ""]).startswith("changed")
    assert footprint.restored("/usr/lib/libx.so", COMP, COMP) == ""
    assert footprint.restored("/usr/lib/l", ["l", 0, 1, 2, "a"], ["l", 0, 3, 4, "b"]) == "content differs"
    assert footprint.restored("/x", D, COMP) == "was d, now f"


def test_compare_reports_what_uninstall_left(tmp_path, monkeypatch):
    import json
    monkeypatch.setattr(footprint, "HERE", str(tmp_path))
    monkeypatch.setattr(footprint, "registry_components", lambda: ["ghosttype-free"])
    snaps = {"b": {"/etc/x.conf": CACHE}, "a": {"/etc/x.conf": CACHE2, "/usr/share/x.xml": COMP},
             "end": {"/etc/x.conf": CACHE, "/usr/share/x.xml": COMP}}
    for name, listing in snaps.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(listing))
        (tmp_path / f"{name}.registry.json").write_text(json.dumps(["ghosttype-free"]))
    report = footprint.compare(str(tmp_path / "out.json"), ["b", "a", "end"])
    assert report["not_restored"] == {"/usr/share/x.xml": "left behind"} and not report["ok"]
    snaps["end"] = {"/etc/x.conf": CACHE}
    (tmp_path / "end.json").write_text(json.dumps(snaps["end"]))
    assert footprint.compare(str(tmp_path / "out.json"), ["b", "a", "end"])["ok"]


def test_a_snapshot_of_this_machine_lists_files_with_their_kind():
    listing = footprint.snapshot()
    assert listing["/usr/bin"][0] in ("d", "l") and any(v[0] == "f" for v in listing.values())
    assert not any(p.startswith(("/proc/", "/tmp/", "/home/")) for p in listing)
