"""Properties of the engine over random legal play and over junk input (issue 2).

Whole pages are played by the random legal player of `strategies`, mostly on small custom rule sets so
the suite stays fast on two cores; a few quick-preset pages check everything at full size.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotfight.engine import IllegalAction, MalformedAction, Replay, RuleSet, State, apply, new_page
from tests.engine.strategies import (
    PlayedPage,
    legal_action,
    living,
    other,
    play_page,
    player_randoms,
    rule_sets,
    seeds,
    small_rule_sets,
    varied_rule_sets,
)

PAGE_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FULL_PAGE_SETTINGS = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

EPS = 1e-9

# PROTOCOL.md "Events": every type and the fields it names. `wall` carries `loss` for a snipe and
# `shake` for a lunge, never both.
EVENT_FIELDS: dict[str, set[str]] = {
    "base_drawn": {"base", "soldiers"},
    "positioned": {"side", "soldiers"},
    "phase": {"phase"},
    "ink": {"side", "kind", "soldier", "points", "power", "reach"},
    "wall": {"base", "at", "fullness"},
    "crossed_out": {"soldier", "at", "by", "cause"},
    "landed": {"soldier", "at"},
    "bonus": {"reason", "credits"},
    "send": {"from", "to", "soldiers"},
    "arrived": {"to", "soldiers"},
    "turn": {"side", "flicks", "last_stand"},
    "game_over": {"winner", "reason"},
}
# PROTOCOL.md lets fields be added; these are the additions the engine documents. Any other field is a
# defect: a client reading the protocol would not know it.
ADDED_FIELDS: dict[str, set[str]] = {
    "turn": {"number"},
    "send": {"side"},
    "arrived": {"side"},
}
PHASES = {"bases", "positioning", "play", "over"}
CAUSES = {"snipe", "lunge", "shot", "off_page"}
BONUS_REASONS = {"two_with_one_bullet", "lunge_again"}
END_REASONS = {"all_crossed_out", "resigned"}


@st.composite
def small_pages(draw: st.DrawFn) -> PlayedPage:
    """A whole small page played to the end by the random legal player."""
    rules = draw(small_rule_sets())
    return play_page(rules, draw(seeds()), draw(player_randoms()), resign_chance=0.005)


@st.composite
def varied_pages(draw: st.DrawFn) -> PlayedPage:
    """A whole small page under rule numbers far from the defaults."""
    return play_page(draw(varied_rule_sets()), draw(seeds()), draw(player_randoms()), resign_chance=0.005)


@st.composite
def quick_pages(draw: st.DrawFn) -> PlayedPage:
    """A whole page of the quick preset (3 bases of 8 a side)."""
    # A plain seeded player: recording every choice of a full-size page is more data than hypothesis
    # handles well, and shrinking a whole game's choices would change the game anyway.
    player = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    return play_page(RuleSet.preset("quick"), draw(seeds()), player)


@st.composite
def midway_states(draw: st.DrawFn) -> State:
    """A state somewhere along a small page: setup, play or over."""
    rules = draw(small_rule_sets(max_bases=2, max_soldiers=4))
    steps = draw(st.integers(min_value=0, max_value=60))
    page = play_page(rules, draw(seeds()), draw(player_randoms()), max_actions=steps, finish=False)
    return page.final


def polyline_length(points: list[list[float]]) -> float:
    """The length of a line of ink."""
    return sum(math.dist(a, b) for a, b in itertools.pairwise(points))


def diagonal(rules: RuleSet) -> float:
    """The page diagonal D of RULES.md §1."""
    return math.hypot(rules.page_width, rules.page_height)


# ---------------------------------------------------------------------------------------------------
# Checks over one played page
# ---------------------------------------------------------------------------------------------------


def check_the_player_was_legal(page: PlayedPage) -> None:
    """Every proposal was accepted (play_page raises otherwise) and the page ended with a winner."""
    assert page.final.phase == "over"
    assert page.final.actor is None
    assert page.final.winner in ("blue", "red")


def check_dead_stay_dead(page: PlayedPage) -> None:
    """A soldier is crossed out once, and stays crossed out where and as he fell."""
    crossed: set[str] = set()
    for events in page.events:
        for event in events:
            if event["type"] == "crossed_out":
                assert event["soldier"] not in crossed, f"{event['soldier']} crossed out twice"
                crossed.add(event["soldier"])
    for before, after in itertools.pairwise(page.states):
        dead_before = {s["id"]: s for s in before.snapshot()["soldiers"] if not s["alive"]}
        dead_after = {s["id"]: s for s in after.snapshot()["soldiers"] if not s["alive"]}
        assert dead_before.items() <= dead_after.items(), "the dead stay dead, where and as they fell"
    final = {s["id"]: s for s in page.final.snapshot()["soldiers"]}
    assert {i for i, s in final.items() if not s["alive"]} == crossed
    check_crosses(page, final)


def check_crosses(page: PlayedPage, final: dict[str, dict[str, Any]]) -> None:
    """Each cross records its crossed_out event, in the killer's colour (off the page: his own)."""
    for events in page.events:
        for event in events:
            if event["type"] != "crossed_out":
                continue
            victim = final[event["soldier"]]
            cross = victim["cross"]
            assert cross["by"] == event["by"] and cross["cause"] == event["cause"]
            if event["cause"] in ("snipe", "lunge"):
                assert cross["side"] == final[event["by"]]["side"] != victim["side"]
            elif event["cause"] == "shot":
                assert event["by"] == "garrison" and cross["side"] == other(victim["side"])
            else:
                assert event["by"] == event["soldier"] and cross["side"] == victim["side"]
            centre = [victim["x"], victim["y"]]
            if event["cause"] in ("snipe", "lunge"):
                # Crossed where the ink first touches his dot.
                assert math.dist(centre, event["at"]) <= page.rules.dot_radius + 1e-6
            else:
                assert centre == pytest.approx(event["at"], abs=1e-9), "crossed out where he stands"


