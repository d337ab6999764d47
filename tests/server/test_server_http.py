"""The HTTP API, in process: pages created, played to the end, and every kind of bad request refused
with nothing changed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from server_testkit import simple_action

from dotfight.engine import Replay, RuleSet
from dotfight.server.app import create_app
from dotfight.server.page_view import with_cross_sides
from dotfight.server.settings import Settings

CHOSEN_SEED = "0123456789abcdef0123456789abcdef"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post_raw_action(client: TestClient, page: dict[str, Any], body: bytes) -> Any:
    """Posts `body` as it is (not JSON-encoded by the client) as blue's action on the page."""
    headers = {**bearer(page["seats"]["blue"]), "content-type": "application/json"}
    return client.post(f"/api/pages/{page['id']}/actions", content=body, headers=headers)


def create(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/pages", json={"preset": "quick", "mode": "link", **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def act(
    client: TestClient, page_id: str, token: str, action: dict[str, Any], version: int, **extra: Any
) -> Any:
    return client.post(
        f"/api/pages/{page_id}/actions",
        json={"action": action, "version": version, **extra},
        headers=bearer(token),
    )


def snapshot(client: TestClient, page_id: str) -> dict[str, Any]:
    response = client.get(f"/api/pages/{page_id}")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def play_simple(
    client: TestClient, page_id: str, token: str, current: dict[str, Any], count: int
) -> dict[str, Any]:
    """Plays `count` simple legal actions from snapshot `current`; returns the snapshot after them."""
    for _ in range(count):
        response = act(client, page_id, token, simple_action(current), current["version"])
        assert response.status_code == 200, response.text
        current = snapshot(client, page_id)
    return current


def play_to_end(client: TestClient, page_id: str, seats: dict[str, str]) -> dict[str, Any]:
    """Plays the page with the simple player, each action by the seat whose turn it is."""
    current = snapshot(client, page_id)
    while current["phase"] != "over":
        side = current["side_to_act"]
        response = act(client, page_id, seats[side], simple_action(current), current["version"])
        assert response.status_code == 200, response.text
        assert response.json()["version"] == current["version"] + 1
        current = snapshot(client, page_id)
    return current


def page_log(client: TestClient, page_id: str) -> dict[str, Any]:
    response = client.get(f"/api/pages/{page_id}/log")
    assert response.status_code == 200
    result: dict[str, Any] = response.json()
    return result


def assert_unchanged(client: TestClient, page_id: str, version: int, log_length: int) -> None:
    assert snapshot(client, page_id)["version"] == version
    assert len(page_log(client, page_id)["entries"]) == log_length


def test_health_answers_ok_with_the_version(client: TestClient) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": "0.1.0"}


def test_a_new_page_has_two_seats_absolute_links_a_seed_commitment_and_no_seed(client: TestClient) -> None:
    created = create(client)
    page_id = created["id"]
    blue, red = created["seats"]["blue"], created["seats"]["red"]
    assert blue != red and len(blue) >= 22 and len(red) >= 22
    assert created["links"] == {
        "blue": f"http://testserver/p/{page_id}#seat={blue}",
        "red": f"http://testserver/p/{page_id}#seat={red}",
        "watch": f"http://testserver/p/{page_id}",
    }
    assert len(created["seed_sha256"]) == 64
    first = created["snapshot"]
    assert (first["id"], first["mode"], first["seed"], first["version"]) == (page_id, "link", None, 0)
    assert first["seed_sha256"] == created["seed_sha256"]
    assert first["phase"] == "bases" and first["side_to_act"] == "blue"
    assert first["rules"]["bases_per_side"] == 3 and first["rules"]["soldiers_per_base"] == 8
    assert first["clock"] is None
    assert snapshot(client, page_id) == first


