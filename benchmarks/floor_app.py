"""The floor of Dotfight's own stack, for `benchmarks/server.py --floor`.

The least a server on the same stack must do for one move of a live page: FastAPI + uvicorn WebSocket
(the same uvicorn options as `dotfight serve`), parse the action, check the version in memory, one
durable SQLite insert with group commit (WAL, `synchronous=FULL`, one writer thread committing whatever
is waiting), then an ack to the sender and the events to every socket of the page — the same frames,
byte for byte in size, as Dotfight sends for the benchmark's soft snipe. No rules, no tokens checked
beyond a dictionary look-up, nothing else: what Dotfight spends above this is its own.

Run by the benchmark as `python benchmarks/floor_app.py --port P --database FILE --template FILE`.
The template (written by the benchmark from the engine) holds the snapshot of a quick page ready to
play (with its turn options) and the events of one soft snipe by each side as Dotfight sends them (the
last turn event carrying the options of the turn it opens), so the floor's frames have Dotfight's sizes.
The log's unique (page, move_id) index is there as Dotfight's is: the backstop that answers a retried
move with its first result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import secrets
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse


def compact(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


class GroupWriter:
    """One thread that inserts every waiting row in one transaction and one fsync (group commit)."""

    def __init__(self, path: Path) -> None:
        self._queue: queue.SimpleQueue[tuple[tuple[Any, ...], Future[None]]] = queue.SimpleQueue()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS actions (page TEXT, version INTEGER, move_id TEXT, side TEXT,"
            " action TEXT, events TEXT, PRIMARY KEY (page, version), UNIQUE (page, move_id))"
        )
        threading.Thread(target=self._run, daemon=True, name="floor-writer").start()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT INTO actions VALUES (?, ?, ?, ?, ?, ?)", [row for row, _ in batch]
                )
                self._db.execute("COMMIT")
            except Exception as error:  # tell every waiter; the benchmark fails loudly
                self._db.execute("ROLLBACK")
                for _, done in batch:
                    done.set_exception(error)
                continue
            for _, done in batch:
                done.set_result(None)

    async def insert(self, row: tuple[Any, ...]) -> None:
        done: Future[None] = Future()
        self._queue.put((row, done))
        await asyncio.wrap_future(done)


class FloorPage:
    def __init__(self, page_id: str, snapshot: dict[str, Any]) -> None:
        self.id = page_id
        self.version = snapshot["version"]
        self.side = snapshot["side_to_act"]
        self.sockets: set[WebSocket] = set()
        self.seats: dict[str, str] = {secrets.token_urlsafe(24): "blue", secrets.token_urlsafe(24): "red"}


def create_floor_app(database: Path, template: dict[str, Any]) -> FastAPI:
    app = FastAPI()
    writer = GroupWriter(database)
    pages: dict[str, FloorPage] = {}
    ready_snapshot: dict[str, Any] = template["snapshot"]
    # The events of a soft snipe by each side, options of the opponent's turn included.
    snipe_events: dict[str, list[dict[str, Any]]] = template["events"]

    def snapshot_of(page: FloorPage) -> dict[str, Any]:
        return {**ready_snapshot, "id": page.id, "version": page.version, "side_to_act": page.side}

    @app.get("/api/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/api/pages", status_code=201)
    async def create(request: Request) -> dict[str, Any]:
        await request.json()
        page = FloorPage(secrets.token_urlsafe(8), {**ready_snapshot, "version": 0})
        pages[page.id] = page
        seats = {side: token for token, side in page.seats.items()}
        return {"id": page.id, "seats": seats, "snapshot": snapshot_of(page)}

    @app.get("/api/pages/{page_id}")
    async def read(page_id: str) -> dict[str, Any]:
        return snapshot_of(pages[page_id])

    @app.post("/api/pages/{page_id}/actions")
    async def act(page_id: str, request: Request) -> JSONResponse:
        # The benchmark's setup actions (quick setup, ready, ready): the page is jotted and arranged.
        body = await request.json()
        page = pages[page_id]
        page.version += 1
        page.side = ready_snapshot["side_to_act"]
        await writer.insert((page.id, page.version, None, "blue", compact(body["action"]), "[]"))
        return JSONResponse({"version": page.version, "events": []})

    @app.websocket("/api/pages/{page_id}/ws")
    async def socket(websocket: WebSocket, page_id: str) -> None:
        await websocket.accept()
        page = pages[page_id]
        side: str | None = None
        page.sockets.add(websocket)
        try:
            while True:
                message = json.loads(await websocket.receive_text())
                if message["type"] == "hello":
                    side = page.seats.get(message.get("token", ""))
                    await websocket.send_text(compact({"type": "state", "snapshot": snapshot_of(page)}))
                    continue
                if (
                    message["type"] != "action"
                    or side is None
                    or side != page.side
                    or message["version"] != page.version
                ):
                    await websocket.send_text(compact({"type": "error", "code": "stale_version"}))
                    continue
                version = page.version + 1
                other = "red" if page.side == "blue" else "blue"
                text = compact({"type": "events", "version": version, "events": snipe_events[side]})
                await writer.insert(
                    (page.id, version, message["move_id"], side, compact(message["action"]), text)
                )
                page.version, page.side = version, other
                await websocket.send_text(
                    compact({"type": "ack", "move_id": message["move_id"], "version": version})
                )
                for peer in list(page.sockets):
                    try:
                        await peer.send_text(text)
                    except Exception:
                        page.sockets.discard(peer)
        except WebSocketDisconnect:
            pass
        finally:
            page.sockets.discard(websocket)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--template", type=Path, required=True)
    parser.add_argument("--ws", default="auto", help="uvicorn's WebSocket implementation (default auto)")
    args = parser.parse_args()
    template = json.loads(args.template.read_text())
    uvicorn.run(
        create_floor_app(args.database, template),
        host="127.0.0.1",
        port=args.port,
        ws=args.ws,
        ws_max_size=8192,
        ws_per_message_deflate=False,
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
