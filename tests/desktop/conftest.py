"""The desktop test tier: ghosttype's IBus engine on current desktops (GNOME Shell and KWin from Debian
sid), with real applications and real keys. Selected only with ``-m desktop`` (see
``pytest_collection_modifyitems``); ``.ci/run`` runs it as a step of its own.

The session fixture ``sid`` prepares everything once per pytest run:

1. ``sid/build.sh``: the sid chroot, built once per machine and cached (rebuilt when
   ``sid/packages.txt`` changes). When the Debian registry cannot be reached the build fails
   and so does every test of the tier, with the builder's reason.
2. A fresh overlay of that chroot (``sid/enter.sh``) with a copy of this checkout's files at
   ``/opt/ghosttype``, in which ``sid/readme_check.sh`` runs the README's first command (install-deps,
   venv, ``pip install .``) with sid's system Python and asks ``ghosttype complete``. pip's and apt's
   downloads are cached between runs; the chroot itself is never written.

3. ``sid/build_packages.sh`` in that overlay (the ``packages`` fixture, at first use): ghosttype's
   Debian packages built from the checkout, listed, and checked by lintian.

Each desktop module then runs one session (``sid/desktop.sh`` -> ``inside/session.py``) with all its
scenarios, and its tests judge the recorded results. Screenshots and logs land in
``tests/desktop/artifacts/<desktop>/`` (``GHOSTTYPE_DESKTOP_ARTIFACTS`` overrides).
"""

from __future__ import annotations

import fcntl
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
SID_ROOT = pathlib.Path(os.environ.get("GHOSTTYPE_SID", "/srv/ghosttype-sid"))
#: The llama-cpp-python wheel .ci/run built on the host (sid/share_wheel.sh), and where sid sees it.
WHEELS = SID_ROOT / "cache" / "wheels"
WHEELS_INSIDE = "/var/cache/ghosttype-wheels"
ARTIFACTS = pathlib.Path(os.environ.get("GHOSTTYPE_DESKTOP_ARTIFACTS", HERE / "artifacts"))
BUILD_TIMEOUT = 3600
README_TIMEOUT = 2400
#: How long a run waits for another run of the tier on this machine to finish (they share the sid
#: chroot, its cache and the test user's uid, so two at once would break each other).
LOCK_WAIT = 3600
#: What a session name's suffix sets ("gnome-preedit", "gnome-de", "gnome-popup").
#: "gnome-de" also starts with two processes keeping both CPUs busy, as at a login; "gnome-popup" is
#: GNOME with ghosttype's Shell extension switched off by the user (IBus's popup then shows the suggestion);
#: "gnome-dark" GNOME's dark style; "gnome-hidpi" a monitor at scale 2, "gnome-frac" at 1.5 (fractional),
#: "kde-hidpi" KWin's output at scale 2,
#: "gnome-windows" GNOME as it is (its scenarios size the window: "qt-max", "qt-small", "qt-shrink");
#: "gnome-user"/"kde-user" ghosttype's default config, installed from its packages in a fresh overlay (GT_PKG),
#: "gnome-lock" GNOME Shell with a lock screen (GDM's stand-in on the session's system bus: inside/fake_gdm.py),
#: "kde-lock" KWin with its screen locker (logind's stand-in there: inside/fake_logind.py).
SESSION_MODES = {"preedit": {"GT_DISPLAY": "preedit"}, "de": {"GT_LAYOUT": "de", "GT_BUSY": "2"},
                 "popup": {"GT_EXT": "off"}, "dark": {"GT_SCHEME": "prefer-dark"}, "user": {"GT_USER": "1", "GT_PKG": "1"},
                 "hidpi": {"GT_SCALE": "2"}, "frac": {"GT_SCALE": "1.5"},
                 "windows": {}, "lock": {"GT_LOCK": "1"}}


