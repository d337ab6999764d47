"""Browser-test fixtures: a real server in a subprocess and Debian's chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import CHROMIUM, CHROMIUM_ARGS, PHONE

REPO = Path(__file__).resolve().parents[2]
SCREENS = REPO / "test-artifacts" / "screens"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Starts `dotfight serve` on a free port with a fresh SQLite file; yields its base URL."""
    db = tmp_path_factory.mktemp("web-server") / "t.sqlite3"
    port = _free_port()
    env = {**os.environ, "DOTFIGHT_DATABASE_URL": f"sqlite:///{db}"}
    log = (tmp_path_factory.getbasetemp() / "web-server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dotfight.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited with {proc.returncode}; see {log.name}")
            try:
                if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not answer /api/health within 30 s; see {log.name}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


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
