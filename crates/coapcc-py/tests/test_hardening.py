"""The Python face held to the command line's checks: resources, runaway
values, algorithm parameters, integer arguments, and Ctrl-C."""

from __future__ import annotations

import _thread
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import coapcc

GRID_FOREVER: dict[str, Any] = {
    "network": {"kind": "grid"},
    "workload": {"period_s": 1e-7},
    "algorithm": [{"name": "default"}],
}
"""A grid whose clients send every 100 ns: days of computing, little memory."""


def star(**workload: float) -> dict[str, Any]:
    """The Wi-Fi star with ``workload`` fields."""
    return {
        "network": {"kind": "star", "stations": 12},
        "workload": workload,
        "algorithm": [{"name": "tcp-lwip"}],
    }


def test_resources_are_checked_as_the_command_line_does(tmp_path: Path) -> None:
    with pytest.raises(coapcc.CoapccError, match=r"clients: .*available.*force=True") as e:
        coapcc.run(clients=1_000_000_000, replications=1)
    assert "memory" in str(e.value)
    with pytest.raises(coapcc.CoapccError, match="replications: expected 1 to 10000, found 10001"):
        coapcc.run(replications=10_001)
    with pytest.raises(coapcc.CoapccError, match="^threads: expected 1 to"):
        coapcc.run(clients=2, threads=1000)

    campaign = tmp_path / "big.toml"
    campaign.write_text(
        'name = "big"\nalgorithms = ["default"]\n[[set]]\nname = "s"\n'
        "clients = [1000000000]\nreplications = 1\n"
    )
    store = tmp_path / "s.sqlite"
    with pytest.raises(coapcc.CoapccError, match=r"big\.toml: clients: .*force=True"):
        coapcc.Campaign(campaign).run(store, progress=False)
    with pytest.raises(coapcc.CoapccError, match="^threads: expected 1 to"):
        coapcc.Campaign(campaign).run(store, threads=1000, progress=False)
    assert not store.exists()


@pytest.mark.parametrize(
    ("scenario", "field"),
    [
        (star(sample_s=1e-9), "workload.sample_s"),
        (star(writes=100_000_000), "workload.writes"),
        (GRID_FOREVER, "workload.period_s"),
    ],
)
def test_values_that_would_never_finish_are_refused_by_field(
    scenario: dict[str, Any], field: str
) -> None:
    with pytest.raises(coapcc.CoapccError, match=rf"^<dict>: {field}: .*force=True"):
        coapcc.run(scenario)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"ack_timeout": 1e30, "cap": 1e30}, "cap"),
        ({"ack_timeout": 1e8}, "ack_timeout"),
        ({"ack_random_factor": 1e30}, "ack_random_factor"),
    ],
)
def test_algorithm_parameters_are_bounded(params: dict[str, float], field: str) -> None:
    scenario = {"clients": 2, "algorithm": [{"name": "default", **params}]}
    with pytest.raises(coapcc.CoapccError, match=rf"^<dict>: .*parameter `{field}`: .*(1e7|1000)"):
        coapcc.run(scenario)


@pytest.mark.parametrize("name", ["clients", "replications", "seed", "threads"])
@pytest.mark.parametrize("value", [-1, 2**70])
def test_integers_out_of_range_name_the_argument(name: str, value: int) -> None:
    with pytest.raises(coapcc.CoapccError, match=rf"^{name}: expected an integer from 0 to"):
        coapcc.run(**{name: value})


def test_campaign_threads_out_of_range_name_the_argument(scenarios: Path, tmp_path: Path) -> None:
    campaign = coapcc.Campaign(scenarios / "campaigns" / "anrw2018-fullbackoff.toml")
    store = tmp_path / "s.sqlite"
    with pytest.raises(coapcc.CoapccError, match="^threads: expected an integer from 0 to"):
        campaign.run(store, threads=-1, progress=False)
    assert not store.exists()


def threads_now() -> int:
    """Threads of this process."""
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc (Linux)")
def test_an_interrupted_run_stops_computing() -> None:
    before = threads_now()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    # force=True passes the estimate (days of events): only Ctrl-C ends it.
    with pytest.raises(KeyboardInterrupt):
        coapcc.run(GRID_FOREVER, threads=1, force=True)
    timer.join()
    # The simulation's threads end once the run stops; without cancelling,
    # they would compute for days. The limit only bounds a failing test.
    deadline = time.monotonic() + 60
    while threads_now() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threads_now() <= before


def audit_campaign(path: Path) -> Path:
    """1000 client counts x 1000 buffers x 2 algorithms: 2 000 000 runs in 12 KB."""
    clients = ", ".join(str(c) for c in range(1, 1001))
    buffers = ", ".join(str(1000 + 7 * b) for b in range(1000))
    path.write_text(
        'name = "audit"\nalgorithms = ["default", "cocoa"]\n[[set]]\nname = "s"\n'
        f"clients = [{clients}]\nbuffers = [{buffers}]\nreplications = 1\n"
    )
    return path


def test_a_campaign_above_the_ceilings_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    campaign = audit_campaign(tmp_path / "audit.toml")
    store = tmp_path / "s.sqlite"
    # Expanding the 2 000 000 cells took gigabytes; the ceilings are checked
    # from the sets' sizes first, in the constructor, in run() and on Ray's path.
    with pytest.raises(coapcc.CoapccError, match=r"(?s)audit\.toml: .*2000000 runs.*force=True"):
        coapcc.Campaign(campaign)
    with pytest.raises(coapcc.CoapccError, match=r"(?s)2000000 runs.*force=True"):
        coapcc._core.campaign_run(os.fspath(campaign), os.fspath(store), None, False, False)
    with pytest.raises(coapcc.CoapccError, match=r"(?s)2000000 runs.*force=True"):
        coapcc._core.CampaignPlan.load(os.fspath(campaign), 1, False)
    assert not store.exists()
