"""Runs a lab's pages, in parallel on every core, with a progress bar on stderr.

Pages are dealt to worker processes in chunks of consecutive indices. Each page depends only on the run's
seed and its own index, and the records are put back in index order, so the report is the same whatever
the number of workers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from dotfight.lab.config import LabConfig
from dotfight.lab.page import PageRecord, play_page

Progress = Callable[[int], None]


def play_chunk(config: LabConfig, indices: Sequence[int]) -> list[PageRecord]:
    """Plays the pages with the given indices, in order (the unit of work of one worker task)."""
    return [play_page(config, i) for i in indices]


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def chunks(games: int, workers: int) -> list[list[int]]:
    """Page indices dealt into chunks: several per worker so a slow chunk does not hold up the end."""
    size = max(1, min(25, games // max(1, workers * 4)))
    return [list(range(start, min(games, start + size))) for start in range(0, games, size)]


def run_pages(config: LabConfig, workers: int = 1, progress: Progress | None = None) -> list[PageRecord]:
    """Plays every page of the run and returns the records in index order."""
    tick = progress or (lambda done: None)
    records: dict[int, PageRecord] = {}
    if workers <= 1:
        for i in range(config.games):
            records[i] = play_page(config, i)
            tick(1)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(play_chunk, config, chunk) for chunk in chunks(config.games, workers)]
            for future in as_completed(futures):
                batch = future.result()
                for record in batch:
                    records[record.index] = record
                tick(len(batch))
    return [records[i] for i in range(config.games)]