def test_a_quick_page_played_to_the_end_by_two_seats_reveals_a_verifiable_seed(client: TestClient) -> None:
    created = create(client)
    page_id, seats = created["id"], created["seats"]
    final = play_to_end(client, page_id, seats)

    assert final["winner"] in ("blue", "red")
    log = page_log(client, page_id)
    seed = log["seed"]
    assert seed is not None and final["seed"] == seed and len(seed) == 32
    assert hashlib.sha256(seed.encode("ascii")).hexdigest() == created["seed_sha256"] == log["seed_sha256"]
    entries = log["entries"]
    assert [entry["version"] for entry in entries] == list(range(1, final["version"] + 1))
    replay = Replay(
        RuleSet.from_json(log["rules"]),
        int(seed, 16),
        [{"side": entry["side"], "action": entry["action"]} for entry in entries],
    )
    assert replay.error is None and replay.valid == len(entries)
    # The log's events are the replay's, each cross naming its side as the replayed page knows it.
    replayed = [with_cross_sides(replay.state, events) for events in replay.events]
    assert replayed == [entry["events"] for entry in entries]
    rebuilt = json.loads(json.dumps(replay.state.snapshot()))
    assert {key: final[key] for key in rebuilt} == rebuilt
    summary = client.get(f"/api/pages?ids={page_id}").json()[0]
    assert (summary["status"], summary["winner"], summary["phase"]) == ("over", final["winner"], "over")
    # Nothing more can be played on a page that is over.
    side = "red" if final["winner"] == "blue" else "blue"
    refused = act(client, page_id, seats[side], {"type": "resign"}, final["version"])
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "game_over")


def test_the_seed_stays_hidden_everywhere_until_the_page_is_over(client: TestClient) -> None:
    created = create(client, mode="local", seed=CHOSEN_SEED)
    page_id, token = created["id"], created["seats"]["blue"]
    assert created["seats"]["red"] == token
    assert created["seed_sha256"] == hashlib.sha256(CHOSEN_SEED.encode()).hexdigest()
    seen = [json.dumps(created)]
    current = created["snapshot"]
    for _ in range(4):
        response = act(client, page_id, token, simple_action(current), current["version"])
        seen.append(response.text)
        current = snapshot(client, page_id)
        seen.append(json.dumps(current))
    seen.append(act(client, page_id, token, {"type": "ready"}, 0).text)  # a refusal (stale) with a snapshot
    seen.append(client.get(f"/api/pages/{page_id}/log").text)
    seen.append(client.get(f"/api/pages?ids={page_id}").text)
    assert all(CHOSEN_SEED not in text for text in seen)

    over = act(client, page_id, token, {"type": "resign"}, current["version"])
    assert over.status_code == 200
    assert snapshot(client, page_id)["seed"] == CHOSEN_SEED
    assert page_log(client, page_id)["seed"] == CHOSEN_SEED


def test_the_same_chosen_seed_and_actions_give_the_same_page(client: TestClient) -> None:
    pages = [create(client, mode="local", seed=int(CHOSEN_SEED, 16)) for _ in range(2)]
    finals = []
    for created in pages:
        token, current = created["seats"]["blue"], created["snapshot"]
        current = play_simple(client, created["id"], token, current, 8)
        finals.append({key: value for key, value in current.items() if key != "id"})
    assert finals[0] == finals[1]


