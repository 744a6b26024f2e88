"""The algorithm catalogue, as ``coapcc algorithms`` lists it, and the published figures."""

from __future__ import annotations

import json

import pandas as pd

from . import _core


def algorithms() -> pd.DataFrame:
    """Every algorithm coapcc implements, one row each, in the CLI's order.

    Columns: ``name`` (what scenarios and ``algorithms=[...]`` use),
    ``section`` (of the spec it implements), ``state_bytes`` (per destination
    for CoAP's own timers; the socket a connection holds for CoAP over TCP),
    ``description``, ``approximate`` (some constants are documented guesses)
    and ``transport`` (``udp`` or ``tcp``).
    """
    return pd.DataFrame.from_records(
        _core.algorithms(),
        columns=["name", "section", "state_bytes", "description", "approximate", "transport"],
    )


def default_scenario() -> str:
    """The embedded default scenario as TOML (``coapcc default-scenario``)."""
    return _core.default_scenario()


def published() -> pd.DataFrame:
    """The published flow completion times coapcc is checked against.

    One row per published configuration of the constrained-link testbed (the
    tables of the specification ``docs/spec/calibration-spec.md`` §1, from the CoCoA, Full
    Backoff and CoAP-over-TCP evaluations; what ``coapcc calibrate`` and the
    reports compare with): ``clients``, ``workload``, ``buffer`` (bytes; NaN =
    infinite), ``errors``, ``algorithm``, the published ``replications`` and the
    FCT percentiles ``p10`` … ``p90`` in seconds (NaN where the source gives
    only the median).
    """
    columns = [
        "clients",
        "workload",
        "buffer",
        "errors",
        "algorithm",
        "replications",
        "p10",
        "p25",
        "p50",
        "p75",
        "p90",
    ]
    return pd.DataFrame.from_records(json.loads(_core.published()), columns=columns)
