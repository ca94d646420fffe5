"""How ``ghosttype tune`` picks among measured candidates."""

import pytest

from daemon.evaluation.simulate import UserRun
from daemon.evaluation.tune import Trial, best_trial, closest


def _trial(threshold: float, keystrokes: int, wrong: int) -> Trial:
    return Trial("m", threshold, 0.1, UserRun(name="m", chars=100, keystrokes=keystrokes, wrong_ghosts=wrong))


def test_most_saved_within_the_wrong_limit():
    trials = [_trial(0.4, 50, 10), _trial(0.6, 60, 6), _trial(0.8, 70, 2)]  # wrong /100: 20, 10, 2.9
    assert best_trial(trials, max_wrong=15).confidence_threshold == 0.6


def test_fewest_wrong_when_none_is_within():
    trials = [_trial(0.4, 50, 20), _trial(0.6, 60, 12)]  # 40 and 20 per 100
    assert best_trial(trials, max_wrong=15).confidence_threshold == 0.6


def test_no_trials_is_an_error():
    with pytest.raises(ValueError):
        best_trial([])


def test_closest_grid_value():
    assert closest(0.12, (0.05, 0.1, 0.2)) == 0.1
    assert closest(0.9, (0.05, 0.1, 0.2)) == 0.2
