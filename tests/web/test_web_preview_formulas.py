"""The browser keeps only the aim preview's formulas (web/js/preview.js); they must give the engine's
numbers (dotfight.engine.flick) — reach, launch spread with the calibration fields wildness_soft and
wildness_curve, the chain's link shake and the last stand's steadiness — for many rule sets."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dotfight.engine import PRESETS, RuleSet, RuleSetError
from dotfight.engine import flick as engine_flick

pytestmark = pytest.mark.browser

PREVIEW = """async (cases) => {
  const { flickPreview } = await import('/js/preview.js');
  return cases.map(({ rules, pull, steady, link }) => flickPreview(rules, pull, { steady, link }));
}"""


def rule_sets(n: int) -> list[RuleSet]:
    rng = random.Random(10)
    found: list[RuleSet] = [RuleSet.preset(name) for name in PRESETS]
    while len(found) < n:
        base = RuleSet.preset(rng.choice(list(PRESETS)))
        wildness = rng.uniform(0.0, 0.4)
        try:
            found.append(
                base.replace(
                    page_width=rng.choice([600.0, 1000.0, 1400.0]),
                    page_height=rng.choice([900.0, 1400.0, 2000.0]),
                    pull_max=rng.uniform(80.0, 500.0),
                    reach_min_frac=rng.uniform(0.0, 0.9),
                    reach_curve=rng.uniform(0.3, 4.0),
                    wildness=wildness,
                    wildness_soft=rng.uniform(0.0, wildness),
                    wildness_curve=rng.uniform(0.2, 5.0),
                    shake_sigmas=rng.choice([1.0, 2.0, 3.0]),
                    lunge_link_shake=rng.uniform(0.0, 0.2),
                    last_stand_steady=rng.uniform(0.1, 1.0),
                )
            )
        except RuleSetError:
            continue
    return found


def test_preview_formulas_match_the_engine(server: str, phone: Any) -> None:
    page = phone.new_page()
    page.goto(server + "/")
    rng = random.Random(11)
    cases: list[dict[str, Any]] = []
    expected: list[tuple[float, float, float]] = []
    for rules in rule_sets(120):
        for _ in range(6):
            pull = rng.choice([0.0, rng.uniform(0, rules.pull_max), rules.pull_max, rules.pull_max * 1.7])
            last_stand = rng.random() < 0.3
            link = rng.choice([0, 0, 1, 2, 3])
            steady = rules.last_stand_steady if last_stand else 1.0
            t = engine_flick.power(rules, pull, 0.0)
            sigma = (engine_flick.wild_spread(rules, t) + engine_flick.link_shake(rules, link)) * steady
            cases.append({"rules": rules.to_json(), "pull": pull, "steady": steady, "link": link})
            expected.append((t, engine_flick.reach(rules, t), sigma))
    got = page.evaluate(PREVIEW, cases)
    assert len(got) == len(expected) >= 700
    for case, g, (t, reach, sigma) in zip(cases, got, expected, strict=True):
        assert g["power"] == pytest.approx(t, rel=1e-12, abs=1e-12), case
        assert g["reach"] == pytest.approx(reach, rel=1e-9), case
        assert g["sigma"] == pytest.approx(sigma, rel=1e-9, abs=1e-12), case
