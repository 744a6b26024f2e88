"""Type stubs of the native module ``coapcc._core`` (Rust, pyo3)."""

from typing import Any

__version__: str
MODEL_VERSION: str

class CoapccError(Exception):
    """A scenario, an override or a run was rejected; the message is the command line's."""

class AlgorithmError(CoapccError):
    """An algorithm failed during a run; a Python algorithm's exception is the cause."""

class Exchange:
    """An exchange's timer data: initial, current, retransmissions; state, aux, aux2 settable."""

    initial: float
    current: float
    retransmissions: int
    state: int
    aux: float
    aux2: float
    def __init__(
        self, timeout: float, *, state: int = 0, aux: float = 0.0, aux2: float = 0.0
    ) -> None: ...

class Ack:
    """The first acknowledgement of an exchange."""

    now: float
    elapsed: float
    echo: tuple[int, float] | None
    piggybacked: bool

class Random:
    """The run's random stream, lent to one call."""

    def uniform(self) -> float: ...
    def uniform_in(self, lo: float, hi: float) -> float: ...

def register_algorithm(
    name: str,
    cls: type,
    summary: str,
    source: str,
    state_bytes: int,
    max_state: int,
    marking: bool,
    spurious: bool,
) -> None:
    """Register a Python algorithm class under ``name`` (again: replaces its class)."""

def load(args: list[str]) -> str:
    """Run ``coapcc load ARGS…`` against a real server; its JSON document."""

def algorithms() -> list[dict[str, Any]]:
    """Every algorithm: name, section, state_bytes, description, approximate, transport."""

def published() -> str:
    """The published FCT rows (docs/spec/calibration-spec.md §1) as a JSON array."""

def networks() -> list[tuple[str, str, str, str]]:
    """Every network with its store tables: (name, cells table, run table, item table)."""

def default_scenario() -> str:
    """The embedded default scenario (TOML)."""

def run(
    kind: str,
    text: str | None = None,
    origin: str | None = None,
    *,
    clients: int | None = None,
    buffer: str | None = None,
    errors: str | None = None,
    workload: str | None = None,
    nstart: int | None = None,
    algorithms: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
    period: float | None = None,
    threads: int | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Run a scenario; ``kind`` is default, path, toml or json.

    Returns network, json, table, markdown, records and histograms (JSON text),
    runs, events.
    """

def campaign_plan(path: str, store: str | None = None, force: bool = False) -> dict[str, Any]:
    """A campaign's network, name, definition and rows (JSON text, one object per run).

    The plan's runs are held to the ceiling of runs before it is expanded,
    unless ``force``.
    """

def campaign_run(
    path: str,
    store: str,
    threads: int | None = None,
    progress: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Run a campaign's missing runs into ``store``; returns total, reused, computed."""

Unit = tuple[str, int, int, int]
"""A campaign unit: ``(key, cell, replication, weight)``."""

class CampaignPlan:
    """A campaign plan held natively, for executors that run its units one by one."""

    @staticmethod
    def load(path: str, threads: int = 1, force: bool = False) -> CampaignPlan:
        """Load and expand a campaign file, held first to the campaign ceilings."""

    @staticmethod
    def parse(text: str, origin: str) -> CampaignPlan:
        """Expand campaign text; ``origin`` is the file it came from."""

    def text(self) -> tuple[str, str]:
        """The file's text and origin, from which a worker expands the same plan."""

    def check(self, threads: int = 1, force: bool = False) -> None:
        """Refuse the plan if its runs would exceed this machine's memory or the events bound."""

    def definition(self) -> str:
        """The definition hash."""

    def compute(self, unit: Unit) -> bytes:
        """Run one unit; its result as bytes for :meth:`StoreWriter.commit`."""

class StoreWriter:
    """A results store open for writing by one driver."""

    def __init__(self, path: str) -> None: ...
    def prepare(self, plan: CampaignPlan) -> tuple[int, list[Unit]]:
        """Register ``plan``; the campaign's run count and the units the store lacks."""

    def commit(self, plan: CampaignPlan, unit: Unit, result: bytes) -> None:
        """Store a unit's result in one transaction."""

class Progress:
    """The command line's campaign progress on stderr."""

    def __init__(self, weight: int, n: int, show: bool) -> None: ...
    def stored(self, weight: int) -> None:
        """A run of ``weight`` was stored."""

    def finish(self) -> None:
        """Clear the bar."""