def pytest_collection_modifyitems(config, items):
    """Desktop tests run only when the marker expression names them (``-m desktop``)."""
    if "desktop" in (config.option.markexpr or ""):
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("desktop") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A desktop test xfails on an upstream cause its checks found only when it fails (checks.upstream_causes)."""
    if item.get_closest_marker("desktop") is None:
        return (yield)
    from tests.desktop import checks
    with checks.upstream_causes() as causes:
        try:
            return (yield)
        except (Exception, pytest.fail.Exception):  # an assertion, or a check's pytest.fail
            if causes:
                pytest.xfail(causes[0])
            raise


#: Each desktop test's outcome, for the session x check table at the end of the run (summary_table.py).
_OUTCOMES: list = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    rep = (yield).get_result()
    if item.get_closest_marker("desktop") is None or not (rep.when == "call" or rep.failed or rep.skipped):
        return
    if rep.when == "teardown" and not rep.failed:
        return
    from tests.desktop import summary_table
    params = getattr(getattr(item, "callspec", None), "params", {})
    _OUTCOMES.append(summary_table.outcome(item.originalname, params, rep.passed, rep.failed,
                                           getattr(rep, "wasxfail", None), str(rep.longrepr or "")))


def pytest_terminal_summary(terminalreporter):
    if _OUTCOMES:
        from tests.desktop import summary_table
        terminalreporter.write_line("")
        for line in summary_table.render(_OUTCOMES).splitlines():
            terminalreporter.write_line(line)


def _tail(text: str, n: int = 5) -> str:
    return "\n".join([line for line in text.splitlines() if line.strip()][-n:])


class Sid:
    """The prepared sid environment of this pytest run."""

    def __init__(self, name: str = "") -> None:
        self.run = SID_ROOT / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}{name}"
        self.times: dict[str, float] = {}
        self.readme: dict = {}
        self.complete: list[dict] = []
        self.build_log = ""

    def enter(self, out: pathlib.Path, *cmd: str, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
        """Run CMD as root in the chroot overlay of this run (see sid/enter.sh)."""
        full = ["bash", str(HERE / "sid" / "enter.sh"), str(self.run), str(out), *cmd]
        e = dict(os.environ, GHOSTTYPE_SID=str(SID_ROOT))
        if env:
            full = ["bash", str(HERE / "sid" / "enter.sh"), str(self.run), str(out), "env",
                    *[f"{k}={v}" for k, v in env.items()], *cmd]
        return subprocess.run(full, capture_output=True, text=True, timeout=timeout, env=e)

    def copy_checkout(self) -> None:
        """The checkout's files (tracked and new, not ignored) into the overlay at /opt/ghosttype."""
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                               capture_output=True, check=True).stdout.split(b"\0")
        dest = self.run / "upper" / "opt" / "ghosttype"
        dest.mkdir(parents=True)
        for f in files:
            if not f:
                continue
            src = REPO / os.fsdecode(f)
            if src.is_file():
                (dest / os.fsdecode(f)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / os.fsdecode(f))

    def cleanup(self) -> None:
        # the mounts lived in enter.sh's private namespaces and are gone; refuse if one is visible here
        if any(str(self.run) in line for line in open("/proc/self/mounts")):
            raise RuntimeError(f"something is still mounted under {self.run}")
        shutil.rmtree(self.run, ignore_errors=True)


def wheel_env() -> dict[str, str]:
    """pip in sid takes llama-cpp-python's wheel from the host's build when .ci/run shared one (no second
    compile of the same llama.cpp); without one, pip builds it there as the README says."""
    return {"PIP_FIND_LINKS": WHEELS_INSIDE} if any(WHEELS.glob("llama_cpp_python-*.whl")) else {}


def _machine_lock():
    """Hold the machine's tier lock (flock on a file beside the chroot) until the process ends;
    waits up to LOCK_WAIT s for another run to finish."""
    SID_ROOT.mkdir(parents=True, exist_ok=True)
    f = open(SID_ROOT / ".tier.lock", "a+")
    end = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.monotonic() > end:
                pytest.fail(f"another run of the desktop tier held {SID_ROOT / '.tier.lock'} for more than "
                            f"{LOCK_WAIT} s")
            time.sleep(5)


@pytest.fixture(scope="session")
def sid():
    if os.geteuid() != 0:
        pytest.fail("the desktop tier needs root (mmdebstrap, chroot, mount namespaces)")
    lock = _machine_lock()
    t = time.monotonic()
    try:
        r = subprocess.run(["bash", str(HERE / "sid" / "build.sh"), str(SID_ROOT)], capture_output=True, text=True,
                           timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"building the sid chroot took more than {BUILD_TIMEOUT} s")
    env = Sid()
    env.times["chroot"] = round(time.monotonic() - t, 1)
    env.build_log = r.stdout + r.stderr
    (ARTIFACTS).mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "sid-build.log").write_text(env.build_log)
    if r.returncode != 0:
        pytest.fail(f"the sid chroot could not be prepared (exit {r.returncode}):\n{_tail(env.build_log)}")
    # runs of earlier, interrupted pytest sessions
    for old in (SID_ROOT / "runs").glob("*") if (SID_ROOT / "runs").exists() else []:
        if not any(str(old) in line for line in open("/proc/self/mounts")):
            shutil.rmtree(old, ignore_errors=True)
    env.copy_checkout()
    out = ARTIFACTS / "readme"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t = time.monotonic()
    try:
        r = env.enter(out, "bash", "/opt/ghosttype/tests/desktop/sid/readme_check.sh", timeout=README_TIMEOUT,
                      env=wheel_env() or None)
        env.readme = json.loads((out / "readme.json").read_text()) if (out / "readme.json").exists() else \
            {"ok": "false", "reason": _tail(r.stdout + r.stderr)}
    except subprocess.TimeoutExpired:
        env.readme = {"ok": "false", "reason": f"the README's command took more than {README_TIMEOUT} s"}
    env.times["readme"] = round(time.monotonic() - t, 1)
    if (out / "complete.jsonl").exists():
        env.complete = [json.loads(line) for line in (out / "complete.jsonl").read_text().splitlines() if line.strip()]
    yield env
    # each step's and session's seconds, for .ci/run's time table
    (ARTIFACTS / "times.json").write_text(json.dumps(env.times, indent=1))
    env.cleanup()
    lock.close()