def check_soldiers_constant_after_jotting(page: PlayedPage) -> None:
    """Jotting brings each base's full complement; after it, the ids and their count never change."""
    rules = page.rules
    expected = 2 * rules.bases_per_side * rules.soldiers_per_base
    settled: list[str] | None = None
    for state in page.states:
        snap = state.snapshot()
        ids = [s["id"] for s in snap["soldiers"]]
        assert len(ids) == len(set(ids))
        if snap["phase"] == "bases" or (snap["phase"] == "over" and settled is None):
            # Still jotting (or resigned before the last base): each base brings its full complement.
            assert len(ids) == len(snap["bases"]) * rules.soldiers_per_base
            continue
        if settled is None:
            settled = ids
            assert len(ids) == expected
        assert sorted(ids) == sorted(settled)
        assert len(snap["bases"]) == 2 * rules.bases_per_side


def check_ink_on_the_page(page: PlayedPage) -> None:
    """Every ink point lies on the page, and the snapshot keeps every line drawn, in order."""
    width, height = page.rules.page_width, page.rules.page_height
    drawn: list[dict[str, Any]] = []
    for events in page.events:
        for event in events:
            if event["type"] != "ink":
                continue
            drawn.append(event)
            assert len(event["points"]) >= 2
            for x, y in event["points"]:
                assert -EPS <= x <= width + EPS and -EPS <= y <= height + EPS, (x, y)
    # The snapshot's ink is every ink event so far, in order.
    stored = page.final.snapshot()["ink"]
    assert [i["points"] for i in stored] == [e["points"] for e in drawn]


def check_reach(page: PlayedPage) -> None:
    """Reach follows power (RULES.md §4), no line is longer than its reach, and reach left only shrinks."""
    rules = page.rules
    for rec in flick_records(page):
        ink, tail = rec.ink, rec.along
        power, reach = ink["power"], ink["reach"]
        assert 0 < power <= 1
        expected = diagonal(rules) * (
            rules.reach_min_frac + (1 - rules.reach_min_frac) * power**rules.reach_curve
        )
        assert reach == pytest.approx(expected, rel=1e-12)
        length = polyline_length(ink["points"])
        assert length <= reach + 1e-6
        shooter = rec.soldier(ink["soldier"])
        assert ink["points"][0] == pytest.approx([shooter["x"], shooter["y"]], abs=1e-9)
        if ink["kind"] == "snipe":
            assert len(ink["points"]) == 2, "a snipe is one straight line"
            check_snipe_walk(rules, ink, tail)
        else:
            for event in tail:
                if event["type"] == "wall":
                    assert "shake" in event and "loss" not in event
            # Shake bends the run but never shortens it: only the page edge does.
            if length < reach - 1e-6:
                assert on_edge(rules, ink["points"][-1])


def on_edge(rules: RuleSet, point: list[float]) -> bool:
    """Whether a point lies on the page's edge."""
    x, y = point
    return min(abs(x), abs(y), abs(x - rules.page_width), abs(y - rules.page_height)) <= 1e-6


def check_snipe_walk(rules: RuleSet, ink: dict[str, Any], tail: list[dict[str, Any]]) -> None:
    """Walks the snipe's events in order: reach left only shrinks, and the ink stops where it runs out."""
    start = ink["points"][0]
    left = ink["reach"]
    travelled = 0.0
    for event in tail:
        if event["type"] not in ("wall", "crossed_out"):
            continue
        distance = math.dist(start, event["at"])
        assert distance >= travelled - 1e-6, "events come in order of distance"
        left -= distance - travelled
        travelled = max(travelled, distance)
        assert left >= -1e-6, "an event beyond the end of the line happened"
        if event["type"] == "wall":
            assert "loss" in event and "shake" not in event
            assert 0 <= event["loss"] <= 1
            assert 0 <= event["fullness"] <= 1
            left *= 1 - event["loss"]
        else:
            assert event["cause"] == "snipe"
            left *= 1 - rules.man_loss
    length = polyline_length(ink["points"])
    assert length == pytest.approx(travelled + left, abs=1e-6) or (
        length < travelled + left and on_edge(rules, ink["points"][-1])
    )


def check_round_trips(page: PlayedPage) -> None:
    """Every state survives to_json/from_json exactly, through JSON text too; the snapshot hides the seed."""
    for state in page.states:
        private = state.to_json()
        again = State.from_json(private)
        assert again == state
        assert again.to_json() == private
        # Through real JSON text, as the store keeps it.
        text = json.dumps(private, allow_nan=False)
        assert State.from_json(json.loads(text)) == state
        public = state.snapshot()
        assert "seed" not in public and "rng" not in public
        assert "seed" not in json.dumps(public)


def check_replay(page: PlayedPage) -> None:
    """Replaying the log gives the live page's final state and events exactly."""
    replay = Replay(page.rules, page.seed, page.log)
    assert replay.error is None
    assert replay.valid == len(page.log)
    assert replay.state == page.final
    assert replay.state.to_json() == page.final.to_json()
    assert replay.events == page.events


def check_versions(page: PlayedPage) -> None:
    """`version` counts the actions applied."""
    for applied, state in enumerate(page.states):
        assert state.version == applied
        assert state.snapshot()["version"] == applied


def check_public_helpers(page: PlayedPage) -> None:
    """`actor`, `living` and `flickable` agree with the public snapshot they summarise."""
    for state in page.states:
        snap = state.snapshot()
        assert state.actor == snap["side_to_act"]
        for side in ("blue", "red"):
            assert sorted(s.id for s in state.living(side)) == sorted(s["id"] for s in living(snap, side))
        turn = snap["turn"]
        if snap["phase"] == "play" and turn["chain"]:
            assert state.flickable(turn["side"]) == [turn["chain"]["soldier"]]
        elif snap["phase"] == "play":
            expected = [s["id"] for s in living(snap, turn["side"]) if not s["on_road"]]
            assert sorted(state.flickable(turn["side"])) == sorted(expected)
            # A turn never waits on a side that has nobody to flick (the rest walk on the road).
            assert expected


def check_event_vocabulary(page: PlayedPage) -> None:
    """Every event is a PROTOCOL.md type with its fields (and only documented additions), as strict JSON."""
    for events in page.events:
        for event in events:
            kind = event["type"]
            assert kind in EVENT_FIELDS, f"unknown event type {kind!r}"
            fields = set(event) - {"type"}
            names = EVENT_FIELDS[kind]
            if kind == "wall":
                assert len(fields & {"loss", "shake"}) == 1, event
                fields -= {"loss", "shake"}
            assert names <= fields, f"{kind}: missing {sorted(names - fields)}"
            extra = fields - names - ADDED_FIELDS.get(kind, set())
            assert not extra, f"{kind}: fields {sorted(extra)} are not in PROTOCOL.md"
            check_event_values(event)
        json.dumps(events, allow_nan=False)  # events go on the wire as strict JSON


