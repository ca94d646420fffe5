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
import shutil
import subprocess

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


def read(png: pathlib.Path, box: list[int]) -> str:
    """The text of one line within ``box`` (x0, y0, x1, y1) of ``png``, as tesseract reads it."""
    img = Image.open(png).convert("L")
    x0, y0, x1, y1 = box
    crop = img.crop((max(0, x0 - PAD), max(0, y0 - PAD), min(img.width, x1 + PAD), min(img.height, y1 + PAD)))
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
#: What a caret right before the suggestion reads as when the region read takes it in (a thin caret's line).
CARET_GLYPHS = set("lI1|i![")


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
    if len(b) == len(a) + 1 and ocr.lstrip()[:1] in CARET_GLYPHS:
        b = b[1:]
    return b == a or (len(b) == len(a) > 1 and b[1:] == a[1:])


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
