"""The runnable examples in the engine's docstrings: every one passes, and the main API keeps its examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import sys
import types

import pytest

import dotfight.engine
from dotfight.engine import (
    Replay,
    RuleSet,
    RuleSetError,
    State,
    apply,
    can_stand,
    check_new_page,
    flick,
    flickable,
    new_page,
    placement_problem,
    refusal,
    resolve_lunge,
    resolve_snipe,
    send_options,
    turn_options,
)
from dotfight.engine.geometry import Circle, edge_distance, quadratic_roots
from dotfight.engine.rng import normal
from dotfight.engine.send import free_spot_search

pytestmark = pytest.mark.skipif(sys.flags.optimize >= 2, reason="python -OO strips docstrings")

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

ENGINE_MODULES = [
    "dotfight.engine",
    *sorted(f"dotfight.engine.{info.name}" for info in pkgutil.iter_modules(dotfight.engine.__path__)),
]

# Modules a reader of the public API opens first; each must show at least one example.
KEY_MODULES = [
    "dotfight.engine",
    "dotfight.engine.errors",
    "dotfight.engine.flick",
    "dotfight.engine.geometry",
    "dotfight.engine.limits",
    "dotfight.engine.lunge",
    "dotfight.engine.query",
    "dotfight.engine.reducer",
    "dotfight.engine.replay",
    "dotfight.engine.rng",
    "dotfight.engine.rules",
    "dotfight.engine.snipe",
    "dotfight.engine.state",
]

# The documented entry points whose own docstring carries an example (ARCHITECTURE.md's engine API).
DOCUMENTED: dict[str, object] = {
    "RuleSet": RuleSet,
    "RuleSet.preset": type(RuleSet.preset).__call__,
    "RuleSet.replace": RuleSet.replace,
    "RuleSet.to_json": RuleSet.to_json,
    "RuleSet.from_json": RuleSet.from_json,
    "RuleSetError": RuleSetError,
    "new_page": new_page,
    "apply": apply,
    "State.actor": State.actor,
    "State.snapshot": State.snapshot,
    "State.to_json": State.to_json,
    "State.from_json": State.from_json,
    "State.with_rng": State.with_rng,
    "Replay": Replay,
    "resolve_snipe": resolve_snipe,
    "resolve_lunge": resolve_lunge,
    "check_new_page": check_new_page,
    "refusal": refusal,
    "placement_problem": placement_problem,
    "can_stand": can_stand,
    "flickable": flickable,
    "send_options": send_options,
    "turn_options": turn_options,
    "flick.power_for_reach": flick.power_for_reach,
    "flick.pull_for_reach": flick.pull_for_reach,
    "flick.wild_spread": flick.wild_spread,
    "flick.wall_loss": flick.wall_loss,
    "flick.wall_shake": flick.wall_shake,
    "flick.man_shake": flick.man_shake,
    "flick.link_shake": flick.link_shake,
    "flick.in_last_stand": flick.in_last_stand,
    "send.free_spot_search": free_spot_search,
    "rng.normal": normal,
    "geometry.quadratic_roots": quadratic_roots,
    "geometry.edge_distance": edge_distance,
    "Circle.crossings": Circle.crossings,
}


def run_examples(module: types.ModuleType, capsys: pytest.CaptureFixture[str]) -> tuple[int, int, str]:
    """Runs the module's doctests; returns (failed, attempted, the failure report)."""
    results = doctest.testmod(module, optionflags=OPTIONS, report=False)
    return results.failed, results.attempted, capsys.readouterr().out


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_every_example_in_the_module_passes(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    failed, _, report = run_examples(importlib.import_module(name), capsys)
    assert failed == 0, report


@pytest.mark.parametrize("name", KEY_MODULES)
def test_key_module_shows_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert name in ENGINE_MODULES
    _, attempted, _ = run_examples(importlib.import_module(name), capsys)
    assert attempted > 0, f"{name} has no runnable example in its docstrings"


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_public_entry_point_has_its_own_example(name: str) -> None:
    docstring = getattr(DOCUMENTED[name], "__doc__", None) or ""
    assert doctest.DocTestParser().get_examples(docstring), f"{name}'s docstring shows no example"


def test_a_wrong_example_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    # The options must not make every output match: an ellipsis only stands for what it replaces.
    module = types.ModuleType("wrong_example")
    module.__doc__ = """
    >>> RuleSet.preset("quick").bases_per_side
    4
    >>> list(range(5))
    [0, ..., 4]
    """
    module.__dict__["RuleSet"] = RuleSet
    failed, attempted, report = run_examples(module, capsys)
    assert (failed, attempted) == (1, 2)
    assert "Expected:\n    4\nGot:\n    3" in report