def check_event_values(event: dict[str, Any]) -> None:
    """Enumerated fields hold only the values PROTOCOL.md names."""
    kind = event["type"]
    if kind == "phase":
        assert event["phase"] in PHASES
    elif kind == "crossed_out":
        assert event["cause"] in CAUSES
    elif kind == "bonus":
        assert event["reason"] in BONUS_REASONS
        # A stopped chain is announced as its credits dropped to 0.
        assert isinstance(event["credits"], int) and event["credits"] >= 0
    elif kind == "game_over":
        assert event["winner"] in ("blue", "red") and event["reason"] in END_REASONS
    elif kind == "ink":
        assert event["side"] in ("blue", "red") and event["kind"] in ("snipe", "lunge")
    elif kind == "turn":
        assert event["side"] in ("blue", "red") and isinstance(event["last_stand"], bool)
        assert isinstance(event["flicks"], int) and event["flicks"] >= 1


def check_game_over_closes(page: PlayedPage) -> None:
    """One game_over, in the last action, which `phase: over` closes; the winner is the right side."""
    last = page.events[-1]
    assert last[-1] == {"type": "phase", "phase": "over"}
    overs = [e for events in page.events for e in events if e["type"] == "game_over"]
    assert len(overs) == 1 and overs[0]["winner"] == page.final.winner
    for events in page.events[:-1]:
        assert all(e["type"] != "game_over" for e in events)
    final = page.final.snapshot()
    assert final["end_reason"] == overs[0]["reason"]
    if final["end_reason"] == "resigned":
        resignation = page.log[-1]
        assert resignation["action"]["type"] == "resign"
        assert final["winner"] == other(resignation["side"])
    else:
        # The loser has nobody left (the winner may have lost his last man after the wipe-out).
        assert not living(final, other(final["winner"]))


