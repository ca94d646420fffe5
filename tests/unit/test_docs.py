"""The documentation stays readable and its links resolve.

README.md is what a newcomer reads through: it stays at most 600 lines, and
the benchmarks and internals live beside their code (``daemon/**/README.md``).
Every relative link in README.md and in the other Markdown files of the
checkout points to a file that exists and, where it names a section, to a
heading of that file (GitHub's anchors); every ``.md`` file a Python module
or test names exists.
"""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README_MAX_LINES = 600
SKIP_DIRS = {".git", ".venv", "venv", "build", "dist", "test-artifacts", "node_modules", "__pycache__"}

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
MD_NAMED_IN_PY = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


def _markdown_files() -> list[pathlib.Path]:
    files = [ROOT / "README.md"]
    for top in ("daemon", "ui", "tests", "packaging"):
        for path in sorted((ROOT / top).rglob("*.md")):
            if not SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
                files.append(path)
    return files


def _prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _anchors(path: pathlib.Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading numbered from -1."""
    seen: dict[str, int] = {}
    anchors = set()
    for title in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading anchors on its text
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _links(path: pathlib.Path) -> list[str]:
    return [t for t in LINK.findall(_prose(path.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # http:, https:, mailto: are not checked here


def test_readme_is_read_through_in_minutes():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move details beside their code "
        "(daemon/evaluation/README.md, daemon/cpc/README.md, daemon/frontends/*/README.md) and link them")


def test_the_docs_beside_the_code_exist():
    for rel in ("daemon/README.md", "daemon/evaluation/README.md", "daemon/cpc/README.md",
                "daemon/frontends/ibus/README.md", "daemon/frontends/overlay/README.md",
                "daemon/backends/served/README.md", "packaging/README.md"):
        assert (ROOT / rel).is_file(), rel


@pytest.mark.parametrize("doc", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: pathlib.Path):
    broken = []
    for target in _links(doc):
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_anchor_rule_matches_githubs():
    doc = ROOT / "README.md"
    anchors = _anchors(doc)
    for expected in ("wayland-and-every-toolkit-the-ibus-engine", "applications-on-x11", "privacy",
                     "configuration", "troubleshooting"):
        assert expected in anchors, expected
    assert "qwen25-coder-05b-on-code" in _anchors(ROOT / "daemon/evaluation/README.md")


def test_every_markdown_file_a_module_names_exists():
    missing = []
    for top in ("daemon", "ui", "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
                continue
            for name in MD_NAMED_IN_PY.findall(path.read_text(encoding="utf-8")):
                if not (ROOT / name).exists():
                    missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert not missing, missing
