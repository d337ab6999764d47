"""Runs a lab's pages, in parallel on every core, with a progress callback.

Work is a list of jobs — (key, run settings, page indices) — dealt to worker processes in chunks of
consecutive indices. Each page depends only on its run's settings and its own index, and the records are
put back in index order, so what comes out is the same whatever the number of workers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from dotfight.lab.config import LabConfig
from dotfight.lab.page import PageRecord, play_page

Progress = Callable[[int], None]
# Called with a job's key and a finished chunk's records, as chunks finish (in any order).
OnBatch = Callable[[Hashable, list[PageRecord]], None]
Job = tuple[Hashable, LabConfig, Sequence[int]]
# The most pages in one worker task: small enough that a slow chunk does not hold up the end.
CHUNK_MAX = 25


def play_chunk(config: LabConfig, indices: Sequence[int]) -> list[PageRecord]:
    """Plays the pages with the given indices, in order (the unit of work of one worker task)."""
    return [play_page(config, i) for i in indices]


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    """The indices cut into runs of at most `size`."""
    items = list(indices)
    return [items[start : start + size] for start in range(0, len(items), max(1, size))]


def chunk_size(pages: int, workers: int, most: int = CHUNK_MAX) -> int:
    """Several chunks per worker, at most `most` pages each."""
    return max(1, min(most, pages // max(1, workers * 4)))


def run_jobs(
    jobs: Sequence[Job],
    workers: int = 1,
    progress: Progress | None = None,
    on_batch: OnBatch | None = None,
    most: int = CHUNK_MAX,
) -> dict[Hashable, list[PageRecord]]:
    """Plays every page of every job; returns each job's records in index order."""
    tick = progress or (lambda done: None)
    done: dict[Hashable, list[PageRecord]] = {key: [] for key, _, _ in jobs}

    def take(key: Hashable, batch: list[PageRecord]) -> None:
        done[key].extend(batch)
        if on_batch is not None:
            on_batch(key, batch)
        tick(len(batch))

    size = chunk_size(sum(len(indices) for _, _, indices in jobs), workers, most)
    tasks = [(key, config, chunk) for key, config, indices in jobs for chunk in chunks(indices, size)]
    if workers <= 1:
        for key, config, chunk in tasks:
            for i in chunk:
                take(key, [play_page(config, i)])
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(play_chunk, config, chunk): key for key, config, chunk in tasks}
            for future in as_completed(futures):
                take(futures[future], future.result())
    return {key: sorted(records, key=lambda r: r.index) for key, records in done.items()}


def run_pages(config: LabConfig, workers: int = 1, progress: Progress | None = None) -> list[PageRecord]:
    """Plays every page of the run and returns the records in index order."""
    return run_jobs([("run", config, range(config.games))], workers, progress)["run"]


def run_lab(
    config: LabConfig, workers: int = 1, progress: Progress | None = None, twins: bool = True
) -> tuple[list[PageRecord], list[PageRecord] | None]:
    """Plays the run and, with `twins`, the same pages with walls that cost nothing, in one pool."""
    jobs: list[Job] = [("run", config, range(config.games))]
    if twins:
        jobs.append(("twin", config.twin(), range(config.games)))
    done = run_jobs(jobs, workers, progress)
    return done["run"], done.get("twin")
