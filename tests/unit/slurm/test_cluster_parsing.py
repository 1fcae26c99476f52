"""Parsing of `scontrol show job -o` output (samples from slurm-wlm 22.05), host lists and array indices."""

from __future__ import annotations

from eval.executors.slurm.cluster import expand_hostlist, expand_indices, parse_fields, parse_jobs

RUNNING = (
    "JobId=41 JobName=specqual-stack-stock off UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901717 "
    "Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 "
    "BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 TimeLimit=00:05:00 TimeMin=N/A "
    "Partition=debug AllocNode:Sid=localhost:10676 ReqNodeList=(null) ExcNodeList=(null) NodeList=gpu[01-02] "
    "BatchHost=gpu01 NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=2,mem=21694M,node=2,billing=2 Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=* "
    "Command=/r/c/slurm/stack-0.sbatch WorkDir=/work/main StdErr=/r/c/logs/slurm-stack-41.out StdIn=/dev/null "
    "StdOut=/r/c/logs/slurm-stack-41.out Power= TresPerNode=gres:gpu:4"
)
ARRAY = """JobId=37 ArrayJobId=36 ArrayTaskId=1 ArrayTaskThrottle=0 JobName=specqual-rollout-c JobState=CANCELLED \
Reason=None ExitCode=0:15 NodeList=vm BatchHost=vm StdOut=/r/c/logs/slurm-rollout-36_1.out
JobId=36 ArrayJobId=36 ArrayTaskId=2-5%2 ArrayTaskThrottle=2 JobName=specqual-rollout-c JobState=PENDING \
Reason=JobArrayTaskLimit ExitCode=0:0 NodeList=(null) BatchHost=(null) StdOut=/r/c/logs/slurm-rollout-36_%a.out
"""


def test_fields_keep_values_with_spaces_and_equals_signs() -> None:
    f = parse_fields(RUNNING)
    assert f["JobName"] == "specqual-stack-stock off"
    assert f["TRES"] == "cpu=2,mem=21694M,node=2,billing=2"
    assert f["ReqB:S:C:T"] == "0:0:*:*" and f["AllocNode:Sid"] == "localhost:10676"
    assert f["Power"] == "" and f["TresPerNode"] == "gres:gpu:4"


def test_running_job() -> None:
    (job,) = parse_jobs(RUNNING)
    assert job.job_id == "41" and job.state == "RUNNING" and job.active
    assert job.nodes == ["gpu01", "gpu02"] and job.batch_host == "gpu01"
    assert job.array_job_id is None and job.task_ids == []
    assert job.stdout == "/r/c/logs/slurm-stack-41.out"


def test_array_records_one_per_task_and_a_pending_range() -> None:
    done, pending = parse_jobs(ARRAY)
    assert (done.array_job_id, done.task_ids, done.state, done.active) == ("36", [1], "CANCELLED", False)
    assert pending.task_ids == [2, 3, 4, 5] and pending.active and pending.nodes == []
    assert pending.reason == "JobArrayTaskLimit" and pending.batch_host is None


def test_noise_lines_are_ignored() -> None:
    assert parse_jobs("\nslurm_load_jobs error: whatever\n") == []


def test_hostlists() -> None:
    assert expand_hostlist("vm") == ["vm"]
    assert expand_hostlist("gpu[01-03,10],cpu7") == ["gpu01", "gpu02", "gpu03", "gpu10", "cpu7"]
    assert expand_hostlist("a[1-2]-ib") == ["a1-ib", "a2-ib"]


def test_array_indices() -> None:
    assert expand_indices("3") == [3]
    assert expand_indices("0-3,7%2") == [0, 1, 2, 3, 7]
    assert expand_indices("0-6:3") == [0, 3, 6]
