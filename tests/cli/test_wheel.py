"""The package as pipx or an image would install it: `python -m build` makes a wheel that carries the web
app and the migrations, and `dotfight serve`, run from any folder of a fresh virtual environment, serves
the app and migrates its database. (An editable install hid that the two folders were not packaged.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import httpx

from tests.support.server_process import REPO_ROOT, free_port

# Building in an isolated environment and installing the dependencies take a while on a busy machine.
BUILD_TIMEOUT_S = 600


def test_the_wheel_carries_the_app_and_serves_from_any_folder(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO_ROOT)],
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT_S,
    )
    (wheel,) = dist.glob("dotfight-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "dotfight/_web/index.html" in names
    assert "dotfight/_web/js/main.js" in names
    assert "dotfight/_alembic/env.py" in names
    assert any(name.startswith("dotfight/_alembic/versions/0001") for name in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT_S,
    )
    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    port = free_port()
    environment = {key: value for key, value in os.environ.items() if not key.startswith("DOTFIGHT_")}
    environment.pop("PYTHONPATH", None)
    log = (elsewhere / "server.log").open("wb")
    server = subprocess.Popen(
        [str(env_dir / "bin" / "dotfight"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=elsewhere,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        health = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                health = httpx.get(f"{base}/api/health", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert health is not None and health.status_code == 200, (elsewhere / "server.log").read_text()
        cover = httpx.get(f"{base}/", timeout=5)
        assert cover.status_code == 200 and "<title>Dotfight</title>" in cover.text
        assert httpx.get(f"{base}/js/main.js", timeout=5).status_code == 200
        created = httpx.post(f"{base}/api/pages", json={"preset": "quick", "mode": "local"}, timeout=10)
        assert created.status_code == 201, created.text
        # The database was made and migrated in the folder the server was started from.
        assert (elsewhere / "dotfight.sqlite3").is_file()
        # Nothing was read from the source tree: the installed package is not the checkout.
        where = subprocess.run(
            [str(python), "-c", "import dotfight; print(dotfight.__file__)"],
            cwd=elsewhere,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert str(env_dir) in where
    finally:
        server.terminate()
        server.wait(10)
        log.close()
