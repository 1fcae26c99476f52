"""`specqual repro RUN_DIR COHORT` (issue 32 item 1): from a failing cohort's canary evidence to a standalone
reproducer and an upstream-style report. Modules: `evidence` (the failing case and its reference, from the probe
records), `write` (repro.py from `repro_py.txt`, REPORT.md), `run` (confirm, shrink with the fuzzer's shrinking,
repeat, write).
"""
