"""What an install writes outside home, and whether uninstall takes all of it back (inside the sid chroot, as
root, run by desktop.sh; sid's system Python, standard library and IBus's introspection only).

    footprint.py snapshot NAME                 a listing of the system's files now, kept in /tmp/footprint/
    footprint.py compare OUT BEFORE AFTER [BEFORE AFTER ...] FINAL
        each (BEFORE, AFTER) pair of snapshots brackets one install; FINAL is taken after the uninstalls.
        Writes OUT (JSON): every path an install added, removed or changed, and each one's state in FINAL
        against its state before its install; IBus's registry cache's components before and after.

A listing records each file, link and directory under / (this file system; the places no install may use and
the home directories left out) with its type, size, mtime and inode, and the content's SHA-256 for files in
the places where an install is expected to rewrite what was there (IBus's cache, /etc). A path an install
added must be gone at the end; a path it changed or removed must be back, with the same content where the
content was hashed (elsewhere a changed file that was there before is reported as such: an install has no
business rewriting it). IBus's registry cache is compared by what it lists (ibus write-cache records the
component directory's mtime, which a file added and removed changes).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys

HERE = "/tmp/footprint"
#: Not walked: kernel and run-time file systems, homes, scratch space, package manager state and logs, the
#: checkout with its venv, the tier's own mounts.
SKIP = ("/proc", "/sys", "/dev", "/run", "/tmp", "/var/tmp", "/home", "/root", "/out", "/opt/ghosttype",
        "/var/cache/apt", "/var/lib/apt", "/var/lib/dpkg", "/var/log", "/var/cache/ghosttype-wheels",
        "/var/cache/debconf", "/var/lib/systemd", "/var/cache/fontconfig",
        # ldconfig's own cache of library paths, first written when a package with a library is installed
        "/var/cache/ldconfig")
#: Where an install may rewrite a file that was there (content hashed, so its restoration can be checked):
#: IBus's cache, /etc, and the caches dpkg's triggers rebuild when a package adds or removes a GSettings
#: schema override or a desktop entry (glib-compile-schemas, update-desktop-database).
HASHED = ("/var/cache/ibus/", "/etc/", "/usr/share/glib-2.0/schemas/", "/usr/share/applications/")
REGISTRY = "/var/cache/ibus/bus/registry"


def _entry(path: str, st: os.stat_result) -> list:
    kind = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"
    digest = ""
    if kind == "f" and path.startswith(HASHED) and st.st_size < 16 << 20:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    elif kind == "l":
        digest = os.readlink(path)
    return [kind, st.st_size if kind == "f" else 0, st.st_mtime_ns, st.st_ino, digest]


def snapshot() -> dict[str, list]:
    listing: dict[str, list] = {}
    stack = ["/"]
    root_dev = os.lstat("/").st_dev
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for e in entries:
            if e.path in SKIP:
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_dev != root_dev:
                continue
            listing[e.path] = _entry(e.path, st)
            if stat.S_ISDIR(st.st_mode):
                stack.append(e.path)
    return listing


def registry_components() -> list[str]:
    """The components (and engines) IBus's system registry cache lists ([] when there is none)."""
    if not os.path.exists(REGISTRY):
        return []
    import gi
    gi.require_version("IBus", "1.0")
    from gi.repository import IBus
    reg = IBus.Registry()
    if not reg.load_cache_file(REGISTRY):
        return ["(unreadable)"]
    out = []
    for comp in reg.get_components():
        engines = ",".join(sorted(e.get_name() for e in comp.get_engines()))
        out.append(f"{comp.get_name()} {comp.get_exec()} [{engines}]")
    return sorted(out)


def changed(before: dict, after: dict) -> dict[str, str]:
    """Paths an install touched: "added", "removed" or "changed" (a directory only when added or removed)."""
    out = {}
    for p, e in after.items():
        if p not in before:
            out[p] = "added"
        elif e[0] != "d" and e != before[p]:
            out[p] = "changed"
    for p in before:
        if p not in after:
            out[p] = "removed"
    return out


def restored(path: str, was: list | None, now: list | None) -> str:
    """"" when ``path`` is as it was before the install, else what differs."""
    if was is None:
        return "" if now is None else "left behind"
    if now is None:
        return "removed, was there before"
    if was[0] != now[0]:
        return f"was {was[0]}, now {now[0]}"
    if was[0] == "d":
        return ""
    if was[4] or was[0] == "l":
        return "" if was[4] == now[4] else "content differs"
    return "" if was[:4] == now[:4] else "changed, was there before (not in a place an install may rewrite)"


def compare(out: str, names: list[str]) -> dict:
    snaps = {n: json.load(open(os.path.join(HERE, n + ".json"))) for n in names}
    final = snaps[names[-1]]
    pairs = list(zip(names[:-1:2], names[1:-1:2]))
    report: dict = {"installs": [], "not_restored": {}, "registry_before": None, "registry_after": registry_components()}
    for before_name, after_name in pairs:
        before = snaps[before_name]
        touched = changed(before, snaps[after_name])
        report["installs"].append({"bracket": [before_name, after_name], "touched": touched})
        for p in touched:
            if p == REGISTRY:
                continue  # compared by what it lists, below
            why = restored(p, before.get(p), final.get(p))
            if why:
                report["not_restored"][p] = why
    first = json.load(open(os.path.join(HERE, names[0] + ".registry.json")))
    report["registry_before"] = first
    report["ok"] = not report["not_restored"] and report["registry_before"] == report["registry_after"]
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    return report


def main(argv: list[str]) -> int:
    if argv[:1] == ["snapshot"] and len(argv) == 2:
        os.makedirs(HERE, exist_ok=True)
        with open(os.path.join(HERE, argv[1] + ".json"), "w") as f:
            json.dump(snapshot(), f)
        with open(os.path.join(HERE, argv[1] + ".registry.json"), "w") as f:
            json.dump(registry_components(), f)
        return 0
    if argv[:1] == ["compare"] and len(argv) >= 5 and len(argv) % 2 == 1:
        report = compare(argv[1], argv[2:])
        print("uninstall restored everything" if report["ok"] else f"not restored: {report['not_restored']}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
