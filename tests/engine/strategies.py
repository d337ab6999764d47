"""Shared generators for engine tests: rule sets, seeds, and a random legal player.

The player reads only the public snapshot (PROTOCOL.md "State"), never the engine's internals, so it
doubles as an independent reading of RULES.md: every action it proposes is legal by the rule book, and
the property tests check that the engine agrees. Bot and lab tests may reuse it.

Legality is kept with small safety margins (a fraction of a unit) away from every boundary the rules
draw (half line, page edge, base gap, dot overlap, wall), so a proposal never depends on how the engine
rounds an exact tie; boundary cases belong in the engine's own unit tests.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from dotfight.engine import RuleSet, State, apply, new_page

SIDES = ("blue", "red")
PRESET_NAMES = ("classic", "quick", "dawood")

# Keeps proposals clear of exact ties at every boundary the rules draw.
SAFETY = 0.5

Action = dict[str, Any]
Snapshot = dict[str, Any]


def other(side: str) -> str:
    """Returns the opposing side."""
    return "red" if side == "blue" else "blue"


# ---------------------------------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------------------------------


def seeds() -> st.SearchStrategy[int]:
    """Page seeds over the whole 128-bit range the engine accepts."""
    return st.integers(min_value=0, max_value=2**128 - 1)


def small_rules(bases_per_side: int, soldiers_per_base: int) -> RuleSet:
    """A custom rule set of the given size, otherwise the standard rules."""
    return RuleSet.preset("custom", bases_per_side=bases_per_side, soldiers_per_base=soldiers_per_base)


@st.composite
def small_rule_sets(draw: st.DrawFn, max_bases: int = 2, max_soldiers: int = 5) -> RuleSet:
    """Small custom rule sets whose whole pages play out in a few dozen actions."""
    bases = draw(st.integers(min_value=1, max_value=max_bases))
    soldiers = draw(st.integers(min_value=1, max_value=max_soldiers))
    return small_rules(bases, soldiers)


@st.composite
def rule_sets(draw: st.DrawFn) -> RuleSet:
    """Any preset, or a custom size within the rule book's limits (1–8 bases of 1–20)."""
    name = draw(st.sampled_from((*PRESET_NAMES, "custom")))
    if name != "custom":
        return RuleSet.preset(name)
    bases = draw(st.integers(min_value=1, max_value=8))
    soldiers = draw(st.integers(min_value=1, max_value=20))
    return small_rules(bases, soldiers)


@st.composite
def varied_rule_sets(draw: st.DrawFn, max_bases: int = 2, max_soldiers: int = 6) -> RuleSet:
    """Small custom pages whose play numbers (losses, spreads, reach, send, last stand) are drawn too:
    the engine must keep its invariants for any rule set the lab may try, not only the defaults."""
    unit = st.floats(min_value=0.0, max_value=1.0)
    spread = st.floats(min_value=0.0, max_value=math.pi / 2)
    empty_loss, full_loss = sorted((draw(unit), draw(unit)))
    wildness = draw(st.floats(min_value=0.0, max_value=1.0))
    overrides = {
        "pull_max": draw(st.floats(min_value=50.0, max_value=500.0)),
        "reach_min_frac": draw(st.floats(min_value=0.05, max_value=1.0)),
        "reach_curve": draw(st.floats(min_value=0.5, max_value=3.0)),
        "wildness": wildness,
        "wildness_soft": draw(st.floats(min_value=0.0, max_value=wildness)),
        "wildness_curve": draw(st.floats(min_value=0.5, max_value=3.0)),
        "shake_sigmas": draw(st.floats(min_value=1.0, max_value=3.0)),
        "wall_loss_empty": empty_loss,
        "wall_loss_full": full_loss,
        "man_loss": draw(unit),
        "shake_empty": draw(spread),
        "shake_full": draw(spread),
        "shake_man": draw(spread),
        "lunge_link_shake": draw(st.floats(min_value=0.0, max_value=0.5)),
        "send_max": draw(st.integers(min_value=0, max_value=6)),
        "last_stand_at": draw(st.integers(min_value=0, max_value=8)),
        "last_stand_flicks": draw(st.integers(min_value=1, max_value=3)),
        "last_stand_steady": draw(unit),
    }
    bases = draw(st.integers(min_value=1, max_value=max_bases))
    soldiers = draw(st.integers(min_value=1, max_value=max_soldiers))
    return small_rules(bases, soldiers).replace(**overrides)


