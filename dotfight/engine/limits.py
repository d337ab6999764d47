"""Limits on new pages' rules: ratios past which a rule's work would grow without bound, or a page would
stop being one a person can play. Stored pages never go through these (docs/RULES-NOTES.md, Limits).

`RuleSet` itself accepts every rule set that makes sense, so any page ever stored loads and replays;
`check_new_page` is the stricter question a server asks before it creates a page.
"""

from __future__ import annotations

from .errors import RuleSetError, quoted
from .rules import RuleSet

# The largest base may be at most this many dot radii across its radius. The arrival free-spot search
# looks at spots two dot radii apart inside a ring, so without a bound its work grows with the square of
# this ratio (the rule book's numbers give about 14; a dot a hundredth of the biggest base is already
# hard to see on a phone).
MAX_BASE_TO_DOT = 100.0
# A page's long side may be at most this many times its short side. Every picture of the page (the
# server's SVG and PNG, the app's canvas) rules it across at the exercise book's spacing, a 26th of its
# width, so a sliver a millionth as wide as it is tall was 2.6 × 10¹² ruled lines; the drawings now
# space them wider past this, and a new page stays where they are drawn as designed (at most 520).
MAX_PAGE_ASPECT = 20.0
# Neither side may be shorter than this: the pen is drawn in page units (3.2-unit strokes, 40-unit
# pressure, coordinates to 0.1 unit in the SVG), so a smaller page is drawn as blots.
MIN_PAGE_SIDE = 100.0


def check_new_page(rules: RuleSet) -> None:
    """Refuses (`RuleSetError`, code `bad_request`, reason `bad_rules`, naming the field) a rule set a new
    page may not be created with; every preset and every sensible variation passes.

    >>> from dotfight.engine import RuleSet, RuleSetError, check_new_page
    >>> check_new_page(RuleSet.preset("dawood", dot_radius=2))
    >>> try:
    ...     check_new_page(RuleSet.preset("quick", dot_radius=0.001))
    ... except RuleSetError as refusal:
    ...     print(refusal.code, refusal.reason, refusal.field)
    ...     print(refusal)
    bad_request bad_rules dot_radius
    rule dot_radius=0.001: must be at least 1 (base_radius_max=100.0 / 100) on a new page
    >>> try:
    ...     check_new_page(RuleSet.preset("custom", page_width=1000, page_height=30000))
    ... except RuleSetError as refusal:
    ...     print(refusal)
    rule page_height=30000.0: must be at most 20 times the page's other side (1000) on a new page
    """
    for name in ("page_width", "page_height"):
        side = getattr(rules, name)
        if side < MIN_PAGE_SIDE:
            raise RuleSetError(name, side, f"must be at least {MIN_PAGE_SIDE:g} on a new page")
    width, height = rules.page_width, rules.page_height
    long_name, long_side, short_side = (
        ("page_height", height, width) if height >= width else ("page_width", width, height)
    )
    if long_side > short_side * MAX_PAGE_ASPECT:
        raise RuleSetError(
            long_name,
            long_side,
            f"must be at most {MAX_PAGE_ASPECT:g} times the page's other side ({short_side:g}) on a new page",
        )
    smallest_dot = rules.base_radius_max / MAX_BASE_TO_DOT
    if rules.dot_radius < smallest_dot:
        raise RuleSetError(
            "dot_radius",
            rules.dot_radius,
            f"must be at least {smallest_dot:g} (base_radius_max={quoted(rules.base_radius_max)} / "
            f"{MAX_BASE_TO_DOT:g}) on a new page",
        )
