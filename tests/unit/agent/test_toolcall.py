"""The tool-calling loop against a real HTTP server replaying scripted replies, in a real bwrap sandbox."""

from __future__ import annotations

import json

from eval.agent.controls import apply_command
from eval.agent.errors import InfraError
from eval.agent.feedback import DEFAULT_FEEDBACK
from tests.doubles.scripted_model import bash, call, run_agent, scripted, submit


def test_a_solving_model_applies_the_fix_and_submits(local_tasks):
    task = local_tasks[0]
    run = run_agent(task, scripted([{"tool_calls": [bash(apply_command(task.patch))]}, {"tool_calls": [submit()]}]))
    assert run.error is None
    assert run.outcome == {"exit_reason": "submitted", "turns": 2, "prompt_tokens": 210, "completion_tokens": 14}
    assert run.patch is not None and run.patch.strip()
    changed = {line for line in task.patch.splitlines() if line.startswith(("+", "-")) and line[1:2] not in "+-"}
    assert changed <= set(run.patch.splitlines())
    first, second = run.lines
    assert first["turn"] == 0 and second["turn"] == 1
    assert first["tool_calls"] == [bash(apply_command(task.patch))]
    assert first["observation"] == "[exit code 0]"
    assert first["request_id"] == "chatcmpl-scripted-1" and first["server"] == run.base_url
    assert first["token_ids"] == [1, 2, 3] and first["prompt_token_ids"] == [9] * 5
    assert first["finish_reason"] == "tool_calls" and first["error"] is None and first["feedback"] is None
    assert first["latency_s"] >= 0 and first["usage"]["completion_tokens"] == 7
    # the tool result went back under the call's id, after the assistant message exactly as returned
    tail = run.requests[1]["messages"][-2:]
    assert tail[0] == {"role": "assistant", "content": None, "tool_calls": [bash(apply_command(task.patch))]}
    assert tail[1] == {"role": "tool", "tool_call_id": "call_0", "content": "[exit code 0]"}
    assert run.headers[0]["x-request-id"].startswith("unit-key-t0")


def test_the_request_carries_tools_choice_sampling_and_token_ids(local_tasks):
    run = run_agent(local_tasks[0], scripted([{"tool_calls": [submit()]}]), tool_choice="required", strict_tools=True)
    request = run.requests[0]
    assert [t["function"]["name"] for t in request["tools"]] == ["bash", "submit"]
    assert all(t["function"]["strict"] is True for t in request["tools"])
    assert request["tool_choice"] == "required"
    assert request["seed"] == 7 and request["temperature"] == 0.0 and request["max_tokens"] == 64
    assert request["return_token_ids"] is True
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert local_tasks[0].problem_statement in request["messages"][1]["content"]


def test_a_reply_without_tool_call_is_recorded_as_is_and_answered_by_feedback(local_tasks):
    leaked = 'Let me look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
    run = run_agent(local_tasks[0], scripted([{"content": leaked}]))
    assert run.outcome is not None and run.outcome["exit_reason"] == "no_tool_call"
    assert len(run.lines) == 3  # max_consecutive_no_tool_calls defaults to 3
    assert all(line["content"] == leaked and line["tool_calls"] is None for line in run.lines)
    assert run.lines[0]["feedback"] == DEFAULT_FEEDBACK["no_tool_call"]
    assert run.lines[2]["feedback"] is None  # the last one ended the unit: nothing was sent back
    assert run.requests[1]["messages"][-1] == {"role": "user", "content": DEFAULT_FEEDBACK["no_tool_call"]}
    assert run.patch == ""


def test_feedback_messages_and_the_final_answer_rule_come_from_the_cohort_file(local_tasks):
    run = run_agent(
        local_tasks[0],
        scripted([{"content": "thinking..."}, {"content": "FINAL ANSWER: done"}]),
        feedback={"no_tool_call": "Use a tool, please."},
        final_answer_pattern=r"FINAL ANSWER",
    )
    assert run.requests[1]["messages"][-1] == {"role": "user", "content": "Use a tool, please."}
    assert run.outcome is not None and run.outcome["exit_reason"] == "final_answer"
    assert len(run.lines) == 2


def test_malformed_and_missing_arguments_are_recorded_raw_and_answered_by_feedback(local_tasks):
    broken = call("bash", '{"command": "ls"', "call_a")
    missing = call("bash", '{"cmd": "ls"}', "call_b")
    unknown = call("python", '{"code": "1"}', "call_c")
    run = run_agent(local_tasks[0], scripted([{"tool_calls": [broken, missing, unknown]}, {"tool_calls": [submit()]}]))
    assert run.outcome is not None and run.outcome["exit_reason"] == "submitted"
    assert run.lines[0]["tool_calls"] == [broken, missing, unknown]
    assert run.lines[0]["tool_calls"][0]["function"]["arguments"] == '{"command": "ls"'
    assert run.lines[0]["observation"] is None
    feedback = run.lines[0]["feedback"]
    assert "not a JSON object" in feedback and 'no "command" string' in feedback and "`python`" in feedback
    sent = run.requests[1]["messages"]
    assert sent[-4]["tool_calls"] == [broken, missing, unknown]  # the history keeps the calls unrepaired
    assert [m["tool_call_id"] for m in sent[-3:]] == ["call_a", "call_b", "call_c"]