def player_randoms() -> st.SearchStrategy[random.Random]:
    """A `random.Random` whose choices hypothesis records and shrinks."""
    return st.randoms(use_true_random=False)


# ---------------------------------------------------------------------------------------------------
# Reading the snapshot
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageGeometry:
    """The geometry the player needs, read once from a snapshot's rules."""

    width: float
    height: float
    dot_radius: float
    outside_margin: float
    base_radius_min: float
    base_radius_max: float
    base_gap: float
    pull_max: float
    send_max: int

    @classmethod
    def of(cls, snap: Snapshot) -> PageGeometry:
        r = snap["rules"]
        return cls(
            width=float(r["page_width"]),
            height=float(r["page_height"]),
            dot_radius=float(r["dot_radius"]),
            outside_margin=float(r["outside_margin"]),
            base_radius_min=float(r["base_radius_min"]),
            base_radius_max=float(r["base_radius_max"]),
            base_gap=float(r["base_gap"]),
            pull_max=float(r["pull_max"]),
            send_max=int(r["send_max"]),
        )

    def half(self, side: str) -> tuple[float, float]:
        """The y-range of a side's half: blue owns the bottom, red the top."""
        mid = self.height / 2
        return (mid, self.height) if side == "blue" else (0.0, mid)


def _dist(ax: float, ay: float, bx: float, by: float) -> float:
    return math.hypot(ax - bx, ay - by)


def bases_of(snap: Snapshot, side: str) -> list[dict[str, Any]]:
    """The bases a side owns, in drawing order."""
    return [b for b in snap["bases"] if b["side"] == side]


def living(snap: Snapshot, side: str) -> list[dict[str, Any]]:
    """A side's living soldiers, on the road included."""
    return [s for s in snap["soldiers"] if s["side"] == side and s["alive"]]


def flickable(snap: Snapshot, side: str) -> list[dict[str, Any]]:
    """A side's soldiers that may flick: alive and not on the road."""
    return [s for s in living(snap, side) if not s["on_road"]]


def garrison(snap: Snapshot, base: dict[str, Any]) -> list[dict[str, Any]]:
    """The owner's soldiers clearly inside a base (not on the wall, where rounding could decide)."""
    return [
        s
        for s in flickable(snap, base["side"])
        if _dist(s["x"], s["y"], base["x"], base["y"]) <= base["r"] - SAFETY
    ]


# ---------------------------------------------------------------------------------------------------
# Proposals, one per phase
# ---------------------------------------------------------------------------------------------------


def base_spot(snap: Snapshot, side: str, rng: random.Random, tries: int = 400) -> Action | None:
    """A `draw_base` wholly in the side's half, on the page, clear of every wall by more than the gap."""
    page = PageGeometry.of(snap)
    lo, hi = page.half(side)
    for attempt in range(tries):
        # After many misses, fall back to the smallest base: the page may be crowded.
        r_max = page.base_radius_max if attempt < tries // 2 else page.base_radius_min + 1
        r = round(rng.uniform(page.base_radius_min + SAFETY, r_max - SAFETY), 2)
        x = round(rng.uniform(r + SAFETY, page.width - r - SAFETY), 2)
        y = round(rng.uniform(lo + r + SAFETY, hi - r - SAFETY), 2)
        if all(_dist(x, y, b["x"], b["y"]) >= r + b["r"] + page.base_gap + SAFETY for b in snap["bases"]):
            return {"type": "draw_base", "x": x, "y": y, "r": r}
    return None


