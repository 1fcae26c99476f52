"""`<report dir>/summary.json`: the report's machine-readable verdicts (analysis.qualify.summary_json)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION


class ProbeCounts(BaseModel):
    """The canary's probes of a cohort."""

    model_config = ConfigDict(extra="forbid")

    total: int = Field(description="Probes run.")
    compared: int | None = Field(description="Probes compared with the control.")
    diverged: int | None = Field(description="Probes whose output diverged beyond the oracle's tolerance.")


class CohortResult(BaseModel):
    """One cohort's row of the report; fields a workload did not produce are null."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="Row label.")
    factors: dict[str, str] = Field(description="Factor name -> value name.")
    control: str | None = Field(description="The cohort's control, if it is compared.")
    units: int | None = Field(description="SWE-bench units counted.")
    resolved: int | None = Field(description="Units resolved.")
    graded: int | None = Field(description="Units graded (not infra).")
    accuracy: float | None = Field(description="resolved / graded.")
    ci95: list[float] | None = Field(description="95% interval of the accuracy (cluster bootstrap).")
    infra_failures: int | None = Field(description="Units lost to infrastructure.")
    corrupted_trajectories: int | None = Field(description="Units with an error-severity label.")
    labels: dict[str, int] | None = Field(description="Label -> units with it.")
    probes: ProbeCounts | None = Field(description="The canary's probes (null: no canary).")
    acceptance: float | None = Field(description="Speculative acceptance rate (store.acceptance; null: none).")
    verdict: str | None = Field(description="PASS, FAIL or INCONCLUSIVE (null: not judged).")
    reason: str | None = Field(description="Why, in words.")


class ReportSummary(BaseModel):
    """`summary.json`: every cohort's verdict and the numbers behind it."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    run_id: str | None = Field(description="The run directory's name.")
    ci_method: str = Field(description="How the accuracy intervals were computed.")
    decision_method: str | None = Field(None, description="The sequential method (older summaries lack it).")
    cohorts: dict[str, CohortResult] = Field(description="Cohort name -> its result, in matrix order.")
