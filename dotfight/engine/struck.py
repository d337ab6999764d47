"""A man the ink crosses out on its way (RULES.md §5, §6): the snipe and the lunge strike him alike."""

from __future__ import annotations

from .values import Cross, Event, Soldier
from .views import Arrays


def strike(
    soldiers: tuple[Soldier, ...],
    j: int,
    cross: Cross,
    at: list[float],
    updates: dict[int, Soldier],
    arrays: Arrays,
    garrison: list[int],
) -> Event:
    """Crosses soldier `j` out where the ink meets him (into `updates`), takes him out of the garrison of
    the wall he held (`garrison`, the flick's own copy: men crossed out on the way in no longer hold the
    far wall) and returns his `crossed_out` event.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> updates, garrison, j = {}, list(page.arrays.garrison), page.soldier_index["b4s1"]
    >>> by = Cross("b3s1", "snipe", "blue")
    >>> strike(page.soldiers, j, by, [500.0, 350.0], updates, page.arrays, garrison)
    {'type': 'crossed_out', 'soldier': 'b4s1', 'at': [500.0, 350.0], 'by': 'b3s1', 'cause': 'snipe'}
    >>> updates[j].alive, page.arrays.garrison[3] - garrison[3]
    (False, 1)
    """
    target = soldiers[j]
    updates[j] = Soldier(target.id, target.side, target.x, target.y, False, False, cross)
    if arrays.counted[j]:
        garrison[arrays.home[j]] -= 1
    return {"type": "crossed_out", "soldier": target.id, "at": at, "by": cross.by, "cause": cross.cause}
