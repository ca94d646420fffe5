"""One table of the decoder's ranges (:mod:`daemon.cpc.limits`): the config file, the decoder's
parameters, the command line and the benchmarks' ``cpcK`` refuse the same values with the same words."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.config import Config, ConfigError, parse_config
from daemon.cpc.limits import LIMITS, limit
from daemon.cpc.suggestion import BeamParams
from daemon.evaluation.quality import parse_strategy

CONFIG_FIELDS = {f.name for f in dataclasses.fields(Config)}


def values(name: str):
    """Values around and far from ``name``'s bounds, of the knob's kind."""
    lo, hi = LIMITS[name]
    if isinstance(lo, float):
        return st.one_of(st.sampled_from([lo, hi, lo - 1e-9, hi + 1e-9, -1.0, 2.0]),
                         st.floats(-10, 10, allow_nan=False))
    return st.one_of(st.sampled_from([lo, hi, lo - 1, hi + 1, 0, -1]), st.integers(-1000, 200_000))


def beam_refusal(name: str, value) -> str | None:
    try:
        BeamParams(**{name: value})
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_every_bound_is_the_decoders_and_the_configs(name):
    lo, hi = LIMITS[name]
    for inside in (lo, hi):
        assert limit(name)(inside) is None and beam_refusal(name, inside) is None
    step = 1e-6 if isinstance(lo, float) else 1
    for outside in (lo - step, hi + step):
        why = limit(name)(outside)
        assert why is not None and beam_refusal(name, outside) == f"{name}: {why}"


@pytest.mark.parametrize("name", sorted(n for n in LIMITS if n in CONFIG_FIELDS))
@given(data=st.data())
def test_the_config_file_and_the_decoder_refuse_alike(name, data):
    """Oracle: the table's bounds compared by hand.  The config file names the same reason after its
    file and line that BeamParams gives after the knob's name."""
    value = data.draw(values(name))
    lo, hi = LIMITS[name]
    valid = lo <= value <= hi
    beam = beam_refusal(name, value)
    assert (beam is None) is valid
    try:
        parse_config(f"{name} = {value!r}\n", "config.toml")
        config = None
    except ConfigError as e:
        config = str(e)
    assert (config is None) is valid
    if not valid:
        assert config == f"config.toml:1: {beam}"


def test_the_benchmarks_beam_widths_are_the_configs():
    lo, hi = LIMITS["beam_width"]
    assert parse_strategy(f"cpc{hi}").beam_width == hi and parse_strategy(f"cpc{lo}").beam_width == lo
    with pytest.raises(ValueError, match=f"must be between {lo} and {hi}, got {hi + 1}"):
        parse_strategy(f"cpc{hi + 1}")


def test_the_config_files_comments_state_the_tables_ranges():
    docs = {f.name: f.metadata["doc"] for f in dataclasses.fields(Config)}
    for name in ("beam_width", "max_tokens", "context_chars"):
        lo, hi = LIMITS[name]
        assert f"({lo}-{hi})" in docs[name], docs[name]
