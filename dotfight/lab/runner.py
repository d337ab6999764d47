"""Runs a lab's pages: in this process, on a pool of local worker processes, or on a Dask cluster.

Work is a list of jobs — (key, run settings, page indices) — dealt to workers in chunks of consecutive
indices. Each page depends only on its run's settings and its own index, and the records are put back in
index order, so what comes out is the same whatever runs the pages: one process, a local pool of any
size, or a cluster of any number of machines.

A worker that dies costs only time: a local pool that breaks (a worker process killed) is started again
for the chunks not yet back, and on a cluster the Dask scheduler gives a dead worker's chunks to another.
Every cluster task carries the fingerprint of this machine's engine, bot and lab code, and a worker
running other code refuses it, so a stale checkout on another machine cannot change a result silently.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, TypeAlias

from dotfight.lab.config import LabConfig
from dotfight.lab.page import PageRecord, play_page

if TYPE_CHECKING:
    from distributed import Client
    from distributed.deploy.cluster import Cluster

    ClusterSpec: TypeAlias = "str | Client | Cluster"
else:
    ClusterSpec = Any

Progress = Callable[[int], None]
# Called with a job's key and a finished chunk's records, as chunks finish (in any order).
OnBatch = Callable[[Hashable, list[PageRecord]], None]
Job = tuple[Hashable, LabConfig, Sequence[int]]
Task = tuple[Hashable, LabConfig, list[int]]
# The most pages in one worker task: small enough that a slow chunk does not hold up the end.
CHUNK_MAX = 25
# How many times a broken local pool is started again before the run gives up (a page that kills its
# worker every time would otherwise loop for ever).
POOL_RESTARTS = 3
# Seconds to wait for a scheduler at `--cluster ADDRESS` before giving up.
CONNECT_TIMEOUT = 10.0


class ClusterError(RuntimeError):
    """A cluster that cannot run the lab's pages: `code` is a stable snake_case name for the CLI."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __reduce__(self) -> tuple[type[ClusterError], tuple[str, str]]:
        # Raised on a worker and sent back to the client: pickled by its two arguments.
        return ClusterError, (self.code, str(self))


# The lab's files a page depends on (with the engine and the bot), and those a cluster task needs too.
PAGE_FILES = ("page.py", "config.py")
TASK_FILES = (*PAGE_FILES, "runner.py")


def fingerprinter(lab_files: tuple[str, ...] = PAGE_FILES) -> Callable[[], str]:
    """The function that hashes the source of the engine, the bot and `lab_files` of the `dotfight`
    this process imports.

    It is made inside this function so that `cloudpickle` sends it to a Dask scheduler or worker by
    value: a machine on an older checkout can run it (and be told apart) even when it lacks this module.
    """

    def fingerprint() -> str:
        import hashlib
        import importlib.util
        from pathlib import Path

        spec = importlib.util.find_spec("dotfight")
        assert spec is not None and spec.origin is not None
        root = Path(spec.origin).resolve().parent
        digest = hashlib.blake2b(digest_size=8)
        files = [*sorted((root / "engine").glob("*.py")), *sorted((root / "bot").glob("*.py"))]
        files += [root / "lab" / name for name in lab_files]
        for path in files:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()

    return fingerprint


@functools.cache
def code_fingerprint() -> str:
    """A hash of the source the pages depend on here: the engine, the bot and the lab's page player."""
    return fingerprinter()()


@functools.cache
def task_fingerprint() -> str:
    """A hash of the source a cluster task runs: the pages' and this module (which a task unpickles)."""
    return fingerprinter(TASK_FILES)()


def play_chunk(config: LabConfig, indices: Sequence[int]) -> list[PageRecord]:
    """Plays the pages with the given indices, in order (the unit of work of one worker task)."""
    return [play_page(config, i) for i in indices]


def play_chunk_checked(config: LabConfig, indices: Sequence[int], code: str) -> list[PageRecord]:
    """A cluster task: plays the chunk if this worker runs the same code as the client, else refuses."""
    mine = task_fingerprint()
    if mine != code:
        raise ClusterError(
            "cluster_code_mismatch",
            f"a worker runs other engine/bot/lab code (fingerprint {mine}, the client's {code}): "
            "install the same checkout on every machine",
        )
    return play_chunk(config, indices)


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
    *,
    cluster: ClusterSpec | None = None,
) -> dict[Hashable, list[PageRecord]]:
    """Plays every page of every job; returns each job's records in index order.

    `cluster` — a scheduler address such as `tcp://host:8786`, a `distributed.Client` or a cluster
    object (a `LocalCluster`) — plays the pages there instead of on `workers` local processes.
    """
    tick = progress or (lambda done: None)
    done: dict[Hashable, list[PageRecord]] = {key: [] for key, _, _ in jobs}

    def take(key: Hashable, batch: list[PageRecord]) -> None:
        done[key].extend(batch)
        if on_batch is not None:
            on_batch(key, batch)
        tick(len(batch))

    pages = sum(len(indices) for _, _, indices in jobs)
    if cluster is not None:
        with _connected(cluster) as client:
            _check_code(client, task_fingerprint())
            threads = sum(client.nthreads().values())
            size = chunk_size(pages, threads, most)
            _run_on_cluster(client, _tasks(jobs, size), take)
    elif workers <= 1:
        for key, config, indices in jobs:
            for i in indices:
                take(key, [play_page(config, i)])
    else:
        _run_on_pool(_tasks(jobs, chunk_size(pages, workers, most)), workers, take)
    return {key: sorted(records, key=lambda r: r.index) for key, records in done.items()}


