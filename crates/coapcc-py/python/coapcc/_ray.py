"""The Ray executor of :meth:`coapcc.Campaign.run`: one Ray task per unit (a cell's
run key and replication), results streamed back and stored by the driver alone.

The three steps are the command line's own (``coapcc::campaign::unit``): the
driver registers the campaign and lists the units its store lacks
(``StoreWriter.prepare``), each task expands the same plan from the campaign
text and computes one unit (``CampaignPlan.compute``, bytes back), and the
driver commits each result in one transaction (``StoreWriter.commit``) as it
arrives. Workers never touch the store.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any

from . import _algorithm, _core

INSTALL_HINT = "pip install 'coapcc[ray]'"
"""How to install the Ray extra."""

UnitTuple = tuple[str, int, int, int]
"""A unit as the native module hands it: ``(key, cell, replication, weight)``."""


def import_ray() -> ModuleType:
    """The ``ray`` module, or an :class:`ImportError` saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as e:
        raise ImportError(
            f"executor='ray' needs Ray, which is not installed: {INSTALL_HINT} "
            "(or pip install 'ray>=2.9')"
        ) from e


@functools.lru_cache(maxsize=4)
def _plan(text: str, origin: str) -> _core.CampaignPlan:
    """The plan a worker expands from the campaign text, kept for its next tasks."""
    return _core.CampaignPlan.parse(text, origin)


def compute_unit(
    campaign: tuple[str, str], unit: UnitTuple, algorithms: tuple[type, ...] = ()
) -> bytes:
    """Ray task body: register the campaign's own algorithms, expand the
    campaign (``(text, origin)``) and run one unit."""
    for cls in algorithms:
        _algorithm.register(cls)
    return _plan(*campaign).compute(unit)


def _picklable(algorithms: tuple[type, ...]) -> None:
    """Refuses a class Ray cannot send to its workers."""
    if not algorithms:
        return
    ray = import_ray()
    dumps = ray.cloudpickle.dumps
    for cls in algorithms:
        try:
            dumps(cls)
        except Exception as e:
            raise _core.CoapccError(
                f"algorithm `{_algorithm.name_of(cls)}`: its class cannot be pickled for Ray's "
                f"workers ({type(e).__name__}: {e}); use executor='local'"
            ) from e


def run(
    path: str,
    store: str,
    *,
    progress: bool,
    max_retries: int,
    max_in_flight: int | None,
    force: bool = False,
    algorithms: tuple[type, ...] = (),
) -> dict[str, int]:
    """Run every unit of the campaign at ``path`` missing from ``store`` on Ray.

    Uses the Ray runtime this process is connected to; if none, calls
    ``ray.init()`` (which joins the cluster ``RAY_ADDRESS`` names, else starts
    a local Ray on this machine) and shuts it down at the end. The plan is
    held to the resource checks of one run per CPU first (unless ``force``).
    """
    ray = import_ray()
    _picklable(algorithms)
    plan = _core.CampaignPlan.load(path, 1, force)
    writer = _core.StoreWriter(store)
    total, units = writer.prepare(plan)
    if not units:
        return {"total": total, "reused": total, "computed": 0}
    started_here = not ray.is_initialized()
    if started_here:
        ray.init()
    bar = _core.Progress(sum(u[3] for u in units), len(units), progress)
    task = ray.remote(compute_unit).options(max_retries=max_retries, num_cpus=1)
    limit = max_in_flight or max(4, 2 * int(ray.cluster_resources().get("CPU", 1)))
    computed = 0
    in_flight: dict[Any, UnitTuple] = {}
    try:
        campaign = ray.put(plan.text())
        own = ray.put(tuple(algorithms))
        queue = iter(units)
        for u in queue:
            in_flight[task.remote(campaign, u, own)] = u
            if len(in_flight) >= limit:
                break
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                unit = in_flight.pop(ref)
                result = ray.get(ref)
                writer.commit(plan, unit, result)
                computed += 1
                bar.stored(unit[3])
                nxt = next(queue, None)
                if nxt is not None:
                    in_flight[task.remote(campaign, nxt, own)] = nxt
    finally:
        for ref in in_flight:
            ray.cancel(ref)
        bar.finish()
        if started_here:
            ray.shutdown()
    return {"total": total, "reused": total - len(units), "computed": computed}
