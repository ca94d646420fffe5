"""A key's round trip through the IBus engine, as an IBus client sees it (a
measurement, not a test).

A client process types ``--keys`` characters of a text at ``--rate`` keys per
second into a GTK 3 field, as GTK 3's IBus module on X11 speaks: before each
key the field's text (``SetSurroundingText``), then the key press, its caret
(``SetCursorLocation``) and, ``--hold-ms`` later, the release.  Each press's
and release's time from the call to its answer is one sample.  The engine
runs in a process of its own, as ``ghosttype ibus run`` does: the real
engine, controller and worker with the configured model (the defaults:
SmolLM2), so the model decodes while keys come.

Two routes:

* ``--via ibus``: a private ``ibus-daemon`` (no X server, its panel off), the
  client's input context behind it as an application's, ``ghosttype ibus
  run`` as ibus-daemon's engine; ``--variants xkb:us::eng`` measures IBus's
  own engine the same way.
* ``--via bus`` (where ibus-daemon is not installed): a private
  ``dbus-daemon``, the client in ibus-daemon's place calling the engine
  directly (the engine answers that client alone).  Variants: ``ghosttype``;
  ``ghosttype:defaultslices`` (every thread at the kernel's time slice, as
  before :mod:`daemon.timeslice`); ``ghosttype:nodecode`` (``debounce_ms``
  2000: the model never decodes while keys come 10 a second); ``null``, a
  Python engine that answers every key at once (the floor of this route).
  This route also splits each key's time: to the engine's handler, in it,
  and back.

``--rounds`` runs the variants in turn that many times and pools the samples
(a busy machine moves single runs by milliseconds).

    python -m tests.e2e.ibus_key_roundtrip --text ../shared/eval/prose_vim_usr02.txt \\
        --variants ghosttype,ghosttype:defaultslices,ghosttype:nodecode,null --rounds 3
    python -m tests.e2e.ibus_key_roundtrip --via ibus --variants ghosttype,xkb:us::eng --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
from typing import Iterator, Optional

from jeepney import DBusAddress, MessageType, new_method_call, new_method_return
from jeepney.io.blocking import open_dbus_connection

from daemon.frontends.ibus import wire

BENCH_NAME = "org.freedesktop.IBus.GhostType"
#: What GTK 3's IBus module declares (ibusimcontext.c; preedit shown in the field)
GTK3_CAPS = wire.CAP_PREEDIT_TEXT | wire.CAP_AUXILIARY_TEXT | wire.CAP_FOCUS | wire.CAP_PROPERTY | wire.CAP_SURROUNDING_TEXT
_BUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
FALLBACK_TEXT = ("The quick brown fox jumps over the lazy dog while the engine decodes the next words of this "
                 "sentence, and the user keeps typing at a steady pace of ten keys in every second. ")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def summary(values: list[float]) -> dict:
    return {"p50": round(pct(values, 50), 2), "p95": round(pct(values, 95), 2), "p99": round(pct(values, 99), 2),
            "max": round(max(values), 2), "n": len(values)}


# --------------------------------------------------------------------------- engine processes (--via bus)


def serve_ghosttype(address: str, sender: str, config_dir: str, options: str, trace: str) -> None:
    """``ghosttype ibus run``'s pieces on ``address``, answering ``sender``
    (the client in ibus-daemon's place); ``trace``: where to write when each
    key reached the engine's handler and when the handler was done."""
    from daemon.controller import Controller
    from daemon.frontends.ibus.bus import IBusService
    from daemon.frontends.ibus.frontend import IBusFrontend
    from daemon.lifecycle import Lifecycle

    opts = options.split("+")
    overrides = {"debounce_ms": 2000} if "nodecode" in opts else {}
    if "defaultslices" in opts:  # as before daemon/timeslice.py: every thread at the kernel's slice
        from daemon import timeslice

        timeslice.request = lambda seconds: False  # type: ignore[assignment]
    lifecycle = Lifecycle(pathlib.Path(config_dir) / "config.toml", overrides)
    config = lifecycle.load()
    frontend = IBusFrontend()
    controller = Controller(config, frontend)
    frontend.attach(controller)
    lifecycle.adopt(controller, frontend)
    service = IBusService(address, frontend, daemon_sender=sender)
    traced: list[tuple[float, float]] = []
    dispatch = service._dispatch

    def timed(msg) -> None:
        start = time.perf_counter()  # CLOCK_MONOTONIC: the client's clock too
        dispatch(msg)
        if msg.header.fields.get(3) == "ProcessKeyEvent":
            traced.append((start, time.perf_counter()))

    service._dispatch = timed  # type: ignore[method-assign]
    lifecycle.start()
    lifecycle.watch()
    assert lifecycle.worker is not None
    lifecycle.worker.wait_idle(timeout=120)
    if not lifecycle.worker.ready:
        raise SystemExit(f"the model did not load: {lifecycle.worker.load_error}")
    service.request_name(BENCH_NAME)  # the client starts once the model is ready
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    try:
        service.run()
    finally:
        lifecycle.shutdown()
        pathlib.Path(trace).write_text(json.dumps(traced))


def serve_null(address: str) -> None:
    """An engine that answers every call at once (keys: not handled)."""
    conn = open_dbus_connection(address)
    conn.send_and_get_reply(new_method_call(_BUS, "RequestName", "su", (BENCH_NAME, 0)))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    n = 0
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(3)
        if member == "CreateEngine":
            n += 1
            conn.send(new_method_return(msg, "o", (f"/org/freedesktop/IBus/Engine/null/{n}",)))
        elif member == "ProcessKeyEvent":
            conn.send(new_method_return(msg, "b", (False,)))
        else:
            conn.send(new_method_return(msg))


# --------------------------------------------------------------------------- the client


class Client:
    """Calls whose answer is timed, and calls whose answer is not waited for."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.keys: list[tuple[float, float]] = []  #: (sent at, seconds to the answer) of each key call

    def call(self, target: DBusAddress, member: str, signature=None, body=(), wait: bool = True) -> float:
        """Seconds to the answer (0 at once unless ``wait``); other messages are dropped."""
        msg = new_method_call(target, member, signature, body)
        serial = next(self.conn.outgoing_serial)
        start = time.perf_counter()
        self.conn.send(msg, serial=serial)
        while wait:
            reply = self.conn.receive(timeout=10)
            if reply.header.fields.get(5) == serial:
                if reply.header.message_type == MessageType.error:
                    raise RuntimeError(f"{member}: {reply.body}")
                elapsed = time.perf_counter() - start
                if member == "ProcessKeyEvent":
                    self.keys.append((start, elapsed))
                return elapsed
        return 0.0

    def type(self, context: DBusAddress, text: str, rate: float, hold_ms: float) -> dict[str, list[float]]:
        presses, releases = [], []
        start = time.perf_counter()
        for i, ch in enumerate(text):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            keyval = 0x20 if ch == " " else ord(ch)
            self.call(context, "SetSurroundingText", "vuu", (wire.text(text[:i]), i, i), wait=False)
            presses.append(self.call(context, "ProcessKeyEvent", "uuu", (keyval, 0, 0)) * 1000)
            self.call(context, "SetCursorLocation", "iiii", (10 + 8 * i, 40, 1, 17), wait=False)
            time.sleep(hold_ms / 1000)
            releases.append(self.call(context, "ProcessKeyEvent", "uuu", (keyval, 0, wire.RELEASE_MASK)) * 1000)
        return {"press": presses, "release": releases}


@contextlib.contextmanager
def private_bus(env: dict) -> Iterator[str]:
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_for_name(conn, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if conn.send_and_get_reply(new_method_call(_BUS, "NameHasOwner", "s", (name,))).body[0]:
            return
        time.sleep(0.1)
    raise SystemExit(f"{name} did not appear within {timeout:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_via_bus(variant: str, args: argparse.Namespace, text: str) -> dict[str, list[float]]:
    engine_kind, _, options = variant.partition(":")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HOME": tmp, "XDG_CONFIG_HOME": tmp, "XDG_STATE_HOME": tmp}
        with private_bus(env) as address:
            client = Client(open_dbus_connection(address))
            trace = pathlib.Path(tmp) / "trace.json"
            proc = subprocess.Popen([sys.executable, "-m", "tests.e2e.ibus_key_roundtrip", "--serve", engine_kind,
                                     address, client.conn.unique_name, tmp, options or "-", str(trace)], env=env)
            try:
                wait_for_name(client.conn, BENCH_NAME, timeout=180)
                factory = DBusAddress(wire.PATH_FACTORY, bus_name=BENCH_NAME, interface=wire.INTERFACE_FACTORY)
                reply = client.conn.send_and_get_reply(new_method_call(factory, "CreateEngine", "s", ("ghosttype",)))
                engine = DBusAddress(reply.body[0], bus_name=BENCH_NAME, interface=wire.INTERFACE_ENGINE)
                # ibus-daemon's calls at a focus-in, in its order
                client.call(engine, "FocusInId", "ss", ("/org/freedesktop/IBus/InputContext_1", "gtk3-im:bench"))
                client.call(engine, "Enable")
                client.call(engine, "SetCapabilities", "u", (GTK3_CAPS,))
                client.call(engine, "SetCursorLocation", "iiii", (10, 40, 1, 17))
                client.call(engine, "SetSurroundingText", "vuu", (wire.text(""), 0, 0))
                time.sleep(0.5)
                client.keys.clear()
                samples = client.type(engine, text, args.rate, args.hold_ms)
            finally:
                stop(proc)
            if trace.exists():  # the ghosttype engine: where each key's time went
                handled = json.loads(trace.read_text())[-len(client.keys):]
                samples["to_handler"] = [(h[0] - s) * 1000 for (s, _), h in zip(client.keys, handled)]
                samples["handler"] = [(h[1] - h[0]) * 1000 for h in handled]
                samples["back"] = [(s + rt - h[1]) * 1000 for (s, rt), h in zip(client.keys, handled)]
            return samples


def run_via_ibus(variant: str, args: argparse.Namespace, text: str) -> dict[str, list[float]]:
    from tests.e2e.test_ibus_bus_access import _IBUS, App, ibus_daemon

    with tempfile.TemporaryDirectory() as tmp, ibus_daemon(pathlib.Path(tmp)) as address:
        proc = None
        if variant == "ghosttype":
            env = {**os.environ, "IBUS_ADDRESS": address, "HOME": tmp, "XDG_CONFIG_HOME": tmp, "XDG_STATE_HOME": tmp}
            proc = subprocess.Popen([sys.executable, "-m", "daemon", "ibus", "run"], env=env)
        try:
            app = App(address)
            app.call("SetCapabilities", "u", (GTK3_CAPS,))
            deadline = time.monotonic() + 60
            while app.conn.send_and_get_reply(new_method_call(_IBUS, "SetGlobalEngine", "s", (variant,))
                                              ).header.message_type != MessageType.method_return:
                if time.monotonic() > deadline:
                    raise SystemExit(f"ibus-daemon did not take the engine {variant}")
                time.sleep(0.2)
            time.sleep(args.settle_s)  # the engine registers before its model is ready
            return Client(app.conn).type(app.ic, text, args.rate, args.hold_ms)
        finally:
            if proc is not None:
                stop(proc)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--via", choices=("bus", "ibus"), default="bus")
    ap.add_argument("--variants", default="ghosttype", help="comma-separated (see above)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--text", type=pathlib.Path)
    ap.add_argument("--keys", type=int, default=300)
    ap.add_argument("--rate", type=float, default=10.0, help="keys per second")
    ap.add_argument("--hold-ms", type=float, default=40.0, help="from a key's press to its release")
    ap.add_argument("--settle-s", type=float, default=20.0, help="--via ibus: time for the model to load")
    ap.add_argument("--samples", type=pathlib.Path, help="write every sample here (JSON, per variant)")
    ap.add_argument("--serve", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        kind, address, sender, config_dir, options, trace = args.serve
        if kind == "null":
            serve_null(address)
        else:
            serve_ghosttype(address, sender, config_dir, options, trace)
        return 0
    source = args.text.read_text(encoding="utf-8") if args.text else FALLBACK_TEXT * 3
    text = " ".join(source.split())[: args.keys]
    run = run_via_ibus if args.via == "ibus" else run_via_bus
    variants = args.variants.split(",")
    pooled: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
    runs: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant in variants:
            samples = run(variant, args, text)
            samples["all"] = samples["press"] + samples["release"]
            runs[variant].append(round(pct(samples["all"], 99), 2))
            for key, values in samples.items():
                pooled[variant].setdefault(key, []).extend(values)
            print(json.dumps({"variant": variant, "p99": runs[variant][-1]}), file=sys.stderr)
    if args.samples:
        args.samples.write_text(json.dumps(pooled))
    for variant in variants:
        print(json.dumps({"via": args.via, "variant": variant, "keys": len(text), "rate": args.rate,
                          "rounds": args.rounds, "p99_per_run": runs[variant],
                          **{k: summary(v) for k, v in pooled[variant].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
