"""Browser-test fixtures: a real server in a subprocess and Debian's chromium driven by Playwright."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.server_process import ServerProcess

REPO = Path(__file__).resolve().parents[2]
SCREENS = REPO / "test-artifacts" / "screens"


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Starts `dotfight serve` on a free port with a fresh SQLite file; yields its base URL."""
    process = ServerProcess(
        f"sqlite:///{tmp_path_factory.mktemp('web-server') / 't.sqlite3'}",
        tmp_path_factory.getbasetemp() / "web-server.log",
        extra_args=["--no-access-log"],
        # The browser tests start many pages from one address in minutes, and set some up by replaying
        # a long stretch of play over HTTP at once (the page's history, not a player's pace).
        extra_env={
            "DOTFIGHT_PAGE_CREATION_BURST": "1000",
            "DOTFIGHT_ACTIONS_PER_PAGE_BURST": "1000",
            "DOTFIGHT_ACTIONS_PER_ADDRESS_BURST": "5000",
        },
    )
    try:
        process.start()
        yield process.base_url
    finally:
        process.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Launches Debian's chromium once for the session (skips the browser tests without it)."""
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); browser tests skipped")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def phone(browser: Any) -> Iterator[Any]:
    """A fresh phone-sized browser context (390×844, touch, device pixel ratio 3)."""
    ctx = browser.new_context(**PHONE)
    yield ctx
    ctx.close()


@pytest.fixture()
def screens() -> Path:
    """The folder for screenshots of each screen (gitignored)."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    return SCREENS
