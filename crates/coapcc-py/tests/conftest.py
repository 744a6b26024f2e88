"""Shared fixtures: the ``coapcc`` command line the Python results are checked against."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
"""The repository's root."""


@pytest.fixture(scope="session")
def coapcc_bin() -> str:
    """The ``coapcc`` binary: ``$COAPCC_BIN``, else one the workspace built, else PATH's."""
    env = os.environ.get("COAPCC_BIN")
    if env:
        return env
    built = [ROOT / "target" / p / "coapcc" for p in ("release", "debug")]
    built = [b for b in built if b.is_file()]
    if built:
        return str(max(built, key=lambda b: b.stat().st_mtime))
    found = shutil.which("coapcc")
    if found:
        return found
    pytest.skip("no coapcc binary: build it (cargo build) or set COAPCC_BIN")


@pytest.fixture(scope="session")
def scenarios() -> Path:
    """The repository's scenarios/ folder."""
    return ROOT / "scenarios"
