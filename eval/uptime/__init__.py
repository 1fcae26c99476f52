"""Bugs that grow with uptime (issue 29): canary phases on one server before, during and after a soak, and an
acceptance monitor with a sequential change detector.

- `plan`: the bounded, seeded soak plan (agent-like sessions with shared prefixes, long and short, aborts);
- `traffic`: sends the plan concurrently against a running stack, pausing for the during-load phases;
- `phases`: the probes of a phase (prefix-hit chats) and their comparison with the reference and the fresh phase;
- `detector`: a betting e-detector on per-window acceptance (bounded false alarms);
- `monitor`: per-window and per-position acceptance from metrics.jsonl (`store.acceptance.windows`);
- `verdict`: the cohort's uptime verdict and its reasons (`uptime.json`);
- `session`: `soak_cohort` (the soak alone) and `around_rollouts` (the phases around any other load).
"""
