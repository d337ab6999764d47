"""Every runnable example in the rules lab's docstrings passes (each lab module is walked, so a new one
is held to its examples without being listed here)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import sys

import pytest

import dotfight.lab

pytestmark = pytest.mark.skipif(sys.flags.optimize >= 2, reason="python -OO strips docstrings")

LAB_MODULES = sorted(f"dotfight.lab.{info.name}" for info in pkgutil.iter_modules(dotfight.lab.__path__))


@pytest.mark.parametrize("name", LAB_MODULES)
def test_the_lab_modules_examples_pass(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
