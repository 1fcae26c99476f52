"""Suite-wide ordering and the CI time budget.

Real-vLLM tests (marker `vllm`) run last, so that every fast tier has reported before the slow one starts.
`SPECQUAL_TEST_DEADLINE` (unix time, set by .ci/run from CI's 90-minute limit) stops *starting* tests once it has
passed: the rest are reported as skipped with that reason, never silently dropped and never counted as passed.
"""

from __future__ import annotations

import os
import time

import pytest

# The local task set's session fixtures (`local_set`, `tasks`), one definition for every tier.
pytest_plugins = ["tests.fixtures.local_tasks"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("vllm") is not None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    deadline = os.environ.get("SPECQUAL_TEST_DEADLINE")
    if deadline and time.time() > float(deadline):
        pytest.skip("CI time budget exhausted before this test could start (SPECQUAL_TEST_DEADLINE)")
