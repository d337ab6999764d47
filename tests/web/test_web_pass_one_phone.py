"""A Quick page played on one phone: cover, setup by touch, arranging, hand-over, flicks and a send."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log

pytestmark = pytest.mark.browser

# Where each base is drawn, in drawing order (blue, red, blue, ...): in the owner's half, walls apart.
BASES = [(300, 1120, 75), (300, 280, 75), (700, 1120, 75), (700, 280, 75), (500, 900, 70), (500, 500, 70)]


def draw_base(phone: Phone, x: float, y: float, r: float) -> None:
    phone.drag([(x, y), (x + r * 0.5, y), (x + r, y)])
    phone.idle()


def flick(phone: Phone, folder: Path | None = None, pull: float = 170) -> dict[str, Any]:
    """Flicks the side to act's soldier nearest an enemy at that enemy; returns the state before."""
    before = phone.state()
    soldier, direction = aim_at_nearest_enemy(before)
    path = flick_path(soldier, direction, pull)
    phone.drag(path, release=folder is None)
    if folder is not None:
        # Mid-pull: the dashed aim line and the cone are showing.
        phone.shot(folder, "page-aiming")
        phone.touch("touchEnd")
    phone.idle()
    return before


def test_quick_page_on_one_phone(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    p.goto("/")
    p.shot(screens, "cover")
    p.tap("[data-action=more-sizes]")
    p.tap(".choice[data-value=quick]")
    p.tap(".choice[data-value=local]")
    p.tap("[data-action=start]")
    p.page.wait_for_url("**/p/*")
    p.idle()
    st = p.state()
    page_id = st["id"]
    assert st["phase"] == "bases" and st["sideToAct"] == "blue" and st["mode"] == "local"

    # A base in the enemy's half is refused in the server's words, near the finger, and nothing changes.
    draw_base(p, 500, 300, 70)
    refusal = p.page.locator(".toast-refusal")
    assert refusal.count() == 1 and refusal.inner_text().strip()
    p.shot(screens, "setup-refused")
    assert p.state()["bases"] == [] and log(server, page_id)["entries"] == []

    for i, (x, y, r) in enumerate(BASES):
        side = "blue" if i % 2 == 0 else "red"
        assert p.state()["sideToAct"] == side
        draw_base(p, x, y, r)
        bases = p.state()["bases"]
        assert len(bases) == i + 1
        assert bases[-1]["side"] == side and math.hypot(bases[-1]["x"] - x, bases[-1]["y"] - y) < 1
        if i == 1:
            p.shot(screens, "setup-bases")
    # Red drew the last base: the phone goes back to blue to arrange.
    assert p.dismiss_handover()
    st = p.state()
    assert st["phase"] == "positioning" and st["sideToAct"] == "blue"
    p.shot(screens, "setup-arrange")

    # Blue steps one soldier out of his ring, within the outside margin.
    base = st["bases"][0]
    soldier = next(s for s in st["soldiers"] if s["id"].startswith(base["id"] + "s"))
    target = (base["x"], base["y"] + base["r"] + 12)
    p.drag(
        [
            (soldier["x"], soldier["y"]),
            ((soldier["x"] + target[0]) / 2, (soldier["y"] + target[1]) / 2),
            target,
        ]
    )
    p.idle()
    moved = next(s for s in p.state()["soldiers"] if s["id"] == soldier["id"])
    assert math.hypot(moved["x"] - target[0], moved["y"] - target[1]) < 1.5
    stored = [e for e in log(server, page_id)["entries"] if e["action"]["type"] == "position"]
    assert stored and stored[-1]["action"]["soldiers"][0]["id"] == soldier["id"]

    p.tap("[data-action=ready]")
    p.idle()
    assert p.page.locator(".handover").count() == 1
    assert "Red's turn" in p.page.locator(".handover").inner_text()
    p.shot(screens, "handover")
    p.dismiss_handover()
    assert p.state()["sideToAct"] == "red"
    p.tap("[data-action=ready]")
    p.idle()
    p.dismiss_handover()
    st = p.state()
    assert st["phase"] == "play" and st["sideToAct"] == "blue"

    # A pull that slides back into the soldier is cancelled: nothing is sent.
    stored_count = len(log(server, page_id)["entries"])
    soldier, direction = aim_at_nearest_enemy(st)
    out = flick_path(soldier, direction, 150)
    p.drag([*out, out[1], out[0]])
    p.idle()
    assert len(log(server, page_id)["entries"]) == stored_count
    assert p.state()["inkCount"] == 0 and p.state()["version"] == stored_count

    # Blue's first flick: a snipe at the nearest red soldier; the ink is drawn where the server says.
    before = flick(p, screens)
    st = p.state()
    assert st["inkCount"] == 1
    entries = log(server, page_id)["entries"]
    last = entries[-1]
    assert last["action"]["type"] == "flick" and last["action"]["kind"] == "snipe" and last["side"] == "blue"
    ink = next(e for e in last["events"] if e["type"] == "ink")
    assert ink["soldier"] in {s["id"] for s in before["soldiers"] if s["side"] == "blue"}
    # Canvas pixels: blue ink halfway along the line the server drew (the page was blank paper there).
    pts = ink["points"]
    mid = (
        ((pts[0][0] + pts[-1][0]) / 2, (pts[0][1] + pts[-1][1]) / 2)
        if len(pts) == 2
        else tuple(pts[len(pts) // 2])
    )
    assert p.ink_near(mid[0], mid[1], "blue")
    p.shot(screens, "page-after-flick")

    # Play on: each side flicks in turn (a lunge for red), with one send by blue, handing the phone over.
    sent = False
    flicks = 1
    for _ in range(6):
        p.dismiss_handover()
        st = p.state()
        if st["phase"] != "play":
            break
        turn = st["turn"] or {}
        if turn.get("chain"):
            p.tap("[data-action=stop]")
            p.idle()
            continue
        if st["sideToAct"] == "blue" and not sent and not turn.get("sent"):
            src = next(
                b
                for b in st["bases"]
                if b["side"] == "blue"
                and any(
                    s["side"] == "blue"
                    and s["alive"]
                    and not s["on_road"]
                    and math.hypot(s["x"] - b["x"], s["y"] - b["y"]) <= b["r"]
                    for s in st["soldiers"]
                )
            )
            dst = next(b for b in st["bases"] if b["side"] == "blue" and b["id"] != src["id"])
            p.tap("[data-action=send]")
            p.tap_page(src["x"], src["y"])
            p.tap("[data-count='2']")
            p.tap_page(dst["x"], dst["y"])
            p.idle()
            on_road = [s for s in p.state()["soldiers"] if s["on_road"]]
            assert len(on_road) == 2
            assert "Blue sends 2 soldiers on the road" in p.page.locator("#said").inner_text()
            p.shot(screens, "page-send")
            sent = True
        if st["sideToAct"] == "red":
            p.tap("[data-kind=lunge]")
        flick(p)
        flicks += 1
    entries = log(server, page_id)["entries"]
    kinds = [e["action"]["type"] for e in entries]
    assert kinds.count("flick") == flicks >= 4
    assert kinds.count("send") == 1
    assert any(
        e["action"].get("kind") == "lunge" and e["side"] == "red"
        for e in entries
        if e["action"]["type"] == "flick"
    )
    assert p.state()["version"] == entries[-1]["version"] == len(entries)
    p.shot(screens, "page-later")

    # The side to flick resigns from the page menu: the end sheet names the winner with the numbers.
    p.dismiss_handover()
    loser = p.state()["sideToAct"]
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet button", has_text="Resign").tap()
    p.page.locator(".sheet button.btn-red", has_text="Resign").tap()
    p.idle()
    winner = "red" if loser == "blue" else "blue"
    st = p.state()
    assert st["phase"] == "over" and st["winner"] == winner
    end = p.page.locator(".sheet.end")
    end.locator("table.numbers").wait_for()
    assert f"{winner.capitalize()} wins" in end.inner_text()
    flick_row = end.locator("tr", has_text="flicks").inner_text().split()
    blue_flicks = sum(1 for e in entries if e["action"]["type"] == "flick" and e["side"] == "blue")
    red_flicks = sum(1 for e in entries if e["action"]["type"] == "flick" and e["side"] == "red")
    assert flick_row[-2:] == [str(blue_flicks), str(red_flicks)]
    p.shot(screens, "end")

    # Rematch: the server's (/rematch, issue 19; on one phone it starts at once), a new Quick page on one
    # phone; the exercise book lists both, newest first.
    end.locator("[data-action=rematch]").tap()
    p.page.wait_for_function(
        f"location.pathname.startsWith('/p/') && !location.pathname.endsWith('{page_id}')"
    )
    p.idle()
    st = p.state()
    assert st["id"] != page_id and st["mode"] == "local" and st["phase"] == "bases"
    assert len(log(server, st["id"])["entries"]) == 0
    assert httpx.get(f"{server}/api/pages/{page_id}/rematch", timeout=10).json()["page"] == st["id"]
    made, old = (httpx.get(f"{server}/api/pages/{i}", timeout=10).json() for i in (st["id"], page_id))
    assert made["rules"]["preset"] == "quick" and made["rules"] == old["rules"]  # the same size
    p.goto("/#book")
    p.page.wait_for_function(
        "document.querySelectorAll('.book-item').length === 2 && !document.body.innerText.includes('…')"
    )
    items = p.page.locator(".book-item")
    assert items.nth(0).get_attribute("data-id") == st["id"] and "drawing bases" in items.nth(0).inner_text()
    assert (
        items.nth(1).get_attribute("data-id") == page_id
        and f"{winner.capitalize()} won" in items.nth(1).inner_text()
    )
    p.shot(screens, "book")
    p.goto("/#how")
    assert p.page.locator(".howto canvas").count() >= 6
    p.shot(screens, "howto")
    assert p.errors == []
