"""Pages made over HTTP for the benchmarks and tests: set up and ready to flick."""

from __future__ import annotations

import httpx

# Blue's quick setup, then both sides ready: the page's first turn of play is next (version 3).
READY_ACTIONS = ({"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"})


def page_ready_to_play(http: httpx.Client, preset: str = "classic") -> tuple[str, str]:
    """Creates a pass-one-phone page on `http`'s server and sets it up; returns (page id, seat token)."""
    created = http.post("/api/pages", json={"preset": preset, "mode": "local"}).json()
    page_id, token = created["id"], created["seats"]["blue"]
    for version, action in enumerate(READY_ACTIONS):
        http.post(
            f"/api/pages/{page_id}/actions",
            json={"action": action, "version": version},
            headers={"Authorization": f"Bearer {token}"},
        ).raise_for_status()
    return page_id, token
