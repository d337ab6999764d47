"""Draws the app's home-screen icons in the page's pen style and writes them to web/icons/.

A corner of the exercise book: warm paper, faint blue rules, the red margin, a blue hand-drawn base
with its soldiers, and a blue line of ink that has crossed out a red soldier. Everything is drawn
four times larger and scaled down (smooth ballpoint edges), with a little seeded wobble so the
lines look drawn by hand; the same seed gives the same icons on every run.

- `icon-192.png`, `icon-512.png`: purpose "any" (a rounded paper card on transparency).
- `maskable-192.png`, `maskable-512.png`: purpose "maskable" (paper to every edge, the drawing inside
  the central safe circle of 80 % so any launcher mask keeps it whole).
- `apple-touch-icon.png` (180 × 180): opaque, square; iOS rounds its corners itself.

    python3 scripts/make_icons.py            # needs Pillow (pip install pillow)
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parents[1] / "web" / "icons"
SUPER = 4  # drawn at 4× and scaled down
PAPER = (251, 246, 233, 255)
RULE = (96, 146, 205, 110)
MARGIN = (214, 70, 70, 150)
BLUE = (29, 58, 158, 255)
RED = (195, 38, 45, 255)

Point = tuple[float, float]


def wobbly(points: list[Point], rng: random.Random, amount: float) -> list[Point]:
    """Adds a small, smooth hand wobble along a polyline (each point nudged, ends kept)."""
    out = [points[0]]
    for x, y in points[1:-1]:
        out.append((x + rng.uniform(-amount, amount), y + rng.uniform(-amount, amount)))
    out.append(points[-1])
    return out


def stroke(draw: ImageDraw.ImageDraw, points: list[Point], width: float, color: tuple[int, ...]) -> None:
    """A ballpoint line: round joints, a touch heavier where the pen starts and stops."""
    w = max(1, round(width))
    draw.line(points, fill=color, width=w, joint="curve")
    for x, y in (points[0], points[-1]):
        r = w * 0.62
        draw.ellipse((x - r, y - r, x + r, y + r), fill=color)


def segment(a: Point, b: Point, n: int = 12) -> list[Point]:
    return [(a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n) for k in range(n + 1)]


def hand_circle(cx: float, cy: float, r: float, rng: random.Random) -> list[Point]:
    """A circle drawn in one go: the radius drifts a little and the end overshoots the start."""
    start = rng.uniform(0, 2 * math.pi)
    drift = rng.uniform(-0.04, 0.04)
    pts = []
    steps = 90
    for k in range(steps + 8):  # 8 steps of overshoot
        t = start + 2 * math.pi * k / steps
        rr = r * (1 + drift * math.sin(3 * t) + 0.012 * math.sin(7 * t + 1))
        pts.append((cx + rr * math.cos(t), cy + rr * math.sin(t)))
    return pts


def drawing(size: int, inset: float, rounded: bool, opaque: bool) -> Image.Image:
    """The icon at `size` px; the drawing fits inside the central `inset` fraction of the square."""
    s = size * SUPER
    img = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    card = Image.new("RGBA", (s, s), PAPER)
    d = ImageDraw.Draw(card)
    # Rules and margin cover the whole paper, as on a real page.
    gap = s / 9
    for k in range(1, 10):
        y = k * gap - gap * 0.35
        d.line([(0, y), (s, y)], fill=RULE, width=max(1, round(s / 256)))
    mx = s * 0.16
    d.line([(mx, 0), (mx, s)], fill=MARGIN, width=max(1, round(s / 170)))
    # The drawing, in a unit square mapped to the central `inset` of the icon.
    off = s * (1 - inset) / 2

    def at(x: float, y: float) -> Point:
        return (off + x * s * inset, off + y * s * inset)

    rng = random.Random(7)
    pen = s * inset * 0.028
    ring = hand_circle(*at(0.36, 0.62), s * inset * 0.25, rng)
    stroke(d, wobbly(ring, rng, pen * 0.08), pen, BLUE)
    dot = s * inset * 0.055
    for x, y in ((0.28, 0.56), (0.43, 0.54), (0.33, 0.72), (0.46, 0.7)):
        cx, cy = at(x, y)
        d.ellipse((cx - dot, cy - dot, cx + dot, cy + dot), fill=BLUE)
    # A line of ink from a blue soldier out to a red one, crossed out where the ink reached him.
    red = at(0.8, 0.2)
    stroke(d, wobbly(segment(at(0.43, 0.54), at(0.86, 0.13)), rng, pen * 0.25), pen * 0.8, BLUE)
    d.ellipse((red[0] - dot, red[1] - dot, red[0] + dot, red[1] + dot), fill=RED)
    cross = dot * 1.7
    stroke(d, segment((red[0] - cross, red[1] - cross), (red[0] + cross, red[1] + cross), 3), pen * 0.8, BLUE)
    stroke(d, segment((red[0] - cross, red[1] + cross), (red[0] + cross, red[1] - cross), 3), pen * 0.8, BLUE)
    if rounded:
        mask = Image.new("L", (s, s), 0)
        ImageDraw.Draw(mask).rounded_rectangle((0, 0, s - 1, s - 1), radius=s * 0.18, fill=255)
        img.paste(card, (0, 0), mask)
    else:
        img = card
    small = img.resize((size, size), Image.Resampling.LANCZOS)
    if opaque:
        small = small.convert("RGB")
    return small


def save(img: Image.Image, name: str) -> None:
    """Writes a palette PNG (a few dozen colours are plenty for paper and two pens; small files)."""
    if img.mode == "RGBA":
        pal = img.quantize(colors=96, method=Image.Quantize.FASTOCTREE)
    else:
        pal = img.quantize(colors=96, method=Image.Quantize.MEDIANCUT)
    pal.save(OUT / name, optimize=True)
    print(f"{name:24s} {img.size[0]:4d} px  {(OUT / name).stat().st_size:6d} bytes")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in (192, 512):
        save(drawing(size, inset=0.86, rounded=True, opaque=False), f"icon-{size}.png")
        # Maskable: the drawing stays inside the 80 % safe circle.
        save(drawing(size, inset=0.62, rounded=False, opaque=True), f"maskable-{size}.png")
    save(drawing(180, inset=0.8, rounded=False, opaque=True), "apple-touch-icon.png")


if __name__ == "__main__":
    main()
