"""Makes `tests/engine/golden/legacy.sqlite3`: a server database written by the code of an older commit,
whose stored rules lack every field added since (the calibration fields of CONTRACTS.md C2).

Run it with the older checkout first on the path, never by a test:

    git archive 3a6ed21 dotfight tests alembic | tar -x -C /tmp/engine-old
    python3 tests/engine/make_legacy_db.py /tmp/engine-old tests/engine/golden/legacy.sqlite3

It creates pages through that commit's own HTTP app (so the rows are exactly what its server stores) and
plays them to the end with the random legal player of that commit's tests (snipes, lunges, chains, sends),
each action through `POST /api/pages/{id}/actions`.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path
from typing import Any

# Each page: the preset, rule overrides that make the legacy values matter (a reach curve that is not 2
# gives a legacy wildness curve that is not 2), the player's seed.
PAGES: list[tuple[str, dict[str, Any], int]] = [
    ("quick", {"reach_curve": 2.5, "wildness": 0.2}, 1),
    ("quick", {}, 2),
    ("dawood", {"reach_curve": 1.5, "shake_full": 0.5}, 3),
    ("custom", {"bases_per_side": 2, "soldiers_per_base": 6, "last_stand_at": 5}, 4),
]


class Snapshot:
    """What the random legal player reads of a page: its public snapshot and whose move it is."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.actor = data["side_to_act"]

    def snapshot(self) -> dict[str, Any]:
        return self.data


def main() -> None:
    old_tree, target = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    sys.path.insert(0, str(old_tree))
    from fastapi.testclient import TestClient

    from dotfight.server.app import create_app
    from dotfight.server.settings import Settings
    from tests.engine.strategies import legal_action

    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as web:
        (Path(web) / "index.html").write_text("<!doctype html><title>Dotfight</title>")
        settings = Settings(  # type: ignore[call-arg]
            database_url=f"sqlite:///{target}",
            web_dir=Path(web),
            http_requests_per_second=10_000.0,
            http_request_burst=10_000,
        )
        with TestClient(create_app(settings)) as client:
            for preset, rules, player_seed in PAGES:
                answer = client.post("/api/pages", json={"preset": preset, "mode": "local", "rules": rules})
                assert answer.status_code == 201, answer.text
                page = answer.json()
                rng = random.Random(player_seed)
                while True:
                    current = client.get(f"/api/pages/{page['id']}").json()
                    if current["phase"] == "over":
                        break
                    resign = 0.002 if current["version"] > 400 else 0.0
                    action = legal_action(Snapshot(current), rng, resign_chance=resign)  # type: ignore[arg-type]
                    answer = client.post(
                        f"/api/pages/{page['id']}/actions",
                        json={"action": action, "version": current["version"]},
                        headers={"authorization": f"Bearer {page['seats'][current['side_to_act']]}"},
                    )
                    assert answer.status_code == 200, answer.text
                print(page["id"], preset, current["version"], "actions")


if __name__ == "__main__":
    main()
