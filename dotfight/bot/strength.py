"""How hard Dawood-bot thinks: the three strengths differ in depth of search, never in policy.

Every strength weighs the same things the same way (`evaluate`); they differ in how many candidate
flicks they draw up, how many they play through the engine, how much luck they sample for each, and in
the human-sized slips of the easy bot (noise on its judgement of each flick, an unsteady hand).
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


# In lab play one sample of luck per candidate is a coin toss between the few best forecasts, while two
# or more tell a sure flick from a lucky one; past about two samples on the first round and a few halvings
# the judgement, not the search, decides. Easy takes the flick that looks best at a glance (its forecast,
# misjudged by a slip, flicked with an unsteady hand) and only checks it against stopping; normal tries
# four on one sample and halves twice; hard tries twelve on two samples and halves three times. Normal,
# the bot the rule numbers are calibrated with, has a steady hand (its 0.02 rad wobble was an invented
# slip that lengthened pages; issue 8). With this judgement hard does not beat normal (docs/BOT.md).
_EASY = Strength("easy", pairs=4, width=1, first=1, rounds=0, noise=0.4, wobble=0.04)
_NORMAL = Strength("normal", pairs=8, width=4, first=1, rounds=2)
_HARD = Strength("hard", pairs=24, width=12, first=2, rounds=3)

STRENGTHS: dict[str, Strength] = {s.name: s for s in (_EASY, _NORMAL, _HARD)}

# What the bot may do (contract C3): "full" plays every tactic; "snipe-only" never lunges; "no-outside"
# keeps every man inside a base when arranging. The lab's head-to-heads ask whether a tactic pays.
POLICIES = ("full", "snipe-only", "no-outside")
