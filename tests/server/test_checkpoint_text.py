"""The checkpoint's private state as text (pages/checkpoint_text.py): the text of `State.to_json()` byte
for byte, with a page's ink lines serialised once, at the first checkpoint that holds them."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from dotfight.engine import State, apply
from dotfight.engine.values import Ink
from dotfight.server.pages import authority as authority_module
from dotfight.server.pages.authority import CreatePage, PageAuthority, Seat
from dotfight.server.pages.checkpoint_text import InkText, checkpoint_text, state_from_checkpoint
from dotfight.store.memory import MemoryPageStore
from dotfight.store.records import Checkpoint, LogEntry
from tests.support.pages import SETUP_MOVES, engine_page_ready_to_play


def soft_snipe(state: State, number: int) -> tuple[str, dict[str, object]]:
    """A soft snipe of the side to act, its `number`th living soldier's: a line of ink, nobody falls."""
    side = state.actor
    assert side is not None
    mine = [s.id for s in state.soldiers if s.side == side and s.alive]
    pull = 40.0 if side == "blue" else -40.0
    return side, {
        "type": "flick",
        "soldier": mine[number % len(mine)],
        "kind": "snipe",
        "vector": [0.0, pull],
    }


def soft_snipes(state: State, count: int) -> list[State]:
    """The states after each of `count` soft snipes."""
    states = []
    for number in range(count):
        state, _ = apply(state, *soft_snipe(state, number))
        states.append(state)
    return states


def whole(state: State) -> str:
    return orjson.dumps(state.to_json()).decode()


def test_the_text_is_to_jsons_at_every_version_with_the_ink_kept_from_the_last_checkpoint() -> None:
    states = soft_snipes(engine_page_ready_to_play(seed=3), 40)
    kept: InkText | None = None
    for state in states:
        text, kept = checkpoint_text(state, kept)
        assert text == whole(state)
        assert kept.lines == state.ink and orjson.loads(b"[" + kept.text + b"]") == orjson.loads(text)["ink"]
        assert state_from_checkpoint(text) == state


def test_a_kept_text_of_other_lines_is_not_spliced_in() -> None:
    page = soft_snipes(engine_page_ready_to_play(seed=3), 12)
    other = soft_snipes(engine_page_ready_to_play(seed=4), 20)
    _, of_other = checkpoint_text(other[5])  # six lines of another page
    _, longer = checkpoint_text(page[-1])  # more lines than the state has
    for kept in (of_other, longer):
        assert checkpoint_text(page[8], kept)[0] == whole(page[8])
    reloaded = State.from_json(orjson.loads(whole(page[8])))  # equal lines, not the same objects
    assert checkpoint_text(page[11], checkpoint_text(reloaded)[1])[0] == whole(page[11])


def test_only_the_lines_drawn_since_the_last_checkpoint_are_serialised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    states = soft_snipes(engine_page_ready_to_play(seed=3), 48)
    _, kept = checkpoint_text(states[31])  # 32 lines
    made: list[Ink] = []
    to_json = Ink.to_json

    def counted(line: Ink) -> dict[str, object]:
        made.append(line)
        return to_json(line)

    monkeypatch.setattr(Ink, "to_json", counted)
    text, _ = checkpoint_text(states[47], kept)
    assert made == list(states[47].ink[32:])  # the 16 new lines, once each
    monkeypatch.undo()
    assert text == whole(states[47])


async def played_then_resumed(store: MemoryPageStore, flicks: int) -> tuple[State, State, list[int]]:
    """Plays `flicks` soft snipes on a new page of an authority over `store`, then loads the page in a
    fresh authority over the same store (as after a restart). Returns the state played, the state
    resumed, and after each flick how many lines of ink the first authority kept as text for the page."""
    authority = PageAuthority(store)
    kept = []
    try:
        page_id = (await authority.create(CreatePage("quick", None, 3, "live"))).page.meta.id
        for version, (side, action) in enumerate(SETUP_MOVES):
            await authority.act(page_id, Seat(side), action, version, None)
        for number in range(flicks):
            state = (await authority.page(page_id)).state
            side, flick = soft_snipe(state, number)
            await authority.act(page_id, Seat(side), flick, state.version, None)
            ink = authority._ink_texts.get(page_id)
            kept.append(0 if ink is None else len(ink.lines))
        played = (await authority.page(page_id)).state
    finally:
        authority.close()
    fresh = PageAuthority(store)
    try:
        return played, (await fresh.page(page_id)).state, kept
    finally:
        fresh.close()


def test_the_store_is_handed_the_text_and_a_fresh_authority_resumes_from_it() -> None:
    store = MemoryPageStore()
    checkpoints: list[Checkpoint] = []
    append_then = store.append_then

    def recording(page_id: str, version: int, entry: LogEntry, checkpoint: Checkpoint, reply: object) -> None:
        checkpoints.append(checkpoint)
        append_then(page_id, version, entry, checkpoint, reply)  # type: ignore[arg-type]

    store.append_then = recording  # type: ignore[method-assign]
    played, resumed, _ = asyncio.run(played_then_resumed(store, 30))
    texts = [checkpoint.state for checkpoint in checkpoints if checkpoint.state is not None]
    assert [orjson.loads(text)["version"] for text in texts] == [16, 32]  # type: ignore[arg-type]
    assert all(isinstance(text, str) for text in texts)
    assert resumed == played and resumed.version == 33


def test_the_kept_texts_are_bounded_in_bytes_and_a_page_past_the_bound_makes_its_text_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(authority_module, "INK_TEXT_BYTES", 4000)  # ~22 lines of soft snipes
    played, resumed, kept = asyncio.run(played_then_resumed(MemoryPageStore(), 45))
    assert kept[12] == 13 and kept[-1] == 0  # checkpoint 16's 13 lines kept; 32's and 48's too long
    assert resumed == played and resumed.version == 48
