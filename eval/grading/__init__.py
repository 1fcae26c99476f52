"""Grading with the SWE-bench harness: docker/Modal through its run_instance, local in bwrap; grade.json records."""
