"""Algorithms written in Python run beside the built-ins: in ``run`` (bit for
bit the built-ins' results when they compute the same thing), in a campaign
and its report, and in real clients; and bad ones stop the run with an
error naming the method, the value and the time."""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from own_algorithms import PyCocoa, PyCocoaNoAging, PyDefault

import coapcc


def rows_without_names(r: coapcc.Result) -> list[dict[str, Any]]:
    """Each algorithm's summary with its name and label taken out."""
    out = []
    for row in r.report["algorithms"]:
        out.append({k: v for k, v in row.items() if k not in ("label", "algorithm", "name")})
    return out


def clients_of(r: coapcc.Result, name: str) -> list[dict[str, Any]]:
    frame = r.clients[r.clients["algorithm"] == name].drop(columns=["algorithm"])
    return json.loads(frame.to_json(orient="records"))


@pytest.mark.parametrize("ours,builtin", [(PyDefault, "default"), (PyCocoaNoAging, "cocoa")])
def test_python_re_implementations_give_the_built_ins_results_bit_for_bit(
    ours: type, builtin: str
) -> None:
    # The embedded default scenario (100 continuous clients, 3
    # replications), and with high link errors (retransmissions, weak
    # samples, backoff, aging).
    for errors in (None, "high"):
        r = coapcc.run(algorithms=[ours, builtin], errors=errors, threads=2)
        mine, theirs = rows_without_names(r)
        assert mine == theirs
        assert clients_of(r, ours.name) == clients_of(r, builtin)
        assert r.summary["fct_p50"].notna().all()
        if errors:
            assert r.clients["retransmissions"].sum() > 1000


class PyDefault3(PyDefault):
    """Default CoAP with ACK_TIMEOUT = 3 s, as the grid scenario has it."""

    name = "py-default-3"
    ack_timeout = 3.0


@pytest.mark.parametrize("ours,builtin", [(PyDefault3, "default"), (PyCocoa, "cocoa")])
def test_and_on_the_grid(ours: type, builtin: str, scenarios: Path) -> None:
    text = (scenarios / "pcocoa" / "periodic.toml").read_text()
    text = re.sub(r"(?m)^warmup_s = .*$", "warmup_s = 10.0", text, count=1)
    text = re.sub(r"(?m)^duration_s = .*$", "duration_s = 60.0", text, count=1)
    r = coapcc.run(text, algorithms=[ours, builtin], replications=2, period=4)
    mine, theirs = rows_without_names(r)
    assert mine == theirs
    assert r.network == "grid"


def test_results_do_not_depend_on_the_thread_count() -> None:
    one = coapcc.run(clients=20, algorithms=[PyCocoa], replications=4, threads=1)
    two = coapcc.run(clients=20, algorithms=[PyCocoa], replications=4, threads=2)
    assert one.json == two.json


def test_a_python_algorithm_is_listed_with_its_summary_and_state() -> None:
    coapcc._algorithm.register(PyCocoa)
    table = coapcc.algorithms().set_index("name")
    row = table.loc["py-cocoa"]
    assert row["description"].startswith("CoCoA (draft-ietf-core-cocoa-03)")
    assert row["state_bytes"] > 100
    assert row["transport"] == "udp"


class Slower(PyCocoa):
    """CoCoA whose first timer is twice as long (a class of one's own
    derived from another)."""

    name = "slower"

    def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
        return 2.0 * super().start(now, outstanding, rng)


def test_a_class_registered_again_replaces_the_old_one_for_later_runs() -> None:
    class Again(PyDefault):
        name = "again"

    first = coapcc.run(clients=5, algorithms=[Again], replications=1)

    class Again(PyDefault):  # noqa: F811 (a notebook cell run again, changed)
        name = "again"

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
            return 0.05  # below the RTT: every exchange is retransmitted

    second = coapcc.run(clients=5, algorithms=[Again], replications=1)
    assert first.clients["expirations"].sum() == 0
    assert second.clients["expirations"].sum() > 0


# ----- bad algorithms ---------------------------------------------------------


class Raises(PyDefault):
    name = "raises"

    def on_ack(self, exchange: coapcc.Exchange, ack: coapcc.Ack) -> None:
        if ack.now > 5.0:
            raise ValueError(f"no sample wanted at {ack.now}")


