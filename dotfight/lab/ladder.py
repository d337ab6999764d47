"""`dotfight lab ladder`: a round robin of players, one rating each on one scale.

Every pair of players meets on the same pages (the run's page and bot seeds: common random numbers),
colours alternating, and one Bradley–Terry rating per player is fitted to all the results at once:
P(i beats j) = 1 / (1 + 10^((R_j − R_i) / 400)), on the Elo scale. The fit adds a weak prior, one
virtual draw for every pair (half a win each way), so a player that never wins still gets a finite
rating, and the anchor (the novice model) is fixed at 0. The 95 % intervals come from the curvature of
the penalised likelihood at its peak (the observed information); a step's interval (the difference of
two ratings) uses their covariance, which is narrower than the two intervals side by side.
A page with no winner (the turn cap) counts as a draw, half a win each.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dotfight.lab.config import DEFAULT_TURN_CAP, LabConfig
from dotfight.lab.page import PageRecord
from dotfight.lab.runner import Job, OnBatch, Progress, run_jobs
from dotfight.lab.stats import Z95, wilson

# One Bradley–Terry unit (natural log-odds) in Elo points.
ELO = 400.0 / math.log(10.0)
# The weak prior: virtual draws added to every pair that meets (one draw: half a win each way).
PRIOR_DRAWS = 1.0
# The player whose rating is fixed at 0 when it plays.
ANCHOR = "novice"
# Newton's method on a concave likelihood: converged far before this.
MAX_STEPS = 100
TOLERANCE = 1e-10


@dataclass(frozen=True)
class Ladder:
    """One round robin: every pair of `players` plays `games` pages with the same settings."""

    players: tuple[str, ...]
    preset: str = "quick"
    games: int = 200
    seed: int = 0
    overrides: dict[str, Any] = field(default_factory=dict)
    turn_cap: int = DEFAULT_TURN_CAP
    # Only these pairs are played when given (e.g. adjacent steps); default every pair.
    only: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        if len(self.players) < 2:
            raise ValueError("a ladder needs at least two players")
        if len(set(self.players)) != len(self.players):
            raise ValueError("a ladder names each player once")
        for a, b in self.only or ():
            if a not in self.players or b not in self.players or a == b:
                raise ValueError(f"pair {a}-{b}: both must be two of the ladder's players")
        for a, b in self.pairs():
            self.config(a, b)  # validates the players, the preset and the overrides

    def pairs(self) -> list[tuple[str, str]]:
        """The pairs that meet, each once, in the order of `players`."""
        if self.only is not None:
            order = {name: i for i, name in enumerate(self.players)}
            return [tuple(sorted(pair, key=order.__getitem__)) for pair in self.only]  # type: ignore[misc]
        return list(combinations(self.players, 2))

    def config(self, a: str, b: str) -> LabConfig:
        """The lab run of one pair: `a` is blue on even pages, colours alternating."""
        return LabConfig(
            preset=self.preset,
            overrides=dict(self.overrides),
            games=self.games,
            seed=self.seed,
            bot_blue=a,
            bot_red=b,
            alternate=True,
            turn_cap=self.turn_cap,
        )

    def jobs(self) -> list[Job]:
        """The pages to play: one job per pair, keyed by the pair."""
        return [((a, b), self.config(a, b), range(self.games)) for a, b in self.pairs()]

    def to_json(self) -> dict[str, Any]:
        """The round robin's settings as the report records them."""
        return {
            "players": list(self.players),
            "preset": self.preset,
            "games": self.games,
            "seed": self.seed,
            "overrides": dict(self.overrides),
            "turn_cap": self.turn_cap,
            "pairs": [list(pair) for pair in self.pairs()],
        }


@dataclass(frozen=True)
class Score:
    """What one pair's pages told: a's wins, b's wins and the pages nobody won."""

    a: str
    b: str
    wins_a: int
    wins_b: int
    draws: int = 0

    @property
    def pages(self) -> int:
        """Pages played."""
        return self.wins_a + self.wins_b + self.draws

    @property
    def points_a(self) -> float:
        """a's score: a win is 1, a draw a half."""
        return self.wins_a + self.draws / 2


def score(a: str, b: str, records: Sequence[PageRecord], config: LabConfig) -> Score:
    """Counts a pair's pages: who won each, whatever colour he had."""
    wins_a = wins_b = draws = 0
    for record in records:
        if record.winner is None:
            draws += 1
        elif record.winner == config.side_of_a(record.index):
            wins_a += 1
        else:
            wins_b += 1
    return Score(a, b, wins_a, wins_b, draws)


@dataclass(frozen=True)
class Fit:
    """The fitted ratings (Elo points) and their covariance, the anchor's row and column zero."""

    players: tuple[str, ...]
    ratings: NDArray[np.float64]
    covariance: NDArray[np.float64]
    anchor: str

    def rating(self, player: str) -> float:
        """A player's rating."""
        return float(self.ratings[self.players.index(player)])

    def interval(self, player: str) -> tuple[float, float]:
        """A player's 95 % interval (the anchor's is its fixed 0)."""
        i = self.players.index(player)
        half = Z95 * math.sqrt(max(0.0, float(self.covariance[i, i])))
        return float(self.ratings[i]) - half, float(self.ratings[i]) + half

    def step(self, lower: str, upper: str) -> tuple[float, float, float]:
        """How far `upper` stands above `lower`: (difference, 95 % low, high)."""
        i, j = self.players.index(upper), self.players.index(lower)
        cov = self.covariance
        spread = math.sqrt(max(0.0, float(cov[i, i] + cov[j, j] - 2 * cov[i, j])))
        diff = float(self.ratings[i] - self.ratings[j])
        return diff, diff - Z95 * spread, diff + Z95 * spread

    def expected(self, a: str, b: str) -> float:
        """The fitted share of pages `a` wins against `b`."""
        return expected_score(self.rating(a) - self.rating(b))


