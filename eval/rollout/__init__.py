"""SWE-bench rollouts: units (cohort x instance x repeat) scheduled against one server, resumable, infra-aware.

`eval.rollout.run.run_rollouts` is the entry point (used by `specqual run` and `specqual rollout`).
"""
