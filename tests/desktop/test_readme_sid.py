"""The README's first command (minus its final `ghosttype run`) as written, on the current Debian
(sid, system Python 3.13+), in a fresh overlay of the tier's chroot; then `ghosttype complete` answers.
The desktop sessions run the engine from the venv this installs."""

import pytest

# the fixtures bound every step themselves (chroot build, install, one session per desktop)
pytestmark = [pytest.mark.desktop, pytest.mark.timeout(7200)]


def test_readme_install_command_works_on_debian_sid(sid):
    r = sid.readme
    assert r.get("ok") == "true", f"README command in sid: {r.get('command')!r} failed: {r.get('reason')}"
    major, minor = (int(v) for v in r["python"].split(".")[:2])
    assert (major, minor) >= (3, 13), f"sid's system Python is {r['python']}"


def test_ghosttype_complete_answers_after_the_readme_install(sid):
    assert sid.complete, "ghosttype complete gave no answer"
    for c in sid.complete:
        assert isinstance(c.get("suggestion"), str) and c["suggestion"].strip(), f"empty suggestion: {c}"