def check_finished_page_accepts_nothing(page: PlayedPage) -> None:
    """After the end every well-formed action, resignation included, is refused with `game_over`."""
    final = page.final
    snap = final.snapshot()
    attempts: list[dict[str, Any]] = [
        {"type": "resign"},
        {"type": "ready"},
        {"type": "stop"},
        {"type": "quick_setup"},
        {"type": "draw_base", "x": 500, "y": 1000, "r": 50},
        {"type": "position", "soldiers": []},
    ]
    # Actions naming ids can only be well-formed on a page that has them (resigned before any base: none).
    if snap["soldiers"]:
        soldier = snap["soldiers"][0]["id"]
        base_a, base_b = snap["bases"][0]["id"], snap["bases"][-1]["id"]
        attempts += [
            {"type": "position", "soldiers": [{"id": soldier, "x": 100, "y": 100}]},
            {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": [10, 10]},
            {"type": "flick", "soldier": soldier, "kind": "lunge", "vector": [0, -300]},
            {"type": "send", "from": base_a, "to": base_b, "soldiers": [soldier]},
        ]
    for side in ("blue", "red"):
        for action in attempts:
            with pytest.raises(IllegalAction) as refused:
                apply(final, side, action)
            assert refused.value.code == "game_over", (action, refused.value.code)
    assert final.to_json() == page.final.to_json()


def check_turn_announcements(page: PlayedPage) -> None:
    """A turn event opens every turn; last stand is decided by the living count at its start."""
    rules = page.rules
    for after, events in zip(page.states[1:], page.events, strict=False):
        for event in events:
            if event["type"] != "turn":
                continue
            count = len(living(after.snapshot(), event["side"]))
            assert event["last_stand"] == (count <= rules.last_stand_at)
            assert event["flicks"] == (rules.last_stand_flicks if event["last_stand"] else 1)


# ---------------------------------------------------------------------------------------------------
# Checks of each flick, send and arrival against the rule book, recomputed from the state before it
# ---------------------------------------------------------------------------------------------------

# Geometry within this distance of a boundary (a wall grazed, a dot touched at the very end of the ink)
# is left to the engine's rounding and not judged here.
TIE = 1e-6


@dataclass
class FlickRecord:
    """One flick action: the snapshots around it, its ink, the crossings along the ink, its landing."""

    before: dict[str, Any]
    after: dict[str, Any]
    action: dict[str, Any]
    events: list[dict[str, Any]]
    ink: dict[str, Any]
    along: list[dict[str, Any]]
    landing: dict[str, Any] | None

    def soldier(self, soldier_id: str) -> dict[str, Any]:
        return next(s for s in self.before["soldiers"] if s["id"] == soldier_id)

    @property
    def steady(self) -> float:
        rules = self.before["rules"]
        return float(rules["last_stand_steady"]) if self.before["turn"]["last_stand"] else 1.0

    @property
    def over(self) -> bool:
        return bool(self.after["phase"] == "over")


def flick_records(page: PlayedPage) -> list[FlickRecord]:
    """Every flick of the page with what it caused, split along the ink (PROTOCOL.md event order)."""
    records = []
    for i, entry in enumerate(page.log):
        if entry["action"]["type"] != "flick":
            continue
        events = page.events[i]
        ink = events[0]
        assert ink["type"] == "ink", "a flick's events open with its ink"
        along: list[dict[str, Any]] = []
        landing = None
        for event in events[1:]:
            if event["type"] == "wall" or (
                event["type"] == "crossed_out" and event["cause"] in ("snipe", "lunge")
            ):
                assert landing is None, "nothing happens along the ink after the landing"
                along.append(event)
            elif event["type"] == "landed" or (
                event["type"] == "crossed_out"
                and event["cause"] in ("shot", "off_page")
                and event["soldier"] == ink["soldier"]
            ):
                landing = event
                break
            elif event["type"] != "game_over":
                break
        records.append(
            FlickRecord(
                page.states[i].snapshot(),
                page.states[i + 1].snapshot(),
                entry["action"],
                events,
                ink,
                along,
                landing,
            )
        )
    return records


def wrap(angle: float) -> float:
    """The angle brought into [-π, π)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def heading(a: list[float], b: list[float]) -> float | None:
    """The direction from a to b, or None for a segment too short to have one."""
    if math.dist(a, b) <= 1e-9:
        return None
    return math.atan2(b[1] - a[1], b[0] - a[0])


def disc_entry(
    start: list[float], direction: tuple[float, float], centre: tuple[float, float], radius: float
) -> tuple[float, float, float] | None:
    """Where the ray enters and leaves a disc (distances along it) and its closest approach; None if it
    misses by more than TIE."""
    cx, cy = centre[0] - start[0], centre[1] - start[1]
    along = cx * direction[0] + cy * direction[1]
    across = abs(cx * direction[1] - cy * direction[0])
    if across > radius + TIE:
        return None
    half = math.sqrt(max(0.0, radius * radius - across * across))
    return along - half, along + half, across


def wall_crossings(start: list[float], end: list[float], base: dict[str, Any]) -> list[float] | None:
    """Distances along the segment where it crosses the base's wall; None when a crossing is a tie."""
    length = math.dist(start, end)
    ux, uy = (end[0] - start[0]) / length, (end[1] - start[1]) / length
    dx, dy = start[0] - base["x"], start[1] - base["y"]
    b = ux * dx + uy * dy
    c = dx * dx + dy * dy - base["r"] ** 2
    disc = b * b - c
    if disc < 0:
        return []
    if disc < TIE:
        return None  # a graze: crossing or not is rounding
    root = math.sqrt(disc)
    found = []
    for t in (-b - root, -b + root):
        if abs(t) < TIE or abs(t - length) < TIE:
            return None
        if 0 < t < length:
            found.append(t)
    return found


def inside(soldier: dict[str, Any], base: dict[str, Any]) -> bool:
    """Whether a soldier's centre is within the base's radius (on the wall counts)."""
    return bool((soldier["x"] - base["x"]) ** 2 + (soldier["y"] - base["y"]) ** 2 <= base["r"] ** 2)


def near_wall(soldier: dict[str, Any], base: dict[str, Any]) -> bool:
    """Whether a soldier stands so close to the wall that inside or not is rounding."""
    return bool(abs(math.hypot(soldier["x"] - base["x"], soldier["y"] - base["y"]) - base["r"]) < TIE)


def wall_fullness(rec: FlickRecord, base: dict[str, Any], gone: set[str]) -> float | None:
    """The base's fullness at a crossing: its owner's living men inside, off the road, not crossed out
    earlier on this ink (and not the lunger, who holds no wall while he runs); None if a man is on the
    wall, where inside or not is rounding."""
    count = 0
    for s in rec.before["soldiers"]:
        if s["side"] != base["side"] or not s["alive"] or s["on_road"] or s["id"] in gone:
            continue
        if near_wall(s, base):
            return None
        count += inside(s, base)
    return min(1.0, count / int(base["capacity"]))


def check_launch(rec: FlickRecord, rules: RuleSet, link: int) -> None:
    """Power and reach follow the pull, and the ink leaves within 3 σ of the aim (RULES.md §4)."""
    dx, dy = rec.action["vector"]
    power = min(1.0, math.hypot(dx, dy) / rules.pull_max)
    assert rec.ink["power"] == pytest.approx(power, rel=1e-12)
    soft = rules.wildness_soft
    wild = soft + (rules.wildness - soft) * power**rules.wildness_curve
    sigma = (wild + rules.lunge_link_shake * link) * rec.steady
    first = heading(rec.ink["points"][0], rec.ink["points"][1])
    if first is not None:
        assert abs(wrap(first - math.atan2(dy, dx))) <= 3 * sigma + 1e-9


def check_snipe_rules(rec: FlickRecord, rules: RuleSet) -> None:
    """RULES.md §5 recomputed: who the line crosses out, which walls it meets, their fullness and loss,
    and two with one bullet."""
    check_launch(rec, rules, 0)
    start, end = rec.ink["points"]
    length = math.dist(start, end)
    shooter = rec.soldier(rec.ink["soldier"])
    crossed = [e["soldier"] for e in rec.along if e["type"] == "crossed_out"]
    if length > TIE:
        u = ((end[0] - start[0]) / length, (end[1] - start[1]) / length)
        for s in rec.before["soldiers"]:
            if not s["alive"] or s["side"] == shooter["side"]:
                continue
            hit = disc_entry(start, u, (s["x"], s["y"]), rules.dot_radius)
            surely_missed = hit is None or hit[1] < -TIE or hit[0] > length + TIE
            surely_hit = (
                hit is not None and hit[2] < rules.dot_radius - TIE and hit[1] > TIE and hit[0] < length - TIE
            )
            if surely_hit:
                assert s["id"] in crossed, f"the snipe crosses {s['id']} but did not cross him out"
                event = next(e for e in rec.along if e.get("soldier") == s["id"])
                assert hit is not None
                point = [start[0] + u[0] * max(0.0, hit[0]), start[1] + u[1] * max(0.0, hit[0])]
                assert event["at"] == pytest.approx(point, abs=1e-6), "crossed out at his dot's entry point"
            if surely_missed:
                assert s["id"] not in crossed, f"{s['id']} was crossed out but the line misses his dot"
        for base in rec.before["bases"]:
            expected = wall_crossings(start, end, base)
            if expected is not None:
                walls = [e for e in rec.along if e["type"] == "wall" and e["base"] == base["id"]]
                assert len(walls) == len(expected), (
                    f"wall of {base['id']}: {len(walls)} events, {len(expected)} crossings"
                )
    home = next((b["id"] for b in rec.before["bases"] if inside(shooter, b)), None)
    gone: set[str] = set()
    for event in rec.along:
        if event["type"] == "crossed_out":
            gone.add(event["soldier"])
            continue
        base = next(b for b in rec.before["bases"] if b["id"] == event["base"])
        fullness = wall_fullness(rec, base, gone)
        if fullness is None:
            continue
        assert event["fullness"] == pytest.approx(fullness, abs=1e-12), "fullness at the moment of crossing"
        if event["base"] == home:
            assert event["loss"] == 0, "the wall at your back costs nothing"
        else:
            q = rules.wall_loss_empty + (rules.wall_loss_full - rules.wall_loss_empty) * fullness
            assert event["loss"] == pytest.approx(q, abs=1e-12)
    bonuses = [e for e in rec.events if e["type"] == "bonus" and e["reason"] == "two_with_one_bullet"]
    if len(crossed) >= 2 and not rec.over:
        assert bonuses == [{"type": "bonus", "reason": "two_with_one_bullet", "credits": 1}]
        turn_before, turn_after = rec.before["turn"], rec.after["turn"]
        # The flick spent is given back: the same side still owes as many flicks as before it.
        assert turn_after["side"] == turn_before["side"]
        assert turn_after["flicks_left"] == turn_before["flicks_left"]
    else:
        assert bonuses == []


def check_lunge_rules(rec: FlickRecord, rules: RuleSet) -> None:
    """RULES.md §6 recomputed: the run bends only where it crosses something, by the shake it reports,
    keeps its full length, misses nobody it runs through, and ends as the landing rules say."""
    runner = rec.soldier(rec.ink["soldier"])
    chain = rec.before["turn"]["chain"]
    link = chain["link"] if chain and chain["soldier"] == runner["id"] else 0
    check_launch(rec, rules, link)
    points = rec.ink["points"]
    assert len(points) == len(rec.along) + 2, "one bend per wall or man crossed, plus start and end"
    for k, event in enumerate(rec.along):
        assert event["at"] == pytest.approx(points[k + 1], abs=1e-9)
    headings = [heading(a, b) for a, b in itertools.pairwise(points)]
    home = next((b["id"] for b in rec.before["bases"] if inside(runner, b)), None)
    gone: set[str] = {runner["id"]}
    left_home = False
    for k, event in enumerate(rec.along):
        h0, h1 = headings[k], headings[k + 1]
        bend = None if h0 is None or h1 is None else wrap(h1 - h0)
        if event["type"] == "wall":
            base = next(b for b in rec.before["bases"] if b["id"] == event["base"])
            fullness = wall_fullness(rec, base, gone)
            if fullness is not None:
                assert event["fullness"] == pytest.approx(fullness, abs=1e-12)
            if event["base"] == home and not left_home:
                left_home = True
                assert event["shake"] == 0, "leaving the base he started in does not shake him"
            else:
                degrees = rules.shake_empty + (rules.shake_full - rules.shake_empty) * event["fullness"]
                spread = degrees / rules.shake_sigmas
                assert abs(event["shake"]) <= 3 * spread * rec.steady + 1e-12
            if bend is not None:
                assert bend == pytest.approx(wrap(event["shake"]), abs=1e-7), (
                    "the run turns by the shake drawn"
                )
        else:
            gone.add(event["soldier"])
            if bend is not None:
                assert abs(bend) <= 3 * rules.shake_man / rules.shake_sigmas * rec.steady + 1e-7
    check_run_misses_nothing(rec, rules, points)
    check_landing(rec, rules, link, chain)


def check_run_misses_nothing(rec: FlickRecord, rules: RuleSet, points: list[list[float]]) -> None:
    """Between two bends the run crosses no wall and enters no enemy dot: the first one would bend it."""
    runner_side = rec.ink["side"]
    crossed_so_far: set[str] = set()
    for k, (a, b) in enumerate(itertools.pairwise(points)):
        length = math.dist(a, b)
        if length > 2 * TIE:
            u = ((b[0] - a[0]) / length, (b[1] - a[1]) / length)
            for s in rec.before["soldiers"]:
                if not s["alive"] or s["side"] == runner_side or s["id"] in crossed_so_far:
                    continue
                hit = disc_entry(a, u, (s["x"], s["y"]), rules.dot_radius)
                if hit is not None and hit[2] < rules.dot_radius - TIE and TIE < hit[0] < length - TIE:
                    raise AssertionError(
                        f"segment {k} of the run enters {s['id']}'s dot without crossing him out"
                    )
            for base in rec.before["bases"]:
                crossings = wall_crossings(a, b, base)
                assert not crossings, f"segment {k} of the run crosses {base['id']}'s wall without an event"
        if k < len(rec.along) and rec.along[k]["type"] == "crossed_out":
            crossed_so_far.add(rec.along[k]["soldier"])


def manned_enemy_ring_at(rec: FlickRecord, point: list[float]) -> bool | None:
    """Whether the point is inside an enemy ring that still has one of its men inside after this run's
    kills (enemy men never move during a flick); None when the point is on a wall, where it is rounding."""
    crossed = {e["soldier"] for e in rec.along if e["type"] == "crossed_out"}
    manned = False
    for base in rec.before["bases"]:
        if base["side"] == rec.ink["side"]:
            continue
        distance = math.dist(point, [base["x"], base["y"]])
        if abs(distance - base["r"]) < TIE:
            return None
        if distance > base["r"]:
            continue
        manned = manned or any(
            s["side"] == base["side"]
            and s["alive"]
            and not s["on_road"]
            and s["id"] not in crossed
            and inside(s, base)
            for s in rec.before["soldiers"]
        )
    return manned


def check_landing(rec: FlickRecord, rules: RuleSet, link: int, chain: dict[str, Any] | None) -> None:
    """Off the page he is crossed out; in a manned enemy ring he is shot; elsewhere he stands. Each kill
    of a standing lunger earns one more lunge (RULES.md §6)."""
    runner = rec.ink["soldier"]
    points = rec.ink["points"]
    end = points[-1]
    run = polyline_length(points)
    landing = rec.landing
    assert landing is not None and landing["soldier"] == runner
    assert landing["at"] == pytest.approx(end, abs=1e-9)
    after = next(s for s in rec.after["soldiers"] if s["id"] == runner)
    assert [after["x"], after["y"]] == pytest.approx(end, abs=1e-9), "he stands where the ink stops"
    if landing["type"] == "crossed_out" and landing["cause"] == "off_page":
        assert on_edge(rules, end) and run <= rec.ink["reach"] + 1e-6
        assert not after["alive"]
    else:
        assert run == pytest.approx(rec.ink["reach"], abs=1e-6), "shake bends the run, never shortens it"
        manned = manned_enemy_ring_at(rec, end)
        if landing["type"] == "landed":
            assert manned is not True, "he stood in an enemy ring that still has a man in it"
            # Alive, unless the enemy convoy arriving as the next turn opens shoots him in that ring.
            later = rec.events[rec.events.index(landing) + 1 :]
            shot_later = any(e["type"] == "crossed_out" and e["soldier"] == runner for e in later)
            assert after["alive"] or shot_later
        else:
            assert landing["cause"] == "shot" and landing["by"] == "garrison" and manned is not False
            assert not after["alive"]
    kills = sum(1 for e in rec.along if e["type"] == "crossed_out")
    standing = landing["type"] == "landed"
    credits = (chain["credits"] - 1 if chain and chain["soldier"] == runner else 0) + (
        kills if standing else 0
    )
    bonuses = [e for e in rec.events if e["type"] == "bonus"]
    assert all(e["reason"] == "lunge_again" for e in bonuses), "a lunge's kills never count for two with one"
    if rec.over:
        return
    if standing and kills:
        assert bonuses == [{"type": "bonus", "reason": "lunge_again", "credits": credits}]
    else:
        assert bonuses == []
    turn = rec.after["turn"]
    if standing and credits > 0:
        assert turn["side"] == rec.ink["side"]
        assert turn["chain"] == {"soldier": runner, "credits": credits, "link": link + 1}
    else:
        assert turn["chain"] is None


def check_flicks_follow_the_rules(page: PlayedPage) -> None:
    """Each snipe and lunge, recomputed from the state before it (RULES.md §4–§6)."""
    for rec in flick_records(page):
        if rec.ink["kind"] == "snipe":
            check_snipe_rules(rec, page.rules)
        else:
            check_lunge_rules(rec, page.rules)


def check_sends_and_arrivals(page: PlayedPage) -> None:
    """RULES.md §7: the road, and arrival at the start of the sender's next turn with intruders shot."""
    rules = page.rules
    step = 3 * rules.dot_radius
    on_the_road: dict[str, set[str]] = {"blue": set(), "red": set()}
    # Whether the enemy has had a turn since the side's last send: a convoy walks for exactly one.
    enemy_turn_since_send = {"blue": True, "red": True}
    arrived_for: str | None = None
    for before, entry, events, after in zip(
        page.states, page.log, page.events, page.states[1:], strict=False
    ):
        snap_after = after.snapshot()
        soldiers_after = {s["id"]: s for s in snap_after["soldiers"]}
        for event in events:
            if event["type"] == "send":
                bases = {b["id"]: b for b in before.snapshot()["bases"]}
                source, to = bases[event["from"]], bases[event["to"]]
                places = [[s["x"], s["y"]] for s in event["soldiers"]]
                middle = [(source["x"] + to["x"]) / 2, (source["y"] + to["y"]) / 2]
                centroid = [sum(p[0] for p in places) / len(places), sum(p[1] for p in places) / len(places)]
                assert centroid == pytest.approx(middle, abs=1e-9), (
                    "the file is centred on the road's midpoint"
                )
                road = heading([source["x"], source["y"]], [to["x"], to["y"]])
                for a, b in itertools.pairwise(places):
                    assert math.dist(a, b) == pytest.approx(step, abs=1e-9)
                    assert (
                        road is not None and abs(math.sin(math.atan2(b[1] - a[1], b[0] - a[0]) - road)) < 1e-9
                    )
                enemy_turn_since_send[entry["side"]] = False
                for s in event["soldiers"]:
                    on_the_road[entry["side"]].add(s["id"])
                    if entry["action"]["type"] == "send":
                        assert soldiers_after[s["id"]]["on_road"]
            elif event["type"] == "arrived":
                side = next(
                    s["side"] for s in snap_after["soldiers"] if s["id"] == event["soldiers"][0]["id"]
                )
                base = next(b for b in snap_after["bases"] if b["id"] == event["to"])
                assert base["side"] == side
                assert enemy_turn_since_send[side], "a convoy arrived before the enemy had his turn"
                arrived_for = side
                for s in event["soldiers"]:
                    assert math.dist([s["x"], s["y"]], [base["x"], base["y"]]) <= base["r"] + 1e-9
                    assert s["id"] in on_the_road[side]
                    on_the_road[side].discard(s["id"])
                    assert not soldiers_after[s["id"]]["on_road"]
                intruders = [
                    s
                    for s in snap_after["soldiers"]
                    if s["side"] != side and s["alive"] and not s["on_road"] and inside(s, base)
                ]
                assert not intruders, "an enemy standing in the ring is shot on the convoy's arrival"
            elif event["type"] == "turn":
                # The convoy is on the road for exactly one enemy turn: it arrives as its side's turn opens.
                walking = [i for i in on_the_road[event["side"]] if soldiers_after[i]["alive"]]
                assert not walking, f"{event['side']}'s convoy did not arrive at the start of its turn"
                assert arrived_for in (None, event["side"]), "a convoy arrives as its own side's turn opens"
                arrived_for = None
                on_the_road[event["side"]].clear()
                enemy_turn_since_send[other(event["side"])] = True


ALL_CHECKS = [
    check_the_player_was_legal,
    check_dead_stay_dead,
    check_soldiers_constant_after_jotting,
    check_ink_on_the_page,
    check_reach,
    check_round_trips,
    check_replay,
    check_versions,
    check_public_helpers,
    check_event_vocabulary,
    check_game_over_closes,
    check_finished_page_accepts_nothing,
    check_turn_announcements,
    check_flicks_follow_the_rules,
    check_sends_and_arrivals,
]


# ---------------------------------------------------------------------------------------------------
# Properties over small whole pages
# ---------------------------------------------------------------------------------------------------


def test_the_random_player_reaches_every_rule() -> None:
    """Guards the properties against passing vacuously: fixed-seed play reaches every event, cause,
    bonus, action and last stand."""
    seen: set[str] = set()
    for seed in range(30):
        page = play_page(RuleSet.preset("quick"), seed, random.Random(seed), resign_chance=0.002)
        for entry, events in zip(page.log, page.events, strict=True):
            seen.add(f"action:{entry['action']['type']}")
            for event in events:
                seen.add(event["type"])
                detail = event.get("cause") or event.get("reason")
                if detail:
                    seen.add(f"{event['type']}:{detail}")
                if event["type"] == "turn" and event["last_stand"]:
                    seen.add("last_stand")
    expected = (
        set(EVENT_FIELDS) | {f"crossed_out:{c}" for c in CAUSES} | {f"bonus:{r}" for r in BONUS_REASONS}
    )
    expected |= {f"game_over:{r}" for r in END_REASONS} | {"last_stand"}
    expected |= {
        f"action:{a}" for a in ("draw_base", "quick_setup", "position", "ready", "flick", "send", "stop")
    }
    assert expected <= seen, sorted(expected - seen)


@PAGE_SETTINGS
@given(small_pages())
def test_random_legal_play_is_accepted_to_the_end(page: PlayedPage) -> None:
    check_the_player_was_legal(page)


@PAGE_SETTINGS
@given(small_pages())
def test_the_dead_stay_dead(page: PlayedPage) -> None:
    check_dead_stay_dead(page)


@PAGE_SETTINGS
@given(small_pages())
def test_no_soldier_appears_or_vanishes_after_jotting(page: PlayedPage) -> None:
    check_soldiers_constant_after_jotting(page)


@PAGE_SETTINGS
@given(small_pages())
def test_ink_never_leaves_the_page(page: PlayedPage) -> None:
    check_ink_on_the_page(page)


@PAGE_SETTINGS
@given(small_pages())
def test_reach_left_never_grows_along_a_line(page: PlayedPage) -> None:
    check_reach(page)


@PAGE_SETTINGS
@given(small_pages())
def test_a_finished_page_accepts_nothing(page: PlayedPage) -> None:
    check_finished_page_accepts_nothing(page)
    check_game_over_closes(page)


@PAGE_SETTINGS
@given(small_pages())
def test_snapshots_round_trip_exactly(page: PlayedPage) -> None:
    check_round_trips(page)


@PAGE_SETTINGS
@given(small_pages())
def test_replay_of_the_log_equals_live_play(page: PlayedPage) -> None:
    check_replay(page)


@PAGE_SETTINGS
@given(small_pages())
def test_version_counts_applied_actions(page: PlayedPage) -> None:
    check_versions(page)


@PAGE_SETTINGS
@given(small_pages())
def test_public_helpers_agree_with_the_snapshot(page: PlayedPage) -> None:
    check_public_helpers(page)


@PAGE_SETTINGS
@given(small_pages())
def test_every_event_is_in_the_protocol(page: PlayedPage) -> None:
    check_event_vocabulary(page)


@PAGE_SETTINGS
@given(small_pages())
def test_turns_are_announced_with_last_stand(page: PlayedPage) -> None:
    check_turn_announcements(page)


@PAGE_SETTINGS
@given(small_pages())
def test_flicks_follow_the_rule_book(page: PlayedPage) -> None:
    check_flicks_follow_the_rules(page)


@PAGE_SETTINGS
@given(small_pages())
def test_sends_walk_the_road_and_arrive_next_turn(page: PlayedPage) -> None:
    check_sends_and_arrivals(page)


@PAGE_SETTINGS
@given(small_rule_sets(), seeds(), st.integers(min_value=0, max_value=2**32))
def test_same_rules_seed_and_actions_give_identical_events(rules: RuleSet, seed: int, player: int) -> None:
    first = play_page(rules, seed, random.Random(player))
    second = play_page(rules, seed, random.Random(player))
    assert second.log == first.log
    assert second.events == first.events
    assert second.final.to_json() == first.final.to_json()
    assert Replay(rules, seed, first.log).events == first.events


@PAGE_SETTINGS
@given(varied_pages())
def test_any_rule_numbers_keep_every_property(page: PlayedPage) -> None:
    for check in ALL_CHECKS:
        check(page)


@FULL_PAGE_SETTINGS
@given(rule_sets(), seeds(), st.integers(min_value=0, max_value=2**32), st.booleans())
def test_every_preset_and_size_plays_to_the_end_and_replays(
    rules: RuleSet, seed: int, player: int, quick: bool
) -> None:
    page = play_page(rules, seed, random.Random(player), quick_setup_chance=float(quick))
    check_the_player_was_legal(page)
    check_soldiers_constant_after_jotting(page)
    check_replay(page)


@FULL_PAGE_SETTINGS
@given(quick_pages())
def test_quick_preset_pages_keep_every_property(page: PlayedPage) -> None:
    for check in ALL_CHECKS:
        check(page)


# ---------------------------------------------------------------------------------------------------
# Refused actions
# ---------------------------------------------------------------------------------------------------


def forbidden_actions(state: State) -> list[tuple[str, dict[str, Any]]]:
    """Well-formed actions RULES.md forbids in this state, each with the side that tries it."""
    snap = state.snapshot()
    actor = state.actor
    assert actor is not None
    phase = snap["phase"]
    own = [s for s in snap["soldiers"] if s["side"] == actor]
    enemy = [s for s in snap["soldiers"] if s["side"] == other(actor)]
    attempts: list[tuple[str, dict[str, Any]]] = [(other(actor), {"type": "ready"})]
    if phase == "bases":
        attempts.append((actor, {"type": "ready"}))
        attempts.append((actor, {"type": "stop"}))
        # A base in the enemy's half.
        y = 300 if actor == "blue" else 1100
        attempts.append((actor, {"type": "draw_base", "x": 500, "y": y, "r": 60}))
        if snap["bases"]:
            b = snap["bases"][0]
            attempts.append((actor, {"type": "draw_base", "x": b["x"], "y": b["y"], "r": 40}))
            attempts.append((actor, {"type": "quick_setup"}))
    elif phase == "positioning":
        attempts.append((actor, {"type": "stop"}))
        attempts.append((actor, {"type": "quick_setup"}))
        soldier = own[0]
        attempts.append(
            (actor, {"type": "flick", "soldier": soldier["id"], "kind": "snipe", "vector": [0, 50]})
        )
        # Far from every own base: the enemy's corner of the page.
        far_y = 20 if actor == "blue" else 1380
        attempts.append(
            (actor, {"type": "position", "soldiers": [{"id": soldier["id"], "x": 20, "y": far_y}]})
        )
    elif phase == "play":
        turn = snap["turn"]
        if not turn["flicked"] and not turn.get("chain"):
            attempts.append((actor, {"type": "stop"}))
        attempts.append((actor, {"type": "ready"}))
        attempts.append((actor, {"type": "quick_setup"}))
        living_enemy = [s for s in enemy if s["alive"]]
        if living_enemy:
            target = living_enemy[0]["id"]
            attempts.append((actor, {"type": "flick", "soldier": target, "kind": "snipe", "vector": [0, 50]}))
        dead_own = [s for s in own if not s["alive"]]
        if dead_own:
            attempts.append(
                (actor, {"type": "flick", "soldier": dead_own[0]["id"], "kind": "snipe", "vector": [0, 50]})
            )
        chain = turn.get("chain")
        if chain:
            others = [s for s in own if s["alive"] and not s["on_road"] and s["id"] != chain["soldier"]]
            if others:
                attempts.append(
                    (actor, {"type": "flick", "soldier": others[0]["id"], "kind": "snipe", "vector": [0, 50]})
                )
            attempts.append(
                (actor, {"type": "flick", "soldier": chain["soldier"], "kind": "snipe", "vector": [0, 50]})
            )
    return attempts


@PAGE_SETTINGS
@given(midway_states(), player_randoms())
def test_a_refused_action_changes_nothing(state: State, rng: random.Random) -> None:
    if state.actor is None:
        return
    before = state.to_json()
    for side, action in forbidden_actions(state):
        with pytest.raises(IllegalAction):
            apply(state, side, action)
        assert state.to_json() == before
    # The state still plays on exactly as if nothing had been tried.
    action = legal_action(state, rng)
    if action["type"] != "resign":
        # The same move from the other seat is out of turn.
        with pytest.raises(IllegalAction) as refused:
            apply(state, other(state.actor), action)
        assert refused.value.code == "not_your_turn"
    after, events = apply(state, state.actor, action)
    fresh, fresh_events = apply(State.from_json(before), state.actor, action)
    assert after == fresh and events == fresh_events


@PAGE_SETTINGS
@given(midway_states(), st.sampled_from(["blue", "red"]))
def test_either_side_may_resign_at_any_time(state: State, side: str) -> None:
    if state.phase == "over":
        return
    after, events = apply(state, side, {"type": "resign"})
    winner = other(side)
    assert events == [
        {"type": "game_over", "winner": winner, "reason": "resigned"},
        {"type": "phase", "phase": "over"},
    ]
    assert (after.phase, after.winner, after.actor, after.version) == (
        "over",
        winner,
        None,
        state.version + 1,
    )


# ---------------------------------------------------------------------------------------------------
# Junk input
# ---------------------------------------------------------------------------------------------------

HUGE = st.sampled_from([1e12, -1e12, 1e300, -1e300, 1.7976931348623157e308, 10**30, -(10**400)])
NOT_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
# Never an empty list: `soldiers: []` is well-formed (and then refused, or a no-op, by the rules).
WRONG_TYPE: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.booleans(),
    st.lists(st.integers(), min_size=1, max_size=2),
    st.just({}),
)
BAD_NUMBER = st.one_of(HUGE, NOT_FINITE, WRONG_TYPE)
UNKNOWN_ID = st.one_of(st.sampled_from(["b99", "b1s99", "nobody", ""]), st.integers(-5, 1000), WRONG_TYPE)


