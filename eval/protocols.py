"""One Protocol per pluggable stage. Implementations satisfy them structurally; no inheritance needed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: the stages' shapes name the spec's and the results directory's types
    from eval.spec.matrix import Cohort
    from eval.stacks.builds import BuildEnv
    from eval.store.run import RunDir


@runtime_checkable
class Stack(Protocol):
    """A launched serving stack (one server, or P/D workers behind a router) with one base URL.

    Use as a context manager: `with launcher.launch(...) as stack: ...`; leaving stops every process.
    """

    @property
    def base_url(self) -> str:
        """`http://host:port` of the OpenAI-compatible endpoint (the router for P/D)."""
        ...

    @property
    def metrics_urls(self) -> list[str]:
        """`/metrics` URL of every vLLM process of the stack (P/D: each worker)."""
        ...

    def wait_ready(self, timeout_s: float) -> None:
        """Block until /health and /v1/models answer; raise with the log tail if a process exits."""
        ...

    def alive(self) -> bool: ...

    def stop(self) -> None:
        """Stop every process group (TERM, then KILL); idempotent."""
        ...

    def provenance(self) -> dict[str, Any]:
        """The stack.json record (see results/README.md)."""
        ...

    def command_lines(self) -> list[str]:
        """Each process's command line, secrets redacted (what `specqual serve` prints)."""
        ...

    @property
    def log_dir(self) -> Path:
        """Where the stack's processes write their logs."""
        ...

    def __enter__(self) -> Stack: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


@runtime_checkable
class Executor(Protocol):
    """Where a cohort file's stacks and rollouts run (`executor.kind`: `local` processes, `slurm` jobs).

    Built once per command from the loaded cohort file (`eval.executors.pick`) and passed down; nothing below asks
    which executor it is.
    """

    def stack(self, cohort: Cohort, model_path: str | Path, run_dir: Path | None, build: BuildEnv) -> Stack:
        """The cohort's stack, not started: entering it starts it and waits until it answers; leaving stops it.

        Logs and stack.json go under `<run_dir>/<cohort>/` (a temp directory when `run_dir` is None).
        """
        ...

    def rollouts(
        self, run: RunDir, cohort: Cohort, stack: Stack, tasks: list[Task], progress: Any, early_stop: bool = False
    ) -> str:
        """Every SWE-bench unit of `cohort` not done yet, against `stack`; returns a one-line account.

        `early_stop`: stop scheduling once the sequential test decides the cohort's comparison
        (eval.rollout.stopper)."""
        ...

    def scripts(self, cohort: Cohort, model_path: str, instances: int | None) -> list[str]:
        """The job scripts `specqual plan` shows for the cohort (none for local processes)."""
        ...


@dataclass
class ExecResult:
    exit_code: int
    output: str
    timed_out: bool = False


@runtime_checkable
class Sandbox(Protocol):
    """Where an agent's commands run: a unit's own work tree, no network, time limits."""

    @property
    def workdir(self) -> str:
        """The repository path as commands see it."""
        ...

    def execute(self, command: str, timeout_s: float) -> ExecResult: ...

    def diff(self) -> str:
        """`git diff` of the work tree against the base commit (the unit's patch)."""
        ...

    def close(self) -> None:
        """Remove the sandbox (container, temp dirs); idempotent."""
        ...


@dataclass
class Task:
    """One SWE-bench style instance (the fields the harness uses, plus the raw record)."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    version: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class GradeResult:
    status: str  # resolved | unresolved | empty_patch | patch_failed | infra_error
    resolved: bool | None
    infra_reason: str | None = None
    tests: dict[str, Any] = field(default_factory=dict)
    log_path: Path | None = None


@runtime_checkable
class Grader(Protocol):
    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult: ...


@runtime_checkable
class Agent(Protocol):
    """Drives one unit: talks to the stack, runs commands in the sandbox, returns the outcome.

    Every model response is passed to `record` as it arrives (one trajectory.jsonl line).
    """

    async def run(self, task: Task, sandbox: Sandbox, record: Any) -> dict[str, Any]: ...
