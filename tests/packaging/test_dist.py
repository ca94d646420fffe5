"""Build the sdist and the wheel, install the wheel into a fresh virtual
environment (no system site packages, dependencies from the package index) and
run ghosttype from there.

The install takes well under a minute when pip's cache holds the compiled
llama-cpp-python wheel (.ci/run builds it into the cache when it installs the
project; that is the ~8 minute step).  So that this test never compiles it a
second time, pip is pointed (``--find-links``) at every llama-cpp-python wheel
in its own cache (``pip cache list --format=abspath``) and told to prefer
wheels, which also covers a newer llama-cpp-python source release appearing on
the index after the cache was filled.  If pip builds it anyway the test says so
in a warning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time
import warnings
import zipfile

import pytest

import daemon

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                                 "*.py[cod]", "test-artifacts", ".pytest_cache", ".hypothesis")


def _run(argv, timeout: float, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kw)
    assert out.returncode == 0, f"{argv} exited {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, pathlib.Path]:
    """sdist and wheel built by ``python -m build`` from a copy of the tree
    (building in place would leave *.egg-info behind)."""
    if importlib.util.find_spec("build") is None:
        pytest.fail("the `build` package is not installed (it is in the test extra: pip install -e '.[test]')",
                    pytrace=False)
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=IGNORED)
    t0 = time.monotonic()
    _run([sys.executable, "-m", "build", "--outdir", tmp / "out", src], timeout=900)
    print(f"python -m build: {time.monotonic() - t0:.0f} s")
    (sdist,) = (tmp / "out").glob("ghosttype-*.tar.gz")
    (wheel,) = (tmp / "out").glob("ghosttype-*-py3-none-any.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.mark.timeout(900)
def test_sdist_contents(dists):
    with tarfile.open(dists["sdist"]) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for needed in ("README.md", "pyproject.toml", "PKG-INFO", "MANIFEST.in", "daemon/autostart.py",
                   "daemon/commands/autostart.py", "ui/app.py", "packaging/linux/ghosttype.service",
                   "packaging/linux/ghosttype.desktop", "packaging/linux/install-deps.sh",
                   "packaging/macos/io.github.ghosttype.plist", "packaging/windows/install-startup.ps1",
                   "tests/packaging/test_packaging_files.py", "tests/unit/test_layering.py",
                   # the notes README.md links to, beside their code
                   "daemon/README.md", "daemon/evaluation/README.md", "daemon/cpc/README.md",
                   "daemon/frontends/ibus/README.md", "packaging/README.md"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.timeout(900)
def test_wheel_contents(dists):
    with zipfile.ZipFile(dists["wheel"]) as zf:
        names = zf.namelist()
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = zf.read(info).decode()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"daemon", "ui"}
    for needed in ("daemon/__main__.py", "daemon/autostart.py", "daemon/commands/autostart.py",
                   "daemon/cpc/beam.py", "daemon/backends/llamacpp/llama.py", "ui/app.py",
                   # what `ghosttype ibus install` and `ghosttype kde install` put in place or build
                   "daemon/frontends/ibus/inline/gnome_shell/extension.js", "daemon/frontends/ibus/inline/kwin/CMakeLists.txt",
                   "daemon/frontends/ibus/inline/protocol.xml",
                   "daemon/frontends/ibus/inline/kwin/ghosteffect.cpp", "daemon/frontends/ibus/inline/kwin/ghosteffect.h",
                   "daemon/frontends/ibus/inline/kwin/main.cpp", "daemon/frontends/ibus/inline/kwin/metadata.json"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.endswith(".md")], "the notes beside the code belong to the sdist only"
    assert "ghosttype = daemon.__main__:main" in entry_points


def _cached_llama_wheel_dirs(python: pathlib.Path) -> list[str]:
    """Where a llama-cpp-python wheel for this machine is: pip's cache, and the wheel CI built
    (.ci/run names it in GHOSTTYPE_LLAMA_WHEEL: .ci/llama-cpp builds it outside pip's cache)."""
    out = subprocess.run([str(python), "-m", "pip", "cache", "list", "--format=abspath", "llama_cpp_python"],
                         capture_output=True, text=True, timeout=120)
    paths = [pathlib.Path(line.strip()) for line in out.stdout.splitlines() if line.strip().endswith(".whl")]
    paths.append(pathlib.Path(os.environ.get("GHOSTTYPE_LLAMA_WHEEL") or os.devnull))
    return sorted({str(p.parent) for p in paths if p.is_file() and p.suffix == ".whl"})


@pytest.mark.timeout(2400)  # a llama-cpp-python rebuild (no cached wheel) takes ~8 min on 2 cores
def test_wheel_installs_into_a_fresh_venv_and_runs(dists, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("venv")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv], timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg

    find_links = [arg for d in _cached_llama_wheel_dirs(python) for arg in ("--find-links", d)]
    t0 = time.monotonic()
    install = _run([python, "-m", "pip", "install", "--prefer-binary", *find_links, dists["wheel"]], timeout=2100)
    took = time.monotonic() - t0
    print(f"pip install of the wheel and its dependencies: {took:.0f} s (find-links: {find_links[1::2]})")
    if "Building wheel for llama-cpp-python" in install.stdout:
        warnings.warn(f"pip compiled llama-cpp-python ({took:.0f} s): no cached wheel was usable")

    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_CACHE_HOME=str(home / "cache"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    ghosttype = bindir / "ghosttype"

    def gt(*args: str, timeout: float = 300) -> str:
        return _run([ghosttype, *args], timeout=timeout, env=env, cwd=tmp).stdout

    # the code comes from the venv, not from this checkout
    where = _run([python, "-c", "import daemon, ui; print(daemon.__file__); print(ui.__file__)"],
                 timeout=60, env=env, cwd=tmp).stdout.split()
    assert all(str(venv) in w and "site-packages" in w for w in where), where

    assert gt("--version").strip() == f"ghosttype {daemon.__version__}"
    assert gt("config", "--path").strip() == str(home / "config" / "ghosttype" / "config.toml")

    t0 = time.monotonic()
    result = json.loads(gt("complete", "--text", "Hello wor", "--json"))
    print(f"ghosttype complete from the venv: {time.monotonic() - t0:.1f} s")
    for key in ("suggestion", "confidence", "suppressed", "strategy", "beam_width", "model", "timings_ms",
                "tokens_decoded", "model_calls", "tokens_generated", "stable_tokens"):
        assert key in result, key
    assert isinstance(result["suggestion"], str) and result["suggestion"].strip()
    assert str(venv) in result["model"] and result["model_calls"] > 0
    assert 0.0 < result["confidence"] <= 1.0

    # autostart from the installed package: the entry runs this venv's ghosttype
    out = gt("autostart", "enable", "--method", "xdg")
    entry = home / "config" / "autostart" / "ghosttype.desktop"
    assert out.splitlines()[0] == f"xdg: wrote {entry}"
    assert f"Exec={ghosttype} run" in entry.read_text().splitlines()
    assert f"xdg: installed, {entry}" in gt("autostart", "status").splitlines()
    gt("autostart", "disable", "--method", "xdg")
    assert not entry.exists()
