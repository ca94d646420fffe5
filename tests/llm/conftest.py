"""Shared fixtures for tests that run the real SmolLM2 model through llama.cpp.

Loading the model costs about a second and ~100 MB, so one backend is shared by
the whole session (``smol_lm``).  Tests that use it must not depend on what an
earlier test left in its cache: compare results, or look at ``stats`` deltas
(``lm.stats.snapshot()`` / ``.since()``) around the calls under test.  Tests
that need a pristine cache create their own ``LlamaLM`` from
``smol_model_path``.

Every test in this directory is marked ``llm`` automatically.  The model
packages and llama-cpp-python are dependencies (the model parts are installed
by ``.ci/run``): when one is missing or broken the tests fail with the reason.
"""

from __future__ import annotations

import importlib.util
import pathlib
from typing import Iterator

import pytest

_HERE = pathlib.Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test collected from this directory as ``llm``."""
    for item in items:
        if _HERE in pathlib.Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.llm)


@pytest.fixture(scope="session")
def smol_model_path() -> pathlib.Path:
    """Path of the embedded default model (SmolLM2-135M-Instruct Q4_1)."""
    from daemon.backends.llamacpp.models import ModelLoadError, resolve_model

    try:
        return resolve_model("smollm2")
    except ModelLoadError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def smol_lm(smol_model_path: pathlib.Path) -> Iterator["object"]:
    """One ``daemon.backends.llamacpp.llama.LlamaLM`` on SmolLM2 for the whole session.

    n_ctx=2048 and n_seq_max=8 (the product defaults); deterministic batching.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed (a dependency: pip install -e '.[test]')", pytrace=False)
    from daemon.backends.llamacpp.llama import LlamaLM

    lm = LlamaLM(str(smol_model_path), n_ctx=2048, n_seq_max=8)
    try:
        yield lm
    finally:
        lm.close()
