"""Campaigns: a whole published evaluation as a plan of runs, run into a store."""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from . import _core

_FRONT = ["cell", "set", "population", "label", "algorithm", "replication", "key", "stored"]


class Campaign:
    """A campaign file (``scenarios/campaigns/*.toml``), expanded into its runs.

    >>> c = coapcc.Campaign("scenarios/campaigns/anrw2018-fullbackoff.toml")  # doctest: +SKIP
    >>> c.plan().groupby("set").size()                                  # doctest: +SKIP
    >>> c.run(store="results.sqlite")                                   # doctest: +SKIP
    """

    path: str
    """The campaign file."""
    network: str
    """``dumbbell``, ``grid`` or ``star``."""
    name: str
    """The campaign's name."""
    definition: str
    """The definition hash the store records (changes with any parameter)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        info = _core.campaign_plan(self.path)
        self.network = info["network"]
        self.name = info["name"]
        self.definition = info["definition"]

    def __repr__(self) -> str:
        return f"<coapcc.Campaign {self.name!r} ({self.network}) {self.definition[:12]}>"

    def plan(self, store: str | os.PathLike[str] | None = None) -> pd.DataFrame:
        """One row per run (cell × replication), in the order the runner takes them.

        Columns: ``cell`` (index), the cell's coordinates (``set``, and per
        network ``clients``/``buffer``/``workload``/``errors``/``population``,
        ``kind``/``point``/``label``, or ``stations``/``label``), ``algorithm``,
        ``replication``, ``key`` (the run key the store uses) and ``stored``:
        whether ``store`` (if given and present) already holds the run.
        """
        store_path = None if store is None else os.fspath(store)
        info = _core.campaign_plan(self.path, store_path)
        frame = pd.DataFrame.from_records(json.loads(info["rows"]))
        front = [c for c in _FRONT if c in frame.columns]
        return frame[front + [c for c in frame.columns if c not in front]]

    def run(
        self,
        store: str | os.PathLike[str] = "results.sqlite",
        *,
        executor: str = "local",
        threads: int | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Run every run missing from ``store`` (SQLite, created if missing).

        Exactly what ``coapcc campaign FILE --store STORE`` does: each finished
        run is committed at once, so an interrupted campaign resumes where it
        stopped, and results do not depend on ``threads``. ``progress`` draws a
        progress bar on stderr. Only ``executor="local"`` (this machine's cores)
        exists so far. The GIL is released while it runs.

        Returns ``{"total": …, "reused": …, "computed": …}`` run counts.
        """
        if executor != "local":
            raise ValueError(f"executor: expected 'local', found {executor!r}")
        return _core.campaign_run(self.path, os.fspath(store), threads, progress)
