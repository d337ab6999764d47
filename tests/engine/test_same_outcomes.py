"""The engine says exactly what it said before issue 22's speed-up: every event, option and private
state of random pages hashes to the digest `main`'s engine gave at 302d0dd (`outcome_digest.py`, run in
a `git archive` copy of that tree): 48 pages in the default run, 240 (200 quick, 30 classic, 10 dawood;
about 32 000 actions) with `-m slow`."""

from __future__ import annotations

import pytest

from tests.engine.outcome_digest import FEW_PAGES, PAGES, outcome_digest

# sha256 of every outcome, computed by main's engine (302d0dd) before the change.
MAIN_DIGEST_FEW = "8d0b340d2697ec11e19c26d5ffdaeedb4c03a497716367891abab862ba37c824"
MAIN_DIGEST = "6cd9aa5fcc3d58cf0670cd542464f3a5024e4a392a8f690ed9560ad2e367a099"


def test_random_pages_say_what_mains_engine_said() -> None:
    assert outcome_digest(FEW_PAGES) == MAIN_DIGEST_FEW


@pytest.mark.slow
def test_many_random_pages_say_what_mains_engine_said() -> None:
    assert outcome_digest(PAGES) == MAIN_DIGEST
