"""Prints what a desktop tier run saw, per desktop and application, as a Markdown table, from the
sessions' results (``artifacts/<desktop>/results.json``); the material for the README's table.

    python -m tests.desktop.summary [ARTIFACTS]
"""

from __future__ import annotations

import json
import pathlib
import sys

from tests.desktop import checks


def verdict(fn, *args) -> str:
    try:
        extra = fn(*args)
    except AssertionError as e:
        return "FAIL: " + str(e).split(": ", 1)[-1][:160]
    return "pass" + (f" ({extra!r})" if isinstance(extra, str) else "")


def rows(results: dict, complete: list[dict]):
    for app, res in results.get("scenarios", {}).items():
        if app.endswith("-pw"):
            yield app, "-", "-", "-", verdict(checks.check_password, results, app), res.get("seconds")
            continue
        g = res.get("ghost_e")
        seen = f"{g[0]}, {g[1]} chars" if g else "none"
        yield (app, seen, verdict(checks.check_visible_and_esc_hides, results, app),
               verdict(checks.check_typing_through_keeps_it_visible, results, app),
               verdict(checks.check_tab_inserts_the_shown_suggestion, results, app, complete), res.get("seconds"))


def main() -> None:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "artifacts")
    comp = root / "readme" / "complete.jsonl"
    complete = [json.loads(x) for x in comp.read_text().splitlines() if x.strip()] if comp.exists() else []
    for d in ("gnome", "kde"):
        f = root / d / "results.json"
        if not f.exists():
            continue
        results = json.loads(f.read_text())
        print(f"\n### {d} (session setup {results.get('setup')})\n")
        print("| app | last suggestion (engine) | visible, Esc hides | typed-through visible | Tab / password | s |")
        print("|---|---|---|---|---|---|")
        for r in rows(results, complete):
            print("| " + " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in r) + " |")


if __name__ == "__main__":
    main()
