"""Thin wrappers over the Slurm client commands (sbatch, scontrol, squeue, scancel, sinfo) with clear errors.

Job state comes from `scontrol show job -o` (one line per job or array task): `sacct` needs accounting, which
many test clusters (and ours) do not run. A job that Slurm has forgotten (after MinJobAge) is reported as
unknown, never guessed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# States in which a job still holds (or waits for) resources.
ACTIVE_STATES = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "SUSPENDED",
        "STAGE_OUT",
        "SIGNALING",
        "STOPPED",
    }
)
# A job key in `scontrol show job -o` output: a word (with `:` or `/` in some keys) followed by `=`.
_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/.]*)=")
_INVALID_JOB = "Invalid job id specified"
# What a client prints when the controller was briefly out of reach (a restart, a full RPC queue). A client killed
# by a signal (SIGPIPE when slurmctld drops the socket mid-answer: exit -13, seen in CI) is transient too.
_TRANSIENT = (
    "Unable to contact slurm controller",
    "Socket timed out",
    "Connection refused",
    "Zero Bytes were transmitted",
)


# How often a repeatable client command is tried before its failure is raised.
QUERY_ATTEMPTS = 4


class SlurmError(Exception):
    """A Slurm client command failed; the message has the command and its output."""


def run_client(
    argv: Sequence[str],
    what: str,
    timeout_s: float = 60.0,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    attempts: int = 1,
) -> str:
    """Run a Slurm client command and return its stdout; raise SlurmError with the command and stderr. `env`:
    variables added to the client's environment (sbatch passes its environment on to the job). `attempts` > 1 only
    for commands that are safe to repeat (queries, scancel): a transient failure (the client killed by a signal, or
    the controller out of reach) is retried after 1, 2, 4... s; any other failure is raised at once."""
    exe = shutil.which(argv[0])
    if exe is None:
        raise SlurmError(f"{what}: `{argv[0]}` is not on PATH (is this a Slurm login node?)")
    full_env = {**os.environ, **env} if env else None
    for attempt in range(max(1, attempts)):
        if attempt:
            time.sleep(min(2.0 ** (attempt - 1), 8.0))
        try:
            proc = subprocess.run(
                [exe, *argv[1:]], capture_output=True, text=True, timeout=timeout_s, input=stdin, env=full_env
            )
        except subprocess.TimeoutExpired as e:
            if attempt + 1 < attempts:
                continue
            raise SlurmError(f"{what}: `{' '.join(argv)}` did not answer in {timeout_s:.0f} s") from e
        if proc.returncode == 0:
            return proc.stdout
        out = (proc.stderr.strip() or proc.stdout.strip() or "no output")[-2000:]
        transient = proc.returncode < 0 or any(t in out for t in _TRANSIENT)
        if not transient or attempt + 1 >= attempts:
            tries = f" (after {attempt + 1} attempts)" if attempt else ""
            raise SlurmError(f"{what} failed (exit {proc.returncode}){tries}: {' '.join(argv)}\n{out}")
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class JobInfo:
    """One job, or one array task, as `scontrol show job -o` describes it."""

    job_id: str
    state: str
    name: str = ""
    array_job_id: str | None = None
    array_task_id: str | None = None  # "3", or a range like "2-5%1" for pending tasks not yet split off
    reason: str = ""
    nodes: list[str] = field(default_factory=list)
    batch_host: str | None = None
    exit_code: str = ""
    stdout: str | None = None
    fields: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def task_ids(self) -> list[int]:
        """Array task indices this record stands for (a pending range stands for several)."""
        return expand_indices(self.array_task_id) if self.array_task_id else []


def parse_fields(line: str) -> dict[str, str]:
    """`JobId=7 JobName=a b JobState=RUNNING` -> {"JobId": "7", "JobName": "a b", ...} (values may hold spaces)."""
    keys = list(_KEY.finditer(line))
    out: dict[str, str] = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        out[m.group(1)] = line[m.end() : end].strip()
    return out


def _none(value: str | None) -> str | None:
    return None if value in (None, "", "(null)", "None", "N/A") else value


def parse_jobs(text: str) -> list[JobInfo]:
    """Parse `scontrol show job -o` output (one job per line)."""
    jobs = []
    for line in text.splitlines():
        if not line.strip().startswith("JobId="):
            continue
        f = parse_fields(line.strip())
        nodes = _none(f.get("NodeList"))
        jobs.append(
            JobInfo(
                job_id=f["JobId"],
                state=f.get("JobState", "UNKNOWN").split()[0],
                name=f.get("JobName", ""),
                array_job_id=_none(f.get("ArrayJobId")),
                array_task_id=_none(f.get("ArrayTaskId")),
                reason=f.get("Reason", ""),
                nodes=expand_hostlist(nodes) if nodes else [],
                batch_host=_none(f.get("BatchHost")),
                exit_code=f.get("ExitCode", ""),
                stdout=_none(f.get("StdOut")),
                fields=f,
            )
        )
    return jobs


def expand_indices(spec: str) -> list[int]:
    """`0-3,7%2` -> [0, 1, 2, 3, 7] (the `%N` throttle is dropped)."""
    out: list[int] = []
    for part in spec.split("%")[0].split(","):
        if not part:
            continue
        step = 1
        if ":" in part:
            part, step_text = part.split(":", 1)
            step = int(step_text)
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1, step))
    return out


def expand_hostlist(hostlist: str) -> list[str]:
    """`node[01-03,7],gpu5` -> [node01, node02, node03, node7, gpu5] (what `scontrol show hostnames` prints)."""
    hosts: list[str] = []
    for m in re.finditer(r"([^,\[]+)(?:\[([^\]]+)\])?([^,]*)", hostlist):
        prefix, ranges, suffix = m.group(1), m.group(2), m.group(3)
        if not ranges:
            hosts.append(prefix + suffix)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                hosts.append(f"{prefix}{str(n).zfill(len(lo))}{suffix}")
    return hosts


def show_jobs(job_id: str) -> list[JobInfo]:
    """Every record of a job (an array job: one per task, pending tasks grouped); [] if Slurm forgot it."""
    try:
        out = run_client(
            ["scontrol", "show", "job", "-o", str(job_id)], f"scontrol show job {job_id}", attempts=QUERY_ATTEMPTS
        )
    except SlurmError as e:
        if _INVALID_JOB in str(e):
            return []
        raise
    return parse_jobs(out)


def submit(script: Path, args: Sequence[str] = (), env: dict[str, str] | None = None) -> str:
    """`sbatch --parsable [args] SCRIPT` (with `env` added to its environment); return the job id."""
    out = run_client(["sbatch", "--parsable", *args, str(script)], f"sbatch {script.name}", env=env)
    job_id = out.strip().split(";")[0]
    if not job_id.isdigit():
        raise SlurmError(f"sbatch {script}: unexpected answer {out.strip()!r}")
    return job_id


def cancel(job_ids: Sequence[str], signal: str | None = None) -> None:
    """`scancel` the given jobs or array tasks (`123`, `123_4`); jobs that already ended are not an error."""
    if not job_ids:
        return
    argv = ["scancel", *([f"--signal={signal}"] if signal else []), *job_ids]
    try:
        run_client(argv, "scancel", attempts=QUERY_ATTEMPTS)
    except SlurmError as e:
        if _INVALID_JOB not in str(e) and "already completing" not in str(e):
            raise


def cluster_answers(timeout_s: float = 10.0) -> bool:
    """True when `sinfo` answers: a controller is reachable from here."""
    try:
        run_client(["sinfo", "-h", "-o", "%P"], "sinfo", timeout_s=timeout_s)
    except SlurmError:
        return False
    return True
