"""Write static/root/favicon.ico: the icon of static/talekeeper/favicon.svg (a purple rounded square
with a white pip), drawn here at 16 and 32 pixels, for browsers that ask for /favicon.ico.

Standard library only; run it again after changing the icon: ``python3 tools/make_favicon.py``.
The pages link the SVG (templates/base.html); WhiteNoise serves the ICO at the site's root
(``WHITENOISE_ROOT``).
"""

from __future__ import annotations

import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "static" / "root" / "favicon.ico"
PURPLE, WHITE = (0x6B, 0x2D, 0x8F), (0xFF, 0xFF, 0xFF)
SAMPLES = 4  # per pixel and axis: the edges are anti-aliased


def inside_rounded_square(x: float, y: float) -> bool:
    """The SVG's rect: 16 by 16 units, corners of radius 3."""
    r = 3.0
    cx, cy = min(max(x, r), 16 - r), min(max(y, r), 16 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def inside_pip(x: float, y: float) -> bool:
    """The SVG's circle: centre (8, 8), radius 2."""
    return (x - 8) ** 2 + (y - 8) ** 2 <= 4


def pixel(px: int, py: int, size: int) -> tuple[int, int, int, int]:
    """(b, g, r, a) of one pixel, top-left origin."""
    covered = pip = 0
    for sx in range(SAMPLES):
        for sy in range(SAMPLES):
            x = (px + (sx + 0.5) / SAMPLES) * 16 / size
            y = (py + (sy + 0.5) / SAMPLES) * 16 / size
            if inside_rounded_square(x, y):
                covered += 1
                pip += inside_pip(x, y)
    if not covered:
        return 0, 0, 0, 0
    mix = pip / covered
    r, g, b = (round(p * (1 - mix) + w * mix) for p, w in zip(PURPLE, WHITE))
    return b, g, r, round(255 * covered / SAMPLES ** 2)


def bitmap(size: int) -> bytes:
    """An ICO image: a BITMAPINFOHEADER (height doubled for the mask), 32-bit BGRA rows bottom-up,
    then the 1-bit AND mask (all zero: the alpha says what is transparent)."""
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, 0, 0, 0, 0, 0)
    rows = b"".join(bytes(c for px in range(size) for c in pixel(px, py, size)) for py in reversed(range(size)))
    mask = bytes(((size + 31) // 32) * 4 * size)
    return header + rows + mask


def icon(sizes=(16, 32)) -> bytes:
    images = [bitmap(size) for size in sizes]
    out = struct.pack("<HHH", 0, 1, len(images))
    offset = 6 + 16 * len(images)
    for size, image in zip(sizes, images):
        out += struct.pack("<BBBBHHII", size, size, 0, 0, 1, 32, len(image), offset)
        offset += len(image)
    return out + b"".join(images)


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(icon())
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")
