"""The page as a picture: an SVG drawn in the web app's pen style, and a PNG rasterised from it.

It draws what the engine's state holds — paper, ruled lines, margin, hand-drawn rings, soldiers' dots,
crosses in the killer's colour, every line of ink and the convoys on the road — with the same strokes as
`web/js/paper.js` and `web/js/render.js` (the same mulberry32 generator, FNV-1a seeds, smooth noise,
pressure chunks and pen blobs, ported number for number). No rule is decided here: the state says who
stands where, who is crossed out and by which side.

Every wobble is seeded from the page id and the thing drawn, so a page's picture at a given version is
always the same bytes (its ETag can be the id and version), and two pages never share their wobbles.

Whatever the rules, a drawing's work and size are a constant plus a part linear in the page's ink and
soldiers: at most `MAX_RULED_LINES` ruled lines (a page taller than the new-page limits allow gets them
further apart), at most `MAX_STROKE_SAMPLES` points per stroke beyond its own corners, one margin line.
`page_svg(..., max_bytes=N)` stops with `PictureTooLarge` as soon as the document would pass N bytes.

Public, for other pictures drawn in the same pen (e.g. a link preview's card): `SvgPen` (the strokes,
rings, dots and crosses), `draw_paper`, `page_svg`, `png_size`, `svg_to_png`, `hash_seed`, `rng`,
`smooth_noise`, `circle_crossings` and the colours `INK`, `SHEET`, `RULE`, `MARGIN`.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dotfight.engine import RuleSet, State
from dotfight.engine.limits import MAX_PAGE_ASPECT

__all__ = [
    "INK",
    "MARGIN",
    "PICTURE_FORMAT",
    "RULE",
    "SHEET",
    "PictureTooLarge",
    "PictureUnavailable",
    "SvgPen",
    "circle_crossings",
    "draw_paper",
    "hash_seed",
    "page_svg",
    "png_size",
    "rng",
    "smooth_noise",
    "svg_to_png",
]

# Bumped whenever the drawing changes, so cached pictures (ETags, chat previews) are drawn anew.
# 2: ruled lines and strokes bounded whatever the rules (pages within the new-page limits unchanged).
PICTURE_FORMAT = 2

INK = {"blue": "#1d3a9e", "red": "#c3262d"}
SHEET = "#fbf6e9"
RULE = ("#6092cd", 0.38)
MARGIN = ("#d64646", 0.55)
# The PNG fits the page in this box of pixels (a preset's page: 700 × 980): sharp in a chat preview, and
# bounded whatever a custom page's shape.
PNG_BOX = (700, 1400)
PNG_COLOURS = 64

_MASK = 0xFFFFFFFF
# Page units between the points of a stroke. paper.js samples every 5; a picture file samples every 10,
# half the size, with no visible change: the wobble's shortest wave is about 150 units long.
# On a page larger than the presets', a stroke has at most this many points per diagonal's length.
SAMPLE_STEP = 10
POINTS_PER_DIAGONAL = 180
# Ruled lines are `width / RULES_ACROSS` apart (the exercise book's spacing) on every page within the
# new-page limits, which have at most this many; a taller page (stored before the limits) gets this many
# spread over its height. paper.js keeps the same numbers.
RULES_ACROSS = 26
MAX_RULED_LINES = math.ceil(RULES_ACROSS * MAX_PAGE_ASPECT)
# Points of one stroke besides its own corners (a preset's longest line has under 200): a longer stroke is
# sampled further apart, so no rule value (a huge ring, a long page) makes a stroke's work grow.
MAX_STROKE_SAMPLES = 1024

Point = tuple[float, float]


# --------------------------------------------------------------------------------------------------
# the seeded generator and noise of paper.js


def hash_seed(text: str) -> int:
    """Hashes a string to a 32-bit seed (FNV-1a over UTF-16 code units, as paper.js `hashSeed`).

    >>> hash_seed("b1"), hash_seed("")
    (2351703228, 2166136261)
    """
    h = 0x811C9DC5
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & _MASK
    return h


def rng(seed: int) -> Callable[[], float]:
    """Returns a deterministic generator of numbers in [0, 1) for a seed (mulberry32, as paper.js).

    >>> draw = rng(1)
    >>> round(draw(), 6), round(draw(), 6)
    (0.627074, 0.002736)
    """
    state = seed & _MASK

    def draw() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _MASK
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & _MASK
        t = (t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & _MASK)) & _MASK)) & _MASK
        return ((t ^ (t >> 14)) & _MASK) / 4294967296

    return draw


def smooth_noise(seed: int) -> Callable[[float], float]:
    """Returns a smooth 1-D noise in about [-1, 1]: a sum of three seeded sines.

    >>> noise = smooth_noise(7)
    >>> noise(0.0) == smooth_noise(7)(0.0), -1.5 < noise(123.0) < 1.5
    (True, True)
    """
    draw = rng(seed)
    waves = []
    for i in range(3):
        frequency = (0.004 + draw() * 0.01) * (i + 1)
        phase = draw() * 6.28
        waves.append((frequency, phase, 1 / (i + 1.4)))
    return lambda d: sum(a * math.sin(d * f + p) for f, p, a in waves) / 1.6


# --------------------------------------------------------------------------------------------------
# polylines


@dataclass(frozen=True)
class _Sample:
    x: float
    y: float
    d: float  # distance from the start of the line


def _resample(points: Sequence[Point], step: float = 5) -> list[_Sample]:
    """Cuts a polyline into points about `step` apart (further apart on a line longer than
    `MAX_STROKE_SAMPLES` steps), each with its distance from the start."""
    if not points:
        return []
    segments = list(itertools.pairwise(points))
    lengths = [math.hypot(x1 - x0, y1 - y0) for (x0, y0), (x1, y1) in segments]
    step = max(step, sum(lengths) / MAX_STROKE_SAMPLES)
    out = [_Sample(points[0][0], points[0][1], 0.0)]
    d = 0.0
    for ((x0, y0), (x1, y1)), length in zip(segments, lengths, strict=True):
        n = max(1, math.ceil(length / step))
        for k in range(1, n + 1):
            f = k / n
            out.append(_Sample(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, d + length * f))
        d += length
    return out


def circle_crossings(points: Sequence[Point], circles: Sequence[tuple[float, float, float]]) -> list[float]:
    """Distances along a polyline where it crosses the circles (x, y, r), in order; leaving the circle
    the line starts in is not counted (as paper.js `circleCrossings`, where a snipe's line thins).

    >>> circle_crossings([(0, 0), (100, 0)], [(50, 0, 10), (0, 0, 5)])
    [40.0, 60.0]
    """
    out: list[float] = []
    if len(points) < 2:
        return out
    for cx, cy, r in circles:
        mine: list[float] = []
        d = 0.0
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            dx, dy = x1 - x0, y1 - y0
            a = dx * dx + dy * dy
            length = math.sqrt(a)
            if length > 0:
                fx, fy = x0 - cx, y0 - cy
                b = 2 * (fx * dx + fy * dy)
                k = fx * fx + fy * fy - r * r
                disc = b * b - 4 * a * k
                if disc >= 0:
                    root = math.sqrt(disc)
                    for t in ((-b - root) / (2 * a), (-b + root) / (2 * a)):
                        if 1e-6 < t <= 1:
                            mine.append(d + t * length)
            d += length
        starts_inside = math.hypot(points[0][0] - cx, points[0][1] - cy) <= r
        out.extend(mine[1:] if starts_inside else mine)
    return sorted(out)


# --------------------------------------------------------------------------------------------------
# SVG writing


def _n(value: float) -> str:
    """Writes a coordinate to 0.1 unit (finer is invisible and would only make the file bigger)."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _tenths(value: int) -> str:
    """Writes a whole number of tenths as short as SVG reads it: 23 → "2.3", -5 → "-.5", 40 → "4"."""
    sign = "-" if value < 0 else ""
    whole, tenth = divmod(abs(value), 10)
    if not tenth:
        return f"{sign}{whole}"
    return f"{sign}{whole or ''}.{tenth}"


def _relative_path(points: Sequence[Point]) -> str:
    """Writes a polyline as an SVG path of relative steps between its points rounded to 0.1 unit (the
    steps are taken between rounded points, so no rounding error adds up along a long line)."""
    tenths = [(round(x * 10), round(y * 10)) for x, y in points]
    x0, y0 = tenths[0]
    parts = [f"M{_tenths(x0)} {_tenths(y0)}l"]
    for x, y in tenths[1:]:
        dx, dy = _tenths(x - x0), _tenths(y - y0)
        parts.append(f"{dx}{dy}" if dy.startswith("-") else f"{dx} {dy}")
        x0, y0 = x, y
    return parts[0] + " ".join(parts[1:])


def _o(value: float) -> str:
    """Writes an opacity or width to 0.001."""
    return f"{value:.3f}"


class PictureTooLarge(RuntimeError):
    """The document would pass its size budget (`max_bytes`)."""


class SvgPen:
    """Collects SVG elements in drawing order, in the web app's pen; strokes are sampled every `step`
    page units. With `max_bytes`, adding past that many characters raises PictureTooLarge.

    >>> pen = SvgPen(step=10)
    >>> pen.pen_dot(50, 50, 7, INK["blue"], seed=1, alpha=0.95)
    >>> pen.parts[0].startswith("<ellipse")
    True
    """

    def __init__(self, step: float, max_bytes: int | None = None) -> None:
        self.parts: list[str] = []
        self.step = step
        self.size = 0
        self.max_bytes = max_bytes

    def add(self, text: str) -> None:
        """Adds one element (or an opening or closing tag)."""
        self.size += len(text) + 1  # and the line break that joins the parts
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise PictureTooLarge(f"the picture would be over {self.max_bytes} bytes")
        self.parts.append(text)

    def text(self) -> str:
        """Returns the elements as one document's text."""
        return "\n".join(self.parts) + "\n"

    def pen_stroke(
        self,
        points: Sequence[Point],
        color: str,
        *,
        seed: int,
        width: float = 3.2,
        wobble: float = 1.8,
        alpha: float = 0.92,
        thin_at: Sequence[float] = (),
    ) -> None:
        """A ballpoint stroke: a little wobbly, uneven in pressure, darker where the pen rests."""
        pts = _resample(points, self.step)
        if len(pts) < 2:
            return
        total = pts[-1].d
        if not total > 0:
            return
        bend = smooth_noise(seed)
        thick = smooth_noise(seed ^ 0x9E3779B9)
        bent: list[_Sample] = []
        last = len(pts) - 1
        for i, p in enumerate(pts):
            a, b = pts[max(0, i - 1)], pts[min(last, i + 1)]
            length = math.hypot(b.x - a.x, b.y - a.y) or 1
            nx, ny = -(b.y - a.y) / length, (b.x - a.x) / length
            # The ends stay put, so a line meets its soldier.
            fade = min(1, p.d / 30, (total - p.d) / 30 + 0.02)
            off = bend(p.d) * wobble * fade
            bent.append(_Sample(p.x + nx * off, p.y + ny * off, p.d))
        self.add(f'<g stroke="{color}" fill="none" stroke-linecap="round" stroke-linejoin="round">')
        # Chunks of about 40 units (cut at wall crossings), each a shade thicker or thinner.
        chunk = 40
        start = 0
        while start < last:
            stop = start + 1
            while (
                stop < last
                and bent[stop].d - bent[start].d < chunk
                and not any(bent[stop - 1].d < d <= bent[stop].d for d in thin_at)
            ):
                stop += 1
            mid = (bent[start].d + bent[stop].d) / 2
            opacity = alpha * (0.86 + 0.14 * (thick(mid * 3) * 0.5 + 0.5))
            thinned = 1.0
            for d in thin_at:
                if d < mid:
                    thinned *= 0.82  # each wall crossed leaves a snipe's line a little thinner
            line_width = width * max(0.45, thinned) * (0.9 + 0.2 * (thick(mid) * 0.5 + 0.5))
            path = _relative_path([(q.x, q.y) for q in bent[start : stop + 1]])
            self.add(f'<path d="{path}" stroke-width="{_o(line_width)}" stroke-opacity="{_o(opacity)}"/>')
            start = stop
        self.add("</g>")
        # The pen rests a moment where it starts and where it stops: a darker blob.
        for p, r in ((bent[0], width * 0.75), (bent[-1], width * 0.7)):
            blob = f'cx="{_n(p.x)}" cy="{_n(p.y)}" r="{_o(r)}"'
            self.add(f'<circle {blob} fill="{color}" fill-opacity="{_o(alpha)}"/>')

    def hand_circle(self, x: float, y: float, r: float, color: str, seed: int) -> None:
        """A hand-drawn ring: the radius breathes a little and the pen overshoots where it closes."""
        draw = rng(seed)
        start = draw() * math.pi * 2
        overshoot = 0.22 + draw() * 0.18
        sweep = math.pi * 2 + overshoot
        squash = 1 + (draw() - 0.5) * 0.05
        phase = draw() * 6.28
        drift = (draw() - 0.5) * 0.035
        steps = min(MAX_STROKE_SAMPLES, max(12, math.ceil(r * sweep / 5)))
        points = []
        for i in range(steps + 1):
            a = start + sweep * i / steps
            rr = r * (1 + 0.012 * math.sin(2 * a + phase) + drift * ((a - start) / (math.pi * 2)))
            points.append((x + math.cos(a) * rr * squash, y + math.sin(a) * rr / squash))
        self.pen_stroke(points, color, seed=seed ^ 0x55AA, width=3.2, wobble=0.6, alpha=0.9)

    def pen_dot(self, x: float, y: float, r: float, color: str, seed: int, alpha: float) -> None:
        """A soldier's dot: a filled ballpoint blob, not a perfect disc."""
        draw = rng(seed)
        rx, ry = r * (0.95 + draw() * 0.1), r * (0.9 + draw() * 0.1)
        turn = math.degrees(draw() * math.pi)
        self.add(
            f'<ellipse cx="{_n(x)}" cy="{_n(y)}" rx="{_o(rx)}" ry="{_o(ry)}" '
            f'transform="rotate({_n(turn)} {_n(x)} {_n(y)})" fill="{color}" fill-opacity="{_o(alpha)}"/>'
        )
        cx, cy = x + (draw() - 0.5) * r * 0.3, y + (draw() - 0.5) * r * 0.3
        self.add(
            f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_o(r * 0.85)}" fill="{color}" '
            f'fill-opacity="{_o(alpha * 0.5)}"/>'
        )

    def pen_cross(self, x: float, y: float, size: float, color: str, seed: int) -> None:
        """The small X over a crossed-out soldier."""
        draw = rng(seed)

        def j() -> float:
            return (draw() - 0.5) * size * 0.25

        a = [(x - size + j(), y - size + j()), (x + size + j(), y + size + j())]
        b = [(x + size + j(), y - size + j()), (x - size + j(), y + size + j())]
        self.pen_stroke(a, color, seed=(seed + 1) & _MASK, width=3.2, wobble=0.3)
        self.pen_stroke(b, color, seed=(seed + 2) & _MASK, width=3.2, wobble=0.3)


