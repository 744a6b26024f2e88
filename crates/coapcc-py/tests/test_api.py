"""The Python face: the algorithm catalogue, the result tables, scenario forms
and errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import coapcc


def test_algorithms_are_the_command_lines(coapcc_bin: str) -> None:
    table = coapcc.algorithms()
    listed = subprocess.run(
        [coapcc_bin, "algorithms"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[1:]
    # The CLI's columns: name (21 characters), spec section (9), state, description.
    assert list(table["name"]) == [line[:21].strip() for line in listed]
    assert list(table["section"]) == [line[22:31].strip() for line in listed]
    assert list(table["state_bytes"]) == [int(line[32:36]) for line in listed]
    assert list(table.columns) == [
        "name",
        "section",
        "state_bytes",
        "description",
        "approximate",
        "transport",
    ]
    assert (table["state_bytes"] > 0).all()
    assert set(table.loc[table["name"].str.startswith("tcp"), "transport"]) == {"tcp"}


@pytest.fixture(scope="module")
def small() -> coapcc.Result:
    return coapcc.run(clients=8, replications=3, algorithms=["default", "cocoa"], seed=3)


def test_clients_hold_one_row_per_client_per_replication(small: coapcc.Result) -> None:
    clients = small.clients
    assert len(clients) == 2 * 3 * 8
    assert list(clients.columns[:2]) == ["algorithm", "replication"]
    counts = clients.groupby(["algorithm", "replication"]).size()
    assert (counts == 8).all()
    assert set(clients["replication"]) == {0, 1, 2}
    assert {"fct", "unnecessary", "retransmissions", "completed"} <= set(clients.columns)


def test_the_summary_is_computed_from_the_clients(small: coapcc.Result) -> None:
    summary = small.summary.set_index("label")
    assert list(summary.index) == ["default", "cocoa"]
    for label, rows in small.clients.groupby("algorithm"):
        fct = rows["fct"].dropna()
        assert summary.loc[label, "fct_p50"] == pytest.approx(fct.quantile(0.5), rel=1e-12)
        assert summary.loc[label, "fct_p90"] == pytest.approx(fct.quantile(0.9), rel=1e-12)
        assert summary.loc[label, "fct_max"] == fct.max()
        assert summary.loc[label, "unnecessary_max"] == rows["unnecessary"].max()
        assert summary.loc[label, "clients"] == len(rows)


def test_the_summary_is_the_json_documents(small: coapcc.Result) -> None:
    first = small.report["algorithms"][0]
    row = small.summary.iloc[0]
    assert row["fct_p25"] == first["fct"]["p25"]
    assert row["retransmissions_per_exchange"] == first["retransmissions_per_exchange"]
    assert "histogram" not in small.summary.columns
    assert small.scenario["clients"] == 8
    assert small.scenario["seed"] == 3
    assert "default" in small.table and "FCT (s)" in small.table
    assert small.markdown.startswith("8 clients")


def test_histograms_are_per_replication_and_sum_to_the_summarys(small: coapcc.Result) -> None:
    h = small.histograms
    assert list(h.columns) == ["algorithm", "replication", "group", "retransmissions", "exchanges"]
    assert set(h["replication"]) == {0, 1, 2}
    assert set(h["group"]) == {0}
    # Every completed exchange of a replication sits in one bin of its histogram.
    completed = small.clients.groupby(["algorithm", "replication"])["completed"].sum()
    binned = h.groupby(["algorithm", "replication"])["exchanges"].sum()
    pd.testing.assert_series_equal(binned, completed, check_names=False)
    summary = small.summary.set_index("label")
    for label, rows in h.groupby("algorithm"):
        summed = rows.groupby("retransmissions")["exchanges"].sum()
        want = summary.loc[label, "retransmissions_per_exchange"]
        assert list(summed.reindex(range(len(want)), fill_value=0)) == want
    assert small.to_arrow("histograms").num_rows == len(h)


def test_arrow_tables_carry_the_frames(small: coapcc.Result) -> None:
    table = small.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.num_rows == len(small.clients)
    assert table.column("fct").to_pylist() == small.clients["fct"].tolist()
    assert small.to_arrow("summary").num_rows == 2
    with pytest.raises(ValueError, match="table"):
        small.to_arrow("nodes")


def test_seeds_change_results_and_threads_do_not() -> None:
    base = {"clients": 5, "replications": 2, "algorithms": ["cocoa"], "workload": "random"}
    one = coapcc.run(seed=1, threads=1, **base)
    two = coapcc.run(seed=1, threads=2, **base)
    other = coapcc.run(seed=2, threads=1, **base)
    assert one.json == two.json
    assert one.json != other.json


def test_grid_results_have_their_own_metrics(scenarios: Path) -> None:
    text = (scenarios / "pcocoa/periodic.toml").read_text()
    text = text.replace("duration_s = 800.0", "duration_s = 40.0")
    r = coapcc.run(text, replications=1, algorithms=["pcocoa"], period=2)
    assert r.network == "grid"
    assert {"carried_mean", "carried_ci95", "tx_per_transaction_mean"} <= set(r.summary.columns)
    assert len(r.clients) == 36
    assert set(r.clients["role"]) >= {"client"}
    assert any(c.startswith("mac_") for c in r.clients.columns)
    assert r.traces.empty


def test_star_results_have_stations_and_traces(scenarios: Path) -> None:
    text = (scenarios / "lwip/star.toml").read_text().replace("writes = 1000", "writes = 20")
    r = coapcc.run(text, replications=1, algorithms=["tcp-lwip"])
    assert r.network == "star"
    assert len(r.clients) == 12
    assert "trace" not in r.clients.columns
    assert (r.clients["written"] == 20 * 1024).all()
    traces = r.traces
    assert set(traces["station"]) == set(range(1, 13))
    assert (traces["cwnd"] > 0).all()
    assert "goodput_bps_mean" in r.summary.columns


def test_scenario_dicts_are_validated_like_files() -> None:
    scenario = {"clients": 2, "algorithm": [{"name": "default"}], "network": {"bogus": 1}}
    with pytest.raises(coapcc.CoapccError, match=r"(?s)^<dict>: .*unknown field `bogus`"):
        coapcc.run(scenario)
    with pytest.raises(TypeError, match="scenario"):
        coapcc.run(42)  # type: ignore[arg-type]


def cli_stderr(binary: str, *args: str) -> str:
    done = subprocess.run([binary, "run", *args], capture_output=True, text=True)
    assert done.returncode != 0
    return done.stderr


def test_errors_carry_the_command_lines_message(coapcc_bin: str, tmp_path: Path) -> None:
    with pytest.raises(coapcc.CoapccError) as bad_override:
        coapcc.run(errors="sometimes")
    assert cli_stderr(coapcc_bin, "--errors", "sometimes") == f"error: {bad_override.value}\n"

    path = tmp_path / "bad.toml"
    path.write_text('clients = "many"\n[[algorithm]]\nname = "default"\n')
    with pytest.raises(coapcc.CoapccError) as bad_file:
        coapcc.run(str(path))
    message = str(bad_file.value)
    assert cli_stderr(coapcc_bin, str(path)) == f"error: {message}\n"
    assert message.startswith(f"{path}: ") and "clients" in message

    with pytest.raises(coapcc.CoapccError, match="expected at least 1"):
        coapcc.run(clients=0)


def test_buffer_and_algorithms_take_python_values() -> None:
    r = coapcc.run(clients=2, replications=1, buffer=float("inf"), algorithms="default")
    assert r.scenario["network"]["buffer"] in ("inf", None) or "inf" in str(
        r.scenario["network"]["buffer"]
    )
    r = coapcc.run(clients=2, replications=1, buffer=2500, algorithms=("cocoa",))
    assert "2500" in str(r.scenario["network"]["buffer"])
    with pytest.raises(TypeError, match="buffer"):
        coapcc.run(buffer=2.5)


def test_frames_are_pandas(small: coapcc.Result) -> None:
    assert isinstance(small.summary, pd.DataFrame)
    assert isinstance(coapcc.algorithms(), pd.DataFrame)
    assert "coapcc.Result dumbbell: default, cocoa" in repr(small)
