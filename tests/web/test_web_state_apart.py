"""Issue 20, item 5: the screen's state left `Renderer`, which only draws (as chessground keeps state,
drawing and input apart): the model, the overlay and the view live in screenstate.js, the gestures,
the keys and the animator write there, and render.js writes none of them."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web" / "js"
WRITERS = (
    "input.js",
    "keyplay.js",
    "animate.js",
    "aim.js",
    "sending.js",
    "handover.js",
    "game.js",
    "replay.js",
)


def test_the_renderer_keeps_no_state_of_the_screen() -> None:
    render = (WEB / "render.js").read_text()
    # Its own: the cached layer, the frame asked for, the canvas's pixels; never the screen's.
    for field in ("model", "overlay", "view", "frozen"):
        assert not re.search(rf"this\.{field}\s*=", render), field
        assert not re.search(rf"this\.state\.{field}\s*=", render), field
    for method in ("setModel", "toPage", "toClient", "zoomAt", "panBy", "resetZoom", "setFlip", "freeze"):
        assert not re.search(rf"^\s+{method}\(", render, re.MULTILINE), method


def test_gestures_keys_and_flows_write_the_state_not_the_renderer() -> None:
    for name in WRITERS:
        text = (WEB / name).read_text()
        assert not re.search(r"renderer\.(overlay|model|view|setModel|setFlip|resetZoom|toClient)", text), (
            name
        )
    for name in ("input.js", "keyplay.js"):
        text = (WEB / name).read_text()
        assert "renderer" not in text and "this.state.overlay" in text, name
