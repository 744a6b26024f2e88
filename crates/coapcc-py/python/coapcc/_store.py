"""Reading a results store (the SQLite file ``coapcc campaign`` writes) as DataFrames."""

from __future__ import annotations

import json
import os
import sqlite3
from functools import cached_property
from typing import Any

import pandas as pd

from . import _core

# Each network's tables: its cells, its runs, the items of its runs.
_NETWORKS = _core.networks()
_CELLS = {name: cells for name, cells, _, _ in _NETWORKS}
_RUNS = {name: runs for name, _, runs, _ in _NETWORKS}
_ITEMS = {name: items for name, _, _, items in _NETWORKS}
_DROP = ["spec", "cell", "histograms", "summaries"]


class Store:
    """A results store, opened read-only; tables of one campaign definition.

    ``definition`` is a campaign name or a prefix of its definition hash; by
    default the definition run last, as ``coapcc report`` chooses.
    """

    path: str
    """The SQLite file."""

    def __init__(self, path: str | os.PathLike[str], definition: str | None = None) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no results store there")
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        self._choice = definition

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        d = self.definition
        return f"<coapcc.Store {self.path}: {d['name']} ({d['network']}) {d['hash'][:12]}>"

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> pd.DataFrame:
        return pd.read_sql_query(sql, self._db, params=params)

    @property
    def tables(self) -> list[str]:
        """Every table of the store (``table(name)`` reads one whole)."""
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [r[0] for r in rows]

    def table(self, name: str) -> pd.DataFrame:
        """One whole table, as stored."""
        if name not in self.tables:
            raise KeyError(f"table {name!r}: expected one of {self.tables}")
        return self._query(f'SELECT * FROM "{name}"')

    @cached_property
    def definitions(self) -> pd.DataFrame:
        """Every campaign definition the store holds, the one run last first."""
        return self._query(
            "SELECT hash, name, title, network, model_version, runs, first_seen, last_run "
            "FROM definitions ORDER BY seq DESC"
        )

    @cached_property
    def definition(self) -> dict[str, Any]:
        """The chosen definition's row."""
        d = self.definitions
        if d.empty:
            raise LookupError(f"{self.path}: the store holds no campaign")
        if self._choice is not None:
            d = d[(d["name"] == self._choice) | d["hash"].str.startswith(self._choice)]
            if d.empty:
                raise LookupError(f"{self.path}: no campaign definition {self._choice!r}")
        return d.iloc[0].to_dict()

    @property
    def network(self) -> str:
        """The network's name (its ``[network] kind``; ``coapcc._core.networks()`` lists them)."""
        return str(self.definition["network"])

    @cached_property
    def cells(self) -> pd.DataFrame:
        """The definition's cells, one row per (cell, replication), with its run ``key``."""
        table = _CELLS[self.network]
        frame = self._query(
            f"SELECT * FROM {table} WHERE definition = ? ORDER BY idx", (self.definition["hash"],)
        )
        keys = [json.loads(c)["keys"] for c in frame["cell"]]
        frame = frame.drop(columns=["definition", "cell"]).rename(columns={"idx": "cell"})
        frame["key"] = keys
        frame = frame.explode("key", ignore_index=True)
        frame["replication"] = frame.groupby("cell").cumcount()
        return frame

    @cached_property
    def runs(self) -> pd.DataFrame:
        """One row per stored run of the definition: its cell's coordinates and run totals."""
        runs = self._query(f"SELECT * FROM {_RUNS[self.network]}")
        runs = runs.drop(columns=[c for c in _DROP if c in runs.columns])
        cells = self.cells.drop(columns=["replication"])
        merged = cells.merge(runs, on="key", how="inner")
        return merged.rename(columns={"id": "run"})

    @cached_property
    def items(self) -> pd.DataFrame:
        """One row per client (dumbbell), node (grid) or station (star) of every stored
        run of the definition, with the run's cell coordinates and replication."""
        table = _ITEMS[self.network]
        items = self._query(f"SELECT * FROM {table}")
        coords = self.runs[list(self.cells.columns) + ["run"]]
        coords = coords.loc[:, ~coords.columns.duplicated()]
        return coords.merge(items, on="run", how="inner")


def open_store(path: str | os.PathLike[str], definition: str | None = None) -> Store:
    """Open a results store written by ``coapcc campaign`` or :meth:`Campaign.run`."""
    return Store(path, definition)
