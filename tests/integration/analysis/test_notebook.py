"""analysis/notebooks/qualification.ipynb runs top to bottom (nbclient, a real kernel) on a synthetic run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.analysis.conftest import ROOT

NOTEBOOK = ROOT / "analysis" / "notebooks" / "qualification.ipynb"


def test_notebook_executes(small_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("SPECQUAL_RUN_DIR", str(small_run))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    text = "\n".join(
        str(out.get("text", "")) for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "FAIL         unpatched-mtp5" in text
    assert "motivating effect: FAIL share 1.0" in text
    images = [
        o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    assert len(images) == 2
