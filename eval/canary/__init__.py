"""The canary probe: a minutes-long, deterministic workload that creates the PR #55178 trigger conditions.

Greedy probes are sent as token ids to `/v1/completions` (and a tool-call chat to `/v1/chat/completions`);
each request's output token ids are compared, token by token, with the same probe's output on a reference
cohort. Modules: `prompts` (token-id prompts from the model's tokenizer), `client` (HTTP), `modes` (one function
per probe mode), `records` (the probe record of results/README.md), `compare` (divergence, per-cohort summary,
verdict), `run` (a whole matrix, or one stack), `table` (terminal summary).
"""
