#!/usr/bin/env bash
# Re-lock every environment specqual installs, with hashes (uv pip compile --generate-hashes):
#   locks/specqual.txt         specqual's .venv: pyproject.toml's extras dev, swebench, models + locks/specqual.in
#   locks/gguf.txt             gguf alone (installed --no-deps: its dependencies would replace numpy)
#   locks/vllm-*.txt           each vLLM build environment, from locks/vllm-*.in (eval/stacks/envs.py installs it)
# A version already in a lock is kept unless it conflicts; `bash scripts/relock.sh --upgrade` takes the newest
# releases (then re-run the demo and the organism test: docs/develop/testing.md, "Locked environments").
# Extra arguments go to every `uv pip compile` (e.g. --upgrade-package transformers).
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
tools=.cache/relock-tools
if [ ! -x "$tools/bin/uv" ] || [ "$("$tools/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  python3 -m venv "$tools" && "$tools/bin/pip" install -q "uv==$UV_VERSION"
fi
uv="$tools/bin/uv"
# torch 2.13.0+cpu is not on PyPI: it comes from a find-links directory (this workplace's /opt/wheels) or from
# https://download.pytorch.org/whl/cpu (set RELOCK_TORCH_INDEX to use that instead).
sources=()
[ -d /opt/wheels ] && sources+=(--find-links /opt/wheels)
[ -n "${RELOCK_TORCH_INDEX:-}" ] && sources+=(--extra-index-url "$RELOCK_TORCH_INDEX" --index-strategy unsafe-best-match)
target=(--python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes --no-emit-find-links)
compile() { "$uv" pip compile -q "${target[@]}" "${sources[@]}" --custom-compile-command "bash scripts/relock.sh" "$@"; }

compile pyproject.toml locks/specqual.in --extra dev --extra swebench --extra models -o locks/specqual.txt "$@"
echo gguf | compile - --no-deps -o locks/gguf.txt "$@"
# vLLM on CPU: the CUDA builds of torchvision/torchaudio/torchcodec are left out (vllm serve dies on them; text
# models do not import them), so the lock is the whole environment and installs with --no-deps.
printf 'torchvision\ntorchaudio\ntorchcodec\n' > .cache/relock-tools/cpu-excludes.txt
for spec in locks/vllm-*.in; do
  compile "$spec" --excludes .cache/relock-tools/cpu-excludes.txt -o "${spec%.in}.txt" "$@"
done
echo "locked: $(ls locks/*.txt | tr '\n' ' ')"
