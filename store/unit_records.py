"""Typed records of one SWE-bench unit and of a cohort's early stop (results/README.md).

`<cohort>/units/<instance>/r<k>/`: trajectory.jsonl (TrajectoryLine), verdict.json (VerdictRecord, written last),
grade.json (GradeRecord); `<cohort>/early_stop.json` (EarlyStopRecord). A field an older writer did not write has a
default, so the committed results/examples/ directories still read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION

RolloutStatus = Literal["completed", "infra_error"]
GradeStatus = Literal["resolved", "unresolved", "empty_patch", "patch_failed", "infra_error"]
GRADE_STATUSES: tuple[str, ...] = ("resolved", "unresolved", "empty_patch", "patch_failed", "infra_error")


class TrajectoryLine(BaseModel):
    """One line of `trajectory.jsonl`: one model response as returned, and what the agent did with it."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    turn: int = Field(description="The turn number, from 0.")
    request_id: str | None = Field(None, description="The server's request id (null: the request failed).")
    server: str | None = Field(None, description="Base URL of the server that answered.")
    latency_s: float | None = Field(None, description="Seconds from request to full response.")
    finish_reason: str | None = Field(None, description="The choice's finish_reason (stop, length, tool_calls).")
    content: str | None = Field(None, description="The message content, as returned.")
    reasoning_content: str | None = Field(None, description="The reasoning content, when the server sent one.")
    tool_calls: list[dict[str, Any]] | None = Field(None, description="The tool calls, as returned.")
    token_ids: list[int] | None = Field(None, description="The generated token ids, when the server returned them.")
    prompt_token_ids: list[int] | None = Field(None, description="The prompt token ids, when returned.")
    usage: dict[str, Any] | None = Field(None, description="The response's usage block (token counts).")
    observation: str | None = Field(None, description="What the tools returned to the model for this turn.")
    feedback: str | None = Field(None, description="The agent's format feedback to the model for this turn.")
    error: str | None = Field(None, description="Why the request failed (infrastructure); null when it answered.")


class VerdictRecord(BaseModel):
    """`verdict.json`: how a unit's rollout ended; written last, so a unit is done once it parses."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The unit's cohort.")
    instance_id: str = Field(description="The SWE-bench instance id.")
    repo: str = Field(description="The instance's repository, owner/name.")
    repeat: int = Field(description="The repeat index k of `r<k>`.")
    status: RolloutStatus = Field(description="completed, or infra_error (never a low score).")
    infra_reason: str | None = Field(None, description="Why the rollout failed for infrastructure reasons.")
    exit_reason: str | None = Field(None, description="How the agent stopped (submitted, max_turns, ...).")
    turns: int = Field(0, description="Model responses in the trajectory.")
    prompt_tokens: int = Field(0, description="Prompt tokens over all turns (usage).")
    completion_tokens: int = Field(0, description="Completion tokens over all turns (usage).")
    wall_s: float | None = Field(None, description="Seconds the unit took (null: imported without a time).")
    patch_files: int = Field(0, description="Files the patch touches.")
    patch_lines_added: int = Field(0, description="Lines the patch adds.")
    patch_lines_removed: int = Field(0, description="Lines the patch removes.")
    attempts: int = Field(1, description="Attempts made (infra retries + 1).")
    seed: int | None = Field(None, description="The unit's sampling seed (null: imported).")
    imported_from: str | None = Field(None, description="The source file of an imported unit (specqual import).")

    def record(self) -> dict[str, Any]:
        """The JSON object, `imported_from` only on an imported unit (the files written before it lack it)."""
        return self.model_dump(mode="json", exclude={"imported_from"} if self.imported_from is None else set())


class GradeRecord(BaseModel):
    """`grade.json`: the harness's decision for one unit."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    grader: str = Field(description="The grader's name (swebench, a test double).")
    status: GradeStatus = Field(description="resolved, unresolved, empty_patch, patch_failed or infra_error.")
    resolved: bool | None = Field(description="Whether the tests passed; null on infra_error.")
    infra_reason: str | None = Field(None, description="Why grading failed for infrastructure reasons.")
    tests: dict[str, Any] = Field(default_factory=dict, description="The harness's test report (FAIL_TO_PASS ...).")
    graded_at: str = Field(description="ISO time of grading.")


