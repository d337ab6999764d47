"""Issue 18, item 1 (the engine's side): a new page's sides are at least 100 units and the long one at most
20 times the short one (every drawing rules the page at a 26th of its width); stored pages outside these
limits still load and replay."""

from __future__ import annotations

import pytest

from dotfight.engine import PRESETS, Replay, RuleSet, RuleSetError, check_new_page
from dotfight.engine.limits import MAX_PAGE_ASPECT, MIN_PAGE_SIDE


def refusal(rules: RuleSet) -> RuleSetError:
    with pytest.raises(RuleSetError) as caught:
        check_new_page(rules)
    assert (caught.value.code, caught.value.reason) == ("bad_request", "bad_rules")
    return caught.value


def test_every_preset_and_pages_at_the_limits_are_accepted() -> None:
    for rules in PRESETS.values():
        check_new_page(rules)
    for width, height in ((1000, 20_000), (20_000, 1000), (3000, 60_000), (MIN_PAGE_SIDE, 1400), (600, 900)):
        check_new_page(RuleSet.preset("custom", page_width=width, page_height=height, base_radius_min=25))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"page_width": 1e-6, "page_height": 100_000}, "page_width"),  # the page: too narrow first
        ({"page_width": 1000, "page_height": 20_001}, "page_height"),
        ({"page_width": 30_000, "page_height": 1400}, "page_width"),
        ({"page_width": 99.9, "page_height": 140}, "page_width"),
        ({"page_width": 1000, "page_height": 99}, "page_height"),
    ],
)
def test_a_sliver_or_a_scrap_of_paper_is_refused_naming_its_side(
    overrides: dict[str, float], field: str
) -> None:
    small = {"base_radius_min": 4e-7, "base_radius_max": 4e-7, "dot_radius": 1e-8, "pull_max": 10}
    rules = RuleSet.preset("custom", **overrides, **small)
    refused = refusal(rules)
    assert refused.field == field
    limit = f"{MIN_PAGE_SIDE:g}" if min(overrides.values()) < MIN_PAGE_SIDE else f"{MAX_PAGE_ASPECT:g} times"
    assert limit in str(refused), str(refused)


def test_a_stored_page_outside_the_limits_still_loads_and_replays() -> None:
    stored = RuleSet.from_json(
        {"preset": "custom", "page_width": 1e-6, "page_height": 100_000, "base_radius_min": 4e-7}
        | {"base_radius_max": 4e-7, "dot_radius": 1e-8}
    )
    refusal(stored)
    replay = Replay(stored, 7, [])
    assert replay.error is None and replay.state.rules == stored
