"""The private state a checkpoint carries, as the JSON text the store keeps (`page_states`), with the
text of the page's ink lines kept from one checkpoint to the next.

Ink never rubs out (the engine only appends lines: `(*state.ink, line)`), and on a long page it is most
of the state: after 100 soft snipes their lines are 18 of the state's 25 KB, and making them into dicts
(`Ink.to_json`) and then text took about 120 of a checkpoint's ~235 µs (micro-measured; the dicts on the
event loop, the text on the store's writer thread, every 16th version or so). So the lines' text is
kept per page (`InkText`), and a checkpoint serialises only the lines drawn since the last one, then
the rest of the state with the kept lines spliced in as one orjson `Fragment`. The text is byte for
byte orjson's of `State.to_json()` (tests hold it so), read back by the store with `orjson.loads`.

A kept text is used only for a state whose first lines equal the ones it was made of (a tuple
comparison, by identity first, so free on the page that made it): a page reloaded, replayed or replaced
starts a new one, and a wrong text cannot be spliced in.
"""

from __future__ import annotations

from typing import NamedTuple

import orjson

from dotfight.engine import State
from dotfight.engine.values import Ink
from dotfight.store.records import StateJson


class InkText(NamedTuple):
    """The JSON of a page's first lines of ink, `lines` (comma-separated objects, no brackets)."""

    lines: tuple[Ink, ...]
    text: bytes


NO_INK = InkText((), b"")


def ink_text_bytes(kept: InkText) -> int:
    """The bytes a kept text holds (a cache of them is bounded by it)."""
    return len(kept.text)


def checkpoint_text(state: State, kept: InkText | None = None) -> tuple[str, InkText]:
    """Returns the private state's JSON text (`orjson.dumps(state.to_json())`, decoded) and the ink's
    text to keep for the page's next checkpoint; `kept` is the page's last one (None: none kept).

    >>> from dotfight.engine import RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> text, ink = checkpoint_text(page)
    >>> text == orjson.dumps(page.to_json()).decode(), ink
    (True, InkText(lines=(), text=b''))
    """
    ink = state.ink
    if kept is None or len(kept.lines) > len(ink) or ink[: len(kept.lines)] != kept.lines:
        kept = NO_INK
    done = len(kept.lines)
    text = kept.text
    if len(ink) > done:
        # orjson's compact list of the new lines, its brackets cut: the lines' text, comma-separated.
        drawn = orjson.dumps([line.to_json() for line in ink[done:]])[1:-1]
        text = text + b"," + drawn if done else drawn
        kept = InkText(ink, text)
    data = state.to_json(ink=False)
    data["ink"] = orjson.Fragment(b"[" + text + b"]")
    return orjson.dumps(data).decode(), kept


def state_from_checkpoint(checkpoint: StateJson) -> State:
    """The engine's state from a stored checkpoint: `State.to_json()`'s dict, or its text (as
    `checkpoint_text` makes it; a store that keeps what it was given hands the text back). Read with
    orjson as `store.appends.state_of` does, not through it: the authority imports no SQLAlchemy
    (tests/server/test_server_layers.py)."""
    return State.from_json(orjson.loads(checkpoint) if isinstance(checkpoint, str) else checkpoint)
