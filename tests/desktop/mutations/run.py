"""Plants each mutation of this folder in a copy of the checkout, runs the desktop tier's sessions it
concerns, and prints whether the tier caught it: a check failed (an xfail or a pass is "not caught").

    python -m tests.desktop.mutations.run [NAME ...] [--baseline] [--list]      (root, like the tier)

NAME: mutations to run (default: all of mutations.toml). --baseline also runs each selection unmutated
first, so a catch cannot be a check that fails anyway. The copy is a detached git worktree of HEAD (commit
what you want tested) with the mutation's patch applied by `git apply`; its tier run writes its artifacts to
tests/desktop/artifacts/mutations/<name>/ and is judged from pytest's JUnit report. Exits 1 when a
mutation was not caught or a baseline failed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
ART = pathlib.Path(os.environ.get("GHOSTTYPE_DESKTOP_ARTIFACTS", REPO / "tests" / "desktop" / "artifacts")) / "mutations"


def load() -> dict[str, dict]:
    with open(HERE / "mutations.toml", "rb") as f:
        return tomllib.load(f)


def judge(junit: pathlib.Path) -> tuple[list[str], list[str], int]:
    """(failed tests, xfailed tests, passed count) from a JUnit report."""
    if not junit.exists():
        return ["(no report: the run broke)"], [], 0
    failed, xfailed, passed = [], [], 0
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif (s := case.find("skipped")) is not None:
            if "xfail" in (s.get("type", "") + s.get("message", "")):
                xfailed.append(name)
        else:
            passed += 1
    return failed, xfailed, passed


def run_one(name: str, spec: dict, patch: bool) -> tuple[list[str], list[str], int, float]:
    """The selection of ``spec`` in a fresh worktree of HEAD, with its patch applied when ``patch``."""
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"mutation-{name}-"))
    tree = work / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), "HEAD"], cwd=REPO, check=True)
    label = name if patch else f"{name}-baseline"
    out = ART / label
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t0 = time.monotonic()
    try:
        if patch:
            subprocess.run(["git", "apply", str(HERE / spec["patch"])], cwd=tree, check=True)
        env = dict(os.environ, GHOSTTYPE_DESKTOP_ARTIFACTS=str(out))
        cmd = [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", "-m", "desktop",
               "tests/desktop/test_sessions.py", "-k", spec["sessions"], f"--junitxml={out / 'junit.xml'}"]
        with open(out / "pytest.log", "w") as log:
            subprocess.run(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
        return (*judge(out / "junit.xml"), time.monotonic() - t0)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO)
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--baseline", action="store_true", help="run each selection unmutated first")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = ap.parse_args(argv)
    mutations = load()
    unknown = [n for n in args.names if n not in mutations]
    if unknown:
        ap.error(f"no such mutation: {', '.join(unknown)} (have: {', '.join(mutations)})")
    if args.list:
        for n, spec in mutations.items():
            print(f"{n}: {spec['what']}  [-k {spec['sessions']}]")
        return 0
    rows, bad = [], False
    for name in args.names or list(mutations):
        spec = mutations[name]
        if args.baseline:
            failed, _, passed, secs = run_one(name, spec, patch=False)
            rows.append((f"{name} (unmutated)", "passes" if not failed else "FAILS", f"{passed} passed",
                         ", ".join(failed[:3]), secs))
            bad |= bool(failed)
        failed, xfailed, passed, secs = run_one(name, spec, patch=True)
        caught = bool(failed)
        bad |= not caught
        rows.append((name, "caught" if caught else "NOT caught", f"{len(failed)} failed, {len(xfailed)} xfailed, "
                     f"{passed} passed", ", ".join(failed[:3]) + (" ..." if len(failed) > 3 else ""), secs))
        print(f"{rows[-1][0]}: {rows[-1][1]} ({rows[-1][2]}) in {secs:.0f} s", flush=True)
    print("\n| mutation | verdict | tests | failed checks | s |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.0f} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
