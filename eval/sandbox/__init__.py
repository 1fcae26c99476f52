"""Sandboxes where agent commands (and local grading) run: bwrap for local task sets, docker for SWE-bench images."""
