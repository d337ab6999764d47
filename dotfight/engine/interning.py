"""One copy of what pages set up alike share: their rules, their id indexes and their bases' views, and
the bases and soldiers a set-up draws and jots, with the views of those soldiers.

Every quick set-up of a preset gives the same bases, the same ids and the same rules, so a process that
holds many pages (the server holds thousands) would hold the same dictionaries and arrays once per page:
about 4 KB a page (issue 12), and the jotted soldiers with their views (their objects, their coordinates,
the hot paths' arrays and the roster) about 9 KB more until the first of them is crossed out or moved
(issue 22). `shared_view` keeps the layouts seen last and hands every page the copy already made;
`shared_tuple` does the same for a tuple of shared pieces, and `view_of_shared` keeps the views of such a
tuple beside it.

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

# The layouts (and rule sets) kept: far more than the presets a server sees at once (a quick set-up
# keeps a dozen entries: its rules, indexes and bases' views, each base with its jotted soldiers, the
# tuples of both and their views).
SHARED_LAYOUTS = 128

_shared_views: dict[tuple[Any, ...], Any] = {}
_shared_lock = threading.Lock()

_View = TypeVar("_View")
_Item = TypeVar("_Item")


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


def shared_tuple(items: tuple[_Item, ...]) -> tuple[_Item, ...]:
    """Returns the tuple kept of these very objects (the shared pieces of a set-up: its bases, its jotted
    soldiers), or keeps this one. Keyed by the members' identities, which cost nothing to hash: while the
    kept tuple holds its members, no other object can have their ids.

    >>> first = shared_view(("example", 2), lambda: object())
    >>> shared_tuple((first, first)) is shared_tuple((first, first))
    True
    """
    kept = shared_view(("tuple", *map(id, items)), lambda: items)
    # The kept tuple's room for its views, looked up by the tuple's own id, is made (or refreshed) at
    # every ask, not only when the tuple is kept anew: the two are separate entries of the bounded
    # store, and a room pushed out while its tuple was still asked for (a long-running server's quick
    # set-up, among many hand-drawn pages) left the tuple shared and its views made afresh every time.
    room: tuple[tuple[_Item, ...], dict[tuple[Any, ...], Any]] = shared_view(
        ("views of", id(kept)), lambda: (kept, {})
    )
    if room[0] is not kept:  # the id of a tuple no longer kept, now this one's: its room is this one's
        with _shared_lock:
            _shared_views[("views of", id(kept))] = (kept, {})
    return kept


def view_of_shared(items: tuple[Any, ...], name: tuple[Any, ...], make: Callable[[], _View]) -> _View:
    """Returns the view `name` of a tuple `shared_tuple` keeps (made once and kept with it), or, for any
    other tuple, makes it. The view must never be written: every page holding the tuple shares it; the
    objects `name` names by id must be held by the view (so their ids stay theirs).

    >>> soldiers = shared_tuple((shared_view(("example", 3), lambda: object()),))
    >>> view_of_shared(soldiers, ("count",), lambda: [1]) is view_of_shared(soldiers, ("count",), list)
    True
    >>> view_of_shared((object(),), ("count",), lambda: [1]) is view_of_shared((), ("count",), list)
    False
    """
    key = ("views of", id(items))
    with _shared_lock:
        entry = _shared_views.pop(key, None)
        if entry is not None:
            _shared_views[key] = entry  # the most recent last
    if entry is None or entry[0] is not items:
        return make()
    views: dict[tuple[Any, ...], Any] = entry[1]
    view: _View | None = views.get(name)
    if view is None:
        view = views.setdefault(name, make())  # two threads may make it: one copy is kept
    return view
