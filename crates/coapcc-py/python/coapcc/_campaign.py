"""Campaigns: a whole published evaluation as a plan of runs, run into a store."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import pandas as pd

from . import _algorithm, _core

_FRONT = ["cell", "set", "population", "label", "algorithm", "replication", "key", "stored"]


class Campaign:
    """A campaign file (``scenarios/campaigns/*.toml``), expanded into its runs.

    >>> c = coapcc.Campaign("scenarios/campaigns/anrw2018-fullbackoff.toml")  # doctest: +SKIP
    >>> c.plan().groupby("set").size()                                  # doctest: +SKIP
    >>> c.run(store="results.sqlite")                                   # doctest: +SKIP
    """

    path: str
    """The campaign file."""
    force: bool
    """Whether the campaign ceilings were skipped (``force=True``)."""
    network: str
    """The network the campaign runs on (its ``[network] kind``)."""
    name: str
    """The campaign's name."""
    definition: str
    """The definition hash the store records (changes with any parameter)."""

    algorithms: tuple[type, ...]
    """The classes of your own the file names (registered first)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        algorithms: Sequence[type] = (),
        force: bool = False,
    ) -> None:
        """Read and expand the campaign file at ``path``.

        ``algorithms``: classes of your own (:class:`coapcc.Algorithm`)
        that the file names beside the built-ins; they are registered
        before the file is read. The store keys runs by algorithm name:
        change a class's ``name`` when you change what it computes, or
        use another store.

        Its runs are counted first, without expanding it, and a plan above
        the campaign ceiling of runs (as ``coapcc campaign`` has it) is
        refused with :class:`coapcc.CoapccError` giving the figures, unless
        ``force=True``; :meth:`run` holds it to every ceiling.
        """
        self.path = os.fspath(path)
        self.force = force
        self.algorithms = tuple(algorithms)
        for cls in self.algorithms:
            _algorithm.register(cls)
        info = _core.campaign_plan(self.path, None, force)
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
        info = _core.campaign_plan(self.path, store_path, self.force)
        frame = pd.DataFrame.from_records(json.loads(info["rows"]))
        front = [c for c in _FRONT if c in frame.columns]
        return frame[front + [c for c in frame.columns if c not in front]]

    def run(
        self,
        store: str | os.PathLike[str] = "results.sqlite",
        *,
        executor: str = "local",
        threads: int | None = None,
        progress: bool = True,
        max_retries: int = 3,
        max_in_flight: int | None = None,
        force: bool = False,
    ) -> dict[str, int]:
        """Run every run missing from ``store`` (SQLite, created if missing).

        Exactly what ``coapcc campaign FILE --store STORE`` does: runs already
        in the store are skipped, each finished run is committed at once in one
        transaction (so an interrupted campaign resumes where it stopped), and
        the stored values depend neither on the executor nor on ``threads``.
        ``progress`` shows the command line's progress on stderr (a bar on a
        terminal, else a line every 10 s and one at the end).

        ``executor``:

        - ``"local"``: this machine's cores (``threads`` of them; all by
          default). The GIL is released while it runs.
        - ``"ray"``: one Ray task per run (cell × replication), one CPU each, on
          the Ray cluster this process is connected to (``ray.init(address=...)``
          called beforehand). If Ray is not initialised, ``ray.init()`` is called
          — it joins the cluster ``RAY_ADDRESS`` names, else starts a local Ray on
          this machine — and shut down at the end. Results stream back as tasks
          finish (at most ``max_in_flight`` submitted at once; twice the
          cluster's CPUs by default) and this process alone writes them to the
          store. A task whose worker dies is retried by Ray up to
          ``max_retries`` times; a run that fails raises its error here. Needs
          ``pip install 'coapcc[ray]'`` and this package installed on every node
          (docs/distributed.md). Classes of your own go to the workers
          pickled (by Ray's cloudpickle); one that cannot be is refused before
          anything runs.

        Before anything runs, the campaign is held to the command line's
        resource checks (the ceilings of the whole plan: runs, events, memory
        and store size; ``threads``, the memory of its largest runs, the
        events of one run); ``force=True`` skips all but the ``threads``
        bound, as ``coapcc campaign --force`` does. A refusal raises
        :class:`coapcc.CoapccError`.

        Returns ``{"total": …, "reused": …, "computed": …}`` run counts.
        """
        if executor == "local":
            if max_in_flight is not None:
                raise ValueError("max_in_flight: only for executor='ray'")
            return _core.campaign_run(self.path, os.fspath(store), threads, progress, force)
        if executor == "ray":
            if threads is not None:
                raise ValueError(
                    "threads: only for executor='local' (a Ray task runs one run on one CPU)"
                )
            if max_in_flight is not None and max_in_flight < 1:
                raise ValueError(f"max_in_flight: expected at least 1, found {max_in_flight}")
            if max_retries < 0:
                raise ValueError(f"max_retries: expected 0 or more, found {max_retries}")
            from . import _ray

            return _ray.run(
                self.path,
                os.fspath(store),
                algorithms=self.algorithms,
                progress=progress,
                max_retries=max_retries,
                max_in_flight=max_in_flight,
                force=force,
            )
        raise ValueError(f"executor: expected 'local' or 'ray', found {executor!r}")
