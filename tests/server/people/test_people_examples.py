"""The people model's runnable docstring examples, and its promise to do no I/O of the server's."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

MODULES = [
    "dotfight.server.people.errors",
    "dotfight.server.people.clock",
    "dotfight.server.people.lag",
    "dotfight.server.people.absence",
    "dotfight.server.people.alarm",
    "dotfight.server.people.phrases",
    "dotfight.server.people.rematch",
]


@pytest.mark.skipif(sys.flags.optimize >= 2, reason="python -OO strips docstrings")
@pytest.mark.parametrize("name", MODULES)
def test_every_example_runs(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_model_imports_nothing_of_the_servers_io() -> None:
    program = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in MODULES)
        + "banned = ('fastapi', 'starlette', 'sqlalchemy', 'uvicorn', 'websockets', 'aiohttp', 'pydantic',"
        " 'dotfight.store', 'dotfight.server.app', 'dotfight.server.hub', 'dotfight.server.pages')\n"
        "print(sorted(m for m in sys.modules if m.startswith(banned)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
