"""Suite-wide settings.

Hypothesis: no per-example deadline.  None of the property tests is about
speed (speed is measured by the benchmarks, daemon/evaluation/README.md), and on a
busy 2-core machine the default 200 ms deadline turns a slow example into a
failure that says nothing about the code.  A test that wants a deadline sets
one explicitly with ``@settings(deadline=...)``.

The model cache: split models (Qwen2.5-Coder, Gemma 3) are assembled into
``daemon.backends.llamacpp.models.cache_dir()``, 740 MB, and the default
model's Q8_0 conversion is kept there.  The suite points it at a directory of
its own, removed at the end, with ``GHOSTTYPE_MODEL_CACHE``, which the
``ghosttype`` processes the tests start inherit, so a run leaves nothing in the
user's cache and never trusts an assembly an earlier run (or the user) left.
Only the model cache is redirected, not ``XDG_CACHE_HOME``: pip's wheel cache,
which the packaging test reuses, stays where it is.
"""

from __future__ import annotations

import pathlib
import shutil
import tempfile
from typing import Iterator

import pytest
from hypothesis import settings

#: Property tests draw the same examples on every run (a red CI run is one anyone can repeat);
#: ``pytest --hypothesis-profile=explore`` draws new ones each run, to look further.
settings.register_profile("ghosttype", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None)
settings.load_profile("ghosttype")


@pytest.fixture(scope="session", autouse=True)
def private_model_cache() -> Iterator[pathlib.Path]:
    from daemon.backends.llamacpp import models

    path = pathlib.Path(tempfile.mkdtemp(prefix="ghosttype-test-models-"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(models.CACHE_ENV, str(path))
            yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
