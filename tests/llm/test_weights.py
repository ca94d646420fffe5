"""The model file's conversion to a format llama.cpp computes fast (daemon.backends.llamacpp.weights),
on the real SmolLM2 package file (Q4_1)."""

from __future__ import annotations

import os

import llama_cpp
import numpy as np

from daemon.backends.llamacpp import models, weights
from daemon.backends.llamacpp.llama import LlamaLM

Q4_1, Q8_0 = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_1, llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0


def loaded(path, directory, convert=True):
    """The file ``weights.load`` used and the loaded model's file type (the model freed)."""
    model, used = weights.load(path, convert=convert, directory=directory)
    try:
        return used, weights.file_type(model)
    finally:
        llama_cpp.llama_model_free(model)


def test_the_q4_1_package_file_is_converted_once_and_then_loaded_from_the_cache(smol_model_path, tmp_path):
    used, ftype = loaded(smol_model_path, tmp_path)
    assert ftype == Q8_0 and used.parent == tmp_path and used.name.endswith(".q8_0.gguf")
    assert used == weights.converted_path(smol_model_path, tmp_path, "q8_0")
    made = used.stat().st_mtime_ns
    assert loaded(smol_model_path, tmp_path) == (used, Q8_0)
    assert used.stat().st_mtime_ns == made  # reused, not made again
    # no temporary file left; the conversion's checksum beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == [used.name, used.name + ".sha256"]
    assert (tmp_path / (used.name + ".sha256")).read_text().strip() == models.sha256_of(used)
    assert loaded(smol_model_path, tmp_path, convert=False) == (smol_model_path, Q4_1)


def test_the_conversion_predicts_what_the_original_predicts(smol_model_path, tmp_path, monkeypatch):
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    with LlamaLM(str(smol_model_path), n_seq_max=2) as fast, \
            LlamaLM(str(smol_model_path), n_seq_max=2, convert_weights=False) as original:
        assert fast.weights_path.parent == tmp_path and original.weights_path == smol_model_path
        for text in ("Vim is a highly configurable text ed", "def parse(self, text):\n    return self.",
                     "The quick brown fox jumps over the la", "Pyenv lets you easily switch between versions of Py"):
            seq = original.tokenize(text)
            a, b = fast.logprobs([seq])[0].astype(np.float64), original.logprobs([seq])[0].astype(np.float64)
            # KL(original || conversion) on these texts, which llama.cpp's CPU kernels move: 0.008-0.022 nats
            # where this test was written, 0.005-0.060 on a 2-core AVX2 EPYC without AVX-512; a lossy Q4_0
            # conversion gives 0.2-2.5 and 0.50-2.54 on them
            assert float(np.sum(np.exp(b) * (b - a))) < 0.15


def test_a_damaged_conversion_is_made_again(smol_model_path, tmp_path):
    target = weights.converted_path(smol_model_path, tmp_path, "q8_0")
    target.write_bytes(b"GGUF" + bytes(4096))  # truncated: llama.cpp refuses it
    used, ftype = loaded(smol_model_path, tmp_path)
    assert (used, ftype) == (target, Q8_0) and target.stat().st_size > 1_000_000


def test_without_a_directory_the_conversion_goes_to_the_model_cache(smol_model_path, private_model_cache):
    used, _ = loaded(smol_model_path, None)
    assert used.parent == private_model_cache  # the suite's own cache, not the user's


def test_a_cache_that_cannot_be_written_leaves_the_original_in_use(smol_model_path, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    assert loaded(smol_model_path, blocker / "models") == (smol_model_path, Q4_1)


def test_a_file_in_another_format_is_loaded_as_it_is(smol_model_path, tmp_path):
    converted, _ = loaded(smol_model_path, tmp_path / "first")
    again = tmp_path / "second"
    assert loaded(converted, again) == (converted, Q8_0)
    assert not again.exists()


def test_the_conversion_of_an_earlier_model_file_is_removed(smol_model_path, tmp_path):
    stale = tmp_path / f"{smol_model_path.stem}.0123456789ab.q8_0.gguf"
    stale.write_bytes(b"GGUF")
    (tmp_path / (stale.name + ".sha256")).write_text("0" * 64)
    other = tmp_path / "another-model.0123456789ab.q8_0.gguf"
    other.write_bytes(b"GGUF")
    used, _ = loaded(smol_model_path, tmp_path)
    assert sorted(os.listdir(tmp_path)) == sorted([used.name, used.name + ".sha256", other.name])


def test_a_changed_conversion_is_not_loaded(smol_model_path, tmp_path):
    """What loads is what was made: a conversion whose bytes changed after it
    was written (it still loads in llama.cpp) is made again from the checked
    original, and so is one that others could write."""
    used, _ = loaded(smol_model_path, tmp_path)
    good = models.sha256_of(used)
    with used.open("r+b") as fh:  # one weight byte, far into the tensor data
        fh.seek(used.stat().st_size // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0x55]))
    assert models.sha256_of(used) != good
    assert loaded(smol_model_path, tmp_path) == (used, Q8_0)
    assert models.sha256_of(used) == good
    os.chmod(used, 0o666)
    made = used.stat().st_mtime_ns
    assert loaded(smol_model_path, tmp_path) == (used, Q8_0)
    assert used.stat().st_mtime_ns != made and used.stat().st_mode & 0o077 == 0


def test_models_load_unrepacked_where_llama_cpp_has_amx_kernels(smol_model_path, tmp_path, monkeypatch):
    """llama.cpp's AMX kernels crash on their first use (weights.py, *No AMX tiles*): where its
    system information lists them, the weights load without llama.cpp's extra buffer types, and
    elsewhere with them (the AVX2 repacking stays)."""
    real_load, seen = llama_cpp.llama_model_load_from_file, []

    def load(path, params):
        seen.append(params.use_extra_bufts)
        return real_load(path, params)

    monkeypatch.setattr(llama_cpp, "llama_model_load_from_file", load)
    real_info = llama_cpp.llama_print_system_info().decode()
    for info, repacked in ((real_info.replace(weights.AMX_MARK, "AMX_INT8 = 0") + "AMX_INT8 = 1 | ", False),
                           (real_info.replace(weights.AMX_MARK, "AMX_INT8 = 0"), True)):
        monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda info=info: info.encode())
        weights.amx_kernels.cache_clear()
        seen.clear()
        assert loaded(smol_model_path, tmp_path)[1] == Q8_0
        assert seen and set(seen) == {repacked}, info
    weights.amx_kernels.cache_clear()
