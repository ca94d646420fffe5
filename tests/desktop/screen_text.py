"""Reading the suggestion's text off a screenshot, as the user reads it: Debian's tesseract (OCR) on the
place where the screen showed it, and a comparison that tolerates what OCR adds at a region's edge.

The region comes from the session's screenshot diffs (the suggestion's pixels, sometimes with the caret or
a sliver of the last typed character beside them); it is cut out, made dark-on-light (IBus's popup is light
text on a dark box), stretched and read as one line.
"""

from __future__ import annotations

import difflib
import io
import pathlib
import re
import shutil
import subprocess

import numpy
from PIL import Image, ImageChops, ImageOps

#: Around the region: the diff's box hugs the ink, OCR wants some margin.
PAD = 3
#: Small UI text read best at about 4x (tesseract is trained on ~30 px capitals).
SCALE = 4


def available() -> bool:
    return shutil.which("tesseract") is not None


def local(shot: str | None, results: dict) -> pathlib.Path | None:
    """A session's screenshot path (``/out/...`` inside the chroot) on this side."""
    if not shot:
        return None
    return pathlib.Path(results.get("dir", "")) / pathlib.Path(shot).name


#: Brightness steps within which a pixel of ``read``'s screenshot counts as the same as ``without``'s.
SAME_LUM = 8


