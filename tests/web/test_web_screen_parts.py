"""The page screen's decisions, taken straight from the browser's modules: the pure functions the
screen (web/js/game.js) wires together — the hand-over on one phone and which way the page faces
(handover.js), when the end sheet opens (pageend.js), the tab's "your move" (yourmove.js), what a touch
does and a send's taps (aim.js), the marks and hint line (controls.js), event toasts (announce.js) and
refusal words (sending.js)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser


def run(server: str, phone: Any, script: str) -> Any:
    """Evaluates `script` (an async function of no arguments) on the cover page and returns its value."""
    page = phone.new_page()
    page.goto(server + "/")
    return page.evaluate(script)


def test_the_hand_over_comes_on_one_phone_when_the_side_to_act_changes(server: str, phone: Any) -> None:
    got = run(
        server,
        phone,
        """async () => {
  const { handOverDue, handOverWords, pageTurned } = await import('/js/handover.js');
  const m = (phase, sideToAct) => ({ phase, sideToAct });
  return {
    changed: handOverDue(m('play', 'red'), 'local', 'blue'),
    same: handOverDue(m('play', 'blue'), 'local', 'blue'),
    arranging: handOverDue(m('positioning', 'red'), 'local', 'blue'),
    drawingBases: handOverDue(m('bases', 'red'), 'local', 'blue'),
    over: handOverDue(m('over', null), 'local', 'blue'),
    link: handOverDue(m('play', 'red'), 'link', 'blue'),
    notYetHeld: handOverDue(m('play', 'red'), 'local', null),
    words: [handOverWords('positioning'), handOverWords('play')],
    redSeat: pageTurned(m('play', 'blue'), { side: 'red', token: 't' }, null),
    redWatcher: pageTurned(m('play', 'red'), { side: 'red', token: null }, null),
    blueSeat: pageTurned(m('play', 'red'), { side: 'blue', token: 't' }, null),
    onePhoneRed: pageTurned(m('play', 'red'), { side: 'both', token: 't' }, 'red'),
    onePhoneBases: pageTurned(m('bases', 'red'), { side: 'both', token: 't' }, 'red'),
    onePhoneOver: pageTurned(m('over', null), { side: 'both', token: 't' }, 'red'),
  };
}""",
    )
    assert got["changed"] == "red"
    assert [got[k] for k in ("same", "drawingBases", "over", "link", "notYetHeld")] == [None] * 5
    assert got["arranging"] == "red"
    assert got["words"] == [
        "Arrange your soldiers, then tap Ready.",
        "Flick one soldier: press, pull back, let go.",
    ]
    assert (got["redSeat"], got["redWatcher"], got["blueSeat"]) == (True, False, False)
    assert (got["onePhoneRed"], got["onePhoneBases"], got["onePhoneOver"]) == (True, False, False)


def test_the_end_sheet_opens_once_and_not_again_on_a_seen_finished_page(server: str, phone: Any) -> None:
    got = run(
        server,
        phone,
        """async () => {
  const { endSheetDue } = await import('/js/pageend.js');
  const over = { phase: 'over' };
  return {
    endsHere: endSheetDue(over, false, false, true),
    opensUnseen: endSheetDue(over, false, true, undefined),
    opensSeen: endSheetDue(over, false, true, true),
    again: endSheetDue(over, true, false, false),
    playing: endSheetDue({ phase: 'play' }, false, false, false),
    noPage: endSheetDue(null, false, true, false),
  };
}""",
    )
    assert got["endsHere"] == {"mark": True, "open": True}
    assert got["opensUnseen"] == {"mark": True, "open": True}
    assert got["opensSeen"] == {"mark": True, "open": False}
    none = {"mark": False, "open": False}
    assert got["again"] == none and got["playing"] == none and got["noPage"] == none


def test_your_move_is_marked_in_shared_pages_and_buzzes_only_when_it_comes(server: str, phone: Any) -> None:
    got = run(
        server,
        phone,
        """async () => {
  const { yourMoveNow, yourMoveChange } = await import('/js/yourmove.js');
  const m = { phase: 'play', sideToAct: 'blue' };
  const seat = (mode, side, token = 't') => ({ mode, side, token });
  return {
    link: yourMoveNow(m, seat('link', 'blue')),
    linkOther: yourMoveNow(m, seat('link', 'red')),
    bot: yourMoveNow(m, seat('bot', 'blue')),
    local: yourMoveNow(m, seat('local', 'both')),
    watcher: yourMoveNow(m, seat('live', null, null)),
    first: yourMoveChange(null, true),
    comes: yourMoveChange(false, true),
    goes: yourMoveChange(true, false),
    same: yourMoveChange(true, true),
    silent: yourMoveChange(false, null),
  };
}""",
    )
    noticed = {k: got[k] for k in ("link", "linkOther", "bot", "local", "watcher")}
    assert noticed == {"link": True, "linkOther": False, "bot": True, "local": None, "watcher": False}
    assert got["first"] == {"mark": True, "buzz": False}
    assert got["comes"] == {"mark": True, "buzz": True}
    assert got["goes"] == {"mark": False, "buzz": False}
    assert got["same"] is None and got["silent"] is None


SEND_MODEL = """
  const soldier = (id, x, y) => [id, { id, x, y, side: 'blue', alive: true }];
  const model = {
    phase: 'play', sideToAct: 'blue', rules: { outside_margin: 10 },
    soldiers: new Map([soldier('s1', 0, 0), soldier('s2', 90, 0), soldier('s3', 50, 0)]),
    bases: new Map([
      ['b1', { id: 'b1', side: 'blue', x: 0, y: 0, r: 40 }],
      ['b2', { id: 'b2', side: 'blue', x: 100, y: 0, r: 40 }],
    ]),
  };
  const opts = { side: 'blue', send: { max: 2, from: { b1: ['b2'] }, men: { b1: ['s1', 's2', 's3'] } } };