def expected_score(difference: float) -> float:
    """The share of pages won by a player `difference` Elo points above the other.

    >>> round(expected_score(0.0), 3), round(expected_score(400.0), 3)
    (0.5, 0.909)
    """
    return float(1.0 / (1.0 + 10.0 ** (-difference / 400.0)))


def fit(scores: Sequence[Score], players: Sequence[str], anchor: str | None = ANCHOR) -> Fit:
    """Bradley–Terry ratings with one virtual draw a pair, fitted by Newton's method.

    The anchor (default the novice model, else the first player when it does not play) is held at 0.
    A player who meets nobody cannot be rated and is refused.

    >>> r = fit([Score("novice", "b", 10, 30)], ["novice", "b"])
    >>> round(r.rating("b")), r.rating("novice")
    (185, 0.0)
    """
    names = tuple(players)
    anchor_name = anchor if anchor in names else names[0]
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    met: set[str] = set()
    # points[i][j]: what i scored against j (wins, half the draws, and half the prior's draws).
    points = np.zeros((n, n))
    for s in scores:
        i, j = index[s.a], index[s.b]
        extra = PRIOR_DRAWS / 2
        points[i, j] += s.points_a + extra
        points[j, i] += (s.pages - s.points_a) + extra
        met.update((s.a, s.b))
    lonely = [name for name in names if name not in met]
    if lonely:
        raise ValueError(f"cannot rate {', '.join(lonely)}: no pages against anyone")
    games = points + points.T
    free = [i for i in range(n) if names[i] != anchor_name]
    theta = np.zeros(n)
    for _ in range(MAX_STEPS):
        gradient, hessian = _derivatives(theta, points, games)
        g, h = gradient[free], hessian[np.ix_(free, free)]
        move = np.linalg.solve(h, -g)
        theta[free] += move
        if float(np.max(np.abs(move))) < TOLERANCE:
            break
    _, hessian = _derivatives(theta, points, games)
    covariance = np.zeros((n, n))
    covariance[np.ix_(free, free)] = np.linalg.inv(-hessian[np.ix_(free, free)]) * ELO * ELO
    return Fit(names, theta * ELO, covariance, anchor_name)


def _derivatives(
    theta: NDArray[np.float64], points: NDArray[np.float64], games: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gradient and Hessian of the log-likelihood Σ points[i, j] · log σ(θ_i − θ_j)."""
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    gradient = (points - games * p).sum(axis=1)
    weight = games * p * (1.0 - p)
    np.fill_diagonal(weight, 0.0)
    hessian = weight - np.diag(weight.sum(axis=1))
    return gradient, hessian


def build_ladder_report(ladder: Ladder, scores: Sequence[Score], steps: Sequence[str]) -> dict[str, Any]:
    """The ratings with intervals, every pair's score, and the steps between consecutive `steps`
    (the levels in order, lowest first), as plain JSON."""
    result = fit(scores, ladder.players)
    ratings = [
        {
            "player": name,
            "rating": round(result.rating(name), 1),
            "low": round(result.interval(name)[0], 1),
            "high": round(result.interval(name)[1], 1),
            "pages": sum(s.pages for s in scores if name in (s.a, s.b)),
        }
        for name in ladder.players
    ]
    ratings.sort(key=lambda row: -float(row["rating"]))  # type: ignore[arg-type]
    pairs = []
    for s in scores:
        # A draw is half a page each way; the interval counts half the draws (rounded down) as a's.
        share = wilson(s.wins_a + s.draws // 2, s.pages)
        pairs.append(
            {
                "a": s.a,
                "b": s.b,
                "wins_a": s.wins_a,
                "wins_b": s.wins_b,
                "draws": s.draws,
                "score_a": {**share, "value": round(s.points_a / s.pages, 6)} if s.pages else share,
                "fitted_a": round(result.expected(s.a, s.b), 6),
            }
        )
    played = [name for name in steps if name in ladder.players]
    step_rows = []
    for lower, upper in pairwise(played):
        diff, low, high = result.step(lower, upper)
        step_rows.append(
            {
                "lower": lower,
                "upper": upper,
                "elo": round(diff, 1),
                "low": round(low, 1),
                "high": round(high, 1),
            }
        )
    return {
        "ladder": ladder.to_json(),
        "anchor": result.anchor,
        "prior_draws_per_pair": PRIOR_DRAWS,
        "ratings": ratings,
        "steps": step_rows,
        "pairs": pairs,
    }


def run_ladder(
    ladder: Ladder,
    workers: int = 1,
    progress: Progress | None = None,
    on_batch: OnBatch | None = None,
) -> list[Score]:
    """Plays every pair's pages (through the lab's runner) and counts them."""
    done: dict[Hashable, list[PageRecord]] = run_jobs(ladder.jobs(), workers, progress, on_batch)
    return [score(a, b, done[(a, b)], ladder.config(a, b)) for a, b in ladder.pairs()]
