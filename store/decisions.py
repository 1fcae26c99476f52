"""What `python -m analysis decide RUN --json` prints and the pipeline's early stop reads (Decisions).

The analysis computes it from finished units (analysis.decide); eval never imports analysis, so this record is
the contract between the two processes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION


class Comparison(BaseModel):
    """One cohort's comparison with its control on the longest prefix complete in both."""

    model_config = ConfigDict(extra="forbid")

    control: str = Field(description="The control cohort.")
    decision: Literal["PASS", "FAIL", "INCONCLUSIVE"] = Field(description="The sequential test's decision.")
    decided_at: int | None = Field(description="The instance where it was decided; null while INCONCLUSIVE.")
    prefix: int = Field(description="Instances of the shared order complete in both cohorts.")
    planned: int = Field(description="Instances planned.")
    estimate: float | None = Field(description="The drop in resolve rate (fraction); null with no instance.")
    lower: float = Field(description="Lower end of the drop's confidence sequence.")
    upper: float = Field(description="Upper end of the drop's confidence sequence.")
    margin: float = Field(description="The policy's non-inferiority margin (fraction).")
    alpha: float = Field(description="The one-sided error rate of the test.")


class Decisions(BaseModel):
    """Every comparison of a run, decided or not."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    method: str = Field(description="The sequential method (analysis.sequential.METHOD).")
    repeats: int = Field(description="Repeats per instance and cohort.")
    comparisons: dict[str, Comparison] = Field(description="Cohort name -> its comparison with its control.")


class ScenarioCost(BaseModel):
    """Operating characteristics of one comparison in one scenario (simulated sequential test)."""

    model_config = ConfigDict(extra="forbid")

    drop: float = Field(description="The true drop in resolve rate simulated (fraction).")
    p_pass: float = Field(description="Share of simulated runs that end PASS.")
    p_fail: float = Field(description="Share that end FAIL.")
    p_inconclusive: float = Field(description="Share still undecided at the cap.")
    median_instances: float = Field(description="Median instances used (the cap for runs that never decide).")
    p90_instances: float = Field(description="90th percentile of instances used.")
    cap: int = Field(description="Instances available.")
    paths: int = Field(description="Simulated runs.")


class PlanCost(BaseModel):
    """What `python -m analysis plan-cost --json` prints and `specqual plan` reads (eval/plan.py)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    rate: float = Field(description="The control's expected resolve rate.")
    icc: float = Field(description="ICC between repeats of an instance.")
    repeats: int = Field(description="Repeats per instance and cohort.")
    margin: float = Field(description="The non-inferiority margin (fraction).")
    alpha: float = Field(description="The one-sided error rate of each test.")
    cap: int = Field(description="Instances available (the run's size).")
    scenarios: dict[str, ScenarioCost] = Field(description="Scenario name -> its operating characteristics.")