def read(png: pathlib.Path, box: list[int], without: pathlib.Path | None = None) -> str:
    """The text of one line within ``box`` (x0, y0, x1, y1) of ``png``, as tesseract reads it. ``without``:
    the same screen without the text to read; the pixels it shares with ``png`` are painted over with the
    field's background first, so the margin OCR wants reads none of the typed letters beside the region (the
    foot of kwrite's "i" before the suggestion, read as "_" while its caret had blinked off)."""
    img = Image.open(png).convert("L")
    x0, y0, x1, y1 = box
    cut = (max(0, x0 - PAD), max(0, y0 - PAD), min(img.width, x1 + PAD), min(img.height, y1 + PAD))
    crop = img.crop(cut)
    if without is not None:
        lums = sorted(crop.tobytes())
        bg = lums[len(lums) // 2] if lums else 255
        same = Image.open(without).convert("L").crop(cut)
        crop = Image.composite(Image.new("L", crop.size, bg), crop,
                               ImageChops.difference(crop, same).point(lambda d: 255 if d <= SAME_LUM else 0))
    lums = sorted(crop.tobytes())
    if lums and lums[len(lums) // 2] < 128:  # light text on a dark field or box
        crop = ImageOps.invert(crop)
    crop = ImageOps.autocontrast(crop, cutoff=1)
    crop = crop.resize((crop.width * SCALE, crop.height * SCALE), Image.LANCZOS)
    crop = ImageOps.expand(crop, border=20, fill=255)
    buf = io.BytesIO()
    crop.save(buf, "PNG")
    out = subprocess.run(["tesseract", "stdin", "stdout", "--psm", "7"], input=buf.getvalue(),
                         capture_output=True, timeout=60)
    return out.stdout.decode("utf-8", "replace").strip()


def _norm(s: str) -> str:
    return " ".join(s.split())


def reads_as(ocr: str, expected: str) -> tuple[float, int]:
    """How well the text read off the screen shows ``expected``: the share of ``expected``'s characters
    found in order in it, and how many characters it has beyond those (OCR's noise at the region's edge,
    an ellipsis, or another text)."""
    a, b = _norm(expected), _norm(ocr)
    if not a:
        return (1.0 if not b else 0.0), len(b)
    matched = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return matched / len(a), len(b) - matched


#: What tesseract reads one for the other in the tier's screenshots, and so may stand for each other when the
#: text read off the screen is held against the text Tab inserted: nothing else may differ.
CONFUSIONS = ("lI1|", "O0")
#: What a caret right before the suggestion reads as when the region read takes it in (a thin caret's line;
#: "." its lower end, seen beside kwrite's caret on KWin; "j" GTK 4's caret on KWin touching a fixed-width
#: "t", whose cell starts right at the caret).
CARET_GLYPHS = set("lI1|i![.j")


def _fold(s: str) -> str:
    s = " ".join(s.split())
    for group in CONFUSIONS:
        for c in group[1:]:
            s = s.replace(c, group[0])
    return s


def same_text(ocr: str, expected: str) -> bool:
    """The text read off the screen is ``expected``, character for character, but for the confusions listed
    in CONFUSIONS, one caret glyph before it (the application's caret, taken in with the suggestion), and its
    first character, which that caret touches (read "kor" for "tor" beside KWin's caret in GTK 4)."""
    a, b = _fold(expected), _fold(ocr)
    if ocr.lstrip()[:1] in CARET_GLYPHS and len(b[1:].lstrip()) == len(a):  # the caret, read apart or not
        b = b[1:].lstrip()
    return b == a or (len(b) == len(a) > 1 and b[1:] == a[1:])


def text_left(png: pathlib.Path, box: list[int]) -> int | None:
    """Where the first word read (OCR) inside ``box`` (x0, y0, x1, y1) of ``png`` begins, in screen pixels
    (None: no word read): a popup's text, without its box, border or handle. Read in the box's middle rows
    (a fifth left out above and below: its rounded corners, which OCR would take for part of the first word)."""
    img = Image.open(png).convert("L")
    x0, y0, x1, y1 = box
    cut = (y1 - y0) // 5
    crop = img.crop((x0, y0 + cut, x1, y1 - cut))
    lums = sorted(crop.tobytes())
    if lums and lums[len(lums) // 2] < 128:  # light text on a dark box
        crop = ImageOps.invert(crop)
    crop = crop.resize((crop.width * SCALE, crop.height * SCALE), Image.LANCZOS)
    pad = 20
    crop = ImageOps.expand(crop, border=pad, fill=255)
    buf = io.BytesIO()
    crop.save(buf, "PNG")
    out = subprocess.run(["tesseract", "stdin", "stdout", "--psm", "7", "tsv"], input=buf.getvalue(),
                         capture_output=True, timeout=60)
    left = first_word_left(out.stdout.decode("utf-8", "replace"))
    return None if left is None else box[0] + (left - pad) // SCALE


def first_word_left(tsv: str) -> int | None:
    """The smallest ``left`` of the words (two letters or more) in tesseract's TSV output."""
    lefts = []
    for line in tsv.splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) >= 12 and cols[0] == "5" and len(_WORD2.findall(cols[11])) > 0:
            lefts.append(int(cols[6]))
    return min(lefts) if lefts else None


_WORD2 = re.compile(r"[^\W\d_]{2,}")


#: What tesseract reads the ellipsis the plug-ins end a cut suggestion with as.
ELLIPSES = ("\u2026", "...", "..", "\u2026.")


#: What the ellipsis's first dot, touching the letter before it, reads as besides (seen: "allows]..", "allows|..").
ELLIPSIS_EDGE = "|]"


def before_ellipsis(ocr: str) -> str | None:
    """The text read before the ellipsis that ends it, without one ELLIPSIS_EDGE glyph before the ellipsis
    (None: it does not end with one)."""
    s = ocr.rstrip()
    for e in sorted(ELLIPSES, key=len, reverse=True):
        if s.endswith(e):
            head = s[: -len(e)]
            return head[:-1] if head[-1:] in ELLIPSIS_EDGE else head
    return None


def changed_pixels(a: pathlib.Path, b: pathlib.Path) -> int:
    """How many pixels differ clearly between two screenshots."""
    return _changed(a, b).histogram()[255]


def changed_box(a: pathlib.Path, b: pathlib.Path, box: list[int]) -> list[int] | None:
    """The box (x0, y0, x1, y1) of the pixels that differ clearly between two screenshots within ``box``."""
    inside = _changed(a, b, tuple(box)).getbbox()
    return None if inside is None else [box[0] + inside[0], box[1] + inside[1], box[0] + inside[2], box[1] + inside[3]]


def word_starts(a: pathlib.Path, b: pathlib.Path, box: list[int], char: float) -> list[int]:
    """Where each word of the text drawn between two screenshots begins (x of its first changed column within
    ``box``): words are runs of changed columns apart by at least 0.8 of a character's width ``char``, which a
    space leaves and the gap between two letters of a fixed-width font does not."""
    changed = _changed(a, b, tuple(box))
    width, height = changed.size
    px = changed.load()
    return runs_apart([box[0] + x for x in range(width) if any(px[x, y] for y in range(height))], char)


def runs_apart(columns: list[int], char: float) -> list[int]:
    """Where each run of inked ``columns`` (x, ascending) begins, runs being apart by at least 0.8 of a
    character's width ``char``: the words of a line of text."""
    gap, starts, last = max(3.0, 0.8 * char), [], None
    for x in columns:
        if last is None or x - last - 1 >= gap:
            starts.append(x)
        last = x
    return starts


#: Brightness a pixel must differ from the field's background by to be ink, and from the same pixel of the
#: other screenshot to have changed (as the session's diffs count them).
INK, CHANGED = 40, 40
#: Grey, not typed: ink fainter than this share of the typed text's contrast (the suggestion is drawn at
#: about half of it; a caret or a typed letter is as dark as the text).
GREY_SHARE = 0.75
#: A caret: a column inked through this share of the line's height (a letter's stem stops short of it).
CARET_SHARE = 0.85


def ghost_placement(shown: pathlib.Path, tab: pathlib.Path, box: list[int], char: float) -> dict:
    """Where the suggestion drawn in ``shown`` stands against the text Tab inserted in its place (``tab``),
    read from the two screenshots alone, on the line ``box`` (x0, y0, x1, y1: where Tab changed the screen)
    and ``2 * char`` to its left. ``ghost``: the first column of the suggestion's ink (grey pixels Tab
    changed: a caret and typed letters are darker); ``inserted``: the first column of the inserted text's
    (pixels Tab made darker); ``covered``: pixels of typed text within two characters right of the
    suggestion's start (dark in both screenshots, so typed before Tab: a suggestion drawn over the last typed
    letter leaves some of it dark there), not counting the caret; ``caret``: the first and last column of the
    caret nearest the suggestion while it showed (inked the line's height through, and not after Tab; None
    where it had blinked off): a suggestion drawn one character left begins a character before it.
    ``ghost_columns``, ``inserted_columns``: every column of each ink (for :func:`runs_apart`)."""
    reach = round(2 * char)
    x0, y0, x1, y1 = box[0] - reach - 2, box[1] - 2, box[2] + 2, box[3] + 2
    a = numpy.asarray(Image.open(shown).convert("L").crop((x0, y0, x1, y1)), dtype=numpy.int16)
    b = numpy.asarray(Image.open(tab).convert("L").crop((x0, y0, x1, y1)), dtype=numpy.int16)
    bg = int(numpy.median(b))
    ink_b = (bg - b) > INK
    dark = GREY_SHARE * (numpy.percentile(bg - b[ink_b], 90) if ink_b.any() else 255)
    changed = numpy.abs(a - b) > CHANGED
    ink_a = (bg - a) > INK
    rows = numpy.flatnonzero(ink_a.any(axis=1))
    tall = CARET_SHARE * (int(rows[-1] - rows[0] + 1) if rows.size else 1)
    # the caret while the suggestion showed: a column inked the line's height through, and not after Tab
    bar = (ink_a.sum(axis=0) >= tall) & (ink_b.sum(axis=0) < tall)
    grey = changed & ink_a & ((bg - a) < dark) & ~bar
    darker = ink_b & ((a - b) > CHANGED)
    g, t = (numpy.flatnonzero(m.any(axis=0)) for m in (grey, darker))
    if g.size == 0 or t.size == 0:
        return {"ghost": None, "inserted": None, "covered": 0, "caret": None}
    first = int(g[0])
    typed = ((bg - a) >= dark) & ((bg - b) >= dark) & ~changed
    covered = int(typed[:, first:first + reach][:, ~bar[first:first + reach]].sum())
    near = [int(x) for x in numpy.flatnonzero(bar) if abs(int(x) - first) <= reach]
    caret = None
    if near:
        c0 = c1 = min(near, key=lambda x: abs(x - first))
        while c0 - 1 in near:
            c0 -= 1
        while c1 + 1 in near:
            c1 += 1
        caret = [x0 + c0, x0 + c1]
    return {"ghost": x0 + first, "inserted": x0 + int(t[0]), "covered": covered, "caret": caret,
            "ghost_columns": [x0 + int(x) for x in g], "inserted_columns": [x0 + int(x) for x in t]}


def _changed(a: pathlib.Path, b: pathlib.Path, box: tuple[int, int, int, int] | None = None) -> Image.Image:
    """The pixels (within ``box``) that differ clearly between two screenshots, as a 0/255 image: the
    difference's brightness over 40, as the session's diffs count them."""
    ia, ib = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    if box is not None:
        ia, ib = ia.crop(box), ib.crop(box)
    return ImageChops.difference(ia, ib).convert("L").point(lambda v: 255 if v > 40 else 0)


def changed_inside(a: pathlib.Path | None, b: pathlib.Path | None, box: list[int], border: int = 4) -> int:
    """How many pixels differ clearly between two screenshots inside ``box`` less ``border`` px on each
    side (a field's focus ring is its border; what changed within it is its content)."""
    if a is None or b is None or not (a.exists() and b.exists()):
        return -1
    x0, y0, x1, y1 = box
    inner = (x0 + border, y0 + border, x1 - border, y1 - border)
    if inner[0] >= inner[2] or inner[1] >= inner[3]:
        return 0
    return _changed(a, b, inner).histogram()[255]


def read_words(png: pathlib.Path, box: list[int] | None = None) -> set[str]:
    """The words tesseract reads anywhere within ``box`` (the whole screenshot when None), as
    :func:`words` keeps them: what a user reading that part of the screen would see written there."""
    img = Image.open(png).convert("L")
    if box:
        img = img.crop((max(0, box[0]), max(0, box[1]), min(img.width, box[2]), min(img.height, box[3])))
    img = img.resize((img.width * 2, img.height * 2), Image.LANCZOS)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    out = subprocess.run(["tesseract", "stdin", "stdout", "--psm", "11"], input=buf.getvalue(),
                         capture_output=True, timeout=120)
    return words(out.stdout.decode("utf-8", "replace"))


#: A word as the screen comparisons count one: three letters or more.
_WORD = re.compile(r"[^\W\d_]{3,}")
#: What tesseract reads a password field's bullets as: runs of these letters ("ceccccooocc", "eeeee", "coes").
BULLET_READINGS = set("ceos")


def _bullets(w: str) -> bool:
    """A run of a password field's bullets as tesseract reads it: BULLET_READINGS alone ("ceccccccoooccoe"), or
    with one stray letter ("ooooh"), or a long run that caught a few ("leocccccccscccccoocccs"). (A word of those
    letters but one, "access", counts as bullets too: the words a suggestion shows are others.)"""
    others = sum(c not in BULLET_READINGS for c in w)
    return others <= 1 or (len(w) > 12 and others / len(w) <= 0.2)


def words(text: str) -> set[str]:
    """The words of ``text``, lower-cased: runs of three letters or more, less runs of one letter repeated
    and runs of a password field's bullets (tesseract reads them as "eeeeee" or "ceccccccoooccoocccccoe")."""
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(set(w)) > 1 and not _bullets(w)}