def test_an_exception_stops_the_run_with_the_traceback_and_the_time() -> None:
    with pytest.raises(coapcc.AlgorithmError) as info:
        coapcc.run(clients=5, algorithms=[Raises], replications=1)
    e = info.value
    text = str(e)
    assert "algorithm `raises`: `on_ack` at t = " in text
    assert "raised ValueError: no sample wanted at" in text
    t = float(re.search(r"at t = ([0-9.]+) s of the run", text).group(1))
    assert t > 5.0
    assert isinstance(e.__cause__, ValueError)
    frames = [f.co_name for f in _frames(e.__cause__.__traceback__)]
    assert "on_ack" in frames


def _frames(tb: Any) -> list[Any]:
    out = []
    while tb is not None:
        out.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    return out


def returning(value: Any, method: str) -> type:
    class Bad(PyDefault):
        name = f"returns-{method}"

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> Any:
            return value if method == "start" else 0.01

        def expire(self, now: float, exchange: coapcc.Exchange, rng: coapcc.Random) -> Any:
            return value

    return Bad


@pytest.mark.parametrize(
    "value,shown",
    [(-1.0, "-1.0"), (math.nan, "NaN"), (1e30, "1e30"), (0, "0.0")],
)
@pytest.mark.parametrize("method", ["start", "expire"])
def test_a_bad_timeout_names_the_method_and_the_value(value: Any, shown: str, method: str) -> None:
    with pytest.raises(coapcc.AlgorithmError) as info:
        coapcc.run(clients=2, algorithms=[returning(value, method)], replications=1)
    text = str(info.value)
    assert f"algorithm `returns-{method}`: `{method}` at t = " in text
    assert f"armed a timer of {shown} s; a timer must be a number of seconds" in text


@pytest.mark.parametrize("method", ["start", "expire"])
def test_a_timeout_that_is_not_a_number_is_refused(method: str) -> None:
    with pytest.raises(
        coapcc.AlgorithmError, match=rf"`{method}` at t = .*returned None \(NoneType\)"
    ):
        coapcc.run(clients=2, algorithms=[returning(None, method)], replications=1)


def test_a_class_lacking_a_method_is_refused_before_the_run() -> None:
    class NoExpire(coapcc.Algorithm):
        name = "no-expire"

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
            return 2.0

    with pytest.raises(coapcc.CoapccError, match=r"`no-expire` .*lacks the method\(s\) `expire`"):
        coapcc.run(clients=2, algorithms=[NoExpire])


def test_a_huge_state_is_refused_and_a_growing_one_stopped() -> None:
    class Huge(PyDefault):
        name = "huge"

        def __init__(self) -> None:
            self.table = bytearray(1 << 30)  # 1 GiB, never touched

    with pytest.raises(coapcc.CoapccError, match=r"`huge`: a fresh instance's state is 10737"):
        coapcc.run(clients=2, algorithms=[Huge])

    class Growing(PyDefault):
        name = "growing"
        max_state_bytes = 64 * 1024

        def __init__(self) -> None:
            self.history: list[bytes] = []

        def on_ack(self, exchange: coapcc.Exchange, ack: coapcc.Ack) -> None:
            self.history.append(bytes(4096))

    with pytest.raises(coapcc.AlgorithmError, match=r"`growing`: .*state grew to \d+ bytes, above"):
        coapcc.run(clients=2, algorithms=[Growing], replications=1)


def test_names_are_checked() -> None:
    class Taken(PyDefault):
        name = "cocoa"

    with pytest.raises(coapcc.CoapccError, match="`cocoa`: the name is taken by a built-in"):
        coapcc.run(algorithms=[Taken])

    class Tcp(PyDefault):
        name = "tcp"

    with pytest.raises(coapcc.CoapccError, match="selects CoAP over TCP"):
        coapcc.run(algorithms=[Tcp])

    class Spaced(PyDefault):
        name = "with space"

    with pytest.raises(coapcc.CoapccError, match="with space"):
        coapcc.run(algorithms=[Spaced])


def test_the_random_stream_cannot_be_kept_past_its_call() -> None:
    kept: list[coapcc.Random] = []

    class Keeps(PyDefault):
        name = "keeps"

        def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
            if kept:
                kept[0].uniform()
            kept.append(rng)
            return super().start(now, outstanding, rng)

    with pytest.raises(coapcc.AlgorithmError) as info:
        coapcc.run(clients=1, algorithms=[Keeps], replications=1)
    assert "that call has returned" in str(info.value.__cause__)