def test_max_turns_ends_the_unit(local_tasks):
    run = run_agent(local_tasks[0], scripted([{"tool_calls": [bash("echo x >> notes.txt")]}]), max_turns=4)
    assert run.outcome is not None and run.outcome["exit_reason"] == "max_turns" and run.outcome["turns"] == 4
    assert [line["turn"] for line in run.lines] == [0, 1, 2, 3]
    assert run.patch is not None and "+x" in run.patch and "notes.txt" in run.patch


def test_a_length_finish_is_recorded_and_the_loop_goes_on(local_tasks):
    script = [{"content": "aaaa", "finish_reason": "length"}, {"tool_calls": [submit()]}]
    run = run_agent(local_tasks[0], scripted(script))
    assert run.lines[0]["finish_reason"] == "length"
    assert run.outcome is not None and run.outcome["exit_reason"] == "submitted"


def test_server_errors_are_retried_then_become_an_infra_error(local_tasks):
    run = run_agent(local_tasks[0], scripted([{"http_status": 503, "text": "overloaded"}]), retries=2)
    assert isinstance(run.error, InfraError)
    assert "HTTP 503" in str(run.error) and "3 attempts" in str(run.error)
    assert len(run.requests) == 3
    assert len(run.lines) == 1 and "HTTP 503" in run.lines[0]["error"] and run.lines[0]["content"] is None


def test_a_transient_server_error_is_retried_transparently(local_tasks):
    state = {"n": 0}

    def respond(request):
        state["n"] += 1
        return {"http_status": 502} if state["n"] == 1 else {"tool_calls": [submit()]}

    run = run_agent(local_tasks[0], respond, retries=2)
    assert run.outcome is not None and run.outcome["exit_reason"] == "submitted"
    assert len(run.requests) == 2 and len(run.lines) == 1


def test_a_context_length_refusal_is_an_agent_exit_not_infra(local_tasks):
    text = json.dumps({"error": {"message": "This model's maximum context length is 4096 tokens. However..."}})
    run = run_agent(
        local_tasks[0], scripted([{"tool_calls": [bash("ls")]}, {"http_status": 400, "text": text}]), retries=3
    )
    assert run.error is None and run.outcome is not None
    assert run.outcome["exit_reason"] == "context_length" and run.outcome["turns"] == 1
    assert len(run.requests) == 2  # not retried


def test_other_client_errors_are_infra_without_retries(local_tasks):
    run = run_agent(local_tasks[0], scripted([{"http_status": 400, "text": "tool_choice needs --enable-auto"}]))
    assert isinstance(run.error, InfraError) and "HTTP 400" in str(run.error)
    assert len(run.requests) == 1


def test_long_observations_keep_head_and_tail(local_tasks):
    command = "python -c \"print('H' * 3000 + 'T' * 3000)\""
    script = [{"tool_calls": [bash(command)]}, {"tool_calls": [submit()]}]
    run = run_agent(local_tasks[0], scripted(script), observation_max_chars=300)
    observation = run.lines[0]["observation"]
    assert len(observation) <= 300 and "characters omitted" in observation
    assert observation.startswith("HHH") and observation.endswith("[exit code 0]")
    assert run.requests[1]["messages"][-1]["content"] == observation


def test_a_command_that_runs_too_long_is_stopped(local_tasks):
    run = run_agent(
        local_tasks[0], scripted([{"tool_calls": [bash("sleep 30")]}, {"tool_calls": [submit()]}]), command_timeout_s=1
    )
    assert "timed out after 1 s" in run.lines[0]["observation"]


def test_the_gold_agent_applies_the_gold_patch_and_the_empty_agent_nothing(local_tasks):
    task = local_tasks[1]
    gold = run_agent(task, scripted([{"http_status": 500}]), kind="gold")
    assert gold.outcome is not None and gold.outcome["exit_reason"] == "submitted"
    assert gold.requests == [] and gold.lines == []
    changed = [line for line in task.patch.splitlines() if line.startswith(("+", "-")) and line[1:2] not in "+-"]
    assert changed and all(line in gold.patch.splitlines() for line in changed)
    empty = run_agent(task, scripted([{"http_status": 500}]), kind="empty")
    assert empty.outcome is not None and empty.outcome["exit_reason"] == "submitted" and empty.patch == ""
