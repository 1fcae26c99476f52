"""sbatch scripts: a cohort's stack (one server, or P/D workers plus a router) and its rollout array.

The scripts are plain text that `specqual plan` prints and `sbatch` runs. Every server process is started by
`eval.executors.slurm.jobstep`, which picks a port on its node, publishes `<cohort>/slurm/endpoints/<job>/
<role>.<n>.json` and then becomes the process; specqual discovers the stack from those files.

P/D: one job of `executor.slurm.nodes` nodes; workers are placed in blocks (prefill first), so with as many
nodes as worker groups, prefill and decode run on separate nodes. Each worker is an `srun` step with its own
GPUs; the router runs in the batch shell on the first node and waits for the workers' endpoint files.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from eval.secrets import is_secret_name, secret_positions
from eval.spec.models import SlurmOptions
from eval.stacks.commands import ProcessCommand

JOBSTEP = "eval.executors.slurm.jobstep"
SHARD = "eval.executors.slurm.shard"
SECRET_PREFIX = "SPECQUAL_SECRET_"


@dataclass(frozen=True)
class StackJob:
    """Everything a stack job script needs; `python` is the build's interpreter (or a stand-in for plans)."""

    cohort: str
    commands: list[ProcessCommand]
    options: SlurmOptions
    cohort_dir: Path
    python: str
    specqual_python: str
    device: str = "cuda"
    env: dict[str, str] = field(default_factory=dict)
    bind: str = "0.0.0.0"

    @property
    def workers(self) -> list[ProcessCommand]:
        return [c for c in self.commands if c.role != "router"]

    @property
    def routers(self) -> list[ProcessCommand]:
        return [c for c in self.commands if c.role == "router"]

    def gpus(self, cmd: ProcessCommand) -> int:
        if self.device != "cuda" or cmd.role == "router":
            return 0
        return self.options.gpus_per_worker if self.options.gpus_per_worker is not None else cmd.gpus

    @property
    def nodes(self) -> int:
        return max(1, min(self.options.nodes, len(self.workers)))

    def node_of(self, k: int) -> int:
        """Node index of the k-th worker: blocks, so prefill and decode land on different nodes when they can."""
        return k * self.nodes // len(self.workers)

    @property
    def per_node(self) -> int:
        return math.ceil(len(self.workers) / self.nodes)


def job_name(kind: str, cohort: str) -> str:
    return f"specqual-{kind}-{cohort}"[:120]


def header(options: SlurmOptions, name: str, output: Path, lines: list[str]) -> list[str]:
    """The #SBATCH block: name, log, then the resource lines, then partition/account/time and extra lines."""
    out = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={output}"]
    out += [f"#SBATCH {line}" for line in lines]
    if options.partition:
        out.append(f"#SBATCH --partition={options.partition}")
    if options.account:
        out.append(f"#SBATCH --account={options.account}")
    out.append(f"#SBATCH --time={options.time}")
    out += [f"#SBATCH {line.removeprefix('#SBATCH').strip()}" for line in options.sbatch]
    return out


def _secret_args(job: StackJob) -> dict[tuple[int, int], str]:
    """(command number, argument index) -> `SPECQUAL_SECRET_<n>`, the variable carrying that argument's value."""
    names: dict[tuple[int, int], str] = {}
    for c, cmd in enumerate(job.commands):
        for i in secret_positions(cmd.argv):
            names[(c, i)] = f"{SECRET_PREFIX}{len(names)}"
    return names


def secret_env(job: StackJob) -> dict[str, str]:
    """The secrets the stack job needs, given to `sbatch` through its environment (the job inherits it:
    `--export=ALL`, Slurm's default) and never written into the script: variables with credential-like names,
    and the value of each secret server argument (`--api-key X`, `--api-key=X`) as `SPECQUAL_SECRET_<n>`."""
    envs = [job.env, *(c.env for c in job.commands)]
    env = {k: v for e in envs for k, v in e.items() if is_secret_name(k)}
    for (c, i), name in _secret_args(job).items():
        arg = job.commands[c].argv[i]
        env[name] = arg.partition("=")[2] if arg.startswith("--") else arg
    return env


def _argv_shell(job: StackJob, cmd: ProcessCommand, argv: list[str]) -> str:
    """`shlex.join(argv)` (`cmd`'s, rendered), each secret argument a reference to its `SPECQUAL_SECRET_<n>`."""
    c = next(k for k, other in enumerate(job.commands) if other is cmd)
    hidden = {i: name for (k, i), name in _secret_args(job).items() if k == c}
    words = []
    for i, a in enumerate(argv):
        if i not in hidden:
            words.append(shlex.quote(a))
        elif a.startswith("--"):
            words.append(f'{a.partition("=")[0]}="${hidden[i]}"')
        else:
            words.append(f'"${hidden[i]}"')
    return " ".join(words)


