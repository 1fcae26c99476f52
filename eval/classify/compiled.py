"""The optional compiled helpers of the classifier (eval/classify/_speedups.c, built by setup.py where a C compiler
is): the same results as the pure-Python paths beside each use (tests/unit/classify/test_fast_paths.py), in less
time. `speedups` is None where the build failed, where the built module is of another version of the source (not
rebuilt after a pull: `pip install -e .` or `python setup.py build_ext --inplace` rebuilds it), or with
SPECQUAL_PURE_PYTHON=1 in the environment. The modules that use it bind it as their own `_speedups`, so a test can
turn it off in one of them."""

from __future__ import annotations

import os
from types import ModuleType

SPEEDUPS_API = 10  # _speedups.c's API: a module built from another version of the file is not used


def _load() -> ModuleType | None:
    try:
        from eval.classify import _speedups
    except ImportError:  # pragma: no cover - depends on the build
        return None
    if getattr(_speedups, "API", None) != SPEEDUPS_API or os.environ.get("SPECQUAL_PURE_PYTHON", "") not in ("", "0"):
        return None
    return _speedups


speedups = _load()
