"""The docker tier: tests against a real docker engine (start one with `eval "$(bash scripts/docker/start-engine.sh)"`).

Without an engine these tests skip with the reason, unless `CI` is set: CI starts an engine before the tests
(.ci/run), so there a missing engine is a failure, never a quiet skip. Images are built here once per machine
(eval.images: debootstrap, then `docker import`) and shared by every test of the run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from eval.protocols import Task


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {reason}: .ci/run starts one with scripts/docker/start-engine.sh", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client() -> Any:
    try:
        import docker
    except ImportError:
        _unavailable("the docker SDK is not installed (pip install 'specqual[swebench]')")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as e:
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        _unavailable(f"no docker engine answers at {host} ({type(e).__name__})")
    return client


@pytest.fixture(scope="session")
def image_cache() -> Path:
    """Where the base rootfs tarball is cached (the user's cache: debootstrap runs once per machine)."""
    from eval.stacks.envs import cache_root

    return cache_root()


def by_id(tasks: list[Task], name: str) -> Task:
    return next(t for t in tasks if t.instance_id == f"specqual__{name}-1")


def leftover_containers(client: Any, image_prefix: str = "swebench/sweb.eval.x86_64.specqual") -> list[str]:
    """Containers (running or not) of the local set's instance images."""
    return [
        c.name
        for c in client.containers.list(all=True)
        if any(t.startswith(image_prefix) for t in (c.image.tags if c.image else []))
    ]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line naming the engine and how the docker tier went, so a CI log shows it ran against a real one."""
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "skipped", "error"):
        reports = terminalreporter.stats.get(outcome, [])
        counts[outcome] = sum(
            1 for r in reports if "docker" in getattr(r, "keywords", {}) and r.when in ("call", "setup")
        )
    if not any(counts.values()):
        return
    try:
        import docker

        version = docker.from_env().version()
        engine = f"docker engine {version['Version']} ({docker.from_env().info()['Driver']} storage)"
    except Exception as e:
        engine = f"no docker engine ({type(e).__name__})"
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    terminalreporter.write_line(
        f"docker tier: {summary} against {engine} at {os.environ.get('DOCKER_HOST', 'default')}"
    )