# ----- campaigns and reports --------------------------------------------------

CAMPAIGN = """
name = "own"
title = "Python algorithms beside the built-ins"
seed = 1
algorithms = ["py-cocoa-no-aging", "slower", "cocoa"]
[workload]
exchanges = 10
[[set]]
name = "s"
clients = [5, 10]
buffers = ["inf"]
errors = ["high"]
replications = 2
"""


def stored_runs(store: Path) -> list[tuple[str, int]]:
    """Runs stored per algorithm (a dumbbell cell's ``population``)."""
    with coapcc.open_store(store) as s:
        runs = s.runs
        return sorted((str(a), int(n)) for a, n in runs.groupby("population").size().items())


def test_a_campaign_and_its_report(tmp_path: Path, coapcc_bin: str) -> None:
    file = tmp_path / "own.toml"
    file.write_text(CAMPAIGN)
    store = tmp_path / "own.sqlite"
    c = coapcc.Campaign(file, algorithms=[PyCocoaNoAging, Slower])
    assert set(c.plan()["population"]) == {"py-cocoa-no-aging", "slower", "cocoa"}
    assert c.run(store, threads=2, progress=False) == {"total": 12, "reused": 0, "computed": 12}
    assert stored_runs(store) == [("cocoa", 4), ("py-cocoa-no-aging", 4), ("slower", 4)]
    # The report needs only the store: the command line makes it.
    out = tmp_path / "report"
    subprocess.run([coapcc_bin, "report", str(store), "--out", str(out)], check=True)
    html = (out / "report.html").read_text()
    assert "py-cocoa-no-aging" in html and "slower" in html
    assert "py-cocoa-no-aging" in (out / "summary.csv").read_text()
    with coapcc.open_store(store) as s:
        items = s.items
    fct = {
        a: list(g.sort_values(["clients", "replication", "idx"])["fct"])
        for a, g in items.groupby("population")
    }
    # A campaign's bare `cocoa` is the published setting, without aging.
    assert fct["py-cocoa-no-aging"] == fct["cocoa"]
    assert fct["slower"] != fct["cocoa"]


def test_a_failing_algorithm_stops_a_campaign_without_storing_its_runs(tmp_path: Path) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(CAMPAIGN.replace('"py-cocoa-no-aging", "slower", "cocoa"', '"raises"'))
    store = tmp_path / "bad.sqlite"
    c = coapcc.Campaign(file, algorithms=[Raises])
    with pytest.raises(coapcc.AlgorithmError, match=r"replication .*`raises`: `on_ack`"):
        c.run(store, threads=2, progress=False)
    assert stored_runs(store) == []


# ----- real sockets -----------------------------------------------------------


def test_a_python_algorithm_drives_real_clients(coapcc_bin: str) -> None:
    server = subprocess.Popen(
        [coapcc_bin, "server", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        addr = _listening(server)
        r = coapcc.load(f"coap://{addr}/sense", algorithm=PyCocoa, clients=4, exchanges=20)
        assert r["algorithm"]["name"] == "py-cocoa"
        assert len(r["fct_s"]) == 4 and all(f is not None and f > 0 for f in r["fct_s"])
        assert r["failed_exchanges"] == 0
        assert r["responses"] == {"2.05": 80}
        with pytest.raises(coapcc.AlgorithmError, match="`raises-at-once`: `on_ack` at t = "):
            # Loopback answers in microseconds: fail on the first sample.
            class RaisesAtOnce(Raises):
                name = "raises-at-once"

                def on_ack(self, exchange: coapcc.Exchange, ack: coapcc.Ack) -> None:
                    raise ValueError("at once")

            coapcc.load(f"coap://{addr}/sense", algorithm=RaisesAtOnce, clients=1, exchanges=2)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _listening(server: subprocess.Popen[str]) -> str:
    """The address the server prints it listens on (within 10 s)."""
    found: list[str] = []

    def read() -> None:
        assert server.stderr is not None
        for line in server.stderr:
            m = re.search(r"(127\.0\.0\.1:\d+)", line)
            if m:
                found.append(m.group(1))
                return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(timeout=10)
    deadline = time.monotonic() + 1
    while not found and time.monotonic() < deadline:
        time.sleep(0.01)
    assert found, "the server printed its address"
    return found[0]


def test_the_guide_example_file_exists() -> None:
    assert (ROOT / "docs" / "guides" / "your-own-algorithm.md").is_file()
