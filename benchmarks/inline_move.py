"""The worst case of a move worked out inline on the server's event loop (issue 12, third round).

A move is applied on the event loop when its page's rules are within the new-page limits
(`check_new_page`). This measures, on such pages, what one move costs the loop: the engine's `apply`,
`changes_nothing`, the events as sent (`events_on_the_wire`: the new turn's options) and the checkpoint
of the private state (`checkpoint_of`, every few versions), for every action of whole pages of random
legal play — on the presets and on the largest rules a new page may have (8 bases of 20 soldiers, the
smallest dot a new page allows, every soldier sendable at once) — and for a convoy arrival into a
crowded base (the bounded free-spot search). It prints each kind of action's median, p99 and maximum
in CPU time of the thread ("convoy": played while a convoy was in transit, which the server leaves to
an engine thread).

    python3 benchmarks/inline_move.py [--pages 6] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dotfight.engine import RuleSet, State, apply, changes_nothing, check_new_page, new_page
from dotfight.server.page_view import events_on_the_wire
from dotfight.server.pages.authority import checkpoint_of
from tests.engine.strategies import play_page

LARGEST = {
    "bases_per_side": 8,
    "soldiers_per_base": 20,
    "send_max": 20,
    "dot_radius": 1.0,  # base_radius_max (100) / MAX_BASE_TO_DOT: the smallest a new page allows
}


def inline_cost_s(state: State, side: str, action: dict[str, Any]) -> float:
    """Seconds of one move's inline work, as the authority does it on the loop."""
    start = time.thread_time()
    new_state, events = apply(state, side, action)
    changes_nothing(state, action)
    events_on_the_wire(new_state, events)
    checkpoint_of(new_state)
    return time.thread_time() - start


def measure(name: str, rules: RuleSet, pages: int, seed: int) -> None:
    check_new_page(rules)  # only pages within the limits are worked out inline
    costs: dict[str, list[float]] = defaultdict(list)
    for number in range(pages):
        played = play_page(rules, seed + number, random.Random(seed + number), quick_setup_chance=1.0)
        for state, logged in zip(played.states, played.log, strict=False):
            action = logged["action"]
            kind = action["type"] + (f" {action['kind']}" if action["type"] == "flick" else "")
            if state.convoys:  # an arrival may come with it: such moves go to an engine thread
                kind += ", convoy"
            costs[kind].append(inline_cost_s(state, logged["side"], action))
    every = [cost for kind_costs in costs.values() for cost in kind_costs]
    print(f"{name}: {pages} pages, {len(every)} moves; ms per move: median, p99, max")
    for kind, kind_costs in sorted(costs.items(), key=lambda item: -max(item[1])):
        ordered = sorted(kind_costs)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(
            f"  {kind:22} {len(ordered):6}  {statistics.median(ordered) * 1e3:7.2f} {p99 * 1e3:7.2f}"
            f" {ordered[-1] * 1e3:7.2f}"
        )


def measure_arrival(rules: RuleSet) -> None:
    """A convoy of every soldier of one base sent to another, then the flick that makes it arrive."""
    state = new_page(rules, 5)
    for side, kind in (("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")):
        state, _ = apply(state, side, {"type": kind})
    men = [s.id for s in state.soldiers if s.id.startswith("b1s")][: rules.send_max]
    sent, _ = apply(state, "blue", {"type": "send", "from": "b1", "to": "b3", "soldiers": men})
    sent, _ = apply(sent, "blue", {"type": "flick", "soldier": "b3s1", "kind": "snipe", "vector": [1.0, 0.0]})
    arriving = {"type": "flick", "soldier": "b2s1", "kind": "snipe", "vector": [-1.0, 0.0]}
    costs = sorted(inline_cost_s(sent, "red", arriving) for _ in range(20))
    print(
        f"  convoy of {len(men)} arriving: median {statistics.median(costs) * 1e3:.2f} ms,"
        f" max {costs[-1] * 1e3:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    # The collector's full passes (over the thousands of states this script keeps) are not a move's
    # cost; the server paces them apart (dotfight/server/collector.py).
    gc.disable()
    for name, rules in (
        ("quick", RuleSet.preset("quick")),
        ("dawood", RuleSet.preset("dawood")),
        ("largest new page", RuleSet.preset("dawood", **LARGEST)),
    ):
        measure(name, rules, args.pages, args.seed)
        measure_arrival(rules)


if __name__ == "__main__":
    main()