def draw_paper(svg: SvgPen, width: float, height: float) -> None:
    """Draws the warm sheet, faint blue rules (at most `MAX_RULED_LINES`) and one red margin line."""
    svg.add(f'<rect width="{_n(width)}" height="{_n(height)}" fill="{SHEET}"/>')
    gap = max(width / RULES_ACROSS, height / MAX_RULED_LINES)
    rules = []
    y = gap * 2.5
    for _ in range(MAX_RULED_LINES):  # a count, not only `y < height`: a gap too small to add ends too
        if not y < height:
            break
        rules.append(f"M0 {_n(y)}H{_n(width)}")
        y += gap
    color, opacity = RULE
    svg.add(f'<path d="{"".join(rules)}" stroke="{color}" stroke-opacity="{opacity}" stroke-width="1.6"/>')
    color, opacity = MARGIN
    x = _n(width * 0.085)
    svg.add(f'<path d="M{x} 0V{_n(height)}" stroke="{color}" stroke-opacity="{opacity}" stroke-width="2.2"/>')


def page_svg(state: State, page_id: str, *, max_bytes: int | None = None) -> str:
    """Draws the page in this state as an SVG document in page units (the same bytes every time); with
    `max_bytes`, raises PictureTooLarge rather than make a longer document.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> svg = page_svg(page, "demo")
    >>> svg.startswith("<svg") and svg == page_svg(page, "demo") and svg != page_svg(page, "other")
    True
    >>> svg.count("<ellipse")  # one dot per soldier
    48
    """
    rules = state.rules
    width, height = rules.page_width, rules.page_height

    def seed(key: str) -> int:
        return hash_seed(f"{page_id}/{key}")

    svg = SvgPen(step=max(SAMPLE_STEP, rules.diagonal / POINTS_PER_DIAGONAL), max_bytes=max_bytes)
    svg.add(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}">'
    )
    draw_paper(svg, width, height)
    for base in state.bases:
        svg.hand_circle(base.x, base.y, base.r, INK[base.side], seed(base.id))
    circles = [(base.x, base.y, base.r) for base in state.bases]
    for index, ink in enumerate(state.ink):
        thin_at = circle_crossings(ink.points, circles) if ink.kind == "snipe" else []
        svg.pen_stroke(
            ink.points,
            INK[ink.side],
            seed=seed(f"ink{index}"),
            width=2.8 if ink.kind == "lunge" else 3.4,
            thin_at=thin_at,
        )
    bases = {base.id: base for base in state.bases}
    for convoy in state.convoys:
        source, to = bases.get(convoy.source), bases.get(convoy.to)
        if source is None or to is None:
            continue
        svg.add(
            f'<path d="M{_n(source.x)} {_n(source.y)}L{_n(to.x)} {_n(to.y)}" stroke="{INK[convoy.side]}" '
            'stroke-opacity="0.35" stroke-width="2" stroke-dasharray="3 9" fill="none"/>'
        )
    dot = rules.dot_radius
    for soldier in state.soldiers:
        alpha = 0.95 if soldier.alive else 0.55
        svg.pen_dot(soldier.x, soldier.y, dot, INK[soldier.side], seed(soldier.id), alpha)
        if not soldier.alive and soldier.cross is not None:
            svg.pen_cross(soldier.x, soldier.y, dot * 1.7, INK[soldier.cross.side], seed(f"x{soldier.id}"))
    svg.add("</svg>")
    return svg.text()


