"""The `dotfight` command loads only the subcommand it runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

WATCHED = ("dotfight.lab", "dotfight.bot", "dotfight.server", "uvicorn")
LOADED = (
    "import sys; from dotfight.cli import build_parser; build_parser({command!r}); "
    f"print(sorted(m for m in {WATCHED!r} if m in sys.modules))"
)


@pytest.mark.parametrize(
    ("command", "loaded"),
    [
        ("serve", ["dotfight.server", "uvicorn"]),
        ("lab", ["dotfight.bot", "dotfight.lab"]),
        ("replay", []),
        (None, []),
    ],
)
def test_only_the_named_subcommand_is_imported(command: str | None, loaded: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", LOADED.format(command=command)], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == repr(loaded)


def test_every_subcommand_answers_help() -> None:
    for command in ("serve", "lab", "replay"):
        result = subprocess.run(
            [sys.executable, "-m", "dotfight.cli", command, "--help"], capture_output=True, text=True
        )
        assert result.returncode == 0 and f"dotfight {command}" in result.stdout
