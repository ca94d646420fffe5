#!/usr/bin/python3
"""Test app of the desktop tier: a GTK3 (GTKVER=3) or GTK4 (GTKVER=4) window with a normal entry and a
password entry (GTK3: invisible Gtk.Entry with purpose PASSWORD; GTK4: Gtk.PasswordEntry).

Appends JSON lines to $APP_LOG: "ready", "active" (the window got keyboard focus), "preedit" (field,
text: what the input method shows inline), "changed" (field, text), "focus" (field that has focus).
$FOCUS=password focuses the password entry. Runs with Debian's python3-gi, inside the sid chroot.
"""
import os
import sys

import gi

V = os.environ.get("GTKVER", "3")
gi.require_version("Gtk", "4.0" if V == "4" else "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

from applog import log  # noqa: E402  (beside this script)


def build(add):
    fields = {}
    for name in ("normal", "password"):
        if name == "password" and V == "4":
            e = Gtk.PasswordEntry()
            delegate = e.get_first_child() or e
        else:
            e = Gtk.Entry()
            if name == "password":
                e.set_visibility(False)
                e.set_input_purpose(Gtk.InputPurpose.PASSWORD)
            delegate = e.get_delegate() if V == "4" else e
        e.connect("changed", lambda w, n=name: log("changed", field=n, text=w.get_text()))
        try:
            delegate.connect("preedit-changed", lambda w, p, n=name: log("preedit", field=n, text=p))
        except TypeError:
            pass
        if V == "4":
            ctl = Gtk.EventControllerFocus()
            ctl.connect("enter", lambda c, n=name: log("focus", field=n))
            e.add_controller(ctl)
        else:
            e.connect("focus-in-event", lambda w, ev, n=name: log("focus", field=n) or False)
        add(e)
        fields[name] = e
    # a button after the fields: Tab from the password field moves the focus here
    b = Gtk.Button(label="next")
    if V == "4":
        ctl = Gtk.EventControllerFocus()
        ctl.connect("enter", lambda c: log("focus", field="button"))
        b.add_controller(ctl)
    else:
        b.connect("focus-in-event", lambda w, ev: log("focus", field="button") or False)
    add(b)
    return fields


def start(win, fields):
    fields[os.environ.get("FOCUS", "normal")].grab_focus()
    win.connect("notify::is-active", lambda *a: win.is_active() and log("active"))
    log("ready", gtk=V)


if V == "4":
    app = Gtk.Application(application_id="org.example.GhosttypeFields")

    def on_activate(a):
        win = Gtk.ApplicationWindow(application=a, title="ghosttype-fields")
        win.set_default_size(700, 140)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
        win.set_child(box)
        fields = build(box.append)
        win.present()
        start(win, fields)

    app.connect("activate", on_activate)
    sys.exit(app.run([]))
else:
    win = Gtk.Window(title="ghosttype-fields")
    win.set_default_size(700, 140)
    win.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    win.add(box)
    fields = build(lambda e: box.pack_start(e, False, False, 0))
    win.show_all()
    start(win, fields)
    GLib.idle_add(lambda: False)
    Gtk.main()
