"""What ghosttype saved: the counts a real Controller produces, written by
the StatsRecorder into a real file (mode 0600, numbers only), turned off by
the config, reset, and read back by ``ghosttype stats --json``."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
import sys

from daemon.config import Config
from daemon.stats import FIELDS, StatsFile, StatsRecorder, counts_from_controller, summary, zero
from tests.daemon.test_controller import Rig

ROOT = pathlib.Path(__file__).resolve().parents[2]


def today() -> str:
    """Today's date as the stats file keys it, read when it is needed (a module constant goes stale when a
    run crosses midnight)."""
    return datetime.date.today().isoformat()


def session(r: Rig) -> None:
    """One suggestion shown, one word of it and then the rest accepted, and
    a swallowed Tab with nothing left to accept (typed as a Tab)."""
    r.type("Hello wor")
    r.answer("ld again")
    assert r.sup.press("ctrl+right")  # "ld"
    assert r.sink.visible == " again"
    assert r.sup.press("tab")  # " again"
    assert r.inj.typed[-2:] == ["ld", " again"]
    r.keys.on_grabbed("tab")  # a fast second Tab: nothing visible any more
    assert r.inj.typed[-1] == "\t"


EXPECTED = {"shown": 1, "accepted": 1, "accepted_words": 1, "chars_inserted": 8, "keystrokes_saved": 6}


def test_a_controller_session_is_counted_and_written_with_numbers_only(tmp_path: pathlib.Path) -> None:
    r = Rig()
    stats = StatsFile(tmp_path / "state" / "stats.json")
    recorder = StatsRecorder(r.c.counters, lambda: r.c.config.stats, stats)
    session(r)
    assert counts_from_controller(r.c.counters) == EXPECTED
    before = today()
    recorder.flush()
    data = stats.read()
    assert data["total"] == EXPECTED and list(data["days"].values()) == [EXPECTED]
    assert next(iter(data["days"])) in {before, today()}
    assert recorder.today() == EXPECTED
    assert stats.path.stat().st_mode & 0o777 == 0o600
    raw = stats.path.read_bytes()
    assert b"Hello" not in raw and b"again" not in raw
    assert set(json.loads(raw)) == {"total", "days"}
    # A second flush with nothing new changes nothing; new activity adds up.
    recorder.flush()
    assert stats.read()["total"] == EXPECTED
    session(r)
    recorder.flush()
    assert stats.read()["total"] == {k: 2 * v for k, v in EXPECTED.items()}


def test_counting_off_in_the_config_writes_nothing_and_reset_starts_again(tmp_path: pathlib.Path) -> None:
    r = Rig(stats=False)
    stats = StatsFile(tmp_path / "stats.json")
    recorder = StatsRecorder(r.c.counters, lambda: r.c.config.stats, stats)
    session(r)
    recorder.flush()
    assert not stats.path.exists()
    r.c.apply_config(Config(debounce_ms=0, stats=True))  # turned on while running: only what comes after counts
    session(r)
    recorder.stop()
    assert stats.read()["total"] == EXPECTED
    assert stats.reset() and not stats.path.exists()
    assert summary(stats.read())["total"] == dict.fromkeys(FIELDS, 0)
    session(r)
    recorder.flush()
    assert stats.read()["total"] == EXPECTED  # after a reset, from zero


def test_an_old_file_mode_does_not_survive_a_write(tmp_path: pathlib.Path) -> None:
    stats = StatsFile(tmp_path / "stats.json")
    stats.path.write_text("{not json")
    os.chmod(stats.path, 0o644)
    assert stats.read()["total"] == dict.fromkeys(FIELDS, 0)  # unreadable: from zero, no exception
    stats.add({"shown": 2})
    assert stats.path.stat().st_mode & 0o777 == 0o600
    assert stats.read()["total"]["shown"] == 2


def test_ghosttype_stats_json_and_reset(tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path))
    StatsFile(tmp_path / "ghosttype" / "stats.json").add(EXPECTED, day="2026-01-02")
    day = today()
    StatsFile(tmp_path / "ghosttype" / "stats.json").add(EXPECTED, day=day)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "daemon", "stats", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)

    out = cli("--json")
    assert out.returncode == 0, out.stderr
    view = json.loads(out.stdout)
    if today() == day:  # (a run crossing midnight here has a new, empty today)
        assert view["today"] == EXPECTED
    assert view["total"] == {k: 2 * v for k, v in EXPECTED.items()}
    assert set(view["days"]) == {"2026-01-02", day}
    table = cli()
    assert "keystrokes saved" in table.stdout and " 12" in table.stdout, table.stdout
    assert cli("--path").stdout.strip() == str(tmp_path / "ghosttype" / "stats.json")
    assert cli("--reset").stdout.strip() == "counts deleted"
    assert json.loads(cli("--json").stdout)["total"] == dict.fromkeys(FIELDS, 0)


#: One process that counts ``n`` suggestions shown, one write each, as the recorder writes them.
COUNTER = """
import sys
from daemon.stats import StatsFile
stats = StatsFile(sys.argv[1])
sys.stdin.read(1)  # wait for the go, so the processes count at the same time
for _ in range(int(sys.argv[2])):
    stats.add({"shown": 1, "keystrokes_saved": 2})
"""


def test_two_processes_counting_at_once_lose_nothing(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "stats.json"
    n = 150
    procs = [subprocess.Popen([sys.executable, "-c", COUNTER, str(path), str(n)], cwd=ROOT, stdin=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]  # the daemon and the engine
    for p in procs:
        p.stdin.write("g")
    for p in procs:
        p.stdin.close()
    errors = [p.stderr.read() for p in procs]
    assert [p.wait(timeout=120) for p in procs] == [0, 0], errors
    data = StatsFile(path).read()
    assert (data["total"]["shown"], data["total"]["keystrokes_saved"]) == (2 * n, 4 * n)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stats.json", "stats.json.lock"]  # no temporary left


def test_a_value_that_is_not_a_number_warns_and_ghosttype_starts(tmp_path: pathlib.Path, caplog) -> None:
    stats = StatsFile(tmp_path / "stats.json")
    secret = "my typed secret"
    stats.path.write_text(json.dumps({
        "total": {"shown": secret, "accepted": 3, "chars_inserted": float("nan")},
        "days": {today(): {"shown": [1], "accepted": 2}, "2026-01-02": "junk"},
    }))
    r = Rig()
    with caplog.at_level("DEBUG"):
        recorder = StatsRecorder(r.c.counters, lambda: r.c.config.stats, stats)  # what the daemon does at start
    warnings = [rec.getMessage() for rec in caplog.records if rec.levelname == "WARNING"]
    assert len(warnings) == 1 and "not counts" in warnings[0], warnings
    assert secret not in caplog.text and "junk" not in caplog.text
    assert recorder.today() == dict(zero(), accepted=2)
    data = stats.read()
    assert data["total"] == dict(zero(), accepted=3)
    assert data["days"]["2026-01-02"] == zero()
    session(r)
    recorder.flush()  # counting goes on, and the file holds numbers again
    assert stats.read()["total"] == dict(EXPECTED, accepted=EXPECTED["accepted"] + 3)
    assert secret.encode() not in stats.path.read_bytes()
