"""The engine's worker processes: the moves and replays of pages whose rules make them expensive.

A page whose rules are outside what a new page may have (`check_new_page`; only pages stored before a
limit existed) may cost seconds and hundreds of MB per move; `EngineWorkers` does its work in a
`WorkerPool` of its own (started at the first such page: they are rare), by value
(`engine_process.py`), so that it can never hold the server's GIL or memory. Every other page is
worked out on the calling thread.
"""

from __future__ import annotations

import threading
from typing import Any

from dotfight.engine import (
    EngineError,
    IllegalAction,
    MalformedAction,
    Replay,
    RuleSet,
    RuleSetError,
    State,
    apply,
    check_new_page,
)
from dotfight.server import engine_process
from dotfight.server.workers.pool import WorkerPool


def within_new_page_limits(rules: RuleSet) -> bool:
    """Tells whether a page's rules are within what a new page may have (`check_new_page`): only pages
    stored before a limit existed are outside, and their moves may be expensive."""
    try:
        check_new_page(rules)
    except RuleSetError:
        return False
    return True


def _refusal_of(outcome: engine_process.Outcome) -> EngineError:
    _, malformed, code, reason, message = outcome
    return MalformedAction(reason, message) if malformed else IllegalAction(reason, message, code)


class EngineWorkers:
    """Applies and replays actions: here, or in worker processes for rules outside the limits."""

    def __init__(self, processes: int, timeout_s: float) -> None:
        self._processes = processes
        self._timeout_s = timeout_s
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()

    def _workers(self) -> WorkerPool:
        with self._lock:
            if self._pool is None:
                self._pool = WorkerPool(
                    "the engine", self._processes, self._timeout_s, ["dotfight.server.engine_process"]
                )
            return self._pool

    def advance(self, state: State, side: str, action: dict[str, Any]) -> tuple[State, list[dict[str, Any]]]:
        """Applies one action (raising the engine's refusal): on this thread, or, for a page whose rules
        are outside the new-page limits, in an engine worker process. Call it off the event loop."""
        if within_new_page_limits(state.rules):
            return apply(state, side, action)
        outcome = self._workers().call(engine_process.apply_by_value, state.to_json(), side, action)
        if outcome[0] == "refused":
            raise _refusal_of(outcome)
        return State.from_json(outcome[1]), outcome[2]

    def replay(self, rules: RuleSet, seed: int, actions: list[dict[str, Any]]) -> State:
        """Replays a whole log (in an engine worker process when the rules are outside the limits)."""
        if within_new_page_limits(rules):
            replay = Replay(rules, seed, actions)
            if replay.error is not None or replay.valid != len(actions):
                raise RuntimeError(f"the log does not replay ({replay.error!r})")
            return replay.state
        outcome = self._workers().call(engine_process.replay_by_value, rules.to_json(), seed, actions)
        if outcome[0] == "refused":
            raise RuntimeError(f"the log does not replay ({_refusal_of(outcome)!r})")
        return State.from_json(outcome[1])

    def close(self) -> None:
        """Stops the worker processes, if any were started."""
        if self._pool is not None:
            self._pool.close()