def _preamble(options: SlurmOptions, env: dict[str, str]) -> list[str]:
    out = ["", "set -euo pipefail", 'echo "specqual job $SLURM_JOB_ID on $(hostname) ($SLURM_JOB_NODELIST)"']
    if options.setup:
        out += ["# set-up lines from executor.slurm.setup", *options.setup]
    for k, v in sorted(env.items()):
        if is_secret_name(k):  # from sbatch's environment: a secret is never written into a script
            out.append(f': "${{{k}:?secret {k} missing: submit with it in the environment}}"; export {k}')
        else:
            out.append(f"export {k}={shlex.quote(v)}")
    return out


def _jobstep(job: StackJob, cmd: ProcessCommand) -> str:
    endpoints = job.cohort_dir / "slurm" / "endpoints"
    log = job.cohort_dir / "logs" / f"{cmd.role}.{cmd.index}.log"
    argv = [a.replace("{python}", job.specqual_python) for a in cmd.argv] if cmd.role == "router" else cmd.argv
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(cmd.env.items()) if not is_secret_name(k)]
    step = [job.specqual_python, "-m", JOBSTEP, "--endpoints", str(endpoints), "--key", cmd.key]
    step += ["--bind", job.bind, "--python", job.python, "--log", str(log), "--"]
    return (("env " + " ".join(env) + " ") if env else "") + shlex.join(step) + " " + _argv_shell(job, cmd, argv)


def _resources(job: StackJob) -> list[str]:
    lines = [f"--nodes={job.nodes}", f"--ntasks-per-node={job.per_node}"]
    if job.options.cpus_per_worker:
        lines.append(f"--cpus-per-task={job.options.cpus_per_worker}")
    gpus = max((job.gpus(c) for c in job.workers), default=0)
    if gpus:
        lines.append(f"--gres=gpu:{gpus * job.per_node}")
    return lines


def stack_script(job: StackJob) -> str:
    """The sbatch script of a cohort's stack."""
    log = job.cohort_dir / "logs" / "slurm-stack-%j.out"
    lines = header(job.options, job_name("stack", job.cohort), log, _resources(job))
    lines += _preamble(job.options, job.env)
    if len(job.commands) == 1:
        lines += ["", "# one server: the batch shell becomes it", "exec " + _jobstep(job, job.commands[0])]
        return "\n".join(lines) + "\n"
    lines += ["", "# one srun step per worker (own GPUs), the router in the batch shell", "set +e"]
    lines.append('nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))')
    for k, cmd in enumerate(job.workers):
        step = ["srun", "--nodes=1", "--ntasks=1", "--exact", f'--nodelist="${{nodes[{job.node_of(k)}]}}"']
        if job.options.cpus_per_worker:
            step.append(f"--cpus-per-task={job.options.cpus_per_worker}")
        if job.gpus(cmd):
            step.append(f"--gres=gpu:{job.gpus(cmd)}")
        lines.append(" ".join(step) + " \\\n    " + _jobstep(job, cmd) + " &")
    lines += [_jobstep(job, r) + " &" for r in job.routers]
    lines += [
        "# the stack is whole only while every process runs: end the job when one exits",
        "wait -n",
        'echo "a stack process exited (status $?): ending the job" >&2',
        "exit 1",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class RolloutArray:
    """A rollout job array: task i runs shard i of `shards_file` (written before submission)."""

    cohort: str
    options: SlurmOptions
    cohort_dir: Path
    shards_file: Path
    tasks: int
    specqual_python: str
    workdir: Path


def array_spec(tasks: int, max_parallel: int | None) -> str:
    return f"0-{tasks - 1}" + (f"%{max_parallel}" if max_parallel else "")


def rollout_script(job: RolloutArray) -> str:
    """The sbatch script of a rollout array."""
    log = job.cohort_dir / "logs" / "slurm-rollout-%A_%a.out"
    res = [f"--array={array_spec(job.tasks, job.options.max_parallel)}", "--nodes=1", "--ntasks=1"]
    res += [f"--cpus-per-task={job.options.rollout_cpus}", f"--chdir={job.workdir}"]
    lines = header(job.options, job_name("rollout", job.cohort), log, res)
    lines += _preamble(job.options, {})
    run = [job.specqual_python, "-m", SHARD, "--shards", str(job.shards_file)]
    lines += ["", shlex.join(run) + ' --index "$SLURM_ARRAY_TASK_ID"']
    return "\n".join(lines) + "\n"
