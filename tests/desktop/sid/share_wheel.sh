#!/usr/bin/env bash
# Puts the llama-cpp-python wheel of the active venv into DIR, for the desktop tier's installs in sid
# (readme_check.sh and suite_check.sh find it there through PIP_FIND_LINKS).
#
#   tests/desktop/sid/share_wheel.sh DIR [WHEEL]   (run with the project's venv active, after pip install)
#
# WHEEL: the wheel that venv was installed from (.ci/llama-cpp builds one); without it, the wheel is
# taken from pip's own cache (no second compile where pip built it for the venv).
#
# llama-cpp-python's wheel holds ctypes bindings and llama.cpp's shared libraries, no Python extension
# module (its tag is py3-none-<platform>), so the wheel built here with the host's compiler loads in
# sid's newer Python and C libraries as well. The compile itself is tested by the host's install; sid's
# pip installs this wheel as it would any.
set -euo pipefail
dest=$1
wheel=${2:-}
version=$(python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z "$wheel" ]]; then
  python -m pip wheel -q --no-deps -w "$work" "llama-cpp-python==$version"
  wheel=$(ls "$work"/llama_cpp_python-"$version"-*.whl)
fi
case "$(basename "$wheel")" in
  llama_cpp_python-"$version"-py3-none-*) ;;
  *) echo "share_wheel: $(basename "$wheel") is not the venv's llama-cpp-python $version as a py3-none wheel" \
       "(sid's Python could not load it)" >&2; exit 1 ;;
esac
mkdir -p "$dest"
rm -f "$dest"/llama_cpp_python-*.whl
cp "$wheel" "$dest/"
echo "shared with the tier: $dest/$(basename "$wheel")"
