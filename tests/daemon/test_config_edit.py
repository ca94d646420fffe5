"""Editing the config file from a program: tomlkit keeps comments and order,
the project's validation runs first, and a bad value leaves the file as it
was."""

from __future__ import annotations

import pathlib

import pytest

from daemon.config import DEFAULT_DENYLIST, ConfigError, default_template, load_config
from daemon.config_edit import edit_config, toggle_denied

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
