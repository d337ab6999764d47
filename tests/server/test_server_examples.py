"""The runnable examples in the docstrings of the picture, push (notices, endpoints, messages), page-view,
link-preview, card, transport, cache and schema modules."""

from __future__ import annotations

import doctest
import importlib
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.flags.optimize >= 2, reason="python -OO strips docstrings")

MODULES = [
    "dotfight.server.picture",
    "dotfight.server.picture_worker",
    "dotfight.server.cache",
    "dotfight.server.schemas",
    "dotfight.server.push",
    "dotfight.server.push_endpoint",
    "dotfight.server.push_message",
    "dotfight.server.page_view",
    "dotfight.server.routes.page_html",
    "dotfight.server.card",
    "dotfight.server.transport",
]


@pytest.mark.parametrize("name", MODULES)
def test_every_example_runs(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
