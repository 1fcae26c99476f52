"""The model directory a cohort file names: a path as given, or a generated model (built once, cached)."""

from __future__ import annotations

from pathlib import Path

from eval.spec.models import DEFAULT_MODEL, CohortFile
from eval.stacks.envs import cache_root

# Generators whose config.json must declare the served dtype (an option `torch_dtype`, filled from `model.dtype`).
FOLLOWS_SERVED_DTYPE = {"tiny-nemotron-h", "tiny-llama", "organism"}


def model_dir(spec: CohortFile, out_dir: Path | None = None, name: str = DEFAULT_MODEL) -> Path:
    """The model `name` (default: the top-level `model`): its path resolved against the cohort file, or the
    generator's output under `out_dir` (default cache)."""
    m = spec.all_models()[name]
    if m.path is not None:
        p = spec.resolve(m.path)
        return p if p.exists() else Path(m.path)  # hub-style names available offline pass through
    assert m.generate is not None
    from eval.registry import MODEL_GENERATORS, load

    generate = load(MODEL_GENERATORS, m.generate.kind)
    out = out_dir or cache_root() / "models"
    options = dict(m.generate.options)
    if m.generate.kind in FOLLOWS_SERVED_DTYPE and m.dtype not in ("auto", "float32"):
        options.setdefault("torch_dtype", m.dtype)
    return Path(generate(out, m.generate.seed, options))
