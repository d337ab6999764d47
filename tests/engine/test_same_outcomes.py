"""The engine says exactly what it said before issue 22's speed-up: every event, option and private
state of 240 random pages (200 quick, 30 classic, 10 dawood; about 32 000 actions) hashes to the digest
`main`'s engine gave at 302d0dd (`tests/engine/outcome_digest.py`, run in a `git archive` copy of it)."""

from __future__ import annotations

import pytest

from tests.engine.outcome_digest import outcome_digest

# sha256 of every outcome, computed by main's engine (302d0dd) before the change.
MAIN_DIGEST = "6cd9aa5fcc3d58cf0670cd542464f3a5024e4a392a8f690ed9560ad2e367a099"


@pytest.mark.slow
def test_random_pages_say_what_mains_engine_said() -> None:
    assert outcome_digest() == MAIN_DIGEST
