"""The example notebook runs headless from top to bottom (so it cannot rot), and
is stored without outputs (so its diffs stay clean)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

NOTEBOOK = ROOT / "examples" / "reproduce-anrw2018.ipynb"


def test_the_notebook_is_stored_without_outputs() -> None:
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, "the notebook has code"
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_the_notebook_runs_and_sets_measured_beside_published() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("matplotlib")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    where = {"metadata": {"path": str(NOTEBOOK.parent)}}
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources=where)
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 3, "FCT, unnecessary retransmissions, measured vs published"
    tables = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "published p50" in tables and "measured p50" in tables
    assert "cocoa-fb2" in tables
