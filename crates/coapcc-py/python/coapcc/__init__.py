"""coapcc: congestion control for CoAP, from Python.

The algorithms, the deterministic testbed and the metrics are coapcc's Rust
core (the same code as the ``coapcc`` command line); this package runs it and
hands the results over as pandas DataFrames and Arrow tables.

>>> import coapcc
>>> coapcc.algorithms().head()                        # doctest: +SKIP
>>> r = coapcc.run(clients=10, algorithms=["default", "cocoa"])  # doctest: +SKIP
>>> r.summary[["label", "fct_p50", "unnecessary_p50"]]  # doctest: +SKIP

An algorithm of your own is a subclass of :class:`coapcc.Algorithm`, passed
where a name goes: ``coapcc.run(algorithms=[MyRto, "cocoa"])``.
"""

from ._algorithm import Ack, Algorithm, Exchange, Random
from ._algorithms import algorithms, default_scenario, published
from ._campaign import Campaign
from ._core import MODEL_VERSION, AlgorithmError, CoapccError, __version__
from ._load import load
from ._run import Result, run
from ._store import Store, open_store

__all__ = [
    "MODEL_VERSION",
    "Ack",
    "Algorithm",
    "AlgorithmError",
    "Campaign",
    "CoapccError",
    "Exchange",
    "Random",
    "Result",
    "Store",
    "__version__",
    "algorithms",
    "default_scenario",
    "load",
    "open_store",
    "published",
    "run",
]
