"""Issue 19 on the phone: the pure parts of the people's modules, run in the browser as the app loads
them — the clocks' words and times, who may claim, the Rematch button's words for each seat, the
cover's clock choices and the words of an ending (the screens' own tests play them through)."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import Phone

pytestmark = pytest.mark.browser

PARTS = """async () => {
  const clock = await import('/js/clock.js');
  const { awaySide } = await import('/js/absence.js');
  const { rematchButton } = await import('/js/people.js');
  const { clockOf } = await import('/js/coverclock.js');
  const { endWords } = await import('/js/words.js');
  const t0 = Date.parse('2026-12-01T10:00:00Z');
  const running = { blue_s: 300, red_s: 245.5, running: 'red', deadline: '2026-12-01T10:01:40Z' };
  const model = (phase, sideToAct) => ({ phase, sideToAct });
  return {
    ms: [0, 1, 999, 1000, 9001, 59999, 60000, 605000, -5].map(clock.minutesSeconds),
    left: [2 * 86400e3 + 5, 86400e3, 5.5 * 3600e3, 3600e3, 12 * 60e3 + 1, 119e3, 40e3]
      .map(clock.timeLeftWords),
    times: clock.timesLeft(running, t0),
    stopped: clock.timesLeft({ ...running, running: null, deadline: null }, t0),
    away: [
      awaySide(model('play', 'blue'), 'red', 'live'), awaySide(model('play', 'red'), 'red', 'live'),
      awaySide(model('play', 'blue'), 'red', 'link'), awaySide(model('over', 'blue'), 'red', 'live'),
      awaySide(model('play', 'blue'), null, 'live'),
    ],
    rematch: [
      rematchButton(null, 'blue'), rematchButton({ offered_by: 'blue' }, 'blue'),
      rematchButton({ offered_by: 'blue' }, 'red'), rematchButton({ offered_by: 'blue', page: 'x' }, 'red'),
      rematchButton(null, null), rematchButton({ offered_by: 'red' }, null),
      rematchButton({ offered_by: 'red', page: 'x' }, null), rematchButton({ offered_by: 'blue' }, 'both'),
    ],
    clocks: [['live', '300+3'], ['live', 'none'], ['link', '86400'], ['bot', '300+3']]
      .map(([m, c]) => clockOf(m, c)),
    ends: ['resigned', 'time', 'abandoned', 'all_crossed_out', null].map((r) => endWords(r, 'blue')),
  };
}"""


def test_the_people_parts(server: str, phone: Any) -> None:
    p = Phone(phone, server)
    p.goto("/")
    r = p.page.evaluate(PARTS)
    # Whole seconds rounded up: 0:00 only when the time is up, never below.
    assert r["ms"] == ["0:00", "0:01", "0:01", "0:01", "0:10", "1:00", "1:00", "10:05", "0:00"]
    assert r["left"] == [
        "2 days left", "1 day left", "5 hours left", "1 hour left",
        "12 minutes left", "1:59 left", "0:40 left",
    ]  # fmt: skip
    # The running side counts to its deadline; the other stands at what the server said.
    assert r["times"] == {"blue": 300000, "red": 100000}
    assert r["stopped"] == {"blue": 300000, "red": 245500}
    # Only the waiting seat of a live page in play may claim, against the side to act.
    assert r["away"] == ["blue", None, None, None, None]
    labels = [b and (b["label"], b["action"]) for b in r["rematch"]]
    assert labels == [
        ("Rematch", "rematch"),
        ("Offered… (withdraw)", "withdraw-rematch"),
        ("Accept rematch", "accept-rematch"),
        ("Play the rematch", "rematch"),
        None,
        None,
        ("Watch the rematch", "watch-rematch"),
        ("Rematch", "rematch"),
    ]
    assert r["clocks"] == [{"initial_s": 300, "increment_s": 3}, None, {"per_move_s": 86400}, None]
    assert r["ends"] == [
        "blue resigned", "blue ran out of time", "blue left the page",
        "every blue soldier is crossed out", "every blue soldier is crossed out",
    ]  # fmt: skip
    assert p.errors == []
