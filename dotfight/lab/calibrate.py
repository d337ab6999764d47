"""`dotfight lab calibrate`: fits the numbers the lab may calibrate to a table of target figures.

The target (`--target book.json`, `Target`) names, per preset, figures of the lab's report with a value,
a band and a weight. Every trial is one point — a value for each searched number, the same point on every
preset — played as a lab run on fixed seeds (the same pages at every point: common random numbers), and
scored by how far each figure lands from its value, in half-bands (`FigureTarget.term`). Optuna's TPE
proposes the points; its study lives in SQLite, and the trials are asked and told one by one with a
sampler seeded by (seed, trials done), so an interrupted calibration resumed later proposes exactly the
points the uninterrupted one would have, and the pages of a trial cut short are kept in the state file.

The first trial is always the presets' own point: the baseline every figure's move is measured from.
Numbers the book itself fixes may be searched with `--free`, but such a point is reported, never adopted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dotfight.bot.luck import derive_seed
from dotfight.engine import RuleSet
from dotfight.engine.rules import PRESET_NAMES
from dotfight.lab.book import CALIBRATABLE
from dotfight.lab.config import DEFAULT_TURN_CAP, LabConfig
from dotfight.lab.report import FIGURES, build_report
from dotfight.lab.runner import ClusterSpec, Job, Progress, run_jobs
from dotfight.lab.sweep import SWEEP_CHUNK, PageStore

# A figure the run could not measure (no outside man ever, so no risk ratio) scores as this many
# half-bands off: worse than any measured figure is likely to be, without breaking the sampler.
MISSING_HALF_BANDS = 5.0
# Random points before TPE starts modelling (Optuna's default, kept for short studies' sake at most a
# third of them).
STARTUP_TRIALS = 10
STUDY_NAME = "dotfight-calibrate"
_RULE_NAMES = frozenset(RuleSet().to_json()) - {"preset"}


class CalibrationError(ValueError):
    """A calibration that cannot start: `code` is a stable snake_case name for the CLI."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class FigureTarget:
    """One figure of one preset: the value aimed at, its band and its weight in the score."""

    name: str
    value: float
    low: float
    high: float
    weight: float = 1.0

    def deviation(self, measured: float | None) -> float:
        """How far the measured figure lies from the value, in half-bands on its side (±1: the band's edge).

        >>> round(FigureTarget("turns", 36.0, 28.8, 43.2).deviation(47.0), 4)
        1.5278
        """
        if measured is None or not math.isfinite(measured):
            return MISSING_HALF_BANDS
        off = measured - self.value
        half = self.high - self.value if off > 0 else self.value - self.low
        return off / half if half > 0 else (0.0 if off == 0 else math.copysign(MISSING_HALF_BANDS, off))

    def term(self, measured: float | None) -> float:
        """The figure's share of the score: weight × deviation² (at most the weight inside the band)."""
        return self.weight * self.deviation(measured) ** 2

    def inside(self, measured: float | None) -> bool:
        """Whether the point estimate lies in the band."""
        return measured is not None and self.low <= measured <= self.high


@dataclass(frozen=True)
class PresetTarget:
    """The figures aimed at on one preset, and the pages a trial plays there."""

    preset: str
    figures: tuple[FigureTarget, ...]
    games: int
    twins: bool


