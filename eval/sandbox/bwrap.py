"""A bubblewrap sandbox for local task sets: the unit's own writable copy of the repository, nothing else.

Every command runs in a fresh `bwrap` with all namespaces unshared (no network but loopback, its own PIDs),
the host file system bound read-only, a private /tmp, and the unit's work tree bound writable at /testbed
(the path SWE-bench images use). The time limit kills the whole process tree: the command runs in its own
session and PID namespace, and killing it tears the namespace down. Output is truncated to head and tail.

CPU count is not limited here (no cgroups without systemd); memory is capped with RLIMIT_AS.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from eval.protocols import ExecResult, Task
from eval.sandbox.process import memory_limit, run_limited
from eval.tasks.records import REPO_PATH_KEY

WORKDIR = "/testbed"
SHARE = "/specqual"  # read-only files the caller hands in (patches, scripts)
_HIDDEN = {"proc", "dev", "sys", "tmp"}


class SandboxError(RuntimeError):
    """The sandbox could not be created (an infrastructure failure, never the model's)."""


def host_binds() -> list[str]:
    """bwrap arguments that show every top-level host directory read-only (symlinks kept as symlinks)."""
    args: list[str] = []
    for entry in sorted(os.listdir("/")):
        path = "/" + entry
        if entry in _HIDDEN:
            continue
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def python_binds_under_tmp() -> list[str]:
    """The private /tmp hides everything under the host's /tmp: show this process's Python installation again
    (read-only) when it lives there, as a checkout under /tmp with its .venv does, so `python -m pytest` runs."""
    args: list[str] = []
    for prefix in sorted({sys.prefix, sys.base_prefix, sys.exec_prefix}):
        real = os.path.realpath(prefix)
        if real == "/tmp" or not real.startswith("/tmp/"):
            continue
        # bwrap creates the mount point inside the fresh /tmp; the path must stay the same for the venv to work.
        args += ["--ro-bind", real, real]
        if prefix != real:
            args += ["--symlink", real, prefix]
    return args


def bwrap_argv(bwrap: str, tree: Path, share: Path, env: dict[str, str], command: str) -> list[str]:
    """`bwrap` is the binary's path: the command runs with an empty environment, so a bare name finds it only in
    /bin and /usr/bin."""
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    argv += host_binds()
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += python_binds_under_tmp()
    argv += ["--bind", str(tree), WORKDIR, "--ro-bind", str(share), SHARE, "--remount-ro", "/"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--chdir", WORKDIR, "bash", "-c", command]


def default_env(python: str | None = None) -> dict[str, str]:
    """PATH puts the given Python (default: this process's) first, so `python -m pytest` finds it."""
    python_dir = str(Path(python or sys.executable).parent)
    return {
        "PATH": f"{python_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
    }


class BwrapSandbox:
    """One unit's sandbox. `source` is the task's git repository (a local task set's `repos/<name>`)."""

    def __init__(
        self,
        task: Task,
        *,
        source: Path | None = None,
        cpus: float = 1.0,
        memory_gb: float | None = 8.0,
        python: str | None = None,
        max_output_bytes: int = 1_000_000,
        scratch: Path | None = None,
    ) -> None:
        # The absolute path: commands run with an empty environment, where only /bin and /usr/bin are searched,
        # and bwrap may be elsewhere on PATH (an offline node unpacks bubblewrap under its scratch directory).
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("bwrap is not installed (Debian: apt-get install bubblewrap)")
        self._bwrap = bwrap
        origin = source or task.raw.get(REPO_PATH_KEY)
        if not origin:
            raise SandboxError(f"{task.instance_id}: no local repository (bwrap runs local task sets only)")
        self.cpus = cpus  # recorded; not enforceable without cgroups
        self._memory_gb = memory_gb
        self._max_output = max_output_bytes
        self._env = default_env(python)
        self._root = Path(tempfile.mkdtemp(prefix="specqual-sbx-", dir=scratch))
        self._tree = self._root / "testbed"
        self._share = self._root / "share"
        self._share.mkdir()
        self.base_commit = task.base_commit
        try:
            _clone(Path(origin), self._tree, task.base_commit)
        except SandboxError:
            self.close()
            raise

    @property
    def workdir(self) -> str:
        return WORKDIR

    @property
    def host_tree(self) -> Path:
        """The work tree on the host (for tests and log collection)."""
        return self._tree

    def put(self, name: str, text: str) -> str:
        """Hand a file to the sandbox read-only; returns its path as commands see it."""
        (self._share / name).write_text(text, encoding="utf-8")
        return f"{SHARE}/{name}"

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if not self._tree.is_dir():
            raise SandboxError("the sandbox is closed")
        argv = bwrap_argv(self._bwrap, self._tree, self._share, self._env, command)
        return run_limited(argv, timeout_s, self._max_output, env={}, preexec=memory_limit(self._memory_gb))

    def diff(self) -> str:
        """Every change against the base commit, new files included (run inside the sandbox: the tree's git
        config is the model's to write, so host git never reads it)."""
        command = f"git add -A && git -c core.fileMode=false diff --cached --no-color --no-ext-diff {self.base_commit}"
        result = self.execute(command, timeout_s=120)
        if result.exit_code != 0 or result.timed_out:
            raise SandboxError(f"git diff failed: {result.output[-500:]}")
        return result.output

    def close(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> BwrapSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clone(source: Path, tree: Path, commit: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for argv in (
        ["git", "clone", "-q", "--no-checkout", str(source), str(tree)],
        ["git", "-C", str(tree), "checkout", "-q", "--detach", commit],
    ):
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise SandboxError(f"cannot prepare the work tree from {source}: {done.stderr.strip()[-300:]}")
