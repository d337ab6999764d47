"""Progress of a long run as plain lines, for a log file or a pipe where a live bar cannot redraw.

Each line says the pages done, the pages a second since the start and the time left at that pace; one
is written at most every `every` seconds of the clock (injected, so tests need not wait), and the last
one when the run is complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


def _clock_text(seconds: float) -> str:
    """`h:mm:ss` (or `m:ss` under an hour)."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class PlainProgress:
    """Counts pages and writes a line now and then.

    >>> import io
    >>> now = iter([0.0, 10.0, 20.0]).__next__
    >>> out = io.StringIO()
    >>> progress = PlainProgress("ladder", 40, out, every=5.0, clock=now)
    >>> progress.advance(10)
    >>> progress.advance(30)
    >>> print(out.getvalue(), end="")
    ladder: 10 / 40 pages, 1.0 pages/s, 0:30 left
    ladder: 40 / 40 pages, 2.0 pages/s, 0:00 left
    """

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO,
        every: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream
        self.every = every
        self.clock = clock
        self.done = 0
        self.started = clock()
        self.written = self.started

    def set_total(self, pages: int) -> None:
        """Sets the pages the run will play (known once the run has worked out its work)."""
        self.total = pages

    def advance(self, pages: int) -> None:
        """Counts `pages` more; writes a line when `every` seconds have passed or the run is complete."""
        self.done += pages
        now = self.clock()
        if now - self.written < self.every and self.done < self.total:
            return
        self.written = now
        elapsed = now - self.started
        speed = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / speed if speed > 0 else float("nan")
        left_text = _clock_text(left) if left == left else "?"
        self.stream.write(
            f"{self.label}: {self.done} / {self.total} pages, {speed:.1f} pages/s, {left_text} left\n"
        )
        self.stream.flush()