@dataclass(frozen=True)
class Target:
    """The whole target table: one entry per preset."""

    presets: tuple[PresetTarget, ...]

    @classmethod
    def from_json(cls, data: object, games: int = 100) -> Target:
        """Reads the `--target` file's JSON (docs/LAB.md, "Calibration"); `games` where a preset has none.

        >>> Target.from_json({"quick": {"figures": {"turns": {"value": 22, "band": [17.6, 26.4]}}}}).presets
        (PresetTarget(preset='quick', figures=(FigureTarget(name='turns', value=22.0, low=17.6, high=26.4, \
weight=1.0),), games=100, twins=False),)
        """
        if not isinstance(data, dict) or not data:
            raise _bad('a target is an object of presets: {"quick": {"figures": {…}}, …}')
        presets = []
        for preset, entry in data.items():
            if preset not in PRESET_NAMES:
                raise _bad(f"unknown preset {preset!r}; expected one of {', '.join(PRESET_NAMES)}")
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("figures"), dict)
                or not entry["figures"]
            ):
                raise _bad(f'{preset}: expected {{"figures": {{NAME: {{value, band, weight}}}}, …}}')
            figures = tuple(_figure(preset, name, spec) for name, spec in entry["figures"].items())
            needs_twins = any(f.name == "walls_length_ratio" for f in figures)
            twins = entry.get("twins", needs_twins)
            n = entry.get("games", games)
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise _bad(f"{preset}: games must be a positive whole number")
            if not isinstance(twins, bool) or (needs_twins and not twins):
                raise _bad(f"{preset}: twins must be true or false (true for walls_length_ratio)")
            presets.append(PresetTarget(preset, figures, n, twins))
        return cls(tuple(presets))

    @classmethod
    def load(cls, path: Path, games: int = 100) -> Target:
        """Reads a `--target` file."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CalibrationError("bad_target", f"--target {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise CalibrationError("bad_target", f"--target {path}: not JSON ({exc})") from None
        return cls.from_json(data, games)

    def to_json(self) -> dict[str, Any]:
        """The target as the `--target` file writes it."""
        return {
            p.preset: {
                "games": p.games,
                "twins": p.twins,
                "figures": {
                    f.name: {"value": f.value, "band": [f.low, f.high], "weight": f.weight} for f in p.figures
                },
            }
            for p in self.presets
        }


def _bad(message: str) -> CalibrationError:
    return CalibrationError("bad_target", f"--target: {message}")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _figure(preset: str, name: str, spec: object) -> FigureTarget:
    if name not in FIGURES:
        raise _bad(f"{preset}: unknown figure {name!r}; expected one of {', '.join(FIGURES)}")
    if not isinstance(spec, dict):
        raise _bad(f'{preset}.{name}: expected {{"value": V, "band": [LOW, HIGH], "weight": W}}')
    value, band, weight = spec.get("value"), spec.get("band"), spec.get("weight", 1.0)
    if not _number(value) or not isinstance(band, list) or len(band) != 2 or not all(map(_number, band)):
        raise _bad(f"{preset}.{name}: needs a number `value` and a `band` [LOW, HIGH]")
    if not band[0] <= value <= band[1] or band[0] == band[1]:
        raise _bad(f"{preset}.{name}: the band [LOW, HIGH] must hold the value and have a width")
    if not _number(weight) or weight <= 0:
        raise _bad(f"{preset}.{name}: the weight must be a positive number")
    assert isinstance(value, int | float) and isinstance(weight, int | float)
    return FigureTarget(name, float(value), float(band[0]), float(band[1]), float(weight))


@dataclass(frozen=True)
class Space:
    """The searched numbers and their ranges; `free` names the book's own numbers among them."""

    ranges: dict[str, tuple[float, float]]
    free: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, params: list[str], free: list[str]) -> Space:
        """Reads `--param NAME=LOW:HIGH` (calibratable numbers; none: all of them at their default ranges)
        and `--free NAME=LOW:HIGH` (the book's own numbers).

        >>> Space.parse(["wildness=0.04:0.08"], ["wall_loss_full=0.7:0.95"]).ranges
        {'wildness': (0.04, 0.08), 'wall_loss_full': (0.7, 0.95)}
        >>> Space.parse(["wall_loss_full=0.7:0.9"], [])
        Traceback (most recent call last):
        ...
        dotfight.lab.calibrate.CalibrationError: --param wall_loss_full: the book fixes it; search it \
with --free (reported, never adopted)
        """
        searched = [_range("--param", text) for text in params] or list(CALIBRATABLE.items())
        books = [_range("--free", text) for text in free]
        for name, _ in searched:
            if name not in CALIBRATABLE:
                raise CalibrationError(
                    "bad_param",
                    f"--param {name}: the book fixes it; search it with --free (reported, never adopted)",
                )
        for name, _ in books:
            if name in CALIBRATABLE:
                raise CalibrationError("bad_param", f"--free {name}: the lab may calibrate it; use --param")
        ranges = dict(searched + books)
        if len(ranges) != len(searched) + len(books):
            raise CalibrationError("bad_param", "each number may be searched only once")
        return cls(ranges, frozenset(name for name, _ in books))

    def round(self, params: Mapping[str, float]) -> dict[str, float]:
        """A proposed point at six significant digits (a page's key and the report stay readable)."""
        return {name: float(f"{params[name]:.6g}") for name in self.ranges}

    def to_json(self) -> dict[str, Any]:
        """The space as the study records it."""
        return {"ranges": {k: list(v) for k, v in self.ranges.items()}, "free": sorted(self.free)}


