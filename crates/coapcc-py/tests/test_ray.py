"""The Ray executor: the same store as the local executor, resuming as the
command line does, and a clear error without Ray."""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import coapcc

SMALL = """
name = "py-ray"
title = "a small campaign for the Ray executor"
seed = 11
algorithms = ["default", "cocoa", "default-fb2"]

[workload]
exchanges = 10

[[set]]
name = "error-free"
clients = [3, 6]
buffers = [2500, "inf"]
workloads = ["continuous", "random"]
replications = 2

[[set]]
name = "mixed"
clients = [4]
buffers = ["inf"]
workloads = ["continuous"]
replications = 2
algorithms = []
mixed = [{ label = "default+default-fb2", of = ["default", "default-fb2"] }]
"""
RUNS = 2 * 2 * 2 * 3 * 2 + 1 * 2  # clients × buffers × workloads × algorithms × reps + mixed

# Columns that record when a definition was run, not what was computed.
_WHEN = {"first_seen", "last_run"}


def _store_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted, with run ids replaced by run keys
    (ids follow the order in which runs finished) and run times left out."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        keys: dict[str, dict[int, str]] = {}
        for t in tables:
            cols = [c[1] for c in db.execute(f'PRAGMA table_info("{t}")')]
            if {"id", "key"} <= set(cols):
                keys[t] = dict(db.execute(f'SELECT id, key FROM "{t}"').fetchall())
        out: dict[str, list[tuple[Any, ...]]] = {}
        for t in tables:
            cols = [c[1] for c in db.execute(f'PRAGMA table_info("{t}")')]
            prefix = t.split("_")[0] + "_" if t.startswith(("grid_", "star_")) else ""
            ids = keys.get(f"{prefix}runs", {})
            rows = []
            for row in db.execute(f'SELECT * FROM "{t}"'):
                kept = []
                for c, v in zip(cols, row):
                    if c in _WHEN:
                        continue
                    if c == "id" and t in keys or c == "run":
                        v = ids[v]
                    kept.append(v)
                rows.append(tuple(kept))
            out[t] = sorted(rows, key=repr)
        return out
    finally:
        db.close()


