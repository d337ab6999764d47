"""The lab's pages on a Dask cluster (a real `distributed.LocalCluster` of worker processes on loopback)
and on a local pool: the same records whatever runs them, and a run that survives a worker dying."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import pytest

import dotfight.lab.runner as runner
from dotfight.cli import main
from dotfight.lab import LabConfig
from dotfight.lab.page import PageRecord, play_page
from dotfight.lab.runner import ClusterError, local_cluster, play_chunk_checked, run_jobs
from dotfight.lab.sweep import Param, Sweep, run_sweep

distributed = pytest.importorskip("distributed")

SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}


def small(games: int = 6, seed: int = 5, **overrides: Any) -> LabConfig:
    return LabConfig(preset="custom", overrides={**SMALL, **overrides}, games=games, seed=seed)


def as_json(done: dict[Hashable, list[PageRecord]]) -> dict[Hashable, list[dict[str, Any]]]:
    return {key: [r.to_json() for r in records] for key, records in done.items()}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two single-threaded worker processes on loopback, each behind a nanny that restarts it."""
    with local_cluster(2) as cluster, distributed.Client(cluster) as client:
        yield client


def jobs() -> list[runner.Job]:
    return [("a", small(), range(6)), ("b", small(wildness=0.1).twin(), range(1, 5))]


def test_the_same_pages_whatever_runs_them(client: Any) -> None:
    alone = as_json(run_jobs(jobs(), workers=1))
    assert as_json(run_jobs(jobs(), workers=2)) == alone
    assert as_json(run_jobs(jobs(), cluster=client)) == alone
    assert as_json(run_jobs(jobs(), cluster=client, most=1)) == alone  # one page a task: other chunks
    assert as_json(run_jobs(jobs(), cluster=client.scheduler.address)) == alone  # by its address
    assert [r["index"] for r in alone["b"]] == [1, 2, 3, 4]
    assert len({r["turns"] for r in alone["a"]}) > 1  # real, different pages


def test_a_sweep_on_the_cluster_is_the_local_sweep(client: Any, tmp_path: Path) -> None:
    sweep = Sweep(small(games=3), (Param.parse("wildness=0.05,0.1"),))
    local = run_sweep(sweep, workers=2)
    state = tmp_path / "pages.jsonl"
    assert run_sweep(sweep, state_path=state, cluster=client) == local
    assert len(state.read_text().splitlines()) == 2 * 2 * 3  # points × (page, twin) × games


def test_a_killed_workers_pages_are_played_again_elsewhere(client: Any) -> None:
    config = small(games=16, seed=9)
    reference = as_json(run_jobs([("run", config, range(16))], workers=1))
    killed: dict[str, Any] = {}

    def kill_a_busy_worker(key: Hashable, batch: list[PageRecord]) -> None:
        if killed:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            busy = {address: keys for address, keys in client.processing().items() if keys}
            if busy:
                break
            time.sleep(0.01)
        address, keys = next(iter(busy.items()))
        pid = client.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)  # mid-page: the worker's chunk never comes back
        killed.update(address=address, pid=pid, lost=len(keys))

    done = run_jobs([("run", config, range(16))], on_batch=kill_a_busy_worker, most=1, cluster=client)
    assert killed["lost"] >= 1  # the worker died holding a page
    with pytest.raises(ProcessLookupError):
        os.kill(killed["pid"], 0)
    assert as_json(done) == reference  # every page back, the lost ones played again, the same pages
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it, for the tests after this one


def test_a_worker_running_other_code_refuses_the_pages(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ClusterError) as refused:
        play_chunk_checked(small(), [0], "stale")
    assert refused.value.code == "cluster_code_mismatch"
    monkeypatch.setattr(runner, "task_fingerprint", lambda: "the client's other code")
    with pytest.raises(ClusterError) as asked:  # the scheduler and every worker are asked first
        run_jobs(jobs(), cluster=client)
    assert asked.value.code == "cluster_code_mismatch"
    assert "the scheduler" in str(asked.value) and "install the same checkout" in str(asked.value)
    monkeypatch.setattr(runner, "_check_code", lambda client, code: None)
    with pytest.raises(ClusterError) as remote:  # a late worker refuses the task itself
        run_jobs(jobs(), cluster=client)
    assert remote.value.code == "cluster_code_mismatch" and "fingerprint" in str(remote.value)


def test_a_cluster_without_workers_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 0.5)
    with local_cluster(0) as empty, pytest.raises(ClusterError) as refused:
        run_jobs(jobs(), cluster=empty)
    assert refused.value.code == "cluster_no_workers"


def test_a_cluster_that_cannot_be_reached_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(ClusterError) as unreachable:
        run_jobs(jobs(), cluster="tcp://127.0.0.1:9")
    assert unreachable.value.code == "cluster_unreachable"
    out = tmp_path / "never.json"
    args = ["lab", "--preset", "custom", "--games", "1", "--cluster", "127.0.0.1:8786", "--json", str(out)]
    assert main(args) == 2
    assert "cluster_bad_address" in capsys.readouterr().err
    assert not out.exists()


def test_the_lab_command_runs_on_a_cluster(client: Any, tmp_path: Path) -> None:
    args = ["lab", "--preset", "custom", "--set", "bases_per_side=2", "--set", "soldiers_per_base=3"]
    args += ["--games", "4", "--seed", "3", "--quiet"]
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    assert main([*args, "--workers", "1", "--json", str(local)]) == 0
    assert main([*args, "--cluster", client.scheduler.address, "--json", str(remote)]) == 0
    assert remote.read_bytes() == local.read_bytes()


def test_a_local_pool_survives_a_worker_dying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = as_json(run_jobs(jobs(), workers=1))
    marker = tmp_path / "died-once"

    def die_once(config: LabConfig, index: int) -> PageRecord:
        if index == 3 and not marker.exists():
            marker.touch()
            os._exit(1)  # the pool's worker process dies mid-chunk
        return play_page(config, index)

    monkeypatch.setattr(runner, "play_page", die_once)  # forked pool workers inherit it
    assert as_json(run_jobs(jobs(), workers=2)) == reference
    assert marker.exists()


def test_a_ladder_on_the_cluster_is_the_local_ladder(client: Any) -> None:
    from dotfight.lab.ladder import Ladder, run_ladder

    ladder = Ladder(players=("random", "novice"), preset="custom", overrides=SMALL, games=4, seed=3)
    assert run_ladder(ladder, cluster=client) == run_ladder(ladder, workers=1)
