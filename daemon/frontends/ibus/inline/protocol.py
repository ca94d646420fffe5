"""The link to the desktop's plug-ins as ``protocol.xml`` beside this file defines it
(D-Bus introspection XML: the one place the interface and its constants are written).

The engine's end (:mod:`~daemon.frontends.ibus.inline.shell_ghost`) takes its names, version, bound and
the signatures it accepts from here; the GNOME Shell extension loads the same file and the KWin
effect's build reads it.
"""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass

FILE = pathlib.Path(__file__).resolve().with_name("protocol.xml")
#: The prefix of the interface's annotations.
NAMESPACE = "org.freedesktop.IBus.GhostType."


@dataclass(frozen=True)
class Method:
    inputs: str  #: the D-Bus signature of its arguments
    outputs: str  #: the D-Bus signature of its answer


@dataclass(frozen=True)
class Protocol:
    interface: str  #: the interface's name, also the bus name the plug-ins own
    constants: dict[str, str]  #: the interface's annotations, by name without NAMESPACE
    methods: dict[str, Method]
    signals: dict[str, str]  #: name -> signature
    properties: dict[str, str]  #: name -> type

    def constant(self, name: str) -> str:
        return self.constants[name]


def parse(text: str) -> Protocol:
    """The protocol of an introspection document with one interface; ValueError when it is not one."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ValueError(f"not XML: {e}") from None
    interfaces = root.findall("interface")
    if len(interfaces) != 1:
        raise ValueError(f"expected one interface, found {len(interfaces)}")
    iface = interfaces[0]

    def signature(node: ET.Element, direction: str, default: str = "in") -> str:
        """Its arguments of ``direction`` (a method's are "in" unless said, a signal's all "out")."""
        return "".join(a.get("type", "") for a in node.findall("arg") if a.get("direction", default) == direction)

    constants = {}
    for a in iface.findall("annotation"):
        name = a.get("name", "")
        if not name.startswith(NAMESPACE):
            raise ValueError(f"annotation {name!r} outside {NAMESPACE}*")
        constants[name[len(NAMESPACE):]] = a.get("value", "")
    return Protocol(
        interface=iface.get("name", ""),
        constants=constants,
        methods={m.get("name", ""): Method(signature(m, "in"), signature(m, "out")) for m in iface.findall("method")},
        signals={s.get("name", ""): signature(s, "out", "out") for s in iface.findall("signal")},
        properties={p.get("name", ""): p.get("type", "") for p in iface.findall("property")},
    )


#: The protocol this engine speaks (the file shipped beside it).
SPEC = parse(FILE.read_text(encoding="utf-8"))

#: The plug-ins' bus name (their interface's) and object.
BUS_NAME = SPEC.interface
OBJECT_PATH = SPEC.constant("ObjectPath")
#: The plug-ins' protocol this engine needs (their Version; what each version added: the file).
PROTOCOL = int(SPEC.constant("Version"))
#: The longest text sent to ``Show`` (the plug-ins refuse longer ones without measuring them).
MAX_TEXT_CHARS = int(SPEC.constant("MaxTextChars"))
#: The effect's answer to Show when KWin's caret is behind the application's.
STALE_ERROR = SPEC.constant("StaleCaretError")
