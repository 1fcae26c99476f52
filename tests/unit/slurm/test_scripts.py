"""sbatch script generation: a single server, P/D placement on nodes, GPUs, set-up lines, rollout arrays."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from eval.executors.slurm.scripts import (
    RolloutArray,
    StackJob,
    array_spec,
    rollout_script,
    secret_env,
    stack_script,
)
from eval.spec.models import SlurmOptions
from eval.stacks.commands import ProcessCommand

SERVER = ["{python}", "-m", "vllm.entrypoints.openai.api_server", "--host", "{host}", "--port", "{port.server.0}"]


def worker(role: str, i: int, gpus: int = 4) -> ProcessCommand:
    argv = ["{python}", "-m", "vllm.entrypoints.openai.api_server", "--port", f"{{port.{role}.{i}}}"]
    return ProcessCommand(role, i, argv, {"VLLM_X": "1"}, gpus=gpus)


def job(commands: list[ProcessCommand], device: str = "cuda", **options: object) -> StackJob:
    return StackJob(
        cohort="patched-mtp5",
        commands=commands,
        options=SlurmOptions(**options),  # type: ignore[arg-type]
        cohort_dir=Path("/r/run1/patched-mtp5"),
        python="/envs/v/bin/python",
        specqual_python="/sq/.venv/bin/python",
        device=device,
        env={"VLLM_TARGET_DEVICE": "cpu", "PYTHONPATH": "/ov"},
    )


def sbatch_lines(script: str) -> list[str]:
    return [line.removeprefix("#SBATCH ") for line in script.splitlines() if line.startswith("#SBATCH")]


def test_single_server_script() -> None:
    options = {"partition": "gpu", "account": "inf", "time": "01:00:00", "setup": ["module load cuda"]}
    script = stack_script(job([ProcessCommand("server", 0, SERVER, gpus=2)], sbatch=["--exclusive"], **options))
    lines = sbatch_lines(script)
    assert lines[:2] == [
        "--job-name=specqual-stack-patched-mtp5",
        "--output=/r/run1/patched-mtp5/logs/slurm-stack-%j.out",
    ]
    assert {"--nodes=1", "--ntasks-per-node=1", "--gres=gpu:2", "--partition=gpu", "--account=inf"} <= set(lines)
    assert "--time=01:00:00" in lines and lines[-1] == "--exclusive"
    body = script.split("\n\n", 1)[1]
    assert body.index("module load cuda") < body.index("export PYTHONPATH=/ov") < body.index("exec ")
    exec_line = next(line for line in script.splitlines() if line.startswith("exec "))
    argv = shlex.split(exec_line.removeprefix("exec "))
    assert argv[:3] == ["/sq/.venv/bin/python", "-m", "eval.executors.slurm.jobstep"]
    assert argv[argv.index("--key") + 1] == "server.0" and argv[argv.index("--python") + 1] == "/envs/v/bin/python"
    assert argv[argv.index("--endpoints") + 1] == "/r/run1/patched-mtp5/slurm/endpoints"
    assert argv[argv.index("--") + 1 :] == SERVER  # placeholders are filled on the node


def test_cpu_device_requests_no_gpus_and_cpus_per_worker() -> None:
    lines = sbatch_lines(stack_script(job([ProcessCommand("server", 0, SERVER, gpus=1)], "cpu", cpus_per_worker=8)))
    assert not any("gpu" in line for line in lines) and "--cpus-per-task=8" in lines


def test_pd_workers_in_blocks_on_separate_nodes_router_in_batch_shell() -> None:
    router = ProcessCommand("router", 0, ["vllm-router", "--prefill", "{url.prefill.0}", "--port", "{port.router.0}"])
    commands = [worker("prefill", 0), worker("prefill", 1), worker("decode", 0), worker("decode", 1), router]
    script = stack_script(job(commands, nodes=2))
    lines = sbatch_lines(script)
    assert {"--nodes=2", "--ntasks-per-node=2", "--gres=gpu:8"} <= set(lines)
    steps = [line for line in script.splitlines() if line.startswith("srun ")]
    assert [s.split('--nodelist="${nodes[')[1][0] for s in steps] == ["0", "0", "1", "1"]
    assert all("--gres=gpu:4" in s and "--exact" in s for s in steps)
    tail = script.splitlines()
    router_line = next(line for line in tail if "--key router.0" in line)
    assert not router_line.startswith("srun") and router_line.endswith("&")
    assert tail[-2:] == ['echo "a stack process exited (status $?): ending the job" >&2', "exit 1"]
    assert "wait -n" in tail


def test_gpus_per_worker_overrides_the_tensor_parallel_size() -> None:
    commands = [worker("prefill", 0), worker("decode", 0), ProcessCommand("router", 0, ["r"])]
    script = stack_script(job(commands, nodes=4, gpus_per_worker=8))
    lines = sbatch_lines(script)
    assert "--nodes=2" in lines  # never more nodes than workers
    assert "--gres=gpu:8" in lines and "--ntasks-per-node=1" in lines


def test_router_runs_specqual_python_for_the_toy_proxy() -> None:
    router = ProcessCommand("router", 0, ["{python}", "-m", "eval.stacks.toy_proxy", "--port", "{port.router.0}"])
    script = stack_script(job([worker("prefill", 0), worker("decode", 0), router], "cpu"))
    line = next(line for line in script.splitlines() if "--key router.0" in line)
    argv = shlex.split(line.rstrip(" &"))
    assert argv[argv.index("--") + 1 :][:3] == ["/sq/.venv/bin/python", "-m", "eval.stacks.toy_proxy"]


def test_rollout_array_script() -> None:
    options = SlurmOptions(max_parallel=4, rollout_cpus=2, setup=["source /opt/env.sh"], partition="cpu")
    array = RolloutArray(
        "c", options, Path("/r/run1/c"), Path("/r/run1/c/slurm/shards-1.json"), 10, "/sq/py", Path("/w")
    )
    script = rollout_script(array)
    lines = sbatch_lines(script)
    assert {"--array=0-9%4", "--cpus-per-task=2", "--chdir=/w", "--partition=cpu"} <= set(lines)
    assert "--output=/r/run1/c/logs/slurm-rollout-%A_%a.out" in lines
    assert "source /opt/env.sh" in script
    assert script.rstrip().endswith(
        '/sq/py -m eval.executors.slurm.shard --shards /r/run1/c/slurm/shards-1.json --index "$SLURM_ARRAY_TASK_ID"'
    )


def test_array_spec() -> None:
    assert array_spec(1, None) == "0-0" and array_spec(6, 2) == "0-5%2"


def test_secrets_are_not_written_into_the_script_but_passed_to_sbatch() -> None:
    server = ProcessCommand("server", 0, [*SERVER, "--api-key", "sk-SECRET1"], {"AWS_SECRET_ACCESS_KEY": "aws2"})
    router = ProcessCommand("router", 0, ["{python}", "-m", "r", "--auth-token=tok3"])
    stack_job = replace(job([server, router]), env={"HF_TOKEN": "hf_SECRET0", "VLLM_X": "1"})
    script = stack_script(stack_job)
    for secret in ("hf_SECRET0", "sk-SECRET1", "aws2", "tok3"):
        assert secret not in script
    assert secret_env(stack_job) == {
        "HF_TOKEN": "hf_SECRET0",
        "AWS_SECRET_ACCESS_KEY": "aws2",
        "SPECQUAL_SECRET_0": "sk-SECRET1",
        "SPECQUAL_SECRET_1": "tok3",
    }
    assert '--api-key "$SPECQUAL_SECRET_0"' in script and '--auth-token="$SPECQUAL_SECRET_1"' in script
    assert "export HF_TOKEN" in script and "export VLLM_X=1" in script
