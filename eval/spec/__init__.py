"""Cohort files: the pydantic model tree, loading with layered overrides, and matrix expansion."""

from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec, load_spec
from eval.spec.matrix import Cohort

__all__ = ["Cohort", "LoadedSpec", "SpecError", "load_spec"]
