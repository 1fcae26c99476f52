"""The results directory of a run: the contract between the pipeline (`eval`) and the reports (`analysis`).

Both may import `store`; `store` imports nothing else of specqual. See results/README.md for the layout.
"""
