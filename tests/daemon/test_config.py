from __future__ import annotations

import argparse
import dataclasses
import logging
import logging.handlers
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from daemon.commands import config as config_cmd
from daemon.config import (
    DEFAULT_DENYLIST,
    Config,
    ConfigError,
    default_config_path,
    default_template,
    ensure_config_file,
    load_config,
    parse_config,
)
from daemon.config_watch import ConfigWatcher
from daemon.logsetup import parse_level, setup_logging


def test_defaults():
    c = Config()
    assert (c.enabled, c.model, c.beam_width, c.max_tokens, c.buffer_chars, c.context_chars) == (
        True, "smollm2", 2, 8, 2000, 1500)
    assert (c.accept_key, c.accept_word_key, c.dismiss_key) == ("tab", "ctrl+right", "escape")
    assert c.unknown_fields == c.ibus_terminals == "auto" and c.single_line and c.log_level == "warning"
    assert not c.skips_unknown_fields and not c.skips_terminals  # the model runs here: nothing leaves
    assert "keepassxc" in c.denylist and "pinentry" in c.denylist
    p = c.beam_params()
    assert (p.beam_width, p.max_tokens, p.context_chars, p.single_line) == (2, 8, 1500, True)


def test_one_mapping_between_config_and_decoder_knobs():
    """``beam_params`` and ``with_params`` copy the same settings, both ways;
    a benchmark's session config overrides only what it is given."""
    import dataclasses

    from daemon.config import DECODER_SETTINGS
    from daemon.cpc.suggestion import BeamParams
    from daemon.evaluation.replay import session_config
    from daemon.usage import UsageError

    assert set(DECODER_SETTINGS) <= {f.name for f in dataclasses.fields(BeamParams)}
    c = Config(strategy="heal", beam_width=3, max_tokens=5, confidence_threshold=0.3, continue_min_prob=0.2,
               single_line=False, context_chars=900, debounce_ms=40)
    assert Config(debounce_ms=40).with_params(c.beam_params()) == c
    params = c.beam_params()
    assert session_config(params) == Config(debounce_ms=0).with_params(params)
    assert session_config(params, "naive", debounce_ms=None).strategy == "naive"
    assert session_config(params, debounce_ms=None).debounce_ms == Config().debounce_ms
    with pytest.raises(ValueError, match="beam_width: must be between 1 and 8, got 9"):
        BeamParams(beam_width=9)  # the config's range: the decoder refuses what the config would


def test_missing_file_means_defaults(tmp_path):
    assert load_config(tmp_path / "nope.toml") == Config()


