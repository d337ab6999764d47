"""Issue 9, item 1 (the server's side): rule sets whose work would be unbounded are refused when a page is
created, and a page whose rules make a move expensive (a stored one, from before the limits) costs only
its own page: another page's moves keep answering, and memory stays bounded."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from dotfight.engine import RuleSet, new_page
from tests.hostile.conftest import StartServer
from tests.support.page_client import SEED, act, create_page, local_page_in_play, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

# A dot far smaller than any new page may have, as a page stored before the limits could hold: the
# arrival's free-spot search over such a ring is what blew up (issue 9: 0.05 cost seconds and hundreds
# of MB per base). Memory is counted over the server and every process it started.
TINY_DOT = 0.05
GROWTH_LIMIT = 100 * 1024**2


def test_rules_whose_work_is_unbounded_are_refused_when_a_page_is_created(start_server: StartServer) -> None:
    server = start_server()
    answer = server.http.post(
        "/api/pages", json={"preset": "quick", "mode": "local", "rules": {"dot_radius": 0.001}}
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (
        error["code"] == "bad_request" and error["reason"] == "bad_rules" and "dot_radius" in error["message"]
    )


def stored_tiny_dot_page(server: ServerProcess) -> tuple[str, str]:
    """A local page whose stored rules have a tiny dot (as an older server accepted them): created
    normally, then its rules rewritten in the stopped server's database."""
    created = create_page(server, preset="quick", mode="local", seed=SEED)
    server.stop()
    rules = RuleSet.preset("quick", dot_radius=TINY_DOT)
    path = server.database_url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as database, database:
        rules_text = json.dumps(rules.to_json())
        database.execute("UPDATE pages SET rules = ? WHERE id = ?", (rules_text, created["id"]))
        database.execute(
            "UPDATE page_states SET state = ?, version = 0 WHERE page_id = ?",
            (json.dumps(new_page(rules, SEED).to_json()), created["id"]),
        )
    return created["id"], created["seats"]["blue"]


def process_tree(pid: int) -> list[int]:
    """The process and all its descendants (the server's worker processes included)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending.extend(children.get(current, []))
    return tree


def tree_memory(server: ServerProcess) -> int:
    """Proportional memory (PSS, so pages shared after a fork count once) of the server and every process
    it started, in bytes."""
    assert server.process is not None
    total = 0
    for pid in process_tree(server.process.pid):
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += next(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")) * 1024
    return total


def send_action(page: dict[str, Any]) -> dict[str, Any]:
    """Blue sends one soldier from his first base to his second."""
    bases = [base["id"] for base in page["bases"] if base["side"] == "blue"]
    soldier = next(
        s["id"] for s in page["soldiers"] if s["side"] == "blue" and s["id"].startswith(bases[0] + "s")
    )
    return {"type": "send", "from": bases[0], "to": bases[1], "soldiers": [soldier]}


class OtherPage:
    """Plays moves on another page in a thread, timing every answer, until told to stop."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.page_id, self.token, self.page = local_page_in_play(server)
        self.answers: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._play)

    def _play(self) -> None:
        page = self.page
        while not self.stop.is_set() and len(self.answers) < 1000 and page["phase"] != "over":
            sent = time.monotonic()
            answer = act(self.server, self.page_id, self.token, nearest_snipe_action(page), page["version"])
            self.answers.append(time.monotonic() - sent)
            assert answer.status_code == 200, answer.text
            page = snapshot(self.server, self.page_id)
            time.sleep(0.05)


def test_an_expensive_page_plays_to_an_arrival_while_another_page_answers(start_server: StartServer) -> None:
    first = start_server()
    page_id, token = stored_tiny_dot_page(first)
    server = first.another()
    try:
        other = OtherPage(server)
        for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"})):
            assert act(server, page_id, token, action, version, timeout=120).status_code == 200
        page = snapshot(server, page_id)
        assert page["rules"]["dot_radius"] == TINY_DOT and page["phase"] == "play"
        assert act(server, page_id, token, send_action(page), page["version"]).status_code == 200
        before = tree_memory(server)
        other.thread.start()
        peak = before
        for _ in range(2):  # blue's flick, then red's: blue's next turn opens with the convoy's arrival
            page = snapshot(server, page_id)
            done: list[Any] = []
            move = (server, page_id, token, nearest_snipe_action(page), page["version"], None, 300)
            mover = threading.Thread(target=lambda move=move, done=done: done.append(act(*move)))
            mover.start()
            while mover.is_alive():
                peak = max(peak, tree_memory(server))
                mover.join(0.05)
            assert done and done[0].status_code == 200, done
        events = done[0].json()["events"]
        assert any(event["type"] == "arrived" for event in events), events
        other.stop.set()
        other.thread.join(60)
        assert other.answers and max(other.answers) < 1.0, other.answers
        assert peak - before < GROWTH_LIMIT, (before, peak)
    finally:
        server.stop()
