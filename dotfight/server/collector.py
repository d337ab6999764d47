"""The garbage collector's pace in a server process (issue 12).

CPython collects its youngest generation after every 700 new container objects, and an object that
survives two of those passes and ten of the next is "long-lived": each pass over all of them (a full
collection) walks every tracked object of the process. A server move makes a new engine state (a few
hundred objects) that lives until the page's next move, a second or so later; at the default pace
nearly all of them outlive the young passes, so long-lived objects pile up quickly and full passes come
every few seconds. With a thousand live pages each such pass walked millions of objects, holding the GIL
for 300–600 ms and stalling every socket (measured: p99 send → opponent 390–1120 ms, 19 full passes in
30 s; with the pace below, 54 ms and one pass).

Here the young generation is collected after 50,000 new objects and the middle one after 20 of those,
so an object is long-lived only after about a million allocations (a couple of seconds of play under
full load): a page's state is usually gone by then, and full passes become rare. The cost is a young
pass over up to 50,000 objects now and then (milliseconds) and garbage cycles kept a little longer.
"""

from __future__ import annotations

import gc

# (young, middle, old): see the module's docstring.
THRESHOLDS = (50_000, 20, 10)


def pace_for_a_server() -> None:
    """Sets the collector's pace for a long-running server process (call once, after start-up).

    >>> saved = gc.get_threshold()
    >>> pace_for_a_server()
    >>> gc.get_threshold() == THRESHOLDS
    True
    >>> gc.set_threshold(*saved)
    """
    gc.set_threshold(*THRESHOLDS)
