"""The LRU cache's reads (server/cache.py): no lock taken, the order of use and the bounds kept."""

from __future__ import annotations

import sys
import threading

from dotfight.server.cache import LruCache


def test_a_read_does_not_wait_for_a_thread_holding_the_lock() -> None:
    cache: LruCache[str, int] = LruCache(4)
    cache.put("a", 1)
    read: list[int | None] = []
    with cache._lock:  # as the writer thread does while it puts a moved-on page
        reader = threading.Thread(target=lambda: read.append(cache.get("a")))
        reader.start()
        reader.join(timeout=5)
        assert not reader.is_alive()
    assert read == [1]


def test_a_read_still_marks_the_entry_recently_used() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)  # forgets the least recently used: b, not a
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_reads_beside_puts_and_drops_on_other_threads_see_entries_whole() -> None:
    cache: LruCache[str, tuple[str, int]] = LruCache(8, max_bytes=64, size=lambda value: value[1])
    keys = [f"k{number}" for number in range(32)]
    stop = threading.Event()
    seen: list[tuple[str, tuple[str, int]]] = []
    failed: list[BaseException] = []

    def write() -> None:
        number = 0
        try:
            while not stop.is_set():
                key = keys[number % len(keys)]
                cache.put(key, (key, number % 9))  # over its bounds at nearly every put: evictions
                if number % 5 == 0:
                    cache.drop(keys[(number * 7) % len(keys)])
                number += 1
        except BaseException as error:
            failed.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switched every microsecond: reads land inside evictions
    writers = [threading.Thread(target=write) for _ in range(2)]
    try:
        for writer in writers:
            writer.start()
        for round_ in range(200_000):
            key = keys[round_ % len(keys)]
            value = cache.get(key)
            if value is not None:
                seen.append((key, value))
    finally:
        stop.set()
        for writer in writers:
            writer.join()
        sys.setswitchinterval(interval)
    assert failed == []
    assert seen and all(key == value[0] for key, value in seen)
    assert len(cache._entries) <= 8 and cache.bytes == sum(value[1] for value in cache._entries.values())
