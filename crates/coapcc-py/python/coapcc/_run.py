"""Running a scenario and the shape of its results."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import pandas as pd
import pyarrow as pa

from . import _core
from ._scenario import Scenario, source


class Result:
    """The results of one :func:`run`: the CLI's outputs and their tables.

    ``json``, ``table`` and ``markdown`` are the texts ``coapcc run`` prints
    with ``--format json``, ``table`` (without its wall-time line) and
    ``markdown``; the DataFrames are built from the same numbers.
    """

    network: str
    """The network the scenario ran on (its ``[network] kind``)."""
    json: str
    """What ``coapcc run --format json`` prints for this scenario (no final newline)."""
    table: str
    """What ``coapcc run`` prints as its table."""
    markdown: str
    """What ``coapcc run --format markdown`` prints."""
    runs: int
    """Runs done: algorithms × replications."""
    events: int
    """Events the simulator processed over all runs."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.network = raw["network"]
        self.json = raw["json"]
        self.table = raw["table"]
        self.markdown = raw["markdown"]
        self.runs = raw["runs"]
        self.events = raw["events"]
        self._records: str = raw["records"]
        self._histograms: str = raw["histograms"]

    def __repr__(self) -> str:
        labels = ", ".join(self.summary["label"])
        return f"<coapcc.Result {self.network}: {labels}; {self.runs} runs>"

    @cached_property
    def report(self) -> dict[str, Any]:
        """The JSON document as Python objects: ``scenario`` (as run) and ``algorithms``."""
        return json.loads(self.json)

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario as run, after the overrides, with every default filled in."""
        return self.report["scenario"]

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per algorithm: the CLI's table (nested fields joined by ``_``).

        On the dumbbell: ``fct_p50``, ``unnecessary_p90``,
        ``retransmissions_per_exchange`` (exchanges by number of retransmissions,
        index 0 = the original only; called ``histogram`` in earlier versions),
        ``drops_buffer_up``, ``utilisation_up`` …; on the grid
        and the star, each estimate as ``<metric>_mean`` and ``<metric>_ci95``.
        """
        return pd.json_normalize(self.report["algorithms"], sep="_")

    @cached_property
    def _rows(self) -> list[dict[str, Any]]:
        return json.loads(self._records)

    @cached_property
    def clients(self) -> pd.DataFrame:
        """One row per client per replication, with ``algorithm`` and ``replication``.

        On the dumbbell, each CoAP client: ``fct`` (NaN if unfinished),
        ``completed``, ``failed``, ``unnecessary``, ``retransmissions``,
        ``expirations``, ``max_expired_timer``, ``rtt_sum`` … (``tcp_*`` for CoAP
        over TCP); a client's exchanges by retransmissions are not recorded
        separately, the testbed counts them per group (:attr:`histograms`). On
        the grid, each node (clients and interferers, ``role``)
        with its CoAP and ``mac_*`` counters. On the star, each station with its
        TCP counters (its sampled TCP state is in :attr:`traces`).
        """
        rows = [{k: v for k, v in r.items() if k != "trace"} for r in self._rows]
        return pd.json_normalize(rows, sep="_")

    @cached_property
    def histograms(self) -> pd.DataFrame:
        """Dumbbell scenarios: the retransmissions histogram of every replication.

        One row per ``algorithm``, ``replication``, ``group`` (of a mixed
        population; 0 otherwise) and ``retransmissions`` (0 = the original
        transmission only), with the ``exchanges`` that completed after that
        many. Summed over replications it is :attr:`summary`'s
        ``retransmissions_per_exchange``.
        Empty on the grid and the star.
        """
        columns = ["algorithm", "replication", "group", "retransmissions", "exchanges"]
        return pd.DataFrame.from_records(json.loads(self._histograms), columns=columns)

    @cached_property
    def traces(self) -> pd.DataFrame:
        """Star scenarios: every station's sampled TCP state (``t``, ``cwnd``,
        ``ssthresh``, ``rto``, ``srtt``) per replication; empty elsewhere."""
        columns = ["algorithm", "replication", "station", "t", "cwnd", "ssthresh", "rto", "srtt"]
        samples = [
            {
                "algorithm": r["algorithm"],
                "replication": r["replication"],
                "station": r["station"],
                **s,
            }
            for r in self._rows
            for s in r.get("trace", [])
        ]
        return pd.DataFrame.from_records(samples, columns=columns)

    def to_arrow(self, table: str = "clients") -> pa.Table:
        """``clients`` (default), ``summary``, ``histograms`` or ``traces`` as a pyarrow Table."""
        frames = {
            "clients": "clients",
            "summary": "summary",
            "histograms": "histograms",
            "traces": "traces",
        }
        if table not in frames:
            raise ValueError(f"table: expected one of {sorted(frames)}, found {table!r}")
        return pa.Table.from_pandas(getattr(self, frames[table]), preserve_index=False)


def _buffer(value: int | float | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, bool) or not float(value).is_integer():
        raise TypeError(f"buffer: expected bytes as an integer or 'inf', found {value!r}")
    return str(int(value))


def _algorithms(value: str | Sequence[str] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return ",".join(value)


def run(
    scenario: Scenario = None,
    *,
    clients: int | None = None,
    buffer: int | float | str | None = None,
    errors: str | None = None,
    workload: str | None = None,
    algorithms: str | Sequence[str] | None = None,
    replications: int | None = None,
    seed: int | None = None,
    period: float | None = None,
    threads: int | None = None,
    force: bool = False,
) -> Result:
    """Run a scenario in the simulated testbed, as ``coapcc run`` does.

    ``scenario`` is a path to a scenario file, TOML text, a dict with the
    structure of a scenario file, or ``None`` for the embedded default (100
    continuous clients on the constrained link, Default CoAP vs CoCoA, 3
    replications). The keyword arguments are the command line's overrides:
    ``clients``, ``buffer`` (bytes or ``"inf"``), ``errors`` (``none``, ``low``,
    ``medium``, ``high``), ``workload`` (``continuous``, ``random``),
    ``algorithms`` (names or labels), ``replications``, ``seed`` and, for grid
    scenarios, ``period`` (s). ``threads`` is the number of worker threads (all
    cores by default, at most four per core); results do not depend on it.

    Before anything runs, the scenario is held to the command line's
    resource checks: at most 10 000 replications, the estimated memory of
    its runs within what this machine has available, and the estimated
    events of one run within 10¹⁰. ``force=True`` skips the last two, as
    ``coapcc run --force`` does.

    The GIL is released while the simulation runs. Ctrl-C raises
    ``KeyboardInterrupt`` at once and stops the simulation: runs under way
    stop within a few milliseconds and their memory is freed.

    Raises :class:`coapcc.CoapccError` with the command line's message (file,
    field, what was expected) when the scenario, an override or a resource
    check rejects the run, or an integer argument is out of range.
    """
    kind, text, origin = source(scenario)
    raw = _core.run(
        kind,
        text,
        origin,
        clients=clients,
        buffer=_buffer(buffer),
        errors=errors,
        workload=workload,
        algorithms=_algorithms(algorithms),
        replications=replications,
        seed=seed,
        period=period,
        threads=threads,
        force=force,
    )
    return Result(raw)