class EarlyStopRecord(BaseModel):
    """`<cohort>/early_stop.json`: the sequential test decided the cohort before every instance ran."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort that stopped.")
    control: str | None = Field(description="The control it was compared with.")
    decision: Literal["PASS", "FAIL"] = Field(description="The decision that stopped it.")
    decided_at: int = Field(description="The instance (1-based, in the shared order) where it was decided.")
    prefix: int | None = Field(None, description="Instances of the shared order complete in both cohorts.")
    planned: int = Field(description="Instances planned.")
    estimate: float | None = Field(None, description="The drop in resolve rate at the decision (fraction).")
    lower: float = Field(description="Lower end of the drop's confidence sequence there.")
    upper: float = Field(description="Upper end of the drop's confidence sequence there.")
    margin: float = Field(description="The policy's margin (fraction).")
    alpha: float = Field(description="The one-sided error rate of the test.")
    method: str | None = Field(None, description="The sequential method (analysis.sequential.METHOD).")
    stopped_at: str = Field(description="ISO time of the stop.")
    units_finished_when_asked: int = Field(description="Units of the cohort finished when the test was asked.")
    reason: str = Field(description="The decision in words.")


class Evidence(BaseModel):
    """A span of a turn that a detector flagged."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="The label the span supports.")
    field: str = Field(description="The trajectory field it is in (content, reasoning_content, tool_calls ...).")
    start: int = Field(description="Character offset where the span starts in the field.")
    end: int = Field(description="Character offset where the span ends.")
    text: str = Field(description="The matched text, made printable.")
    detail: str | None = Field(None, description="Why the detector flagged it (absent when it says nothing more).")


class TurnLabels(BaseModel):
    """The labels of one labelled turn."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(description="The turn number of trajectory.jsonl.")
    labels: list[str] = Field(description="Labels of the turn, in table order.")
    evidence: list[Evidence] = Field(default_factory=list, description="The spans behind the labels.")


class LabelsRecord(BaseModel):
    """`labels.json`: the classifier's labels of one unit's trajectory (re-derived by `specqual classify`)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    classifier_version: str = Field(description="The classifier's version (eval.classify).")
    labels: dict[str, int] = Field(description="Label -> turns with it (every label of the table, zeros included).")
    severity: dict[str, str] | None = Field(None, description="Label -> severity; older files lack it.")
    first_corrupted_turn: int | None = Field(description="The first turn with an error-severity label.")
    corrupted: bool = Field(description="Whether any turn has an error-severity label.")
    n_turns: int | None = Field(None, description="Turns classified; older files lack it.")
    turns: list[TurnLabels] = Field(description="The labelled turns only.")

    def record(self) -> dict[str, Any]:
        """The JSON object as the classifier writes it: optional fields only when set."""
        return self.model_dump(mode="json", exclude_none=True, exclude={"first_corrupted_turn"}) | {
            "first_corrupted_turn": self.first_corrupted_turn
        }


class GoldCheck(BaseModel):
    """One instance of `specqual grade validate-gold`: its gold and empty patches' grades over the runs."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(description="The SWE-bench instance id.")
    gold: list[str] = Field(description="Grade status of the gold patch, per run.")
    empty: list[str] = Field(description="Grade status of the empty patch, per run.")
    reasons: list[str] = Field(description="Why the instance is excluded (empty: it is kept).")


class GoldValidation(BaseModel):
    """`<exclusions>.logs/validate-gold.json`: every instance's gold/empty check behind an exclusions file."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    dataset: str = Field(description="The dataset validated (name or path).")
    runs: int = Field(description="Runs of each patch per instance.")
    instances: list[GoldCheck] = Field(description="The instances, in dataset order.")
