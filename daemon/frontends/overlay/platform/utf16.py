"""UTF-16 arithmetic on Python strings.

macOS (NSString, AX ranges, CGEvent strings) and Windows (SendInput Unicode
events) count text in UTF-16 code units, Python in code points; a character
outside the Basic Multilingual Plane is one code point but two units.  These
helpers keep offsets and cuts on the right side of that difference.
"""

from __future__ import annotations

_SURROGATES = range(0xD800, 0xE000)


def utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (lone surrogates pass through)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The start of ``text`` that is ``units`` UTF-16 units long; an offset in
    the middle of a surrogate pair drops that character."""
    data = text.encode("utf-16-le", "surrogatepass")[: 2 * max(0, units)]
    return strip_lone_surrogates(data.decode("utf-16-le", "surrogatepass"))


def utf16_chunks(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` UTF-16 units; a
    character outside the BMP (two units) is never cut in half."""
    if limit < 2:
        raise ValueError("limit must leave room for a surrogate pair")
    chunks: list[str] = []
    current: list[str] = []
    units = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if units + size > limit:
            chunks.append("".join(current))
            current, units = [], 0
        current.append(ch)
        units += size
    if current:
        chunks.append("".join(current))
    return chunks


def strip_lone_surrogates(text: str) -> str:
    """Drop half surrogate pairs left at either end by a cut in UTF-16 units
    (pyobjc hands such halves over as lone surrogate code points)."""
    start, end = 0, len(text)
    while start < end and ord(text[start]) in _SURROGATES:
        start += 1
    while end > start and ord(text[end - 1]) in _SURROGATES:
        end -= 1
    return text[start:end]
