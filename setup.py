"""The optional compiled helpers of the classifier (eval/classify/_speedups.c, issue 30's speed). Everything else is
in pyproject.toml. `optional=True`: where the build fails (no C compiler, no Python headers), the package installs
without it and the classifier uses its pure-Python paths, which give the same labels."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("eval.classify._speedups", ["eval/classify/_speedups.c"], optional=True)])