def _unexpected(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("Ray was used")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def test_ray_stores_what_the_local_executor_stores(
    ray_local: Any, campaign_file: Path, tmp_path: Path
) -> None:
    c = coapcc.Campaign(campaign_file)
    local, remote = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    assert c.run(store=local, threads=2, progress=False) == {
        "total": RUNS,
        "reused": 0,
        "computed": RUNS,
    }
    out = c.run(store=remote, executor="ray", progress=False, max_in_flight=3)
    assert out == {"total": RUNS, "reused": 0, "computed": RUNS}
    assert ray_local.is_initialized(), "a Ray the caller started is left running"
    a, b = _store_rows(local), _store_rows(remote)
    assert list(a) == list(b)
    assert len(a["runs"]) == RUNS
    assert len(a["clients"]) == 2 * (2 * 2 * 3 * (3 + 6) + 4)
    for table in a:
        assert a[table] == b[table], table
    assert c.plan(store=remote)["stored"].all()


def test_ray_runs_an_algorithm_written_in_python(ray_local: Any, tmp_path: Path) -> None:
    # Defined here, so that Ray's cloudpickle sends the class by value (the
    # workers cannot import the test modules).
    class Halved(coapcc.Algorithm):
        """Default CoAP with half its timers."""

        name = "halved"

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
            return rng.uniform_in(1.0, 1.5)

        def expire(self, now: float, exchange: coapcc.Exchange, rng: coapcc.Random) -> float:
            return min(2.0 * exchange.current, 30.0)

    path = tmp_path / "own.toml"
    path.write_text(SMALL.replace('["default", "cocoa", "default-fb2"]', '["halved", "cocoa"]'))
    c = coapcc.Campaign(path, algorithms=[Halved])
    local, remote = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    runs = 2 * 2 * 2 * 2 * 2 + 1 * 2
    assert c.run(store=local, threads=2, progress=False)["computed"] == runs
    assert c.run(store=remote, executor="ray", progress=False)["computed"] == runs
    a, b = _store_rows(local), _store_rows(remote)
    for table in a:
        assert a[table] == b[table], table
    assert "halved" in c.plan()["population"].tolist()


def test_ray_refuses_a_class_it_cannot_pickle(ray_local: Any, tmp_path: Path) -> None:
    class Locked(coapcc.Algorithm):
        name = "locked"
        guard = threading.Lock()

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
            return 2.0

        def expire(self, now: float, exchange: coapcc.Exchange, rng: coapcc.Random) -> float:
            return 4.0

    path = tmp_path / "locked.toml"
    path.write_text(SMALL.replace('["default", "cocoa", "default-fb2"]', '["locked"]'))
    c = coapcc.Campaign(path, algorithms=[Locked])
    store = tmp_path / "locked.sqlite"
    with pytest.raises(coapcc.CoapccError, match="`locked`: its class cannot be pickled"):
        c.run(store=store, executor="ray", progress=False)
    assert not store.exists()


def test_ray_resumes_a_store_as_the_command_line_does(
    ray_local: Any, campaign_file: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # A campaign of the first cells alone: its runs have the same keys.
    part = tmp_path / "part.toml"
    part.write_text(SMALL.replace("clients = [3, 6]", "clients = [3]"))
    store = tmp_path / "resumed.sqlite"
    first = coapcc.Campaign(part).run(store=store, executor="ray", progress=False)
    half = 2 * 2 * 3 * 2 + 2
    assert first == {"total": half, "reused": 0, "computed": half}
    c = coapcc.Campaign(campaign_file)
    capfd.readouterr()
    assert c.run(store=store, executor="ray") == {
        "total": RUNS,
        "reused": half,
        "computed": RUNS - half,
    }
    # The command line's progress lines (stderr is not a terminal here).
    err = capfd.readouterr().err.splitlines()
    assert err[0] == f"progress: 0/{RUNS - half} runs"
    assert err[-1].startswith(f"progress: {RUNS - half}/{RUNS - half} runs, ")
    # Nothing left: Ray is not even consulted.
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ray_local, "is_initialized", _unexpected)
        m.setattr(ray_local, "remote", _unexpected)
        assert c.run(store=store, executor="ray", progress=False) == {
            "total": RUNS,
            "reused": RUNS,
            "computed": 0,
        }
    whole = tmp_path / "whole.sqlite"
    c.run(store=whole, progress=False)
    a, b = _store_rows(store), _store_rows(whole)
    for table in ("runs", "clients"):
        assert a[table] == b[table], table


def test_units_of_another_plan_are_refused(campaign_file: Path, tmp_path: Path) -> None:
    c = coapcc.Campaign(campaign_file)
    store = tmp_path / "s.sqlite"
    writer = coapcc._core.StoreWriter(str(store))
    plan = coapcc._core.CampaignPlan.load(str(campaign_file))
    _, units = writer.prepare(plan)
    key, cell, rep, weight = units[0]
    with pytest.raises(coapcc.CoapccError, match="another definition"):
        plan.compute((key, cell, 1 - rep, weight))
    with pytest.raises(ValueError, match="threads"):
        c.run(store=store, executor="ray", threads=2)
    with pytest.raises(ValueError, match="max_in_flight: expected at least 1, found 0"):
        c.run(store=store, executor="ray", max_in_flight=0)
    with pytest.raises(ValueError, match="max_in_flight: only for executor='ray'"):
        c.run(store=store, max_in_flight=2)


def test_without_ray_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, campaign_file: Path, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'coapcc\[ray\]'"):
        coapcc.Campaign(campaign_file).run(store=tmp_path / "s.sqlite", executor="ray")
    assert not (tmp_path / "s.sqlite").exists(), "nothing written before Ray is found"
