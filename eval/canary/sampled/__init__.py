"""The canary's sampled mode (issue 28): does speculative decoding sample from the right distribution?

Seeded requests at temperature > 0 go to the cohort's server; the reference stack (speculation off) re-scores each
prompt + continuation with full-vocabulary prompt logprobs, the request's sampling transforms are re-applied as vLLM
applies them (`transforms`), and every sampled token gets a randomized PIT under that exact distribution (`stats`).
Under a correct stack the PITs are iid uniform; an anytime-valid e-process on them FAILs with a bounded false-alarm
rate at every sample size, and an equivalence confidence sequence PASSes once a shift above a stated tolerance is
excluded. docs/trust/sampled.md says why the reference is exact and what was measured.
"""
