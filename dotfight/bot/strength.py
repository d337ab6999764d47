"""How hard Dawood-bot thinks: the five levels differ in depth of search and steadiness of hand, never
in policy.

Every level weighs the same things the same way (`evaluate`) and plays the same tactics; they differ
in how many candidate flicks they draw up, how many they play through the engine, how much luck they
sample for each, and in a person's slips: beginner and easy misjudge each flick (noise) and have an
unsteady hand, steady's hand wobbles twice as much as normal's, normal's slightly, hard's not at all.
`STRENGTHS` lists them lowest first; the lab's ladder (docs/LAB.md) measures the steps between them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strength:
    """The knobs of one strength."""

    name: str
    pairs: int  # (shooter, target) pairs turned into candidate flicks
    width: int  # best-forecast candidates played through the engine in the first round
    first: int  # luck samples per candidate in the first round
    rounds: int  # halvings: each keeps the better half and doubles its samples
    noise: float = 0.0  # spread (men) of the slip added to each candidate's judged worth
    wobble: float = 0.0  # spread (radians) of the hand: the flick leaves a little off the chosen aim

    def evaluations(self) -> int:
        """How many engine trials a full search makes at most (stop and sends aside)."""
        total, active, samples = self.width * self.first, self.width, self.first
        for _ in range(self.rounds):
            active = (active + 1) // 2
            total += active * samples
            samples *= 2
        return total


# In lab play the search's depth alone hardly separates two strengths: with a shared judgement and dice
# deciding most of a page, hard searching wider (24 pairs, 12 wide), or the same four candidates on two to
# eight times normal's samples of luck, won 43-57 % of Quick pages against normal (60 pages each,
# docs/BOT.md). What separates them is the hand: normal flicks with a person's small wobble
# (0.0125 rad, 4 units at 300), hard flicks exactly where it aims, and hard samples four times normal's
# luck on the same candidates (the wider field played worse: more noisy estimates to take the best of).
# Easy takes the flick that looks best at a glance (its forecast, misjudged by a slip, flicked with an
# unsteadier hand) and only checks it against stopping.
#
# The levels below easy and between easy and normal (issue 23) were set by the lab's ladder so that each
# stands 150-300 Elo above the one below and beginner wins about half its pages against the novice
# model (docs/LAB.md, "The ladder"): beginner is easy with twice its slips of judgement and a hand half
# as unsteady again (the hand costs most: 0.02 rad more wobble cost about 150 Elo in 100-page trials);
# steady searches like normal with twice normal's wobble (halfway between easy and normal in Elo, where
# a shallower search at normal's hand stood nearer normal).
_BEGINNER = Strength("beginner", pairs=4, width=1, first=1, rounds=0, noise=0.8, wobble=0.06)
_EASY = Strength("easy", pairs=4, width=1, first=1, rounds=0, noise=0.4, wobble=0.04)
_STEADY = Strength("steady", pairs=8, width=4, first=1, rounds=2, wobble=0.025)
_NORMAL = Strength("normal", pairs=8, width=4, first=1, rounds=2, wobble=0.0125)
_HARD = Strength("hard", pairs=8, width=4, first=4, rounds=2)

# Lowest first: the order of the cover, the ladder and its steps. "easy", "normal" and "hard" are the
# names stored with pages made before the ladder (`pages.bot`) and keep their meaning.
STRENGTHS: dict[str, Strength] = {s.name: s for s in (_BEGINNER, _EASY, _STEADY, _NORMAL, _HARD)}

# What the bot may do (contract C3): "full" plays every tactic; "snipe-only" never lunges; "no-outside"
# keeps every man inside a base when arranging. The lab's head-to-heads ask whether a tactic pays.
POLICIES = ("full", "snipe-only", "no-outside")