def _spot_for(
    page: PageGeometry, base: dict[str, Any], taken: Sequence[tuple[float, float]], rng: random.Random
) -> tuple[float, float] | None:
    """A free spot for one dot by its own base: inside the ring, or now and then just outside it."""
    outside = rng.random() < 0.3
    reach = base["r"] + (page.outside_margin if outside else 0.0) - SAFETY
    clear = 2 * page.dot_radius + SAFETY
    for _ in range(30):
        angle = rng.uniform(0, 2 * math.pi)
        radius = reach * math.sqrt(rng.random())
        x = round(base["x"] + radius * math.cos(angle), 2)
        y = round(base["y"] + radius * math.sin(angle), 2)
        if _dist(x, y, base["x"], base["y"]) > reach:
            continue
        on_page = (
            page.dot_radius + SAFETY <= x <= page.width - page.dot_radius - SAFETY
            and page.dot_radius + SAFETY <= y <= page.height - page.dot_radius - SAFETY
        )
        if on_page and all(_dist(x, y, tx, ty) >= clear for tx, ty in taken):
            return x, y
    return None


def position_move(snap: Snapshot, side: str, rng: random.Random) -> Action | None:
    """A `position` of a random few of the side's soldiers to free spots by their own bases."""
    page = PageGeometry.of(snap)
    own_bases = bases_of(snap, side)
    mine = [s for s in snap["soldiers"] if s["side"] == side]
    if not mine or not own_bases:
        return None
    movers = rng.sample(mine, rng.randint(1, min(4, len(mine))))
    # Every dot's spot counts as taken, the movers' too: a mover who finds no free spot is left where he
    # stands, and no spot given to a mover before him may overlap him there.
    taken = [(s["x"], s["y"]) for s in snap["soldiers"]]
    moves = []
    for soldier in movers:
        spot = _spot_for(page, rng.choice(own_bases), taken, rng)
        if spot is None:
            continue
        taken.append(spot)
        moves.append({"id": soldier["id"], "x": spot[0], "y": spot[1]})
    if not moves:
        return None
    return {"type": "position", "soldiers": moves}


def flick_vector(snap: Snapshot, shooter: dict[str, Any], rng: random.Random) -> list[float]:
    """An aim vector: mostly at a living enemy (so pages end), sometimes anywhere; any power."""
    page = PageGeometry.of(snap)
    enemies = living(snap, other(shooter["side"]))
    if enemies and rng.random() < 0.75:
        target = rng.choice(enemies)
        angle = math.atan2(target["y"] - shooter["y"], target["x"] - shooter["x"])
        angle += rng.gauss(0.0, 0.05)
    else:
        angle = rng.uniform(-math.pi, math.pi)
    length = rng.uniform(1.5, page.pull_max * 1.5)
    return [round(length * math.cos(angle), 3), round(length * math.sin(angle), 3)]


def send_move(snap: Snapshot, side: str, rng: random.Random) -> Action | None:
    """A legal `send`: 1..send_max soldiers from inside one own base to another, keeping one to flick."""
    page = PageGeometry.of(snap)
    own_bases = bases_of(snap, side)
    if len(own_bases) < 2 or page.send_max < 1:
        return None
    # A lunger owing his lunge-again cannot walk.
    chain = snap["turn"]["chain"]
    lunger = chain["soldier"] if chain else None
    walkers = {b["id"]: [s for s in garrison(snap, b) if s["id"] != lunger] for b in own_bases}
    sources = [b for b in own_bases if walkers[b["id"]]]
    if not sources:
        return None
    source = rng.choice(sources)
    target = rng.choice([b for b in own_bases if b["id"] != source["id"]])
    men = walkers[source["id"]]
    count = rng.randint(1, min(page.send_max, len(men)))
    # The side still owes a flick, so someone must stay off the road to make it.
    count = min(count, len(flickable(snap, side)) - 1)
    if count < 1:
        return None
    chosen = rng.sample(men, count)
    return {"type": "send", "from": source["id"], "to": target["id"], "soldiers": [s["id"] for s in chosen]}


