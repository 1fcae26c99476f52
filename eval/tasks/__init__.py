"""SWE-bench tasks: dataset loading, the exclusion list, and the generated local task set."""
