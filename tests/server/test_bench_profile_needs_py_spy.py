"""`benchmarks/server.py --profile` without py-spy on the PATH stops at once, before any server starts,
with a message naming the install command (it used to fail mid-run, servers up, on a bare
FileNotFoundError from the sampler's Popen)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.server_process import REPO_ROOT


def test_profile_without_py_spy_names_the_install_command(tmp_path: Path) -> None:
    no_tools = tmp_path / "bin"
    no_tools.mkdir()  # a PATH with nothing on it: no py-spy (Python is run by its full path)
    profile_dir = tmp_path / "prof"
    command = [
        sys.executable,
        "benchmarks/server.py",
        "--pages",
        "1",
        "--seconds",
        "1",
        "--profile",
        str(profile_dir),
    ]
    answer = subprocess.run(
        command,
        cwd=REPO_ROOT,
        env={**os.environ, "PATH": str(no_tools)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode == 2, answer.stderr  # argparse's usage error, not a traceback
    assert "py-spy" in answer.stderr and "pip install -e '.[bench]'" in answer.stderr, answer.stderr
    assert "Traceback" not in answer.stderr
    assert not profile_dir.exists()  # stopped before the run made anything
    assert "dotfight" not in answer.stdout  # no contender was started
