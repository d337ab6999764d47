"""One copy of what pages set up alike share: their rules, their id indexes and their bases' views.

Every quick set-up of a preset gives the same bases, the same ids and the same rules, so a process that
holds many pages (the server holds thousands) would hold the same dictionaries and arrays once per page:
about 4 KB a page (issue 12). `shared_view` keeps the layouts seen last and hands every page the copy
already made.

Why this stays inside the pure engine (docs/ARCHITECTURE.md, "What the engine keeps between calls"):
it changes no answer and no value — a shared view is equal to the one the page would build itself, and
is never written after it is made (tests/engine/test_state_memory.py) —, it does no I/O, reads no clock
and draws nothing, and it is bounded (`SHARED_LAYOUTS` layouts). It lives here, not in the server,
because the views are made inside `State`'s cached properties, where no caller can hand them over. The
lock is there because the engine is called from several threads at once (the server's engine workers);
it is held only while a view is looked up or made (a few µs, once per page layout and state).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .rules import RuleSet

# The layouts (and rule sets) kept: far more than the presets a server sees at once.
SHARED_LAYOUTS = 64

_shared_views: dict[tuple[Any, ...], Any] = {}
_shared_lock = threading.Lock()

_View = TypeVar("_View")


def shared_view(key: tuple[Any, ...], make: Callable[[], _View]) -> _View:
    """Returns the view kept for `key`, or makes it with `make` and keeps it (the least recently asked
    layout goes when `SHARED_LAYOUTS` are kept). The view must never be written: pages share it.

    >>> first = shared_view(("example", 1), lambda: {"b1": 0})
    >>> shared_view(("example", 1), lambda: {"b1": 0}) is first
    True
    """
    with _shared_lock:
        view: _View | None = _shared_views.pop(key, None)
        if view is None:
            view = make()
            if len(_shared_views) >= SHARED_LAYOUTS:
                del _shared_views[next(iter(_shared_views))]
        _shared_views[key] = view  # the most recent last
        return view


def shared_rules(rules: RuleSet) -> RuleSet:
    """Returns an equal RuleSet held already (pages of one preset share one: ≈ 0.8 KB a page).

    >>> shared_rules(RuleSet.preset("quick")) is shared_rules(RuleSet.preset("quick"))
    True
    """
    return shared_view(("rules", rules), lambda: rules)