@pytest.mark.parametrize(
    "body",
    [
        {"preset": "quick", "mode": "link", "seed": CHOSEN_SEED},
        {"preset": "quick", "mode": "live", "seed": 5},
        {"preset": "quick", "mode": "local", "seed": "not hex"},
        {"preset": "quick", "mode": "local", "seed": 2**128},
        {"preset": "quick", "mode": "local", "seed": -1},
        {"preset": "quick", "mode": "sideways"},
        {"preset": "tiny", "mode": "local"},
        {"preset": "quick", "mode": "link", "bot": {"strength": "hard"}},
        {"preset": "quick", "mode": "local", "colour": "green"},
        {"preset": "custom", "mode": "local", "rules": {"bases_per_side": 0}},
        {"preset": "custom", "mode": "local", "rules": {"no_such_rule": 1}},
        {"preset": "quick", "mode": "local", "rules": {"pull_max": -5}},
    ],
)
def test_a_page_that_cannot_be_made_is_refused(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/api/pages", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "bad_request"


def test_rule_overrides_are_played_in_every_mode(client: TestClient) -> None:
    for mode in ("local", "link", "live"):
        created = create(
            client, preset="custom", mode=mode, rules={"bases_per_side": 2, "soldiers_per_base": 5}
        )
        rules = created["snapshot"]["rules"]
        assert (rules["bases_per_side"], rules["soldiers_per_base"]) == (2, 5)


def test_nan_in_rules_is_refused(client: TestClient) -> None:
    body = b'{"preset": "quick", "mode": "local", "rules": {"wildness": NaN}}'
    response = client.post("/api/pages", content=body, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["error"]["code"]) == (400, "bad_request")


def test_bot_mode_is_refused_clearly_while_dawood_bot_is_missing(
    make_settings: Callable[..., Settings],
) -> None:
    # A server given no process for the bot (DOTFIGHT_BOT_PROCESSES=0) has no Dawood-bot.
    with TestClient(create_app(make_settings(bot_processes=0))) as client:
        response = client.post("/api/pages", json={"preset": "quick", "mode": "bot"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "mode_unavailable"


class TestRefusalsChangeNothing:
    """Each refused action leaves the version and the log as they were."""

    @pytest.fixture
    def page(self, client: TestClient) -> dict[str, Any]:
        created = create(client)
        page_id, seats = created["id"], created["seats"]
        assert act(client, page_id, seats["blue"], {"type": "quick_setup"}, 0).status_code == 200
        return created

    def refused(self, client: TestClient, page: dict[str, Any], response: Any, status: int, code: str) -> Any:
        assert response.status_code == status, response.text
        body = response.json()
        assert body["error"]["code"] == code
        assert_unchanged(client, page["id"], 1, 1)
        return body

    def test_out_of_turn(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, page["id"], page["seats"]["red"], {"type": "ready"}, 1)
        self.refused(client, page, response, 409, "not_your_turn")

    def test_forged_token(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, page["id"], "forged-token-forged-token", {"type": "ready"}, 1)
        self.refused(client, page, response, 401, "bad_token")

    def test_another_pages_token(self, client: TestClient, page: dict[str, Any]) -> None:
        other = create(client)
        response = act(client, page["id"], other["seats"]["blue"], {"type": "ready"}, 1)
        self.refused(client, page, response, 401, "bad_token")

    def test_no_token_as_a_watcher(self, client: TestClient, page: dict[str, Any]) -> None:
        response = client.post(
            f"/api/pages/{page['id']}/actions", json={"action": {"type": "ready"}, "version": 1}
        )
        self.refused(client, page, response, 401, "bad_token")

    def test_not_a_bearer_header(self, client: TestClient, page: dict[str, Any]) -> None:
        response = client.post(
            f"/api/pages/{page['id']}/actions",
            json={"action": {"type": "ready"}, "version": 1},
            headers={"Authorization": f"Basic {page['seats']['blue']}"},
        )
        self.refused(client, page, response, 401, "bad_token")

    def test_stale_version_answers_the_snapshot(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, page["id"], page["seats"]["blue"], {"type": "ready"}, 0)
        body = self.refused(client, page, response, 409, "stale_version")
        assert body["snapshot"]["version"] == 1 and body["snapshot"]["id"] == page["id"]

    def test_nan_in_the_action(self, client: TestClient, page: dict[str, Any]) -> None:
        body = b'{"action": {"type": "flick", "soldier": "b1s1", "kind": "snipe", "vector": [NaN, 1]}, '
        body += b'"version": 1}'
        response = post_raw_action(client, page, body)
        self.refused(client, page, response, 400, "bad_request")

    def test_infinity_in_the_action(self, client: TestClient, page: dict[str, Any]) -> None:
        body = b'{"action": {"type": "position", "soldiers": [{"id": "b1s1", "x": Infinity, "y": 2}]}, '
        body += b'"version": 1}'
        response = post_raw_action(client, page, body)
        self.refused(client, page, response, 400, "bad_request")

    def test_unknown_fields(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, page["id"], page["seats"]["blue"], {"type": "ready"}, 1, side="red")
        self.refused(client, page, response, 400, "bad_request")

    def test_not_json(self, client: TestClient, page: dict[str, Any]) -> None:
        response = post_raw_action(client, page, b"{nope")
        self.refused(client, page, response, 400, "bad_request")

    def test_malformed_action(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, page["id"], page["seats"]["blue"], {"type": "teleport"}, 1)
        self.refused(client, page, response, 400, "bad_request")

    def test_illegal_action_passes_the_engine_reason(self, client: TestClient, page: dict[str, Any]) -> None:
        # Standing a soldier on top of another is against the positioning rules.
        soldiers = [
            soldier for soldier in snapshot(client, page["id"])["soldiers"] if soldier["side"] == "blue"
        ]
        first, second = soldiers[0], soldiers[1]
        action = {"type": "position", "soldiers": [{"id": first["id"], "x": second["x"], "y": second["y"]}]}
        response = act(client, page["id"], page["seats"]["blue"], action, 1)
        body = self.refused(client, page, response, 422, "illegal_action")
        assert isinstance(body["error"].get("reason"), str) and body["error"]["reason"]

    def test_oversized_body_by_content_length(self, client: TestClient, page: dict[str, Any]) -> None:
        padding = "x" * 9000
        response = act(client, page["id"], page["seats"]["blue"], {"type": "ready", "pad": padding}, 1)
        self.refused(client, page, response, 413, "too_large")

    def test_oversized_body_streamed_without_length(self, client: TestClient, page: dict[str, Any]) -> None:
        def chunks() -> Any:
            yield b'{"action": {"type": "ready", "pad": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}, "version": 1}'

        headers = {**bearer(page["seats"]["blue"]), "content-type": "application/json"}
        response = client.post(f"/api/pages/{page['id']}/actions", content=chunks(), headers=headers)
        self.refused(client, page, response, 413, "too_large")

    def test_not_json_by_content_type(self, client: TestClient, page: dict[str, Any]) -> None:
        body = json.dumps({"action": {"type": "ready"}, "version": 1}).encode()
        for content_type in ("text/plain", "application/x-www-form-urlencoded"):
            headers = {**bearer(page["seats"]["blue"]), "content-type": content_type}
            response = client.post(f"/api/pages/{page['id']}/actions", content=body, headers=headers)
            self.refused(client, page, response, 415, "unsupported_media_type")

    def test_content_length_not_a_number(self, client: TestClient, page: dict[str, Any]) -> None:
        body = json.dumps({"action": {"type": "ready"}, "version": 1}).encode()
        headers = {**bearer(page["seats"]["blue"]), "content-type": "application/json"}
        request = client.build_request(
            "POST", f"/api/pages/{page['id']}/actions", content=body, headers=headers
        )
        request.headers["content-length"] = "twelve"
        self.refused(client, page, client.send(request), 400, "bad_request")

    def test_wrong_method(self, client: TestClient, page: dict[str, Any]) -> None:
        response = client.get(f"/api/pages/{page['id']}/actions")
        body = self.refused(client, page, response, 405, "method_not_allowed")
        assert response.headers["allow"] == "POST" and body["error"]["message"]
        response = client.put(f"/api/pages/{page['id']}", json={"version": 1})
        self.refused(client, page, response, 405, "method_not_allowed")
        assert "GET" in response.headers["allow"]

    def test_unknown_page(self, client: TestClient, page: dict[str, Any]) -> None:
        response = act(client, "nosuchpage", page["seats"]["blue"], {"type": "ready"}, 1)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
        assert client.get("/api/pages/nosuchpage").status_code == 404
        assert client.get("/api/pages/nosuchpage/log").json()["error"]["code"] == "not_found"


def test_a_repeated_move_id_is_answered_with_the_first_result_and_applied_once(client: TestClient) -> None:
    created = create(client)
    page_id, blue = created["id"], created["seats"]["blue"]
    first = act(client, page_id, blue, {"type": "quick_setup"}, 0, move_id="move-1")
    again = act(client, page_id, blue, {"type": "quick_setup"}, 0, move_id="move-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert_unchanged(client, page_id, 1, 1)
    assert page_log(client, page_id)["entries"][0]["move_id"] == "move-1"
    # The other side cannot claim that move_id.
    stolen = act(client, page_id, created["seats"]["red"], {"type": "ready"}, 0, move_id="move-1")
    assert stolen.status_code == 400
    assert_unchanged(client, page_id, 1, 1)


def test_local_mode_acts_for_the_side_whose_turn_it_is(client: TestClient) -> None:
    created = create(client, mode="local")
    token = created["seats"]["blue"]
    for action in ({"type": "quick_setup"}, {"type": "ready"}, {"type": "ready"}):
        assert (
            act(client, created["id"], token, action, snapshot(client, created["id"])["version"]).status_code
            == 200
        )
    after = snapshot(client, created["id"])
    assert after["phase"] == "play"
    assert [entry["side"] for entry in page_log(client, created["id"])["entries"]] == ["blue", "blue", "red"]
    assert client.get(f"/api/pages/{created['id']}", headers=bearer(token)).json()["seat"] == "both"


def test_summaries_name_only_the_pages_asked_for(client: TestClient) -> None:
    pages = [create(client) for _ in range(3)]
    ids = [pages[2]["id"], "unknown", pages[0]["id"], "../etc"]
    summaries = client.get("/api/pages", params={"ids": ",".join(ids)}).json()
    assert [summary["id"] for summary in summaries] == [pages[2]["id"], pages[0]["id"]]
    assert set(summaries[0]) == {
        "id",
        "mode",
        "preset",
        "status",
        "winner",
        "version",
        "phase",
        "side_to_act",
        "bot",
        "created_at",
        "updated_at",
        "clock",
        "deadline",
        "running",
        "reason",
    }
    assert summaries[0]["status"] == "open" and summaries[0]["side_to_act"] == "blue"
    too_many = ",".join(f"p{i}" for i in range(51))
    assert client.get("/api/pages", params={"ids": too_many}).json()["error"]["code"] == "bad_request"
    assert client.get("/api/pages").status_code == 400


def test_posts_are_rate_limited_per_client(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(http_request_burst=3, http_requests_per_second=0.01)
    with TestClient(create_app(settings)) as client:
        answers = [client.post("/api/pages", json={"preset": "quick", "mode": "local"}) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [201, 201, 201, 429]
    assert answers[-1].json()["error"]["code"] == "rate_limited"
    # One request every 100 s: the next one is allowed in (just under) 100 s, rounded up.
    assert answers[-1].headers["retry-after"] == "100"


def test_a_page_is_not_made_from_a_body_that_is_not_json(client: TestClient) -> None:
    body = json.dumps({"preset": "quick", "mode": "local"})
    response = client.post("/api/pages", content=body, headers={"content-type": "text/plain"})
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_media_type"
    assert client.delete("/api/pages").json()["error"]["code"] == "method_not_allowed"
    assert client.get("/api/nothing/here").json()["error"]["code"] == "not_found"


def test_any_holder_of_the_id_reads_the_snapshot_whatever_token_it_sends(client: TestClient) -> None:
    created, other = create(client), create(client)
    page_id = created["id"]
    for authorization in (
        "Bearer forged-token-forged-token",
        f"Bearer {other['seats']['blue']}",
        f"Basic {created['seats']['blue']}",
        "Bearer " + "x" * 500,
    ):
        response = client.get(f"/api/pages/{page_id}", headers={"Authorization": authorization})
        assert response.status_code == 200, response.text
        assert response.json()["id"] == page_id and "seat" not in response.json()
    seated = client.get(f"/api/pages/{page_id}", headers=bearer(created["seats"]["red"])).json()
    assert seated["seat"] == "red"
    assert (
        client.get("/api/pages/nosuchpage", headers=bearer("forged")).json()["error"]["code"] == "not_found"
    )


def test_page_links_serve_the_web_app(client: TestClient) -> None:
    created = create(client)
    response = client.get(f"/p/{created['id']}")
    assert response.status_code == 200 and "Dotfight" in response.text
    assert client.get("/").status_code == 200


def test_a_stale_state_cache_is_rebuilt_from_the_log(make_settings: Callable[..., Settings]) -> None:
    from sqlalchemy import create_engine, text

    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        created = create(client, mode="local")
        token, current = created["seats"]["blue"], created["snapshot"]
        current = play_simple(client, created["id"], token, current, 5)
    database = create_engine(settings.database_url)
    with database.begin() as connection:
        connection.execute(text("DELETE FROM page_states"))
    database.dispose()
    with TestClient(create_app(settings)) as client:
        assert snapshot(client, created["id"]) == current
        assert (
            act(client, created["id"], token, simple_action(current), current["version"]).status_code == 200
        )


def test_a_page_read_while_its_next_action_commits_is_read_whole(
    make_settings: Callable[..., Settings],
) -> None:
    """A read takes the page row, then the log: an action committed in between must not be replayed
    on top of the row's version (that was a 500), nor must a newer state in memory be thrown away."""
    from sqlalchemy import create_engine, text

    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        created = create(client, mode="local")
        token, current = created["seats"]["blue"], created["snapshot"]
        current = play_simple(client, created["id"], token, current, 4)
        # The row as a reader saw it just before action 4 committed (the log already holds action 4).
        database = create_engine(settings.database_url)
        with database.begin() as connection:
            connection.execute(text("UPDATE pages SET version = 3"))
        assert snapshot(client, created["id"])["version"] == 4  # memory holds the committed version 4
    with TestClient(create_app(settings)) as client:  # nothing in memory: rebuilt from the cache and log
        assert snapshot(client, created["id"])["version"] == 3
    database.dispose()


def test_an_unexpected_failure_still_answers_in_the_error_shape(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: object, page_ids: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("dotfight.store.views.DatabaseViews.summaries", broken)
    with TestClient(create_app(make_settings()), raise_server_exceptions=False) as client:
        response = client.get("/api/pages", params={"ids": "abc"})
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "a bug" not in response.text


def test_large_answers_are_compressed_for_clients_that_accept_it(client: TestClient) -> None:
    created = create(client, mode="local")
    assert act(client, created["id"], created["seats"]["blue"], {"type": "quick_setup"}, 0).status_code == 200
    response = client.get(f"/api/pages/{created['id']}", headers={"Accept-Encoding": "gzip"})
    assert response.headers.get("content-encoding") == "gzip"
    assert response.json()["version"] == 1


def test_a_bot_pages_summary_names_the_bots_seat_and_level_but_not_its_seed(client: TestClient) -> None:
    # The exercise book names the level of pages it did not start itself (a watched link) from this.
    created = create(client, mode="bot", bot={"strength": "beginner"})
    summary = client.get(f"/api/pages?ids={created['id']}").json()[0]
    assert summary["bot"] == {"side": "red", "strength": "beginner"}
    plain = create(client, mode="local")
    assert client.get(f"/api/pages?ids={plain['id']}").json()[0]["bot"] is None
