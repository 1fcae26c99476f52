"""The agent block is checked at load time against names the spec keeps (eval.spec.workloads); the agent must
implement exactly those: every tool has a schema, every feedback kind a default message that formats."""

from __future__ import annotations

from eval.agent.feedback import DEFAULT_FEEDBACK
from eval.agent.tools import TOOL_SCHEMAS
from eval.spec.workloads import AGENT_TOOLS, FEEDBACK_KINDS, FEEDBACK_PLACEHOLDERS


def test_the_spec_knows_the_agents_tools() -> None:
    assert set(TOOL_SCHEMAS) == set(AGENT_TOOLS)


def test_the_spec_knows_the_agents_feedback_kinds_and_placeholders() -> None:
    assert set(DEFAULT_FEEDBACK) == set(FEEDBACK_KINDS)
    for message in DEFAULT_FEEDBACK.values():
        message.format(**{p: "x" for p in FEEDBACK_PLACEHOLDERS})  # raises on a placeholder the spec does not know
