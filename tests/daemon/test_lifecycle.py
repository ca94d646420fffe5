"""The start-up, reload and shut-down both frontends share (daemon/lifecycle.py),
with a real Controller on fake ports and workers that load nothing."""

from __future__ import annotations

import logging

import pytest

from daemon import lifecycle as lifecycle_module
from daemon.config import Config
from daemon.controller import Controller
from daemon.lifecycle import Lifecycle
from daemon.notices import Notices
from tests.daemon.fakes import FakeSuppressor, ManualWorker, RecordingSink


class StartedWorker(ManualWorker):
    """A worker that records its config and whether it runs."""

    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.running = False
        self.stats = {}

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False


class Notifier:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def notify(self, summary: str, body: str = "", urgency: int = 2) -> bool:
        self.sent.append(summary)
        return True


@pytest.fixture
def rig(tmp_path, monkeypatch):
    workers: list[StartedWorker] = []

    def new_worker(config, controller, on_status=None, memory=None):
        workers.append(StartedWorker(config))
        workers[-1].memory = memory
        return workers[-1]

    monkeypatch.setattr(lifecycle_module, "new_worker", new_worker)
    monkeypatch.setattr(lifecycle_module, "setup_logging", lambda level: None)
    monkeypatch.setattr(lifecycle_module, "dump_stacks_on_fault", lambda log_dir: None)
    monkeypatch.setattr(lifecycle_module, "set_level", lambda level: None)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the stats file
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # a memory file (none with learn = "session")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))  # the forget stamp
    path = tmp_path / "config.toml"
    path.write_text('model = "smollm2"\n')
    notifier = Notifier()
    lc = Lifecycle(path, {"beam_width": 3}, notices=Notices(notifier))
    config = lc.load()
    suppressor = FakeSuppressor()
    sink = RecordingSink()
    controller = Controller(config, sink)
    lc.adopt(controller, suppressor)  # what grabs the accept keys (the overlay's AcceptKeys: its set_keys)
    lc.start()
    lc.watch()
    lc.sink = sink
    yield lc, controller, suppressor, workers, notifier
    if not lc._stopping:
        lc.shutdown()


def test_start_builds_one_worker_on_the_overridden_config(rig):
    lc, controller, _, workers, _ = rig
    assert controller.config.beam_width == 3
    assert [w.config.beam_width for w in workers] == [3] and workers[0].running
    assert lc.worker is workers[0]


def test_a_reload_keeps_the_overrides_and_swaps_the_worker_only_for_model_settings(rig):
    lc, controller, suppressor, workers, _ = rig
    lc.on_config_change(Config(debounce_ms=40))
    assert controller.config.debounce_ms == 40 and controller.config.beam_width == 3
    assert len(workers) == 1
    lc.on_config_change(Config(model="gemma3-270m", accept_key="ctrl+space"))
    assert suppressor.keys == ("ctrl+space", "ctrl+right")
    assert len(workers) == 2 and lc.worker is workers[1] and workers[1].running and not workers[0].running
    assert workers[1].config.model == "gemma3-270m" and workers[1].config.beam_width == 3


def test_config_errors_reach_the_controller_and_notify_once(rig):
    lc, controller, _, _, notifier = rig
    lc.on_config_error("config.toml:1: beam_width: must be between 1 and 8, got 9")
    lc.on_config_error("config.toml:1: beam_width: must be between 1 and 8, got 9")
    assert "beam_width" in lc.sink.status[1] and len(notifier.sent) == 1
    lc.on_config_change(Config())
    lc.on_config_error("config.toml:1: beam_width: must be between 1 and 8, got 9")
    assert len(notifier.sent) == 2


def test_a_bad_file_at_start_up_runs_on_the_defaults_and_says_so(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(lifecycle_module, "setup_logging", lambda level: None)
    monkeypatch.setattr(lifecycle_module, "dump_stacks_on_fault", lambda log_dir: None)
    path = tmp_path / "config.toml"
    path.write_text("beam_width = 99\n")
    lc = Lifecycle(path, {})
    with caplog.at_level(logging.ERROR):
        assert lc.load() == Config()
    assert "beam_width" in lc.config_error and "using defaults until it is fixed" in caplog.text


def test_shutdown_stops_in_order_around_the_frontends_parts(rig, monkeypatch, caplog):
    lc, controller, _, workers, _ = rig
    order: list[str] = []

    def step(name: str, fails: bool = False):
        def action() -> None:
            order.append(name)
            if fails:
                raise RuntimeError(name)
        return name, action

    for name, part, method in (("config watcher", lc._watcher, "stop"), ("controller", controller, "close"),
                               ("stats", lc.stats, "stop"), ("worker", lc.worker, "stop")):
        original = getattr(part, method)
        monkeypatch.setattr(part, method, lambda *a, _n=name, _o=original, **k: (order.append(_n), _o(*a, **k)))
    with caplog.at_level(logging.ERROR):
        lc.shutdown(inputs=[step("keyboard", fails=True)], links=[step("shell")], outputs=[step("platform")])
    assert order == ["keyboard", "config watcher", "shell", "controller", "stats", "worker", "platform"]
    assert "stopping the keyboard failed" in caplog.text
    assert not workers[0].running
    lc.on_config_change(Config(model="gemma3-270m"))  # after shut-down: nothing restarts
    assert len(workers) == 1


def test_learn_off_empties_the_memory_and_drops_it_from_the_decoder_and_back_on_takes_it_again(rig):
    lc, controller, _, workers, _ = rig
    assert workers[-1].memory is lc.memory  # learn = "session", the default
    lc.memory.add("what the user typed before")
    lc.apply(controller.config.with_overrides(learn="off"))
    assert lc.memory.pieces() == () and workers[-1].memory is None and not workers[-2].running
    assert controller._learner is None
    lc.apply(controller.config.with_overrides(learn="session"))
    assert workers[-1].memory is lc.memory and controller._learner is not None
