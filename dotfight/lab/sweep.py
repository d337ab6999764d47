"""`dotfight lab sweep`: one rule parameter (or a grid of two) swept, every figure with its interval.

Every point of the sweep plays the same pages (the same page and bot seeds: common random numbers, so a
curve is smoother than its intervals suggest), with their free-walls twins. Finished pages are appended
to a state file (JSON lines) as they come in; a rerun with the same settings reads it back and plays only
the pages still missing, so an interrupted sweep continues where it stopped and a finished point is never
played again. A page's key hashes everything it depends on — the full rule set, bots, seeds, turn cap and
the source of the engine, the bot and the lab's page player — so a stale page (other rules, other code) is
never reused. The summary JSON is rewritten whenever a point completes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dotfight.engine import RuleSet
from dotfight.lab.config import LabConfig
from dotfight.lab.page import PageRecord
from dotfight.lab.report import build_report
from dotfight.lab.runner import ClusterSpec, Job, Progress, code_fingerprint, run_jobs

# Pages per worker task in a sweep: small, so the state file is written often.
SWEEP_CHUNK = 4
_RULE_NAMES = frozenset(RuleSet().to_json()) - {"preset"}


@dataclass(frozen=True)
class Param:
    """One swept rule parameter and its values."""

    name: str
    values: tuple[float, ...]

    @classmethod
    def parse(cls, text: str) -> Param:
        """Reads `name=start:stop:count` (evenly spaced, both ends included), `name=a,b,c` or `name=a`.

        >>> Param.parse("wildness=0.02:0.2:4").values
        (0.02, 0.08, 0.14, 0.2)
        >>> Param.parse("send_max=0,2,5").values
        (0.0, 2.0, 5.0)
        >>> Param.parse("colour=1")
        Traceback (most recent call last):
        ...
        ValueError: --param colour=1: unknown rule parameter 'colour'
        """
        name, sep, spec = text.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not name or not spec:
            raise ValueError(f"--param {text}: expected name=start:stop:count or name=a,b,c")
        if name not in _RULE_NAMES:
            raise ValueError(f"--param {text}: unknown rule parameter {name!r}")
        try:
            if ":" in spec:
                start, stop, count = spec.split(":")
                n = int(count)
                if n < 1:
                    raise ValueError
                values = [float(v) for v in np.linspace(float(start), float(stop), n)]
            else:
                values = [float(v) for v in spec.split(",")]
        except ValueError:
            raise ValueError(f"--param {text}: expected name=start:stop:count or name=a,b,c") from None
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"--param {text}: values must be finite numbers")
        # Twelve significant digits: 0.02 + 6 × 0.03 is 0.2, not 0.20000000000000004.
        return cls(name, tuple(float(f"{v:.12g}") for v in values))


@dataclass(frozen=True)
class Sweep:
    """A sweep: the fixed settings of every point, the swept parameters (one or two) and the twins."""

    base: LabConfig
    params: tuple[Param, ...]
    twins: bool = True
    points: tuple[dict[str, float], ...] = field(init=False)

    def __post_init__(self) -> None:
        if not 1 <= len(self.params) <= 2:
            raise ValueError("a sweep takes one --param, or two for a grid")
        if len({p.name for p in self.params}) != len(self.params):
            raise ValueError("the two --param names must differ")
        grid = itertools.product(*(p.values for p in self.params))
        points = tuple({p.name: v for p, v in zip(self.params, values, strict=True)} for values in grid)
        object.__setattr__(self, "points", points)
        for point in points:  # every point's rules are valid before any page is played
            self.config_at(point)

    def config_at(self, point: dict[str, float], twin: bool = False) -> LabConfig:
        """The run settings of one point (the twin: with walls that cost nothing)."""
        config = replace(self.base, overrides={**self.base.overrides, **point})
        return config.twin() if twin else config

    def to_json(self) -> dict[str, Any]:
        """The sweep's settings as the summary records them."""
        return {
            **self.base.to_json(),
            "params": [{"name": p.name, "values": list(p.values)} for p in self.params],
            "twins": self.twins,
        }