"""


def run_on_model(server: str, phone: Any, body: str) -> Any:
    """Runs `body` (an async function's body) with SEND_MODEL's `model` and `opts` in scope."""
    return run(server, phone, "async () => {" + SEND_MODEL + body + "}")


def test_a_send_is_made_tap_by_tap_with_the_nearest_men(server: str, phone: Any) -> None:
    got = run_on_model(
        server,
        phone,
        """
  const { pickBaseStep } = await import('/js/aim.js');
  const b1 = model.bases.get('b1'), b2 = model.bases.get('b2');
  return {
    nothing: pickBaseStep(model, opts, { step: 'from' }, null),
    fromB2: pickBaseStep(model, opts, { step: 'from' }, b2),
    fromB1: pickBaseStep(model, opts, { step: 'from' }, b1),
    toSame: pickBaseStep(model, opts, { step: 'to', from: 'b1', count: 2 }, b1),
    toB2: pickBaseStep(model, opts, { step: 'to', from: 'b1', count: 2 }, b2),
  };""",
    )
    assert got["nothing"] == {"toast": "Tap inside one of your bases."}
    assert got["fromB2"] == {"toast": "No convoy can leave that base now."}
    assert got["fromB1"] == {"flow": {"step": "count", "from": "b1", "max": 2}}
    assert got["toSame"] == {"toast": "Pick another base to send them to."}
    assert got["toB2"] == {
        "flow": None,
        "action": {"type": "send", "from": "b1", "to": "b2", "soldiers": ["s2", "s3"]},
    }


def test_what_a_touch_does_and_the_marks_follow_the_move_and_the_ink(server: str, phone: Any) -> None:
    got = run_on_model(
        server,
        phone,
        """
  const { toolOf } = await import('/js/aim.js');
  const { overlayView, hintLine } = await import('/js/controls.js');
  const ui = { token: 't', side: 'blue', mode: 'link', sendFlow: null };
  // The marks are the snapshot's (setup_marks): the half line, each side's rings enlarged for arranging.
  const zones = { blue: [{ x: 0, y: 0, r: 50 }, { x: 100, y: 0, r: 50 }], red: [{ x: 5, y: 5, r: 9 }] };
  const setupMarks = { half_y: 640, zones };
  const arranging = { ...model, phase: 'positioning', setupMarks };
  return {
    flick: toolOf(model, ui, false),
    blocked: toolOf(model, ui, true),
    notMine: toolOf({ ...model, sideToAct: 'red' }, ui, false),
    pick: toolOf(model, { ...ui, sendFlow: { step: 'from' } }, false),
    count: toolOf(model, { ...ui, sendFlow: { step: 'count' } }, false),
    draw: toolOf({ ...model, phase: 'bases' }, ui, false),
    arrange: toolOf(arranging, ui, false),
    zones: overlayView(arranging, null, ui),
    zonesWhileInk: overlayView(arranging, null, { ...ui, busy: true }),
    half: overlayView({ ...model, phase: 'bases', setupMarks }, null, ui).half,
    noMarks: overlayView({ ...arranging, setupMarks: null }, null, ui).zones,
    picks: overlayView(model, opts, { ...ui, sendFlow: { step: 'to', from: 'b1' } }),
    aimHint: hintLine({ power: 0.456 }, 'Lunge', 'Press a soldier, pull back, let go.'),
    barHint: hintLine(null, 'Snipe', 'Press a soldier, pull back, let go.'),
  };""",
    )
    tools = {k: got[k] for k in ("flick", "blocked", "notMine", "pick", "count", "draw", "arrange")}
    assert tools == {
        "flick": "flick",
        "blocked": "tap",
        "notMine": "tap",
        "pick": "pick_base",
        "count": "flick",
        "draw": "draw_base",
        "arrange": "arrange",
    }
    assert (
        got["zones"]["zones"] == [{"x": 0, "y": 0, "r": 50}, {"x": 100, "y": 0, "r": 50}]
        and got["zones"]["zoneSide"] == "blue"
    )
    assert got["zonesWhileInk"]["zones"] is None and got["half"] == {"side": "blue", "y": 640}
    assert got["noMarks"] is None
    assert got["picks"]["pickBases"] == ["b2"] and got["picks"]["pickedBase"] == "b1"
    assert got["aimHint"] == "Lunge · power 46% · slide back to cancel"
    assert got["barHint"] == "Press a soldier, pull back, let go."


def test_events_and_refusals_are_said_in_the_games_words(server: str, phone: Any) -> None:
    got = run(
        server,
        phone,
        """async () => {
  const { eventToast, choicesAfterTurn } = await import('/js/announce.js');
  const { refusalWords } = await import('/js/sending.js');
  const { ApiError } = await import('/js/api.js');
  const link = { mode: 'link', side: 'blue', kind: 'lunge' };
  return {
    stopped: eventToast({ type: 'bonus', credits: 0 }, link),
    again: eventToast({ type: 'bonus', credits: 2 }, link),
    yourTurn: eventToast({ type: 'turn', side: 'blue' }, link),
    redsTurn: eventToast({ type: 'turn', side: 'red' }, link),
    onePhoneTurn: eventToast({ type: 'turn', side: 'red' }, { mode: 'local' }),
    ink: eventToast({ type: 'ink' }, link),
    keptKind: choicesAfterTurn(link),
    onePhoneKind: choicesAfterTurn({ mode: 'local', kind: 'lunge' }),
    flickRefused: refusalWords(new ApiError('not_your_turn', 'x'), true),
    phoneFault: refusalWords(new Error('boom'), false),
    serverWords: refusalWords(new ApiError('illegal_action', 'The soldier is gone.'), false),
  };
}""",
    )
    assert got["stopped"] == {"text": "Chain stopped."}
    assert got["again"] == {"text": "Lunge again! (2)"}
    assert got["yourTurn"] == {"text": "Your turn.", "ms": 1400} and got["redsTurn"]["text"] == "Red's turn."
    assert got["onePhoneTurn"] is None and got["ink"] is None
    assert got["keptKind"] == {"sendFlow": None, "kind": "lunge"}
    assert got["onePhoneKind"] == {"sendFlow": None, "kind": "snipe"}
    assert got["flickRefused"]["toast"].startswith("Your flick was not made: ")
    assert (
        got["flickRefused"]["say"].startswith("Your flick was not made: ")
        and got["flickRefused"]["ms"] == 4200
    )
    assert got["phoneFault"] == {"toast": "something went wrong on this phone.", "ms": None, "say": None}
    assert got["serverWords"] == {"toast": "The soldier is gone.", "ms": 4200, "say": None}
