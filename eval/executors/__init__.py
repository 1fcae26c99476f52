"""Executors: where a cohort's stack and rollouts run (`executor.kind`): local processes or Slurm jobs."""
