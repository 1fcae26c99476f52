"""The generated differential fuzzer of the canary (issue 27): seeded cases over what vLLM's speculative paths
branch on, an oracle per case, shrinking to a minimal failing case, and coverage of what a run exercised.

Modules: `case` (the Case / TimedRequest / Finding models), `space` (the sampling-parameter space read from the
served vLLM's OpenAPI schema), `generate` (seed -> Case), `execute` (send a case to one endpoint: timed, streamed,
aborted requests; `run_cases` against a cohort and its reference), `oracles` (the Oracle Protocol and its
registry), `shrink` (delta debugging of a failing case), `coverage` (what a run exercised), `mode` (the `fuzz`
canary mode that `specqual probe` runs). The public interface is written down in docs/trust/canary.md.
"""