def _range(option: str, text: str) -> tuple[str, tuple[float, float]]:
    name, sep, spec = text.partition("=")
    name = name.strip()
    low, colon, high = spec.partition(":")
    try:
        span = (float(low), float(high))
    except ValueError:
        span = (math.nan, math.nan)
    if not sep or not colon or not all(map(math.isfinite, span)) or not span[0] < span[1]:
        raise CalibrationError("bad_param", f"{option} {text}: expected NAME=LOW:HIGH with LOW < HIGH")
    if name not in _RULE_NAMES:
        raise CalibrationError("bad_param", f"{option} {text}: unknown rule parameter {name!r}")
    return name, span


# What a trial measures: {preset: {figure: {value, low, high}}} of the point's lab runs.
Figures = dict[str, dict[str, Any]]
Evaluate = Callable[[dict[str, float]], Figures]


@dataclass
class LabEvaluator:
    """Plays a point's lab runs — every preset of the target — and returns their figures.

    All presets' pages (and twins) go to one `run_jobs` call, locally or on `cluster`; finished pages
    are kept in the state file, so a trial cut short and replayed on resume plays only what was missing.
    """

    target: Target
    bot: str = "normal"
    bot_red: str | None = None
    seed: int = 0
    alternate: bool = True
    turn_cap: int = DEFAULT_TURN_CAP
    overrides: dict[str, Any] = field(default_factory=dict)
    workers: int = 1
    cluster: ClusterSpec | None = None
    state_path: Path | None = None
    progress: Progress | None = None

    def config(self, preset: PresetTarget, point: Mapping[str, float]) -> LabConfig:
        """The lab run of one preset at a point."""
        return LabConfig(
            preset=preset.preset,
            overrides={**self.overrides, **point},
            games=preset.games,
            seed=self.seed,
            bot_blue=self.bot,
            bot_red=self.bot_red,
            alternate=self.alternate,
            turn_cap=self.turn_cap,
        )

    def pages(self) -> int:
        """The pages one trial plays, twins included."""
        return sum(p.games * (2 if p.twins else 1) for p in self.target.presets)

    def __call__(self, point: dict[str, float]) -> Figures:
        store = PageStore(self.state_path)
        jobs: list[Job] = []
        try:
            for preset in self.target.presets:
                config = self.config(preset, point)
                runs: list[tuple[Hashable, LabConfig]] = [((preset.preset, False), config)]
                if preset.twins:
                    runs.append(((preset.preset, True), config.twin()))
                for key, run in runs:
                    missing = store.want(key, run, preset.games)
                    if self.progress is not None:
                        self.progress(preset.games - len(missing))  # kept pages count as done
                    if missing:
                        jobs.append((key, run, missing))
            run_jobs(jobs, self.workers, self.progress, store.take, SWEEP_CHUNK, cluster=self.cluster)
        finally:
            store.close()
        figures: Figures = {}
        for preset in self.target.presets:
            twins = store.pages((preset.preset, True)) if preset.twins else None
            report = build_report(self.config(preset, point), store.pages((preset.preset, False)), twins)
            figures[preset.preset] = report["figures"]
        return figures


def score(target: Target, figures: Figures) -> tuple[float, dict[str, dict[str, float]]]:
    """The trial's score (the sum of every figure's term) and each figure's signed deviation."""
    deviations: dict[str, dict[str, float]] = {}
    total = 0.0
    for preset in target.presets:
        measured = figures[preset.preset]
        for f in preset.figures:
            value = (measured.get(f.name) or {}).get("value")
            deviations.setdefault(preset.preset, {})[f.name] = f.deviation(value)
            total += f.term(value)
    return total, deviations


