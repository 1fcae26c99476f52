"""docs/using/cohort-files.md: the generated reference covers every field of the cohort-file schema, each with a
description, every model generator and every cohort file, and is not stale (`python -m eval.spec.reference`)."""

from __future__ import annotations

from pathlib import Path

from eval.registry import MODEL_GENERATORS
from eval.spec import reference

DOC = Path(__file__).resolve().parents[3] / "docs" / "using" / "cohort-files.md"


def test_every_field_of_the_schema_has_a_description() -> None:
    missing = [path for path, info in reference.fields() if not (info.description or "").strip()]
    assert not missing, f"{len(missing)} cohort-file fields without a description: {missing}"


def test_the_reference_in_the_docs_is_generated_from_the_schema_and_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert reference.render() in text, "stale: run `python -m eval.spec.reference`"
    paths = [path for path, _ in reference.fields()]
    assert len(paths) > 150 and all(f"| `{p}` |" in text for p in paths)
    assert all(f"| `{kind}` |" in text for kind in MODEL_GENERATORS)
    for cohort_file in (reference.REPO / "cohorts").glob("*.yaml"):
        assert f"| `cohorts/{cohort_file.name}` |" in text


def test_a_field_without_a_description_is_listed(tmp_path: Path) -> None:
    from pydantic import BaseModel, Field

    class Block(BaseModel):
        told: int = Field(1, description="has one")
        untold: int = 2

    class Top(BaseModel):
        blocks: dict[str, Block] = Field(default_factory=dict, description="many")

    found = {path: info.description for path, info in reference.fields(Top)}
    assert found == {"blocks": "many", "blocks.*.told": "has one", "blocks.*.untold": None}