def test_values_are_read_and_normalised(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('beam_width = 4\naccept_key = "Control+Space"\ndenylist = ["KeePassXC", " Foo "]\n'
                 "confidence_threshold = 0\n")
    c = load_config(f)
    assert c.beam_width == 4 and c.accept_key == "ctrl+space"
    assert c.denylist == ("foo", "keepassxc") and c.is_denied("KEEPASSXC")
    assert isinstance(c.confidence_threshold, float)


def test_every_problem_is_reported_with_its_line(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("# comment\nenabled = \"yes\"\n\nbeam_width = 0\nmax_tokens = true\nbeam_widht = 3\n"
                 "accept_key = \"ctrl+banana\"\n[extra]\nx = 1\n")
    with pytest.raises(ConfigError) as ei:
        load_config(f)
    lines = str(ei.value).splitlines()
    assert lines == [
        f"{f}:2: enabled: expected true or false, got a string",
        f"{f}:4: beam_width: must be between 1 and 8, got 0",
        f"{f}:5: max_tokens: expected an integer, got a boolean",
        f"{f}:6: beam_widht: unknown setting (did you mean beam_width?)",
        f"{f}:7: accept_key: unknown key 'banana' (a key name like tab, right, f5, or one character)",
        f"{f}:8: extra: unknown setting",
    ]
    assert ei.value.first_line.endswith("(and 5 more)")


def test_toml_syntax_error_has_its_line(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("enabled = true\nmodel = \"smollm2\nbeam_width = 2\n")
    with pytest.raises(ConfigError) as ei:
        load_config(f)
    assert str(ei.value).startswith(f"{f}:2: TOML syntax error")


def test_unreadable_file_is_a_config_error(tmp_path):
    f = tmp_path / "c.toml"
    f.write_bytes(b"model = \"\xff\xfe\"\n")
    with pytest.raises(ConfigError):
        load_config(f)


def test_overrides():
    c = Config().with_overrides(beam_width=4, model=None, enabled=False)
    assert c.beam_width == 4 and c.model == "smollm2" and c.enabled is False
    with pytest.raises(ConfigError, match="command line: beam_width"):
        Config().with_overrides(beam_width=99)
    with pytest.raises(ConfigError, match="unknown setting"):
        Config().with_overrides(colour="red")


def test_template_documents_every_option_and_uncommented_gives_defaults(tmp_path):
    text = default_template()
    assert load_config_text(text) == Config()  # all commented out
    uncommented = "\n".join(
        line[2:] if line.startswith("# ") and ("=" in line or line.startswith(("#     ", "# ]"))) else line
        for line in text.splitlines()
    )
    assert load_config_text(uncommented) == Config()
    for f in dataclasses.fields(Config):
        assert f"# {f.name} = " in text
    assert set(DEFAULT_DENYLIST) <= set(load_config_text(uncommented).denylist)


def load_config_text(text):
    return parse_config(text, "t.toml")


def test_ensure_config_file_writes_once(tmp_path):
    p = tmp_path / "sub" / "config.toml"
    assert ensure_config_file(p) == (p, True)
    p.write_text("beam_width = 3\n")
    assert ensure_config_file(p) == (p, False)
    assert load_config(p).beam_width == 3


def test_default_path_is_under_the_user_config_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_config_path() == tmp_path / "ghosttype" / "config.toml"


# --------------------------------------------------------------------------- watcher


class Collector:
    def __init__(self) -> None:
        self.configs: list[Config] = []
        self.errors: list[str] = []
        self.event = threading.Event()

    def change(self, c):
        self.configs.append(c)
        self.event.set()

    def error(self, m):
        self.errors.append(m)
        self.event.set()

    def wait(self, timeout=30.0) -> float:
        t0 = time.monotonic()
        assert self.event.wait(timeout), "no reload within the deadline"
        self.event.clear()
        return time.monotonic() - t0


@pytest.fixture
def watched(tmp_path):
    path = tmp_path / "cfg" / "config.toml"
    ensure_config_file(path)
    col = Collector()
    w = ConfigWatcher(path, col.change, col.error, current=load_config(path))
    w.start()
    yield path, col, w
    w.stop()


def test_watcher_applies_a_saved_change(watched):
    path, col, _ = watched
    path.write_text("enabled = false\n")
    col.wait()
    assert col.configs[-1].enabled is False


def test_watcher_follows_atomic_replace(watched):
    path, col, _ = watched
    tmp = path.with_name(".config.toml.swp")
    tmp.write_text("beam_width = 3\n")
    os.replace(tmp, path)
    col.wait()
    assert col.configs[-1].beam_width == 3


def test_invalid_file_keeps_last_good_and_reports_line(watched):
    path, col, w = watched
    path.write_text("beam_width = 3\n")
    col.wait()
    path.write_text("beam_width = 3\nmax_tokens = -1\n")
    col.wait()
    assert col.errors and ":2: max_tokens" in col.errors[-1]
    assert w.last_good.beam_width == 3 and len(col.configs) == 1
    path.write_text("beam_width = 3\n")  # fixed: same config, but the error must clear
    col.wait()
    assert len(col.configs) == 2


# --------------------------------------------------------------------------- command and logging


def run_cmd(*argv):
    p = argparse.ArgumentParser()
    config_cmd.add_parser(p.add_subparsers())
    args = p.parse_args(["config", *argv])
    return args.func(args)


def test_config_command(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    assert run_cmd("--config", str(cfg), "--path") == 0
    assert capsys.readouterr().out.strip() == str(cfg)
    assert run_cmd("--config", str(cfg), "--init") == 0 and cfg.exists()
    assert run_cmd("--check", str(cfg)) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text("model = 3\n")
    capsys.readouterr()
    assert run_cmd("--check", str(bad)) == 1
    assert capsys.readouterr().err.strip() == f"{bad}:1: model: expected a string, got an integer"
    assert run_cmd("--check", str(tmp_path / "missing.toml")) == 1


def test_logging_to_file_and_levels(tmp_path):
    root = logging.getLogger()
    before = list(root.handlers), root.level
    try:
        path = setup_logging("info", log_dir=tmp_path, to_stderr=False)
        setup_logging("info", log_dir=tmp_path, to_stderr=False)  # idempotent
        assert sum(isinstance(h, logging.handlers.RotatingFileHandler) for h in root.handlers) == 1
        logging.getLogger("ghosttype.test").info("hello %d", 5)
        logging.getLogger("ghosttype.test").debug("hidden")
        for h in root.handlers:
            h.flush()
        text = path.read_text()
        assert "hello 5" in text and "hidden" not in text
    finally:
        for h in list(root.handlers):
            if h not in before[0]:
                root.removeHandler(h)
                h.close()
        root.setLevel(before[1])
    assert parse_level("DEBUG") == logging.DEBUG
    with pytest.raises(ValueError):
        parse_level("loud")


def test_log_files_are_the_users_alone(tmp_path):
    """0700 folder, 0600 files (rotated ones too), whatever the umask, also
    where an earlier version left a readable log behind."""
    root = logging.getLogger()
    before = list(root.handlers), root.level
    folder = tmp_path / "log"
    folder.mkdir(mode=0o755)
    (folder / "ghosttype.log").write_text("old\n")
    os.chmod(folder / "ghosttype.log", 0o644)
    umask = os.umask(0o022)
    try:
        path = setup_logging("info", log_dir=folder, to_stderr=False, max_bytes=200, backups=2)
        for i in range(20):
            logging.getLogger("ghosttype.test").info("line %d of a log that rotates", i)
    finally:
        os.umask(umask)
        for h in list(root.handlers):
            if h not in before[0]:
                root.removeHandler(h)
                h.close()
        root.setLevel(before[1])
    files = sorted(folder.iterdir())
    assert path in files and len(files) == 3  # the log and two rotated ones
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert {oct(f.stat().st_mode & 0o777) for f in files} == {"0o600"}


def test_invalid_file_is_reported_once_until_it_changes(watched):
    path, col, w = watched
    reloads = threading.Semaphore(0)  # one release per reload the watcher itself ran
    reload = w.reload

    def counted_reload():
        try:
            return reload()
        finally:
            reloads.release()

    w.reload = counted_reload  # the watcher's timer looks it up when it schedules

    def save(text: str) -> None:
        """Saved as editors do (write aside, rename over): one event, one reload."""
        tmp = path.with_name(".config.toml.new")
        tmp.write_text(text)
        os.replace(tmp, path)

    save("max_tokens = -1\n")
    took = col.wait()
    assert reloads.acquire(timeout=30)
    # Reading the file to reload it must not schedule another reload: none
    # comes within three times what the change above needed (at least 1 s).
    assert not reloads.acquire(timeout=max(1.0, 3 * took)), "reading the file scheduled a reload"
    reload()  # the same broken content is not reported again even when asked to reload
    assert len(col.errors) == 1, col.errors
    save("max_tokens = -2\n")  # a different mistake: reported
    col.wait()
    assert reloads.acquire(timeout=30)
    save("max_tokens = -2\n")  # saved again unchanged: reloaded, but silent
    assert reloads.acquire(timeout=30), "the save was not seen"
    assert len(col.errors) == 2, col.errors


@pytest.mark.parametrize("setting,local,server", [("auto", False, True), ("suggest", False, False),
                                                   ("skip", True, True)])
def test_unknown_fields_and_terminals_are_skipped_with_a_server(setting, local, server):
    """A sudo or ssh password prompt in a terminal is a field of unknown kind:
    with a server configured it would leave the machine, so auto skips it."""
    here = Config(unknown_fields=setting, ibus_terminals=setting)
    remote = Config(unknown_fields=setting, ibus_terminals=setting, backend="server",
                    server_url="https://models.example:8443")
    assert (here.skips_unknown_fields, here.skips_terminals) == (local, local)
    assert (remote.skips_unknown_fields, remote.skips_terminals) == (server, server)


def test_learn_defaults_to_session_and_takes_only_its_three_values():
    from daemon.config import LEARN_MODES

    assert Config().learn == "session" and LEARN_MODES == ("session", "persist", "off")
    for value in LEARN_MODES:
        assert load_config_text(f'learn = "{value}"\n').learn == value
    choices = "must be one of session, persist, off; got"
    for bad, says in (('"always"', f"{choices} 'always'"), ("true", "expected a string, got a boolean"),
                      ('"Persist"', f"{choices} 'Persist'")):
        with pytest.raises(ConfigError) as e:
            load_config_text(f"max_tokens = 8\nlearn = {bad}\n")
        assert str(e.value) == f"t.toml:2: learn: {says}", str(e.value)
    assert '# learn = "session"' in default_template()
    assert "ghosttype forget" in dict((f.name, f.metadata["doc"]) for f in dataclasses.fields(Config))["learn"]


def _stacks_of(tmp_path, code: str) -> tuple[str, str]:
    """Run ``code`` after ``dump_stacks_on_fault`` in a fresh interpreter; the stacks file and its mode."""
    folder = tmp_path / "log"
    prog = ("import os, signal, sys, threading, time\n"
            "from daemon.logsetup import dump_stacks_on_fault\n"
            f"path = dump_stacks_on_fault({str(folder)!r})\n"
            "def worker_loop():\n    time.sleep(30)\n"
            "threading.Thread(target=worker_loop, daemon=True).start()\n" + code)
    subprocess.run([sys.executable, "-c", prog], cwd=pathlib.Path(__file__).resolve().parents[2],
                   capture_output=True, timeout=60)
    stacks = folder / "stacks.txt"
    return stacks.read_text(), oct(stacks.stat().st_mode & 0o777)


def test_a_hung_or_crashed_process_leaves_its_threads_stacks_beside_the_log(tmp_path):
    """SIGUSR1 (the desktop tier sends it to an engine that stopped answering) and a fatal signal (a crash in
    llama.cpp) each leave every thread's stack in stacks.txt, the user's alone; the process lives on after
    SIGUSR1."""
    text, mode = _stacks_of(tmp_path, "os.kill(os.getpid(), signal.SIGUSR1)\ntime.sleep(0.2)\n"
                                      "open(path.with_name('alive'), 'w').close()\n")
    assert mode == "0o600"
    assert "worker_loop" in text and "<module>" in text
    assert (tmp_path / "log" / "alive").exists()
    text, _ = _stacks_of(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)\ntime.sleep(5)\n")
    assert "Segmentation fault" in text and text.count("worker_loop") == 2