def png_size(rules: RuleSet) -> tuple[int, int]:
    """Returns the PNG's (width, height) in pixels: the page's shape, as large as fits in `PNG_BOX`.

    >>> png_size(RuleSet.preset("classic")), png_size(RuleSet.preset("classic").replace(page_height=5000))
    ((700, 980), (280, 1400))
    """
    scale = min(PNG_BOX[0] / rules.page_width, PNG_BOX[1] / rules.page_height)
    return max(1, round(rules.page_width * scale)), max(1, round(rules.page_height * scale))


def svg_to_png(svg: str, size: tuple[int, int]) -> bytes:
    """Rasterises an SVG document to a PNG of `size` (width, height) with cairosvg (Debian's libcairo2), then
    keeps it to 64 colours (two inks on paper need no more; the file is a third the size, which chat
    apps' link previews want small).

    Raises PictureUnavailable when the rasteriser or its library is not installed.
    """
    try:
        import cairosvg  # imported on first use: a server without libcairo2 still draws SVGs
    except (ImportError, OSError) as error:
        raise PictureUnavailable(f"no PNG rasteriser on this server ({error})") from error
    from PIL import Image

    width, height = size
    rgba = cairosvg.svg2png(bytestring=svg.encode("utf-8"), output_width=width, output_height=height)
    with Image.open(io.BytesIO(rgba)) as image:
        palette = image.convert("RGB").quantize(
            colors=PNG_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    out = io.BytesIO()
    palette.save(out, "PNG", optimize=True)
    return out.getvalue()


class PictureUnavailable(RuntimeError):
    """The PNG cannot be made here (cairosvg or libcairo2 is missing)."""
