"""Observe, block-wise and NSTART > 1 from Python: the overrides, and the
notifications and transfers frames shaped from the simulator's records."""

from __future__ import annotations

from typing import Any

import pytest

import coapcc


def scenario(workload: dict[str, Any], clients: int = 4) -> dict[str, Any]:
    return {
        "name": "py-workloads",
        "clients": clients,
        "replications": 2,
        "seed": 9,
        "network": {"buffer": "inf", "errors": "none"},
        "workload": workload,
        "algorithm": [{"name": "default"}, {"name": "cocoa"}],
    }


@pytest.fixture(scope="module")
def observed() -> coapcc.Result:
    w = {"kind": "observe", "exchanges": 6, "period": 2.0, "confirm_every": 2}
    return coapcc.run(scenario(w))


@pytest.fixture(scope="module")
def transferred() -> coapcc.Result:
    w = {"kind": "blockwise", "exchanges": 2, "size": 700, "block_size": 64}
    return coapcc.run(scenario(w, clients=3))


def test_notifications_are_one_row_per_delivered_change(observed: coapcc.Result) -> None:
    n = observed.notifications
    assert list(n.columns) == ["algorithm", "replication", "client", "delay"]
    clients = observed.clients
    assert len(n) == clients["observe_delivered"].sum()
    assert (n["delay"] > 0).all()
    # At most one delivery per change and observer; 2 algorithms × 2 replications × 4.
    per = n.groupby(["algorithm", "replication", "client"]).size()
    assert per.max() <= 6
    assert len(clients) == 2 * 2 * 4
    # The lists are their own frames, not columns of the clients.
    assert "observe_delays" not in clients.columns
    for _, c in clients.iterrows():
        assert (
            c["observe_delivered"] + c["observe_superseded"] + c["observe_lost"]
            == c["observe_generated"]
        )
    summary = observed.summary.set_index("label")
    for label, rows in n.groupby("algorithm"):
        assert summary.loc[label, "observe_delay_max"] == pytest.approx(rows["delay"].max())
    assert observed.transfers.empty
    assert "notification delay" in observed.table


def test_transfers_are_one_row_per_completed_transfer(transferred: coapcc.Result) -> None:
    t = transferred.transfers
    assert list(t.columns) == ["algorithm", "replication", "client", "size", "time", "goodput"]
    # 2 algorithms × 2 replications × 3 clients × 2 transfers, none lost.
    assert len(t) == 24
    assert (t["size"] == 700).all()
    assert list(t["goodput"]) == pytest.approx(list(700 * 8 / t["time"]))
    assert transferred.clients["transfers_completed"].sum() == 24
    assert "transfers_times" not in transferred.clients.columns
    assert transferred.notifications.empty
    assert transferred.to_arrow("transfers").num_rows == 24


def test_nstart_and_period_override_the_scenario() -> None:
    r = coapcc.run(clients=3, replications=1, nstart=4, algorithms=["cocoa"])
    assert r.scenario["coap"]["nstart"] == 4
    with pytest.raises(coapcc.CoapccError, match="coap.nstart"):
        coapcc.run(clients=3, replications=1, nstart=17)
    with pytest.raises(coapcc.CoapccError, match="--period"):
        coapcc.run(clients=3, replications=1, period=2.0)
    w = {"kind": "observe", "exchanges": 3}
    r = coapcc.run(scenario(w), period=1.5, replications=1)
    assert r.scenario["workload"]["period"] == 1.5
