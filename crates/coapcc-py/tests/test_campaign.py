"""Campaigns from Python: the plan, running into a store, resuming, and the
store read back as DataFrames — the same store the command line writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import coapcc

SMALL = """
name = "py-small"
title = "a small campaign"
seed = 5
algorithms = ["default", "cocoa"]

[workload]
exchanges = 10

[[set]]
name = "error-free"
clients = [3, 5]
buffers = ["inf"]
workloads = ["continuous"]
replications = 2
"""
RUNS = 2 * 2 * 2  # clients × algorithms × replications


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def test_the_plan_lists_every_run(campaign_file: Path) -> None:
    c = coapcc.Campaign(campaign_file)
    assert (c.network, c.name) == ("dumbbell", "py-small")
    plan = c.plan()
    assert len(plan) == RUNS
    assert list(plan.columns[:2]) == ["cell", "set"]
    assert plan["key"].is_unique
    assert set(plan["clients"]) == {3, 5}
    assert set(plan["algorithm"]) == {"default", "cocoa"}
    assert not plan["stored"].any()


def test_a_campaign_runs_resumes_and_reads_back(campaign_file: Path, tmp_path: Path) -> None:
    c = coapcc.Campaign(campaign_file)
    store = tmp_path / "py.sqlite"
    first = c.run(store=store, threads=2)
    assert first == {"total": RUNS, "reused": 0, "computed": RUNS}
    again = c.run(store=store)
    assert again == {"total": RUNS, "reused": RUNS, "computed": 0}
    assert c.plan(store=store)["stored"].all()

    with coapcc.open_store(store) as s:
        assert s.network == "dumbbell"
        assert s.definition["hash"] == c.definition
        assert len(s.runs) == RUNS
        items = s.items
        assert len(items) == 2 * 2 * (3 + 5)
        assert {"clients", "population", "replication", "fct"} <= set(items.columns)
        assert "clients" in s.tables


def test_the_store_is_the_command_lines(
    campaign_file: Path, tmp_path: Path, coapcc_bin: str
) -> None:
    ours = tmp_path / "py.sqlite"
    theirs = tmp_path / "cli.sqlite"
    coapcc.Campaign(campaign_file).run(store=ours)
    subprocess.run(
        [coapcc_bin, "campaign", str(campaign_file), "--store", str(theirs)],
        check=True,
        capture_output=True,
    )
    with coapcc.open_store(ours) as a, coapcc.open_store(theirs) as b:
        key = ["key", "idx"]
        left = a.items.sort_values(key).reset_index(drop=True).drop(columns=["run"])
        right = b.items.sort_values(key).reset_index(drop=True).drop(columns=["run"])
        pd.testing.assert_frame_equal(left, right)
        assert a.definition["hash"] == b.definition["hash"]


def test_campaign_errors_are_the_command_lines(
    campaign_file: Path, tmp_path: Path, coapcc_bin: str
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.replace('buffers = ["inf"]', 'buffers = ["lots"]'))
    with pytest.raises(coapcc.CoapccError) as e:
        coapcc.Campaign(bad)
    done = subprocess.run(
        [coapcc_bin, "campaign", str(bad), "--store", str(tmp_path / "x.sqlite")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert done.stderr == f"error: {e.value}\n"
    with pytest.raises(ValueError, match="executor"):
        coapcc.Campaign(campaign_file).run(store=tmp_path / "y.sqlite", executor="cluster")
