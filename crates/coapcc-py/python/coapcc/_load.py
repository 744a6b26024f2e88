"""Real clients on real sockets: ``coapcc load`` from Python."""

from __future__ import annotations

import json
from typing import Any

from . import _algorithm, _core


def load(
    uri: str,
    *,
    algorithm: str | type = "default",
    clients: int = 10,
    exchanges: int = 50,
    workload: str = "continuous",
    nstart: int = 1,
    max_retransmit: int = 20,
    seed: int = 1,
    time_limit: float = 600.0,
) -> dict[str, Any]:
    """Run ``clients`` real CoAP clients against the server at ``uri``, as
    ``coapcc load`` does, each timing its retransmissions with ``algorithm``
    (a name, or a class of your own: :class:`coapcc.Algorithm`).

    ``uri`` is ``coap://host[:port]/path`` (UDP) or ``coap+tcp://…`` (TCP,
    built-in names only). Each client sends ``exchanges`` confirmable GETs
    (``workload`` ``continuous`` or ``random``), up to ``nstart`` at once;
    clients stop after ``time_limit`` seconds of wall time.

    Returns the document ``coapcc load --format json`` prints, as Python
    objects: ``fct_s`` (per client, ``None`` if unfinished),
    ``failed_exchanges``, ``responses`` by code, ``duration`` and
    ``algorithms`` (the summary: FCT percentiles, retransmissions …).
    The GIL is released while the clients run. Bad arguments raise
    :class:`coapcc.CoapccError`; an algorithm's failure
    :class:`coapcc.AlgorithmError`.
    """
    name = _algorithm.names([algorithm])
    args = [
        uri,
        "--cc",
        str(name),
        "--clients",
        str(clients),
        "--exchanges",
        str(exchanges),
        "--workload",
        workload,
        "--nstart",
        str(nstart),
        "--max-retransmit",
        str(max_retransmit),
        "--seed",
        str(seed),
        "--time-limit",
        str(time_limit),
    ]
    return json.loads(_core.load(args))
