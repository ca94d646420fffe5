"""The AT-SPI role and state numbers ghosttype needs.

Values come from at-spi2-core's ``atspi-constants.h`` (``AtspiRole``,
``AtspiStateType``); they are part of the wire protocol and never change.
"""

from __future__ import annotations

from typing import Sequence

# Roles (AtspiRole).
ROLE_APPLICATION = 75
ROLE_ENTRY = 61
ROLE_PASSWORD_TEXT = 40
ROLE_TERMINAL = 59
ROLE_TEXT = 60

# States (AtspiStateType): bit numbers in the 64-bit set that GetState returns
# as two 32-bit words.
STATE_ACTIVE = 1
STATE_DEFUNCT = 6
STATE_EDITABLE = 7
STATE_FOCUSED = 12
STATE_MULTI_LINE = 17
STATE_SHOWING = 25
STATE_SINGLE_LINE = 26
STATE_VISIBLE = 30

#: Attribute (key, value) pairs that toolkits and browsers use to mark an
#: input whose content must stay secret although its role is not
#: PASSWORD_TEXT (for example an HTML ``<input type=password>`` exposed with an
#: ``text-input-type`` or ``input-type`` attribute).  Compared lower-cased.
PASSWORD_ATTRIBUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("text-input-type", "password"),
        ("input-type", "password"),
        ("type", "password"),
        ("password", "true"),
        ("sensitive", "true"),
    }
)


def has_state(words: Sequence[int], state: int) -> bool:
    """Whether ``state`` is set in a GetState reply (``au``, low word first)."""
    index, bit = divmod(state, 32)
    return index < len(words) and bool(int(words[index]) >> bit & 1)