def play_move(snap: Snapshot, side: str, rng: random.Random) -> Action:
    """A legal play-phase action: the chain's lunge or a stop, a send, an early stop, or a flick."""
    turn = snap["turn"]
    chain = turn.get("chain")
    if chain:
        if rng.random() < 0.15:
            return {"type": "stop"}
        # The send may come at any moment before the turn's last flick, a pending chain included.
        if not turn["sent"] and rng.random() < 0.1:
            send = send_move(snap, side, rng)
            if send is not None:
                return send
        lunger = next(s for s in snap["soldiers"] if s["id"] == chain["soldier"])
        return {
            "type": "flick",
            "soldier": lunger["id"],
            "kind": "lunge",
            "vector": flick_vector(snap, lunger, rng),
        }
    if not turn["sent"] and turn["flicks_left"] >= 1 and rng.random() < 0.15:
        send = send_move(snap, side, rng)
        if send is not None:
            return send
    if turn["flicked"] and rng.random() < 0.05:
        return {"type": "stop"}
    # The engine passes the turn of a side with nobody off the road, so someone is always here.
    shooter = rng.choice(flickable(snap, side))
    kind = "snipe" if rng.random() < 0.6 else "lunge"
    return {
        "type": "flick",
        "soldier": shooter["id"],
        "kind": kind,
        "vector": flick_vector(snap, shooter, rng),
    }


def legal_action(
    state: State, rng: random.Random, *, resign_chance: float = 0.0, quick_setup_chance: float = 0.5
) -> Action:
    """Proposes one action that RULES.md allows `state.actor` to make now, drawn from `rng`."""
    snap = state.snapshot()
    side = state.actor
    if side is None:
        raise ValueError("the page is over: nobody acts")
    if rng.random() < resign_chance:
        return {"type": "resign"}
    phase = snap["phase"]
    if phase == "bases":
        if not snap["bases"] and rng.random() < quick_setup_chance:
            return {"type": "quick_setup"}
        spot = base_spot(snap, side, rng)
        if spot is None:
            raise RuntimeError(f"no room for another base of {side}")
        return spot
    if phase == "positioning":
        if rng.random() < 0.35:
            return {"type": "ready"}
        return position_move(snap, side, rng) or {"type": "ready"}
    if phase == "play":
        return play_move(snap, side, rng)
    raise ValueError(f"unexpected phase {phase!r}")


def legal_actions(state: State, *, resign_chance: float = 0.0) -> st.SearchStrategy[Action]:
    """Hypothesis strategy: one legal action for `state.actor`, drawn (and shrunk) by hypothesis."""
    return player_randoms().map(lambda rng: legal_action(state, rng, resign_chance=resign_chance))


# ---------------------------------------------------------------------------------------------------
# Whole pages
# ---------------------------------------------------------------------------------------------------


@dataclass
class PlayedPage:
    """A page played by the random player: every state, the action log and each action's events."""

    rules: RuleSet
    seed: int
    states: list[State] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    events: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def final(self) -> State:
        return self.states[-1]


def play_page(
    rules: RuleSet,
    seed: int,
    rng: random.Random,
    *,
    max_actions: int = 600,
    resign_chance: float = 0.0,
    quick_setup_chance: float = 0.5,
    finish: bool = True,
) -> PlayedPage:
    """Plays a page with random legal actions; past `max_actions` the side to act resigns if `finish`."""
    page = PlayedPage(rules=rules, seed=seed, states=[new_page(rules, seed)])
    while page.final.actor is not None:
        side = page.final.actor
        if len(page.log) >= max_actions:
            if not finish:
                break
            action: Action = {"type": "resign"}
        else:
            action = legal_action(
                page.final, rng, resign_chance=resign_chance, quick_setup_chance=quick_setup_chance
            )
        state, events = apply(page.final, side, action)
        page.states.append(state)
        page.log.append({"side": side, "action": action})
        page.events.append(events)
    return page
