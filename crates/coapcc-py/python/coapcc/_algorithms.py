"""The algorithm catalogue, as ``coapcc algorithms`` lists it."""

from __future__ import annotations

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