@pytest.fixture(scope="session")
def packages(sid) -> dict:
    """ghosttype's Debian packages, built from the checkout in the README's overlay (sid/build_packages.sh:
    packaging/linux/deb/build.sh --kwin, then dpkg-deb's listings and lintian); packages.json plus "dir"."""
    out = ARTIFACTS / "packages"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if sid.readme.get("ok") != "true":
        return {"ok": False, "reason": "the README's install did not work in sid", "dir": str(out)}
    t = time.monotonic()
    try:
        r = sid.enter(out, "bash", "/opt/ghosttype/tests/desktop/sid/build_packages.sh", timeout=BUILD_TIMEOUT,
                      env=wheel_env() or None)
        log = r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        log = f"building the packages took more than {BUILD_TIMEOUT} s"
    sid.times["packages"] = round(time.monotonic() - t, 1)
    result = json.loads((out / "packages.json").read_text()) if (out / "packages.json").exists() else \
        {"ok": False, "reason": _tail(log)}
    result["dir"] = str(out)
    return result


@pytest.fixture(scope="session")
def desktops(sid, request):
    """``desktops(name, scenarios)``: the results of that desktop's one session (run at first use). The user
    sessions ("gnome-user", "kde-user") install ghosttype from its packages, in a fresh overlay of the
    chroot of their own (no compiler, no pip: `apt install ./ghosttype_*.deb`, then `ghosttype setup`)."""
    done: dict[str, dict] = {}

    def get(name: str, scenarios: list[str]) -> dict:
        if name not in done:
            if name.endswith("-user"):
                done[name] = run_packaged_desktop(sid, request.getfixturevalue("packages"), name, scenarios)
            else:
                done[name] = run_desktop(sid, name, scenarios)
        if "failed" in done[name]:
            pytest.fail(done[name]["failed"])
        return done[name]
    return get


def run_packaged_desktop(sid: Sid, packages: dict, desktop: str, scenarios: list[str]) -> dict:
    """A session in a fresh overlay of the chroot (never the README's, where a compiler and pip are) with
    the packages it needs at /root/debs: desktop.sh installs them with apt (GT_PKG)."""
    if not packages.get("ok"):
        return {"failed": f"no packages to install: {packages.get('reason')}"}
    own = Sid(f"-{desktop}")
    own.copy_checkout()  # the tier's own scripts (tests/desktop), not an installation
    debs = own.run / "upper" / "root" / "debs"
    debs.mkdir(parents=True)
    wanted = ["ghosttype_"] + (["ghosttype-kwin_"] if desktop.startswith("kde") else [])
    for name in packages["debs"]:
        if any(name.startswith(w) for w in wanted):
            shutil.copy2(pathlib.Path(packages["dir"]) / name, debs / name)
    own.readme = {"ok": "true"}
    try:
        results = run_desktop(own, desktop, scenarios)
    finally:
        sid.times[desktop] = own.times.get(desktop, 0.0)
        own.cleanup()
    return results


def run_desktop(sid: Sid, desktop: str, scenarios: list[str], budget: int = 900) -> dict:
    """One desktop session with the given scenarios; returns its results.json (plus times)."""
    if sid.readme.get("ok") != "true":
        return {"failed": f"the README's install did not work in sid, so there is no engine to test: {sid.readme.get('reason')}"}
    out = ARTIFACTS / desktop
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t = time.monotonic()
    # "gnome-preedit": GNOME with ibus_display = "preedit" (GT_DISPLAY sets it for every session);
    # "gnome-de": a machine whose keyboard layout is German
    base, _, mode = desktop.partition("-")
    env = {"SESSION_BUDGET": str(budget)}
    if os.environ.get("GT_DISPLAY"):
        env["GT_DISPLAY"] = os.environ["GT_DISPLAY"]
    env.update(SESSION_MODES[mode] if mode else {})
    try:
        r = sid.enter(out, "bash", "/opt/ghosttype/tests/desktop/sid/desktop.sh", base, *scenarios,
                      timeout=budget + 120, env=env)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = -1, "timed out"
    seconds = round(time.monotonic() - t, 1)
    res_file = out / "results.json"
    results = json.loads(res_file.read_text()) if res_file.exists() else {}
    results["exit"] = rc
    results["seconds"] = seconds
    results["dir"] = str(out)  # the screenshots' /out/ on this side
    results["log"] = log[-3000:]
    sid.times[desktop] = seconds
    if not results.get("setup", {}) or not results["setup"].get("ok"):
        session_log = (out / "session.log").read_text(errors="replace") if (out / "session.log").exists() else ""
        results["failed"] = (f"the {desktop} session did not start: {(results.get('setup') or {}).get('error')}\n"
                             f"{_tail(log)}\n{_tail(session_log)}")
    return results
