"""Issue 19's server side, faked for the browser tests of the phone's side (tests/web/test_web_people_*).

The real server (tests/web/conftest.py's) has the pages and their sockets; what it does not have yet —
the snapshot's and the events' `clock`, presence's `claim_at`, `claim`, `/rematch`, `/say`, `/said`
and the book summaries' new fields — is added here, on the wire, with Playwright's `page.route`
(HTTP) and `page.route_web_socket` (the page's socket, proxied to the real server). Everything faked
is in this one module, so the next round swaps it for the real server: each test names what it
fakes through a `FakeServer`'s fields and hooks, and a test against the real server drops the fakes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

SOCKET = re.compile(r"/api/pages/[^/?#]+/ws$")
SNAPSHOT = re.compile(r"/api/pages/([^/?#]+)$")
SUMMARIES = re.compile(r"/api/pages\?ids=")
REMATCH = re.compile(r"/api/pages/([^/?#]+)/rematch$")
SAY = re.compile(r"/api/pages/([^/?#]+)/say$")
SAID = re.compile(r"/api/pages/([^/?#]+)/said$")
LOG = re.compile(r"/api/pages/([^/?#]+)/log(\?.*)?$")
# The actions the server writes for the ends it decides, by the end's reason.
SERVER_ACTIONS = {"time": "time_out", "abandoned": "abandon"}
CREATE = re.compile(r"/api/pages$")

Json = dict[str, Any]


def iso(at: float) -> str:
    """An ISO 8601 UTC time for a Unix time (with milliseconds), as the server writes them."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FakeServer:
    """What the server of issue 19 would add, for the pages of one test (attach each phone's page).

    `skew_s` sets the fake server's clock apart from the machine's (the phones' own), so a phone that
    counted down from its own clock instead of the server's `now` would be seen to.
    """

    def __init__(self, base: str, skew_s: float = 0.0) -> None:
        self.base = base
        self.skew_s = skew_s
        self.lock = threading.Lock()
        self.sockets: list[Any] = []  # every app socket (WebSocketRoute) of every attached page
        self.from_apps: list[Json] = []  # what the apps sent over their sockets
        self.requests: list[tuple[str, str, Any]] = []  # (method, path, body) of every API request
        # The clock a page's snapshot and events carry: a function of the fake server's time.
        self.clock: Callable[[float], Json | None] | None = None
        self.claim_at: float | None = None  # presence's claim_at, as a fake server time
        self.end_reason: str | None = None  # rewrites the real game_over's reason ("time", "abandoned")
        self.on_claim: Callable[[Json], int | None] | None = (
            None  # does the claim; the new version or None (refused)
        )
        self.rematch: Json = {"offered_by": None, "page": None}
        self.new_seats: dict[str, Json] = {}  # old seat token -> {seat, side, links}
        self.make_rematch: Callable[[str], None] | None = None  # makes the new page once accepted
        self.seat_sides: dict[str, str] = {}  # the old page's seat tokens -> their sides
        self.said: list[Json] = []
        self.say_cap = 99
        self.summary_extra: dict[str, Json] = {}  # page id -> fields added to its book summary

    # ---- the fake server's clock ----

    def now(self) -> float:
        """The fake server's time (the machine's, shifted by the skew)."""
        return time.time() + self.skew_s

    def clock_now(self) -> Json | None:
        if self.clock is None:
            return None
        clock = self.clock(self.now())
        if clock is not None:
            clock = {**clock, "now": iso(self.now())}
        return clock

    # ---- wiring a phone's page ----

    def attach(self, page: Any) -> None:
        """Fakes the new fields and routes for one phone's page (before it opens the app)."""
        page.route_web_socket(SOCKET, self._socket)
        page.route(SNAPSHOT, self._snapshot)
        page.route(SUMMARIES, self._summaries)
        page.route(REMATCH, self._rematch)
        page.route(SAY, self._say)
        page.route(SAID, self._said)
        page.route(CREATE, self._create)
        page.route(LOG, self._log)

    def push(self, message: Json) -> None:
        """Sends a message to every app socket, as the server would to a page's sockets."""
        for ws in list(self.sockets):
            try:
                ws.send(json.dumps(message))
            except Exception:  # a socket closed meanwhile
                self.sockets.remove(ws)

    def presence(self, blue: bool, red: bool) -> None:
        """Pushes presence (with claim_at when set)."""
        self.push(self._presence({"type": "presence", "blue": blue, "red": red}))

    def posted(self, path_end: str, method: str = "POST") -> list[Any]:
        """The bodies of the API requests of `method` whose path ends with `path_end`."""
        return [body for m, path, body in self.requests if m == method and path.endswith(path_end)]

    # ---- the socket: proxied to the real server, with the new fields added ----

    def _presence(self, data: Json) -> Json:
        if self.claim_at is not None:
            data = {**data, "claim_at": iso(self.claim_at)}
        return data

    def _server_message(self, ws: Any, raw: str | bytes) -> None:
        data = json.loads(raw)
        if data.get("type") == "state":
            data["snapshot"] = self._with_fields(data["snapshot"])
        if data.get("type") == "events":
            data["events"] = [self._event(e) for e in data.get("events", [])]
            clock = self.clock_now()
            if clock is not None:
                data["clock"] = clock
        if data.get("type") == "presence":
            data = self._presence(data)
        ws.send(json.dumps(data))

    def _app_message(self, ws: Any, server: Any, raw: str | bytes) -> None:
        data = json.loads(raw)
        with self.lock:
            self.from_apps.append(data)
        action = data.get("action") if data.get("type") == "action" else None
        if action and action.get("type") == "claim":
            version = self.on_claim(data) if self.on_claim else None
            if version is None:
                ws.send(
                    json.dumps(
                        {
                            "type": "error",
                            "code": "illegal_action",
                            "message": "Blue is back.",
                            "move_id": data.get("move_id"),
                        }
                    )
                )
            else:
                ws.send(json.dumps({"type": "ack", "move_id": data.get("move_id"), "version": version}))
            return
        server.send(raw)

    def _socket(self, ws: Any) -> None:
        server = ws.connect_to_server()
        self.sockets.append(ws)
        ws.on_message(lambda raw: self._app_message(ws, server, raw))
        server.on_message(lambda raw: self._server_message(ws, raw))

    def _event(self, event: Json) -> Json:
        if event.get("type") == "game_over" and self.end_reason:
            return {**event, "reason": self.end_reason}
        return event

    def _with_fields(self, snap: Json) -> Json:
        snap = {**snap, "clock": self.clock_now()}
        if self.end_reason and snap.get("phase") == "over":
            snap["end_reason"] = self.end_reason
        return snap

    # ---- HTTP ----

    def _note(self, route: Any) -> Any:
        req = route.request
        body = None
        if req.post_data:
            try:
                body = json.loads(req.post_data)
            except ValueError:
                body = req.post_data
        path = re.sub(r"^https?://[^/]+", "", req.url)
        with self.lock:
            self.requests.append((req.method, path, body))
        return body

    def _snapshot(self, route: Any) -> None:
        self._note(route)
        if route.request.method != "GET":
            route.continue_()
            return
        answer = route.fetch()
        if answer.status != 200:
            route.fulfill(response=answer)
            return
        route.fulfill(response=answer, json=self._with_fields(answer.json()))

    def _log(self, route: Any) -> None:
        """The log as the server will write it for an end it decided (`time_out` / `abandon`)."""
        self._note(route)
        answer = route.fetch()
        log = answer.json()
        if self.end_reason and answer.status == 200:
            for entry in log.get("entries", []):
                if any(e.get("type") == "game_over" for e in entry.get("events", [])):
                    entry["events"] = [self._event(e) for e in entry["events"]]
                    entry["action"] = {"type": SERVER_ACTIONS.get(self.end_reason, entry["action"]["type"])}
        route.fulfill(response=answer, json=log)

    def _summaries(self, route: Any) -> None:
        self._note(route)
        answer = route.fetch()
        summaries = answer.json()
        for s in summaries:
            s.update(
                {
                    "clock": None,
                    "deadline": None,
                    "running": None,
                    "reason": None,
                    **self.summary_extra.get(s["id"], {}),
                }
            )
        route.fulfill(response=answer, json=summaries)

    def _create(self, route: Any) -> None:
        """The real server of this round refuses `clock` (unknown field): noted, then left out."""
        body = self._note(route)
        if route.request.method == "POST" and isinstance(body, dict) and "clock" in body:
            route.continue_(post_data=json.dumps({k: v for k, v in body.items() if k != "clock"}))
        else:
            route.continue_()

    def _rematch(self, route: Any) -> None:
        self._note(route)
        req = route.request
        token = (req.headers.get("authorization") or "").removeprefix("Bearer ")
        if req.method == "GET":
            seat = self.new_seats.get(token, {}) if self.rematch["page"] else {}
            route.fulfill(json={**self.rematch, **seat})
            return
        if req.method == "DELETE":
            self.rematch = {"offered_by": None, "page": None}
        elif self.rematch["offered_by"] not in (None, self._side_of(token)):
            if self.make_rematch:
                self.make_rematch(token)
        else:
            self.rematch = {"offered_by": self._side_of(token), "page": None}
        route.fulfill(json=self.rematch)
        self.push({"type": "rematch", **self.rematch})

    def _side_of(self, token: str) -> str | None:
        return self.seat_sides.get(token)

    def _say(self, route: Any) -> None:
        body = self._note(route)
        token = (route.request.headers.get("authorization") or "").removeprefix("Bearer ")
        side = self._side_of(token)
        phrase = body.get("phrase") if isinstance(body, dict) else None
        if len([s for s in self.said if s["side"] == side]) >= self.say_cap:
            route.fulfill(
                status=429,
                json={"error": {"code": "rate_limited", "message": "Too many phrases on this page."}},
            )
            return
        said = {"side": side, "phrase": phrase, "at": iso(self.now()), "version": 0}
        self.said.append(said)
        route.fulfill(json={"ok": True})
        self.push({"type": "said", **{k: said[k] for k in ("side", "phrase", "at")}})

    def _said(self, route: Any) -> None:
        self._note(route)
        route.fulfill(json={"said": self.said})


def new_rematch_page(
    fake: FakeServer, base: str, body: Json, old_seats: Json, accepted_by: str | None = None
) -> None:
    """Makes the rematch for real on the server: a new page like `body`, the colours swapped.

    `old_seats` are the old page's seat tokens by side; each old seat gets the other colour's new seat.
    """
    created = httpx.post(f"{base}/api/pages", json=body, timeout=10).json()
    swap = {"blue": "red", "red": "blue"}
    for side, token in old_seats.items():
        new_side = swap[side]
        new_token = created["seats"][new_side]
        fake.new_seats[token] = {"seat": new_token, "side": new_side, "links": created.get("links")}
    fake.rematch = {"offered_by": fake.rematch["offered_by"] or accepted_by, "page": created["id"]}