@st.composite
def junk_actions(draw: st.DrawFn, snap: dict[str, Any]) -> Any:
    """An action no well-formed client sends: wrong types, NaN, inf, huge numbers, unknown ids."""
    soldier = snap["soldiers"][0]["id"] if snap["soldiers"] else "b1s1"
    base = snap["bases"][0]["id"] if snap["bases"] else "b1"
    good_vector = [10.0, -200.0]
    choice = draw(st.integers(min_value=0, max_value=9))
    if choice == 0:
        return draw(
            st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3))
        )
    if choice == 1:
        return {"type": draw(st.one_of(st.sampled_from(["", "fire", "FLICK", "snipe"]), WRONG_TYPE))}
    if choice == 2:
        fields = {"x": 500.0, "y": 1000.0, "r": 60.0}
        field_name = draw(st.sampled_from(sorted(fields)))
        fields[field_name] = draw(BAD_NUMBER)
        return {"type": "draw_base", **fields}
    if choice == 3:
        return {"type": "flick", "soldier": draw(UNKNOWN_ID), "kind": "snipe", "vector": good_vector}
    if choice == 4:
        kind = draw(st.one_of(st.sampled_from(["", "shoot", "SNIPE", "run"]), WRONG_TYPE))
        return {"type": "flick", "soldier": soldier, "kind": kind, "vector": good_vector}
    if choice == 5:
        vector = draw(
            st.one_of(
                st.tuples(BAD_NUMBER, st.just(-200.0)).map(list),
                st.tuples(st.just(10.0), BAD_NUMBER).map(list),
                st.lists(st.floats(-100, 100), max_size=1),
                st.lists(st.floats(-100, 100), min_size=3, max_size=4),
                WRONG_TYPE,
            )
        )
        return {"type": "flick", "soldier": soldier, "kind": "lunge", "vector": vector}
    if choice == 6:
        entry = draw(
            st.one_of(
                st.fixed_dictionaries({"id": UNKNOWN_ID, "x": st.just(500.0), "y": st.just(1000.0)}),
                st.fixed_dictionaries({"id": st.just(soldier), "x": BAD_NUMBER, "y": st.just(1000.0)}),
                st.fixed_dictionaries({"id": st.just(soldier), "x": st.just(500.0), "y": BAD_NUMBER}),
                st.fixed_dictionaries({"id": st.just(soldier)}),
                WRONG_TYPE,
            )
        )
        return {"type": "position", "soldiers": [entry]}
    if choice == 7:
        return {
            "type": "position",
            "soldiers": draw(st.one_of(st.none(), st.text(max_size=3), st.integers())),
        }
    if choice == 8:
        return {"type": "send", "from": draw(UNKNOWN_ID), "to": base, "soldiers": [soldier]}
    return {
        "type": "send",
        "from": base,
        "to": base,
        "soldiers": draw(st.one_of(WRONG_TYPE, st.lists(UNKNOWN_ID, min_size=1, max_size=2))),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(midway_states(), st.data())
def test_junk_actions_are_malformed_and_change_nothing(state: State, data: st.DataObject) -> None:
    snap = state.snapshot()
    junk = data.draw(junk_actions(snap))
    side = state.actor or "blue"
    before = state.to_json()
    with pytest.raises(MalformedAction) as refused:
        apply(state, side, junk)
    assert refused.value.code == "bad_request"
    assert state.to_json() == before


@pytest.mark.parametrize("side", ["green", "", None, 1, "BLUE"])
def test_an_unknown_side_is_malformed(side: Any) -> None:
    state = new_page(RuleSet.preset("quick"), 7)
    with pytest.raises(MalformedAction) as refused:
        apply(state, side, {"type": "quick_setup"})
    assert refused.value.code == "bad_request"
