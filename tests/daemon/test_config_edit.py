"""Editing the config file from a program: tomlkit keeps comments and order,
the project's validation runs first, and a bad value leaves the file as it
was."""

from __future__ import annotations

import os
import pathlib
import queue
import stat

import pytest

from daemon.config import DEFAULT_DENYLIST, ConfigError, default_template, ensure_config_file, load_config
from daemon.config_edit import edit_config, toggle_denied
from daemon.config_watch import ConfigWatcher

USER_FILE = """\
# my settings, do not lose this line
max_tokens = 6  # short ones
# debounce_ms = 15
"""


def test_a_set_value_is_replaced_where_it_stands_and_a_new_one_goes_below_its_commented_default(
        tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(USER_FILE)
    config = edit_config({"max_tokens": 12, "debounce_ms": 40}, path)
    assert (config.max_tokens, config.debounce_ms) == (12, 40)
    assert path.read_text() == ("# my settings, do not lose this line\n"
                                "max_tokens = 12  # short ones\n"
                                "# debounce_ms = 15\n"
                                "debounce_ms = 40\n")
    assert load_config(path) == config


def test_the_first_run_template_keeps_every_comment(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(default_template())
    edit_config({"confidence_threshold": 0.8, "denylist": ["a", "b", "c", "d"], "enabled": False}, path)
    lines = path.read_text().splitlines()
    template = default_template().splitlines()
    assert [line for line in lines if line.startswith("#") or not line] == \
        [line for line in template if line.startswith("#") or not line]
    i = lines.index("# confidence_threshold = 0.6")
    assert lines[i + 1] == "confidence_threshold = 0.8"
    close = lines.index("# ]")  # the commented default denylist ends there: the real one follows it
    assert lines[close + 1:close + 7] == ["denylist = [", '    "a",', '    "b",', '    "c",', '    "d",', "]"]
    cfg = load_config(path)
    assert cfg.confidence_threshold == 0.8 and cfg.denylist == ("a", "b", "c", "d") and not cfg.enabled


@pytest.mark.parametrize("changes, key", [({"accept_key": "ctrl+"}, "accept_key"), ({"max_tokens": 0}, "max_tokens"),
                                          ({"no_such_setting": 1}, "no_such_setting")])
def test_a_bad_value_is_refused_and_the_file_stays_as_it_was(tmp_path: pathlib.Path, changes, key) -> None:
    path = tmp_path / "config.toml"
    path.write_text(default_template())
    before = path.read_bytes()
    with pytest.raises(ConfigError) as e:
        edit_config(changes, path)
    assert key in str(e.value) and str(path) in str(e.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_a_file_that_is_not_toml_is_reported_with_its_line_and_left_alone(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# fine\nmax_tokens = [\n")
    with pytest.raises(ConfigError) as e:
        edit_config({"enabled": False}, path)
    assert "TOML syntax error" in str(e.value)
    assert path.read_text() == "# fine\nmax_tokens = [\n"


def test_a_missing_file_gets_the_template_with_the_change(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    edit_config({"stats": False}, path)
    text = path.read_text()
    assert text.startswith(default_template().splitlines()[0]) and "\nstats = false\n" in text
    assert load_config(path).stats is False


def test_off_in_an_application_keeps_the_default_denylist_and_on_again_removes_only_it(
        tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(default_template())
    denied, cfg = toggle_denied("XTerm", path)
    assert denied and cfg.is_denied("xterm")
    assert set(cfg.denylist) == set(DEFAULT_DENYLIST) | {"xterm"}
    assert load_config(path) == cfg
    denied, cfg = toggle_denied("xterm", path)
    assert not denied and not cfg.is_denied("xterm")
    assert set(cfg.denylist) == set(DEFAULT_DENYLIST)
    with pytest.raises(ValueError):
        toggle_denied("  ", path)


@pytest.fixture
def umask_022():
    """The usual umask, under which a file created plainly is readable by everyone (0644)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_a_config_file_that_is_a_link_is_written_through_it(tmp_path: pathlib.Path, umask_022) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "ghosttype.toml"
    target.write_text(USER_FILE)
    target.chmod(0o600)
    (tmp_path / "config").mkdir()
    link = tmp_path / "config" / "config.toml"
    link.symlink_to("../dotfiles/ghosttype.toml")  # as stow and other dotfile managers link
    config = edit_config({"max_tokens": 12}, link)
    assert link.is_symlink() and os.readlink(link) == "../dotfiles/ghosttype.toml"
    assert "max_tokens = 12  # short ones" in target.read_text() and load_config(link) == config
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    denied, _ = toggle_denied("mousepad", link)
    assert denied and link.is_symlink() and load_config(target).is_denied("mousepad")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["config", "config.toml", "dotfiles", "ghosttype.toml"]


def test_a_new_config_file_is_yours_alone(tmp_path: pathlib.Path, umask_022) -> None:
    written = tmp_path / "edited.toml"
    edit_config({"max_tokens": 12}, written)
    created, made = ensure_config_file(tmp_path / "first-run.toml")
    assert made
    for path in (written, created):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # A link that leads nowhere yet (a dotfile not written so far): the file is made where it leads.
    link = tmp_path / "linked.toml"
    link.symlink_to(tmp_path / "dotfile.toml")
    assert ensure_config_file(link) == (link, True)
    assert link.is_symlink() and stat.S_IMODE((tmp_path / "dotfile.toml").stat().st_mode) == 0o600


def test_a_file_planted_where_a_fixed_temporary_name_would_be_is_never_followed(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(USER_FILE)
    for name in ("config.toml.new", ".config.toml.new"):
        (tmp_path / name).symlink_to(tmp_path / f"elsewhere-{name}")
    edit_config({"max_tokens": 12}, path)
    assert not path.is_symlink() and "max_tokens = 12" in path.read_text()
    assert not list(tmp_path.glob("elsewhere-*")), "the config was written where a planted link led"


def test_a_save_through_a_link_reaches_the_running_daemon(tmp_path: pathlib.Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    (tmp_path / "dotfiles" / "ghosttype.toml").write_text(USER_FILE)
    (tmp_path / "config").mkdir()
    link = tmp_path / "config" / "config.toml"
    link.symlink_to("../dotfiles/ghosttype.toml")
    changed = queue.Queue()
    watcher = ConfigWatcher(link, changed.put, lambda message: None, current=load_config(link), debounce_s=0.05)
    watcher.start()
    try:
        edit_config({"max_tokens": 12}, link)  # what the settings window's Save does
        assert changed.get(timeout=10).max_tokens == 12
    finally:
        watcher.stop()
