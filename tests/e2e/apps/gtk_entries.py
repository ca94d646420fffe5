#!/usr/bin/env python3
"""A GTK3 or GTK4 window with two text entries and a password entry, for the
IBus end-to-end tests.  Runs under the system Python (PyGObject from Debian).

Usage: gtk_entries.py STATE_FILE [--gtk 3|4] [--prgname NAME]

Every change of an entry's text or preedit rewrites STATE_FILE atomically as
JSON: {"ready": true, "focus": "first", "fields": {"first": {"text": ...,
"preedit": ..., "preedits": N}, ...}, "events": [[t, field, "text"|"preedit",
length], ...]} (t: CLOCK_MONOTONIC seconds, comparable across processes;
"preedits" counts non-empty preedits shown).  The entries are stacked top to
bottom: first, second, password (input purpose PASSWORD, text shown).  SIGUSR1 moves the
focus to the second entry, SIGUSR2 to the password entry.
"""

import argparse
import json
import os
import signal
import sys
import time

import gi

parser = argparse.ArgumentParser()
parser.add_argument("state")
parser.add_argument("--gtk", default="3")
parser.add_argument("--prgname", default="ghosttype-test-entries")
args = parser.parse_args()
gi.require_version("Gtk", "4.0" if args.gtk == "4" else "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname(args.prgname)
state = {"ready": False, "focus": "", "gtk": args.gtk, "fields": {}, "events": []}
entries = {}


def save():
    tmp = args.state + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
    os.replace(tmp, args.state)


def add_entry(name, box_add, password=False):
    entry = Gtk.Entry()
    entry.set_name(name)
    state["fields"][name] = {"text": "", "preedit": "", "preedits": 0}
    entries[name] = entry
    if password:
        # Visible on purpose: GTK hands the keys of an entry whose text is
        # hidden to its built-in input method, never to IBus; a shown password
        # ("show password" toggles) still reaches IBus, with this purpose.
        entry.set_input_purpose(Gtk.InputPurpose.PASSWORD)

    def event(kind, n):
        state["events"].append([time.monotonic(), name, kind, n])
        del state["events"][:-2000]

    def changed(e):
        state["fields"][name]["text"] = e.get_text()
        event("text", len(e.get_text()))
        save()

    def preedit(_w, text):
        state["fields"][name]["preedit"] = text
        state["fields"][name]["preedits"] += bool(text)
        event("preedit", len(text))
        save()

    entry.connect("changed", changed)
    (entry.get_delegate() if args.gtk == "4" else entry).connect("preedit-changed", preedit)
    if args.gtk == "4":
        ctl = Gtk.EventControllerFocus()
        ctl.connect("enter", lambda *_: (state.update(focus=name), save()))
        entry.add_controller(ctl)
    else:
        entry.connect("focus-in-event", lambda *_: (state.update(focus=name), save(), False)[2])
    box_add(entry)
    return entry


def build(box_add):
    first = add_entry("first", box_add)
    add_entry("second", box_add)
    add_entry("password", box_add, password=True)
    return first


def focus(name):
    entries[name].grab_focus()
    return True


def ready(first):
    first.grab_focus()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, focus, "second")
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, focus, "password")
    state["ready"] = True
    state["focus"] = "first"
    save()
    return False


if args.gtk == "4":
    app = Gtk.Application(application_id="org.ghosttype.TestEntries")

    def on_activate(a):
        win = Gtk.ApplicationWindow(application=a, title="ghosttype-test-entries")
        win.set_default_size(600, 150)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        win.set_child(box)
        first = build(box.append)
        win.present()
        GLib.timeout_add(300, ready, first)

    app.connect("activate", on_activate)
    sys.exit(app.run([]))
else:
    win = Gtk.Window(title="ghosttype-test-entries")
    win.set_default_size(600, 150)
    win.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    win.add(box)
    first = build(lambda w: box.pack_start(w, False, False, 0))
    win.show_all()
    win.move(0, 0)
    GLib.timeout_add(300, ready, first)
    Gtk.main()
