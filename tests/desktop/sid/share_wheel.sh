#!/usr/bin/env bash
# Puts the llama-cpp-python wheel of the active venv into DIR, for the desktop tier's installs in sid
# (readme_check.sh and suite_check.sh find it there through PIP_FIND_LINKS).
#
#   tests/desktop/sid/share_wheel.sh DIR      (run with the project's venv active, after pip install)
#
# llama-cpp-python's wheel holds ctypes bindings and llama.cpp's shared libraries, no Python extension
# module (its tag is py3-none-<platform>), so the wheel built here with the host's compiler loads in
# sid's newer Python and C libraries as well. pip takes it from its own cache (no second compile). The
# compile itself is tested by the host's install; sid's pip installs this wheel as it would any.
set -euo pipefail
dest=$1
version=$(python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python -m pip wheel -q --no-deps -w "$work" "llama-cpp-python==$version"
wheel=$(ls "$work"/llama_cpp_python-"$version"-*.whl)
case "$wheel" in
  *-py3-none-*) ;;
  *) echo "share_wheel: $(basename "$wheel") is not a py3-none wheel: sid's Python could not load it" >&2; exit 1 ;;
esac
mkdir -p "$dest"
rm -f "$dest"/llama_cpp_python-*.whl
cp "$wheel" "$dest/"
echo "shared with the tier: $dest/$(basename "$wheel")"
