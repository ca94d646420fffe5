"""``python -m llama_cpp.server``, its model loaded as ghosttype loads one.

Where llama.cpp's CPU backend has AMX kernels, which crash on their first use
(daemon/backends/llamacpp/weights.py, *No AMX tiles*), ghosttype loads its
weights unrepacked; llama_cpp.server has no setting for that, so this
launcher makes llama.cpp's default model parameters say so before the server
starts. Elsewhere it is ``python -m llama_cpp.server`` as it is. Its
arguments are the server's.
"""

from __future__ import annotations

import runpy

import llama_cpp.llama_cpp as lib

from daemon.backends.llamacpp import weights

if weights.amx_kernels():
    _default = lib.llama_model_default_params

    def _unrepacked():
        params = _default()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = _unrepacked

runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