def page_key(config: LabConfig, index: int, code: str) -> str:
    """The state file's key of one page: everything the page depends on."""
    settings = {**config.to_json(), "rules": config.rules().to_json(), "index": index, "code": code}
    for name in ("games", "overrides", "free_walls"):  # the full rule set says what they changed
        settings.pop(name)
    text = json.dumps(settings, sort_keys=True, allow_nan=False)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def read_state(path: Path) -> dict[str, PageRecord]:
    """The pages a state file holds (a torn last line, from an interrupted run, is ignored)."""
    found: dict[str, PageRecord] = {}
    if not path.exists():
        return found
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
                found[entry["key"]] = PageRecord.from_json(entry["record"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return found


def write_json(path: Path, data: Any) -> None:
    """Writes JSON atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(data, out, indent=2, sort_keys=True, allow_nan=False)
        out.write("\n")
    os.replace(tmp, path)


class PageStore:
    """The finished pages of some runs, kept in a state file (JSON lines) so a rerun plays only the rest.

    `want(key, config, games)` says which pages a run needs and returns the indices still missing; the
    kept ones are already in `records[key]`. `take(key, batch)` files a finished chunk and appends it to
    the state file. Without a path nothing is kept on disk.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.code = code_fingerprint()
        self.kept = read_state(path) if path is not None else {}
        self.keys: dict[Hashable, list[str]] = {}
        self.records: dict[Hashable, dict[int, PageRecord]] = {}
        self.games: dict[Hashable, int] = {}
        self._out = path.open("a", encoding="utf-8") if path is not None else None

    def want(self, key: Hashable, config: LabConfig, games: int) -> list[int]:
        """Registers a run's pages; returns the indices not yet played."""
        self.keys[key] = [page_key(config, i, self.code) for i in range(games)]
        self.records[key] = {i: self.kept[k] for i, k in enumerate(self.keys[key]) if k in self.kept}
        self.games[key] = games
        return [i for i in range(games) if i not in self.records[key]]

    def take(self, key: Hashable, batch: list[PageRecord]) -> None:
        """Files a finished chunk (and writes it to the state file at once)."""
        for record in batch:
            self.records[key][record.index] = record
            if self._out is not None:
                line = {"key": self.keys[key][record.index], "record": record.to_json()}
                self._out.write(json.dumps(line, sort_keys=True) + "\n")
        if self._out is not None:
            self._out.flush()

    def complete(self, key: Hashable) -> bool:
        """True when every page of the run is in."""
        return len(self.records[key]) == self.games[key]

    def pages(self, key: Hashable) -> list[PageRecord]:
        """The run's records in index order (the run must be complete)."""
        return [self.records[key][i] for i in range(self.games[key])]

    def close(self) -> None:
        """Closes the state file."""
        if self._out is not None:
            self._out.close()


PointDone = Callable[[dict[str, Any]], None]


def run_sweep(
    sweep: Sweep,
    workers: int = 1,
    state_path: Path | None = None,
    progress: Progress | None = None,
    on_point: PointDone | None = None,
    start: Callable[[int, int], None] | None = None,
    *,
    cluster: ClusterSpec | None = None,
) -> dict[str, Any]:
    """Plays every missing page of the sweep and returns the summary.

    `start(missing, total)` is told how many pages are left to play before any is played; `on_point`
    gets the summary again each time a point completes. `cluster` plays the pages on a Dask cluster
    (`dotfight.lab.runner.run_jobs`).
    """
    store = PageStore(state_path)
    games = sweep.base.games
    runs: dict[int, list[tuple[int, bool]]] = {}
    jobs: list[Job] = []
    for p, point in enumerate(sweep.points):
        for twin in (False, True) if sweep.twins else (False,):
            config = sweep.config_at(point, twin)
            runs.setdefault(p, []).append((p, twin))
            missing = store.want((p, twin), config, games)
            if missing:
                jobs.append(((p, twin), config, missing))
    if start is not None:
        start(sum(len(m) for _, _, m in jobs), games * len(store.keys))
    reports: dict[int, dict[str, Any]] = {}

    def summary() -> dict[str, Any]:
        return {
            "sweep": sweep.to_json(),
            "points": [
                {"params": point, **reports[p]} for p, point in enumerate(sweep.points) if p in reports
            ],
            "complete": len(reports) == len(sweep.points),
        }

    def finish(p: int) -> None:
        config = sweep.config_at(sweep.points[p])
        twins = store.pages((p, True)) if sweep.twins else None
        report = build_report(config, store.pages((p, False)), twins)
        report.pop("config")  # the sweep's settings are recorded once, the point's params beside it
        reports[p] = report

    def complete(p: int) -> bool:
        return all(store.complete(key) for key in runs[p])

    for point_no in range(len(sweep.points)):
        if complete(point_no):
            finish(point_no)
    try:

        def on_batch(key: Hashable, batch: list[PageRecord]) -> None:
            store.take(key, batch)
            assert isinstance(key, tuple)
            point_no: int = key[0]
            if point_no not in reports and complete(point_no):
                finish(point_no)
                if on_point is not None:
                    on_point(summary())

        run_jobs(jobs, workers, progress, on_batch, most=SWEEP_CHUNK, cluster=cluster)
    finally:
        store.close()
    return summary()
