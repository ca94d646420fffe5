"""IBus's serialized objects and constants, as plain D-Bus values.

IBus sends structured values (text with attributes, properties, lookup tables,
component and engine descriptions) as variants of one shape: a struct whose
first member is the type name, the second an ``a{sv}`` of attachments, then
the fields in a fixed order (``ibus_serializable_serialize``).  The builders
here produce the ``(signature, value)`` pairs jeepney sends as variants; the
field orders follow ibus's ``src/ibus*.c`` serializers, which every version
since 1.5.0 accepts (newer fields are appended and optional).

Pure: no D-Bus connection, no GLib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

Variant = tuple[str, Any]

# --------------------------------------------------------------------------- names

SERVICE_IBUS = "org.freedesktop.IBus"
PATH_IBUS = "/org/freedesktop/IBus"
INTERFACE_IBUS = "org.freedesktop.IBus"
PATH_FACTORY = "/org/freedesktop/IBus/Factory"
INTERFACE_FACTORY = "org.freedesktop.IBus.Factory"
INTERFACE_ENGINE = "org.freedesktop.IBus.Engine"
INTERFACE_SERVICE = "org.freedesktop.IBus.Service"

# --------------------------------------------------------------------------- constants

# IBusModifierType
SHIFT_MASK = 1 << 0
LOCK_MASK = 1 << 1
CONTROL_MASK = 1 << 2
MOD1_MASK = 1 << 3  #: Alt
MOD4_MASK = 1 << 6  #: Super on most layouts
SUPER_MASK = 1 << 26
HYPER_MASK = 1 << 27
META_MASK = 1 << 28
RELEASE_MASK = 1 << 30

# IBusCapabilite
CAP_PREEDIT_TEXT = 1 << 0
CAP_AUXILIARY_TEXT = 1 << 1
CAP_LOOKUP_TABLE = 1 << 2
CAP_FOCUS = 1 << 3
CAP_PROPERTY = 1 << 4
CAP_SURROUNDING_TEXT = 1 << 5

# IBusPreeditFocusMode
PREEDIT_CLEAR = 0
PREEDIT_COMMIT = 1

# IBusAttrType and values
ATTR_TYPE_UNDERLINE = 1
ATTR_TYPE_FOREGROUND = 2
ATTR_TYPE_BACKGROUND = 3
ATTR_TYPE_HINT = 4  #: ibus >= 1.5.29
ATTR_UNDERLINE_NONE = 0
ATTR_PREEDIT_PREDICTION = 3  #: IBusAttrPreedit: "a prediction string appended after the typed string"

# IBusInputPurpose
PURPOSE_FREE_FORM = 0
PURPOSE_PASSWORD = 8
PURPOSE_PIN = 9
PURPOSE_TERMINAL = 10
# IBusInputHints
HINT_PRIVATE = 1 << 11
HINT_HIDDEN_TEXT = 1 << 12  #: ibus >= 1.5.29; GNOME Shell maps Wayland's hidden_text to it

# IBusPropType / IBusPropState
PROP_TYPE_NORMAL = 0
PROP_TYPE_TOGGLE = 1
PROP_STATE_UNCHECKED = 0
PROP_STATE_CHECKED = 1

# --------------------------------------------------------------------------- builders


def _obj(type_name: str, signature: str, *fields: Any) -> Variant:
    """One serialized IBus object: ``(s type, a{sv} attachments, fields...)``."""
    return ("(sa{sv}" + signature + ")", (type_name, {}, *fields))


@dataclass(frozen=True)
class Attribute:
    type: int
    value: int
    start: int
    end: int

    def variant(self) -> Variant:
        return _obj("IBusAttribute", "uuuu", self.type, self.value, self.start, self.end)


def attr_list(attrs: Iterable[Attribute] = ()) -> Variant:
    return _obj("IBusAttrList", "av", [a.variant() for a in attrs])


def text(s: str, attrs: Iterable[Attribute] = ()) -> Variant:
    """An IBusText: the string and its attribute list (indices in characters)."""
    return _obj("IBusText", "sv", s, attr_list(attrs))


def ghost_attributes(n: int, colour: int, prediction_hint: bool) -> list[Attribute]:
    """How the suggestion's ``n`` characters are styled.

    Before ibus 1.5.33: grey (``colour``, ``0xRRGGBB``) and not underlined.
    From 1.5.33 on, only the semantic hint "prediction": the client library
    turns it into its own grey (0x7F7F7F) for applications that take colours,
    and passes it on to those that take hints (GNOME Shell 51), whereas it
    would turn an explicit underline attribute into the "whole preedit" hint,
    which is drawn underlined.
    """
    if prediction_hint:
        return [Attribute(ATTR_TYPE_HINT, ATTR_PREEDIT_PREDICTION, 0, n)]
    return [Attribute(ATTR_TYPE_FOREGROUND, colour, 0, n), Attribute(ATTR_TYPE_UNDERLINE, ATTR_UNDERLINE_NONE, 0, n)]


@dataclass(frozen=True)
class Property:
    """An engine property (an entry of the input-source menu / panel)."""

    key: str
    label: str
    tooltip: str = ""
    type: int = PROP_TYPE_NORMAL
    state: int = PROP_STATE_UNCHECKED
    sensitive: bool = True
    visible: bool = True
    icon: str = ""
    symbol: str = ""

    def variant(self) -> Variant:
        return _obj(
            "IBusProperty", "suvsvbbuvv",
            self.key, self.type, text(self.label), self.icon, text(self.tooltip),
            self.sensitive, self.visible, self.state, prop_list(()), text(self.symbol),
        )


def prop_list(props: Iterable[Property]) -> Variant:
    return _obj("IBusPropList", "av", [p.variant() for p in props])


@dataclass(frozen=True)
class EngineDesc:
    name: str
    longname: str
    description: str
    language: str = "en"
    license: str = "MIT"
    author: str = ""
    icon: str = ""
    layout: str = "default"
    rank: int = 0
    hotkeys: str = ""
    symbol: str = ""
    setup: str = ""
    layout_variant: str = ""
    layout_option: str = ""
    version: str = ""
    textdomain: str = ""
    icon_prop_key: str = ""

    def variant(self) -> Variant:
        return _obj(
            "IBusEngineDesc", "ssssssssussssssss",
            self.name, self.longname, self.description, self.language, self.license, self.author,
            self.icon, self.layout, self.rank, self.hotkeys, self.symbol, self.setup,
            self.layout_variant, self.layout_option, self.version, self.textdomain, self.icon_prop_key,
        )


@dataclass(frozen=True)
class Component:
    name: str
    description: str
    version: str
    license: str
    author: str
    homepage: str
    exec: str
    textdomain: str
    engines: tuple[EngineDesc, ...]

    def variant(self) -> Variant:
        return _obj(
            "IBusComponent", "ssssssssavav",
            self.name, self.description, self.version, self.license, self.author, self.homepage,
            self.exec, self.textdomain, [], [e.variant() for e in self.engines],
        )


# --------------------------------------------------------------------------- parsing


def parse_text(value: Any) -> Optional[str]:
    """The string of an IBusText received as a variant (jeepney gives
    ``(signature, (type_name, attachments, text, attrs))``); None if it is not one."""
    try:
        _sig, body = value
        if body[0] != "IBusText":
            return None
        s = body[2]
    except (TypeError, ValueError, IndexError):
        return None
    return s if isinstance(s, str) else None
