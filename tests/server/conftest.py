"""Fixtures of the server tests: an in-process app on a temporary SQLite file, and a real server
process (uvicorn on loopback) for the WebSocket tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dotfight.server.app import create_app
from dotfight.server.settings import Settings
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Builds settings on a fresh SQLite file with a tiny web app; keyword arguments override."""
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>Dotfight</title>")

    def make(**overrides: object) -> Settings:
        # Tests play whole pages in moments: far faster than the default limit of a person.
        values: dict[str, object] = {
            "database_url": f"sqlite:///{tmp_path / 'pages.sqlite3'}",
            "web_dir": web,
            "http_requests_per_second": 10_000.0,
            "http_request_burst": 10_000,
            "page_creation_burst": 10_000,
            "actions_per_page_per_second": 10_000.0,
            "actions_per_page_burst": 10_000,
            "actions_per_address_per_second": 10_000.0,
            "actions_per_address_burst": 10_000,
        }
        values.update(overrides)
        return Settings(**values)  # type: ignore[arg-type]

    return make


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    """An in-process client of a fresh server."""
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server process shared by the WebSocket tests. Its clients play far faster than people,
    so its flood limit is raised (the flood test has a server with the default limit of its own)."""
    relaxed = {
        "DOTFIGHT_WS_MESSAGES_PER_SECOND": "1000",
        "DOTFIGHT_WS_MESSAGE_BURST": "1000",
        "DOTFIGHT_PAGE_CREATION_BURST": "100000",
        **RELAXED_ACTION_BUDGET,
    }
    server = ServerProcess.on_sqlite(tmp_path_factory.mktemp("live"), extra_env=relaxed)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A real server process of one's own (e.g. to kill it)."""
    server = ServerProcess.on_sqlite(tmp_path, extra_env=RELAXED_ACTION_BUDGET)
    yield server
    server.stop()
