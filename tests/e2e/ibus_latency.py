"""Key-to-suggestion latency through IBus (a measurement, not a test).

Types the start of a text (``--chars`` characters), one key at a time, into a GTK app on a private
X server whose IBus engine is ``ghosttype ibus run`` with the real model, and
after each key waits (up to ``--wait`` seconds) for the suggestion the app
shows.  The latency of a key is measured inside the app: from the text change
that key caused to the first preedit shown after it (the app's clock,
CLOCK_MONOTONIC).  Keys that type the next character of the visible
suggestion are counted apart (the engine advances it without a model call).

    python -m tests.e2e.ibus_latency ../shared/eval/prose_vim_usr02.txt --chars 200 --gtk 3
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

from tests.e2e.ibus_desktop import ibus_session
from tests.e2e.xserver import XvfbServer, wait_until


#: The shipped defaults (only the log level raised, for the engine's "status: ready").
DEFAULTS = 'log_level = "info"\n'


def _sentence(path: pathlib.Path, chars: int) -> str:
    """``chars`` characters of running text: the lines from the first ASCII
    line of 40+ characters on, joined with single spaces."""
    words: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = " ".join(line.split())
        if not words and (len(line) < 40 or not line.isascii()):
            continue
        if line.isascii():
            words.append(line)
        if len(" ".join(words)) >= chars:
            return " ".join(words)[:chars]
    raise SystemExit(f"{path}: not enough ASCII text")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def measure(text: str, gtk: str, wait_s: float) -> dict:
    server = XvfbServer.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, \
                ibus_session(server.display, pathlib.Path(tmp), installed=False, config_text=DEFAULTS) as d:
            app = d.start_app(gtk)
            latencies, typed_through, none = [], 0, 0
            for i, ch in enumerate(text):
                before = len(app.state().get("events", []))
                ghost = app.field()["preedit"]
                if ghost and ghost[0] == ch:  # typing through the suggestion: no model call
                    typed_through += 1
                    d.type(ch, delay_ms=0) if ch != " " else d.key("space")
                    assert wait_until(lambda: app.field()["text"] == text[: i + 1], timeout=10), app.state()
                    continue
                d.type(ch, delay_ms=0) if ch != " " else d.key("space")
                assert wait_until(lambda: app.field()["text"] == text[: i + 1], timeout=10), app.state()

                def after_key() -> list:
                    return app.state().get("events", [])[before:]

                def shown():
                    ev = after_key()
                    t_text = next((e[0] for e in ev if e[2] == "text"), None)
                    return [e for e in ev if e[2] == "preedit" and e[3] > 0], t_text

                wait_until(lambda: shown()[0], timeout=wait_s, interval=0.005)
                preedits, t_text = shown()
                if not preedits or t_text is None:
                    none += 1
                else:
                    latencies.append(max(0.0, preedits[0][0] - t_text) * 1000)
            return {
                "keys": len(text), "suggestions": len(latencies), "typed_through": typed_through,
                "no_suggestion": none, "p50_ms": round(_pct(latencies, 0.5), 1) if latencies else None,
                "p95_ms": round(_pct(latencies, 0.95), 1) if latencies else None,
                "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None, "gtk": gtk,
            }
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", type=pathlib.Path)
    p.add_argument("--chars", type=int, default=120)
    p.add_argument("--gtk", default="3", choices=("3", "4"))
    p.add_argument("--wait", type=float, default=3.0, help="longest wait for a suggestion after a key (s)")
    args = p.parse_args(argv)
    text = _sentence(args.text, args.chars)
    started = time.monotonic()
    result = measure(text, args.gtk, args.wait)
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
