"""A small thread-safe least-recently-used cache (pages' engine states and seats, pictures), bounded by
its number of entries and, when given a size for each, by their bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """Keeps the `capacity` most recently used entries, and with `max_bytes` only as many of them as
    `size` (each entry's bytes) allows; safe to share between threads for keys hashed and compared in C
    (strings, integers, tuples of them): a read takes no lock (`get`).

    >>> pictures: LruCache[str, bytes] = LruCache(10, max_bytes=8, size=len)
    >>> pictures.put("a", b"1234"); pictures.put("b", b"5678"); pictures.put("c", b"90")
    >>> pictures.get("a"), pictures.get("b"), pictures.get("c"), pictures.bytes
    (None, b'5678', b'90', 6)
    >>> pictures.put("huge", b"123456789")  # larger than the whole cache: not kept, nothing forgotten
    >>> pictures.get("huge"), pictures.bytes
    (None, 6)
    """

    def __init__(
        self, capacity: int, *, max_bytes: int | None = None, size: Callable[[V], int] | None = None
    ) -> None:
        if max_bytes is not None and size is None:
            raise ValueError("a cache bounded in bytes needs the size of an entry")
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """The bytes held now (0 when the cache has no `size`)."""
        return self._bytes

    def get(self, key: K) -> V | None:
        """Returns the entry (marking it recently used), or None.

        Without the lock: the event loop reads pages' states and seats here at every action while the
        store's writer thread puts the moved-on pages, and a read waiting for the writer's lock waited
        for the writer's hold of the interpreter too. The lookup and the move to the end are each one
        call of the C OrderedDict, which holds the interpreter throughout for keys hashed and compared
        in C (the cache's: strings and tuples of them), so a read sees an entry or none, never half a
        change; an entry forgotten between the two is still returned, as if read just before."""
        entries = self._entries
        value = entries.get(key)
        if value is not None:
            try:  # noqa: SIM105 (contextlib.suppress costs a context manager a read)
                entries.move_to_end(key)
            except KeyError:  # forgotten by another thread since the lookup
                pass
        return value

    def put(self, key: K, value: V) -> None:
        """Stores an entry, forgetting the least recently used ones while over a bound (an entry larger
        than `max_bytes` on its own is not stored)."""
        weight = 0 if self._size is None else self._size(value)
        with self._lock:
            self._forget(key)
            if self._max_bytes is not None and weight > self._max_bytes:
                return
            self._entries[key] = value
            self._bytes += weight
            while len(self._entries) > self._capacity or (
                self._max_bytes is not None and self._bytes > self._max_bytes
            ):
                # The least recently used, taken in one call: an iterator over the entries would be
                # spoiled by a read's `move_to_end` (no lock) between its making and its first item.
                _, oldest = self._entries.popitem(last=False)
                if self._size is not None:
                    self._bytes -= self._size(oldest)

    def drop(self, key: K) -> None:
        """Forgets an entry if present."""
        with self._lock:
            self._forget(key)

    def _forget(self, key: K) -> None:
        value = self._entries.pop(key, None)
        if value is not None and self._size is not None:
            self._bytes -= self._size(value)
