"""Regenerates the golden picture of tests/server/test_server_picture.py — on purpose only, never from a test.

Run from the repository root: `python3 -m tests.server.golden.make_picture_golden`. A quick page is played
to the end through the engine by the simple player of tests/support (quick setup, then the nearest snipe
at full power), and three files are written next to this script:

- `picture_page.json`: the page's log `{page_id, rules, seed, actions: [{side, action}]}` — the test
  replays it, so a later change of the presets' defaults cannot change the page drawn;
- `picture.svg`: `page_svg` of the finished page, which the test holds byte for byte;
- `picture.png`: `svg_to_png` of it, which the test holds within a pixel tolerance (rasterisers differ
  slightly between library versions).

Regenerating changes what the tests hold the picture to: do it only when the drawing changes on purpose
(and bump `PICTURE_FORMAT`), and look at the new PNG before committing it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dotfight.engine import RuleSet, State, apply, new_page
from dotfight.engine.rng import seed_to_hex
from dotfight.server.picture import page_svg, png_size, svg_to_png
from tests.support.players import nearest_snipe_action

GOLDEN_DIR = Path(__file__).parent
PAGE_ID = "GoldenPicture01"
SEED = 0x5EED_0F_D07F16
MAX_ACTIONS = 400


def play() -> tuple[dict[str, Any], State]:
    """Plays the golden page to the end; returns its log and final state."""
    rules = RuleSet.preset("quick")
    state = new_page(rules, SEED)
    actions = []
    while state.phase != "over":
        side = state.actor
        assert side is not None
        action = nearest_snipe_action(state.snapshot(), resign_from_version=MAX_ACTIONS)
        state, _ = apply(state, side, action)
        actions.append({"side": side, "action": action})
    log = {"page_id": PAGE_ID, "rules": rules.to_json(), "seed": seed_to_hex(SEED), "actions": actions}
    return log, state


def main() -> None:
    log, state = play()
    svg = page_svg(state, PAGE_ID)
    (GOLDEN_DIR / "picture_page.json").write_text(json.dumps(log, indent=1) + "\n")
    (GOLDEN_DIR / "picture.svg").write_text(svg)
    (GOLDEN_DIR / "picture.png").write_bytes(svg_to_png(svg, png_size(state.rules)))
    print(f"{len(log['actions'])} actions, {len(state.ink)} lines of ink, winner {state.winner}")


if __name__ == "__main__":
    main()
