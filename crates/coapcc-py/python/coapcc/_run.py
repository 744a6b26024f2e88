"""Running a scenario and the shape of its results."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import pandas as pd
import pyarrow as pa

from . import _algorithm, _core
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
        over TCP; ``observe_*`` for observers, ``transfers_*`` for block-wise
        clients, whose per-notification delays and per-transfer times are
        :attr:`notifications` and :attr:`transfers`); a client's exchanges by
        retransmissions are not recorded separately, the testbed counts them
        per group (:attr:`histograms`). On
        the grid, each node (clients and interferers, ``role``)
        with its CoAP and ``mac_*`` counters. On the star, each station with its
        TCP counters (its sampled TCP state is in :attr:`traces`).
        """
        rows = [_flat_client(r) for r in self._rows]
        return pd.json_normalize(rows, sep="_")

    def _numbered(self) -> list[tuple[int, dict[str, Any]]]:
        """Each record with its client index within its algorithm and replication."""
        seen: dict[tuple[str, int], int] = {}
        out = []
        for r in self._rows:
            key = (r["algorithm"], r["replication"])
            out.append((seen.get(key, 0), r))
            seen[key] = seen.get(key, 0) + 1
        return out

    @cached_property
    def notifications(self) -> pd.DataFrame:
        """Dumbbell scenarios of the ``observe`` workload: one row per change
        delivered to an observer, with ``algorithm``, ``replication``,
        ``client`` and ``delay`` (s, from the change at the server to its
        delivery). Each observer's counts (``observe_generated``,
        ``observe_delivered``, ``observe_superseded``, ``observe_lost`` …) are in
        :attr:`clients`. Empty for other workloads.
        """
        columns = ["algorithm", "replication", "client", "delay"]
        rows = [
            (r["algorithm"], r["replication"], i, d)
            for i, r in self._numbered()
            for d in (r.get("observe") or {}).get("delays", [])
        ]
        return pd.DataFrame.from_records(rows, columns=columns)

    @cached_property
    def transfers(self) -> pd.DataFrame:
        """Dumbbell scenarios of the ``blockwise`` workload: one row per completed
        transfer, with ``algorithm``, ``replication``, ``client``, ``size``
        (bytes), ``time`` (s, from the first block's first transmission to the
        last block's response) and ``goodput`` (bit/s). Failed transfers are
        counted in :attr:`clients` (``transfers_failed``). Empty for other
        workloads.
        """
        columns = ["algorithm", "replication", "client", "size", "time", "goodput"]
        rows = []
        for i, r in self._numbered():
            t = r.get("transfers") or {}
            for time in t.get("times", []):
                size = t["size"]
                goodput = size * 8 / time if time > 0 else math.nan
                rows.append((r["algorithm"], r["replication"], i, size, time, goodput))
        return pd.DataFrame.from_records(rows, columns=columns)

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
        """``clients`` (default), ``summary``, ``histograms``, ``traces``,
        ``notifications`` or ``transfers`` as a pyarrow Table."""
        frames = {
            "clients": "clients",
            "summary": "summary",
            "histograms": "histograms",
            "traces": "traces",
            "notifications": "notifications",
            "transfers": "transfers",
        }
        if table not in frames:
            raise ValueError(f"table: expected one of {sorted(frames)}, found {table!r}")
        return pa.Table.from_pandas(getattr(self, frames[table]), preserve_index=False)


def _flat_client(r: dict[str, Any]) -> dict[str, Any]:
    """A record without its per-event lists (a star station's trace, an
    observer's delays, a block-wise client's transfer times), which have
    frames of their own."""
    out = {k: v for k, v in r.items() if k != "trace"}
    for key, lists in (("observe", "delays"), ("transfers", "times")):
        if isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k != lists}
    return out


def _buffer(value: int | float | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, bool) or not float(value).is_integer():
        raise TypeError(f"buffer: expected bytes as an integer or 'inf', found {value!r}")
    return str(int(value))


def run(
    scenario: Scenario = None,
    *,
    clients: int | None = None,
    buffer: int | float | str | None = None,
    errors: str | None = None,
    workload: str | None = None,
    nstart: int | None = None,
    algorithms: str | Sequence[str | type] | None = None,
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
    ``medium``, ``high``), ``workload`` (``continuous``, ``random``,
    ``observe``, ``blockwise``; settings of another kind given in the scenario
    are dropped), ``nstart`` (dumbbell: exchanges a client keeps outstanding,
    1 to 16), ``algorithms`` (names or labels, and classes of your own:
    :class:`coapcc.Algorithm`), ``replications``, ``seed``
    and ``period`` (s: the grid's request period, or the dumbbell's observed
    resource's period between changes). ``threads`` is the number of worker threads (all
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
    check rejects the run, or an integer argument is out of range; and
    :class:`coapcc.AlgorithmError` (a ``CoapccError``) when an algorithm
    fails during the run (a Python algorithm's exception is its cause).
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
        nstart=nstart,
        algorithms=_algorithm.names(algorithms),
        replications=replications,
        seed=seed,
        period=period,
        threads=threads,
        force=force,
    )
    return Result(raw)