TrialDone = Callable[[dict[str, Any]], None]


def calibrate(
    target: Target,
    space: Space,
    evaluate: Evaluate,
    trials: int,
    *,
    seed: int = 0,
    study_path: Path | None = None,
    start: Mapping[str, float] | None = None,
    settings: Mapping[str, Any] | None = None,
    on_trial: TrialDone | None = None,
    on_start: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Runs the study until it holds `trials` finished trials; returns the summary (`summarize`).

    `start` is the first trial's point (the presets' own; default: the middle of every range).
    `settings` — everything else that decides the figures (bots, seeds, games) — is stored with the
    study, and a study made with other settings, target or space is refused rather than mixed.
    `on_trial` gets each finished trial's record; `on_start` the number of trials already finished (a
    resumed study's), before any is played.
    """
    try:
        import optuna
        from optuna.distributions import BaseDistribution, FloatDistribution
        from optuna.trial import TrialState
    except ImportError:  # the lab's extra: said plainly if it is missing
        raise CalibrationError(
            "calibrate_unavailable", "calibrate needs `pip install 'dotfight[lab]'`"
        ) from None

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    identity = {"target": target.to_json(), "space": space.to_json(), "seed": seed, **(settings or {})}
    storage = f"sqlite:///{study_path}" if study_path is not None else None
    study = optuna.create_study(
        study_name=STUDY_NAME, storage=storage, load_if_exists=True, direction="minimize"
    )
    stored = study.user_attrs.get("identity")
    if stored is None:
        study.set_user_attr("identity", json.loads(json.dumps(identity)))
    elif stored != json.loads(json.dumps(identity)):
        raise CalibrationError(
            "calibration_mismatch",
            f"the study in {study_path} was made with another target, space or settings: "
            "use another --study, or the same options",
        )
    for stale in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        # Cut short by an interrupted run: failed, so it is proposed again (same seed, same history).
        study.tell(stale.number, state=TrialState.FAIL)
    distributions: dict[str, BaseDistribution] = {
        name: FloatDistribution(low, high) for name, (low, high) in space.ranges.items()
    }
    first = dict(start) if start is not None else {n: (lo + hi) / 2 for n, (lo, hi) in space.ranges.items()}
    first = {n: min(max(first[n], lo), hi) for n, (lo, hi) in space.ranges.items()}
    startup = max(1, min(STARTUP_TRIALS, trials // 3))
    if on_start is not None:
        on_start(len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))))
    while len(completed := study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))) < trials:
        done = len(completed)
        study.sampler = optuna.samplers.TPESampler(
            seed=derive_seed("calibrate", seed, done) % 2**32, n_startup_trials=startup, multivariate=True
        )
        if done == 0 and not study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
            study.enqueue_trial(first)  # the baseline; again after a first trial cut short
        trial = study.ask(distributions)
        point = space.round(trial.params)
        figures = evaluate(point)
        total, deviations = score(target, figures)
        trial.set_user_attr("point", point)
        trial.set_user_attr("figures", _plain(figures))
        trial.set_user_attr("deviations", deviations)
        study.tell(trial, total)
        if on_trial is not None:
            on_trial(_record(study.trials[trial.number], done))
    return summarize(target, space, study)


def _plain(figures: Figures) -> Figures:
    """The figures as plain JSON (Optuna stores user attributes as JSON)."""
    return dict(json.loads(json.dumps(figures)))


def _record(trial: Any, number: int) -> dict[str, Any]:
    """A finished trial as the report lists it; `number` counts finished trials only (a trial cut short
    and played again keeps the number it would have had)."""
    return {
        "number": number,
        "point": trial.user_attrs["point"],
        "score": trial.value,
        "figures": trial.user_attrs["figures"],
        "deviations": trial.user_attrs["deviations"],
    }


def summarize(target: Target, space: Space, study: Any) -> dict[str, Any]:
    """The calibration's report: every trial, the best point, how each figure moved from the baseline
    (the first trial) to the best, and where the figures pull against each other."""
    from optuna.trial import TrialState

    finished = sorted(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)), key=lambda t: t.number)
    records = [_record(t, n) for n, t in enumerate(finished)]
    best = min(records, key=lambda r: (r["score"], r["number"]))
    baseline = records[0]
    moved = []
    for preset in target.presets:
        for f in preset.figures:
            before = baseline["figures"][preset.preset].get(f.name) or {}
            after = best["figures"][preset.preset].get(f.name) or {}
            moved.append(
                {
                    "preset": preset.preset,
                    "figure": f.name,
                    "value": f.value,
                    "band": [f.low, f.high],
                    "weight": f.weight,
                    "baseline": before.get("value"),
                    "best": after.get("value"),
                    "best_interval": [after.get("low"), after.get("high")],
                    "inside": f.inside(after.get("value")),
                }
            )
    return {
        "target": target.to_json(),
        "space": space.to_json(),
        "trials": records,
        "best": best,
        "baseline": baseline,
        "figures": moved,
        "all_inside": all(m["inside"] for m in moved),
        "adoptable": not space.free,
        "free": sorted(space.free),
        "slopes": slopes(target, space, records),
        "tensions": tensions(target, space, records, best),
    }


def _fit(target: Target, space: Space, records: list[dict[str, Any]]) -> dict[str, np.ndarray[Any, Any]]:
    """Each figure's deviation fitted as a plane over the points tried (numbers scaled to their ranges):
    {"preset:figure": slopes, one per number}; empty with too few trials for a fit."""
    names = list(space.ranges)
    if len(records) < len(names) + 2:
        return {}
    x = np.asarray(
        [[(r["point"][n] - lo) / (hi - lo) for n, (lo, hi) in space.ranges.items()] for r in records]
    )
    design = np.column_stack([x, np.ones(len(records))])
    fits = {}
    for preset in target.presets:
        for f in preset.figures:
            y = np.asarray([r["deviations"][preset.preset][f.name] for r in records])
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            fits[f"{preset.preset}:{f.name}"] = coef[:-1]
    return fits


def slopes(target: Target, space: Space, records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """How each figure moves with each number: half-bands of deviation over the number's whole range
    (a least-squares plane through every trial)."""
    names = list(space.ranges)
    return {
        figure: {name: round(float(s), 4) for name, s in zip(names, coef, strict=True)}
        for figure, coef in _fit(target, space, records).items()
    }


def tensions(
    target: Target, space: Space, records: list[dict[str, Any]], best: dict[str, Any]
) -> list[dict[str, Any]]:
    """Pairs of figures that pull the best point in opposite directions.

    A figure off its value wants the numbers moved down its fitted slope (toward its value); two
    figures pull against each other when those wanted moves point apart (cosine below -0.3). Listed
    most opposed first, each with the numbers they disagree on.
    """
    fits = _fit(target, space, records)
    names = list(space.ranges)
    wants = {}
    for figure, coef in fits.items():
        preset, name = figure.split(":", 1)
        wants[figure] = -best["deviations"][preset][name] * coef
    found = []
    keys = sorted(wants)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            norm = float(np.linalg.norm(wants[a]) * np.linalg.norm(wants[b]))
            if norm < 1e-9:
                continue
            cosine = float(wants[a] @ wants[b]) / norm
            if cosine < -0.3:
                # a number both want moved, materially (a tenth of the figure's whole wanted move), apart
                na, nb = 0.1 * np.linalg.norm(wants[a]), 0.1 * np.linalg.norm(wants[b])
                against = [
                    {"number": n, a: "up" if wa > 0 else "down", b: "up" if wb > 0 else "down"}
                    for n, wa, wb in zip(names, wants[a], wants[b], strict=True)
                    if wa * wb < 0 and abs(wa) >= na and abs(wb) >= nb
                ]
                found.append({"figures": [a, b], "cosine": round(cosine, 3), "numbers": against})
    return sorted(found, key=lambda t: t["cosine"])
