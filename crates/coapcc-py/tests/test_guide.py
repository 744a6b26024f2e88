"""``docs/guides/your-own-algorithm.md``, its Python half ("From Python")
followed from scratch: the files the guide names (in either half, outside
``examples/``) are written to a fresh directory with ``scenarios/`` beside
them, the Python half's ``python`` blocks run there one after the other in
one namespace, its ``sh`` blocks in a shell with ``coapcc`` on the
``PATH``, and a ``text`` block right after one is what it must print."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

GUIDE = ROOT / "docs" / "guides" / "your-own-algorithm.md"


@dataclass
class Block:
    file: str | None
    lang: str
    text: str


def blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text``, each with the file named on the line
    before it (`` `name`: ``)."""
    out: list[Block] = []
    last = ""
    lines = iter(text.splitlines())
    for line in lines:
        if not line.startswith("```"):
            if line.strip():
                last = line
            continue
        file = last[1:-2] if last.startswith("`") and last.endswith("`:") else None
        body = []
        for inner in lines:
            if inner == "```":
                break
            body.append(inner)
        out.append(Block(file, line[3:], "\n".join(body) + "\n"))
        last = ""
    return out


def test_the_python_half_is_followed_from_scratch(
    tmp_path: Path, coapcc_bin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rust, python = GUIDE.read_text().split("\n## From Python", 1)
    for b in blocks(rust) + blocks(python):
        if b.file and not b.file.startswith("examples/"):
            (tmp_path / b.file).write_text(b.text)
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    env = dict(os.environ, PATH=f"{Path(coapcc_bin).parent}{os.pathsep}{os.environ['PATH']}")
    namespace: dict[str, object] = {"__name__": "__guide__"}
    todo = [b for b in blocks(python) if b.file is None]
    ran = {"python": 0, "sh": 0}
    i = 0
    while i < len(todo):
        b = todo[i]
        i += 1
        if b.lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(b.text, f"<guide block {i}>", "exec"), namespace)
            printed = out.getvalue()
        elif b.lang == "sh":
            done = subprocess.run(
                ["sh", "-ec", b.text], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, f"{b.text}\n{done.stdout}\n{done.stderr}"
            printed = done.stdout
        else:
            pytest.fail(f"a {b.lang} block names no file:\n{b.text}")
        ran[b.lang] += 1
        if i < len(todo) and todo[i].lang == "text":
            assert printed == todo[i].text, b.text
            i += 1
    assert ran == {"python": 4, "sh": 2}
    table = namespace["table"]
    assert sorted(table.columns) == ["cocoa", "fasor", "my-rto"]  # type: ignore[attr-defined]
    assert len(table) == 6  # type: ignore[arg-type]
    assert "my_rto" in sys.modules


def test_the_notebook_runs_and_is_stored_without_outputs() -> None:
    import json

    notebook = ROOT / "examples" / "your-own-algorithm.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(notebook, as_version=4)
    where = {"metadata": {"path": str(ROOT)}}
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources=where).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = "\n".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in outputs)
    for name in ("my-rto", "cocoa", "fasor"):
        assert name in shown
