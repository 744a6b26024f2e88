"""Type stubs of the native module ``coapcc._core`` (Rust, pyo3)."""

from typing import Any

__version__: str
MODEL_VERSION: str

class CoapccError(Exception):
    """A scenario, an override or a run was rejected; the message is the command line's."""

def algorithms() -> list[dict[str, Any]]:
    """Every algorithm: name, section, state_bytes, description, approximate, transport."""

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
    algorithms: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
    period: float | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Run a scenario; ``kind`` is default, path, toml or json.

    Returns network, json, table, markdown, records (JSON text), runs, events.
    """

def campaign_plan(path: str, store: str | None = None) -> dict[str, Any]:
    """A campaign's network, name, definition and rows (JSON text, one object per run)."""

def campaign_run(
    path: str, store: str, threads: int | None = None, progress: bool = False
) -> dict[str, Any]:
    """Run a campaign's missing runs into ``store``; returns total, reused, computed."""
