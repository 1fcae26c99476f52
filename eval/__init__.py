"""specqual pipeline: cohort specs, stacks, workloads, agent, sandboxes, grading, classification, CLI."""
