#!/usr/bin/env bash
# Set up specqual's own environment (.venv) with the test tools, from the hashed lock: every machine gets the same
# files (pip refuses a file whose hash differs). vLLM itself is not installed here: each build gets its own cached
# environment, locked too (see `specqual stack build` and locks/vllm-*.txt). Re-lock: `bash scripts/relock.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# locks/specqual.txt is the whole closure of pyproject.toml's extras dev, swebench and models, with torch's CPU build
# (torch 2.13.0+cpu is not on PyPI: pip finds it in a find-links directory, here /opt/wheels from pip's
# configuration, or in https://download.pytorch.org/whl/cpu given as PIP_EXTRA_INDEX_URL) and the transformers the
# committed organism was trained with.
.venv/bin/pip install -q --require-hashes --no-deps -r locks/specqual.txt
# gguf reads the SmolLM2 GGUF file; with its dependencies it would replace numpy, so it is locked alone.
.venv/bin/pip install -q --require-hashes --no-deps -r locks/gguf.txt
# specqual itself, editable; its build backend (setuptools) comes from the lock.
.venv/bin/pip install -q --no-deps --no-build-isolation -e .
echo "specqual installed in .venv: $(.venv/bin/specqual --help >/dev/null && echo ok)"
