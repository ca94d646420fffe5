"""The project's CI entry point, `.ci/run`, inside the tier's sid chroot (a fresh overlay of its own, so
nothing the desktop sessions left there, such as IBus's system registry cache, changes what the suite
sees): sid's packages and its system Python (3.14) install everything, and the whole
test suite passes there as on Debian 12, except the failures listed in SID_KNOWN, each deselected
with what was seen (they stay listed here and in the README until fixed), and the tests listed in
SID_ALIKE, which test the same files the same way on both systems (they run outside, in the main suite).
The desktop tier itself is not run inside (it builds and enters this very chroot)."""

import json
import re
import shutil

import pytest

from tests.desktop.conftest import ARTIFACTS, Sid, wheel_env

pytestmark = [pytest.mark.desktop, pytest.mark.timeout(7200)]
SUITE_TIMEOUT = 3600

#: Tests that fail on Debian sid only, with what was seen (both pass on Debian 12). None at present:
#: the GNOME Shell end-to-end tests' own window got no keys on GNOME Shell 51 until they waited out its
#: start-up overview and welcome tour (tests/e2e/gnome_session.py), and the X11 overlay's Tab after
#: Ctrl+Right in sid's Firefox ESR passes since a disarm stopped waiting for a running accept handler.
SID_KNOWN: dict[str, str] = {}

#: Tests left to the main suite outside: what they exercise is the same on Debian 12 and sid (the same
#: model files, the same llama.cpp wheel, share_wheel.sh, and the same pure-Python pipeline over them, with
#: no system library, desktop service or application in the path), and the run in sid goes on beside the
#: main suite on the same two cores, so each minute here is a minute of CI. Python 3.14 itself still
#: runs the model in sid: test_llama_backend.py, test_complete_cli.py (the README's command), test_served.py,
#: test_memory_real.py and the others stay.
SID_ALIKE: dict[str, str] = {
    "tests/llm/test_eval_cli.py": "the simulated user over the eval texts (about 60 s): the same decoder and model",
    "tests/llm/test_code_route_real.py": "the code model beside the main one (about 30 s): the same two model files",
    "tests/llm/test_models.py": "the model packages' digests and corrupted copies: file checks",
    "tests/packaging/test_dist.py": "the wheel and sdist built from the checkout and installed into a fresh venv "
                                    "(about 60 s): packaging metadata; the tier's README install in sid installs "
                                    "the checkout on sid's Python",
}


def failures(log: str, limit: int = 6000) -> str:
    """What pytest said about each failing test in a log of .ci/run: the test's heading, its E lines and the
    place it failed (the summary line alone names the test without why; CI keeps only this test's message)."""
    keep = [line for line in log.splitlines()
            if re.match(r"_{3,} .+ _{3,}$", line) or line.startswith("E  ") or re.match(r"\S+\.py:\d+: \w", line)]
    text = "\n".join(keep)
    return text if len(text) <= limit else text[:limit] + "\n..."


def test_ci_run_passes_inside_debian_sid(sid):
    if sid.readme.get("ok") != "true":
        pytest.fail(f"the README's install did not work in sid: {sid.readme.get('reason')}")
    out = ARTIFACTS / "suite"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    deselect = " ".join([f"--deselect {node}" for node in SID_KNOWN] + [f"--ignore {path}" for path in SID_ALIKE])
    own = Sid("-suite")
    own.copy_checkout()
    try:
        r = own.enter(out, "bash", "/opt/ghosttype/tests/desktop/sid/suite_check.sh", timeout=SUITE_TIMEOUT,
                      env={"GHOSTTYPE_PYTEST_ARGS": deselect, **wheel_env()})
    finally:
        own.cleanup()
    result = json.loads((out / "suite.json").read_text()) if (out / "suite.json").exists() else {}
    sid.times["suite"] = result.get("seconds", -1)
    log = (out / "ci-run.log").read_text(errors="replace") if (out / "ci-run.log").exists() else ""
    assert result.get("ok"), (f".ci/run failed inside sid ({result.get('summary') or 'no summary'}); "
                              f"see {out / 'ci-run.log'}:\n{failures(log)}\n...\n{(r.stdout + r.stderr)[-3000:]}")
