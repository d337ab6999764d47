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
    """
    smallest_dot = rules.base_radius_max / MAX_BASE_TO_DOT
    if rules.dot_radius < smallest_dot:
        raise RuleSetError(
            "dot_radius",
            rules.dot_radius,
            f"must be at least {smallest_dot:g} (base_radius_max={quoted(rules.base_radius_max)} / "
            f"{MAX_BASE_TO_DOT:g}) on a new page",
        )
