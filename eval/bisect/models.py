"""The bisect record: every tested step with its runs, and the first bad / last good step."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
Outcome = Literal["good", "bad", "skip"]
Status = Literal["found", "all_good", "first_is_bad", "undecided"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepRecord(Strict):
    """One tested build."""

    index: int = Field(description="position of the build in the ordered list (0 = oldest)")
    label: str = Field(description="the build, as the user named it (a version, a wheel, 'base + 3 patches')")
    outcome: Outcome = Field(description="good: every run exited 0; bad: a run exited 1; skip: untestable (125)")
    exit_codes: list[int] = Field(description="exit code of every run of the reproducer on this build, in order")
    runs: int = Field(description="how many times the reproducer ran on this build (the repeat count)")
    flaky: bool = Field(description="runs on this build disagreed (some exited 0, some 1)")
    seconds: float = Field(description="wall time of preparing the build and all its runs")
    detail: str = Field("", description="the build's environment or tree, for the record")


class BisectResult(Strict):
    """The outcome of one bisect."""

    schema_version: int = Field(SCHEMA_VERSION, description="version of this record's layout")
    labels: list[str] = Field(description="every build of the ordered list, oldest first")
    reproducer: str = Field(description="the command (or canary subset) that judged each build")
    repeats: int = Field(description="runs required for a build to count as good (a bad run ends a build early)")
    steps: list[StepRecord] = Field(description="the builds tested, in the order they were tested")
    first_bad: int | None = Field(description="index of the first bad build; None when no build is bad")
    last_good: int | None = Field(description="index of the last good build before it; None when none is good")
    status: Status = Field(
        description="found: last_good + 1 == first_bad (skips aside); first_is_bad: the oldest build already "
        "shows the bug; all_good: the newest does not; undecided: skipped builds hide the boundary"
    )
    flaky_steps: list[int] = Field(description="indices of builds whose runs disagreed")

    def summary(self) -> str:
        def name(i: int | None) -> str:
            return "-" if i is None else f"{self.labels[i]} (#{i})"

        runs = sum(s.runs for s in self.steps)
        head = f"{self.status}: first bad {name(self.first_bad)}, last good {name(self.last_good)}"
        flaky = f", flaky builds: {', '.join(self.labels[i] for i in self.flaky_steps)}" if self.flaky_steps else ""
        return f"{head}; {len(self.steps)} of {len(self.labels)} builds tested, {runs} runs{flaky}"
