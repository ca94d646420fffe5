"""The benchmark corpus: every text listed once, with a source, a licence and
a part, and every kind of text in both parts."""

import collections
import pathlib
import tomllib

CORPUS = pathlib.Path(__file__).resolve().parent.parent / "corpus"


def _entries() -> list[dict]:
    return tomllib.loads((CORPUS / "MANIFEST.toml").read_text(encoding="utf-8"))["file"]


def test_manifest_lists_every_text_once_with_source_licence_and_part():
    entries = _entries()
    names = [e["name"] for e in entries]
    on_disk = sorted(p.name for p in CORPUS.iterdir() if p.name not in ("MANIFEST.toml", "README.md"))
    assert sorted(names) == on_disk
    for e in entries:
        assert e["source"] and e["licence"] and e["part"] in ("tuning", "held-out"), e
        (CORPUS / e["name"]).read_text(encoding="utf-8")  # UTF-8 text


def test_every_kind_is_in_both_parts():
    parts = collections.defaultdict(set)
    for e in _entries():
        parts[e["kind"]].add(e["part"])
    assert all(p == {"tuning", "held-out"} for p in parts.values()), dict(parts)