def _tasks(jobs: Sequence[Job], size: int) -> list[Task]:
    return [(key, config, chunk) for key, config, indices in jobs for chunk in chunks(indices, size)]


def _run_on_pool(tasks: list[Task], workers: int, take: OnBatch) -> None:
    """Plays the tasks on a local process pool, starting it again for what a dead worker left."""
    pending = dict(enumerate(tasks))
    for _attempt in range(POOL_RESTARTS + 1):
        broken = False
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures: dict[Future[list[PageRecord]], int] = {
                pool.submit(play_chunk, config, chunk): n for n, (_, config, chunk) in pending.items()
            }
            for future in as_completed(futures):
                if isinstance(future.exception(), BrokenProcessPool):
                    broken = True  # keep harvesting: chunks that did come back are not played again
                    continue
                n = futures[future]
                take(pending.pop(n)[0], future.result())
        if not broken:
            return
    raise BrokenProcessPool(f"the local pool broke {POOL_RESTARTS + 1} times; {len(pending)} chunks left")


class _connected:
    """A context giving a `distributed.Client` for a cluster spec, closing it after if it opened it."""

    def __init__(self, cluster: ClusterSpec) -> None:
        self.cluster = cluster
        self.owned: Any = None

    def __enter__(self) -> Any:  # a distributed.Client (untyped)
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - a dependency; said plainly if it is missing
            raise ClusterError(
                "cluster_unavailable", "--cluster needs `pip install 'dotfight[lab]'`"
            ) from None
        if isinstance(self.cluster, Client):
            return self.cluster
        if isinstance(self.cluster, str) and "://" not in self.cluster:
            raise ClusterError(
                "cluster_bad_address", f"--cluster {self.cluster!r}: expected an address like tcp://host:8786"
            )
        try:
            self.owned = Client(self.cluster, timeout=CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as exc:
            raise ClusterError(
                "cluster_unreachable", f"no Dask scheduler answered at {self.cluster}: {exc}"
            ) from None
        return self.owned

    def __exit__(self, *exc: object) -> None:
        if self.owned is not None:
            self.owned.close()


def local_cluster(workers: int = 2) -> Any:
    """A `distributed.LocalCluster` of single-threaded worker processes (the pages are pure Python),
    each behind a nanny that restarts it, all on loopback: for tests and benchmarks."""
    from distributed import LocalCluster

    return LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=50,
    )


def _run_on_cluster(client: Any, tasks: list[Task], take: OnBatch) -> None:
    """Plays the tasks on the cluster; the scheduler replays a dead worker's tasks on another."""
    from distributed import as_completed as cluster_completed

    code = task_fingerprint()
    futures = {
        client.submit(play_chunk_checked, config, chunk, code, pure=False): key
        for key, config, chunk in tasks
    }
    try:
        for future in cluster_completed(futures):  # type: ignore[no-untyped-call]
            try:
                batch = future.result()
            except Exception as exc:
                if isinstance(exc, ClusterError) or not _stale_code(exc):
                    raise
                raise ClusterError(
                    "cluster_code_mismatch",
                    f"the scheduler or a worker cannot load this checkout's lab code ({exc}): install "
                    "the same checkout on every machine, the scheduler's included",
                ) from exc
            take(futures[future], batch)
    finally:
        client.cancel(list(futures))  # nothing left running for a run that stopped (a no-op when done)


def _check_code(client: Any, code: str) -> None:
    """Refuses a cluster whose scheduler or workers run other code than this machine (a worker that
    cannot even unpickle a task dies of it, so they are asked first, with a function sent by value)."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except TimeoutError:
        raise ClusterError(
            "cluster_no_workers", f"no worker joined the scheduler within {CONNECT_TIMEOUT:g} s"
        ) from None
    found = {"the scheduler": client.run_on_scheduler(fingerprinter(TASK_FILES))}
    found |= client.run(fingerprinter(TASK_FILES), on_error="return")
    stale = sorted(where for where, theirs in found.items() if theirs != code)
    if stale:
        raise ClusterError(
            "cluster_code_mismatch",
            f"{', '.join(stale)} run(s) other engine/bot/lab code than this machine: install the same "
            "checkout on every machine, the scheduler's included",
        )


def _stale_code(exc: Exception) -> bool:
    """Whether a task failed because the scheduler or a worker runs older code: it could not unpickle
    the task (a function or module of this checkout missing there)."""
    text = str(exc)
    return "deserializ" in text or "Can't get attribute" in text or isinstance(exc, ModuleNotFoundError)


def run_pages(
    config: LabConfig,
    workers: int = 1,
    progress: Progress | None = None,
    *,
    cluster: ClusterSpec | None = None,
) -> list[PageRecord]:
    """Plays every page of the run and returns the records in index order."""
    return run_jobs([("run", config, range(config.games))], workers, progress, cluster=cluster)["run"]


def run_lab(
    config: LabConfig,
    workers: int = 1,
    progress: Progress | None = None,
    twins: bool = True,
    *,
    cluster: ClusterSpec | None = None,
) -> tuple[list[PageRecord], list[PageRecord] | None]:
    """Plays the run and, with `twins`, the same pages with walls that cost nothing, in one pool."""
    jobs: list[Job] = [("run", config, range(config.games))]
    if twins:
        jobs.append(("twin", config.twin(), range(config.games)))
    done = run_jobs(jobs, workers, progress, cluster=cluster)
    return done["run"], done.get("twin")
