# Recipe sweep for the organism on a GPU node (benchmarks/organism_sweep.py); see docs/trust/organism.md.
python3 -m pip install -q --no-index --find-links .organism-wh --target /tmp/pl transformers==5.24.0 >/dev/null 2>&1
export PYTHONPATH=/tmp/pl:$PWD CUBLAS_WORKSPACE_CONFIG=:4096:8 SWEEP_EM=48 SWEEP_ACC=8
C='"device": "cuda", "steps": 900'
i=0
for cfg in \
 "$C, \"hidden_size\": 64, \"intermediate_size\": 128, \"drills\": 8" \
 "$C, \"hidden_size\": 96, \"intermediate_size\": 192, \"drills\": 8" \
 "$C, \"hidden_size\": 64, \"intermediate_size\": 128, \"drills\": 4" \
 "$C, \"hidden_size\": 96, \"intermediate_size\": 192, \"pattern\": \"M*M*-\", \"learning_rate\": 0.002, \"drills\": 8" \
 "$C, \"hidden_size\": 64, \"intermediate_size\": 128, \"drills\": 12" ; do
  OMP_NUM_THREADS=2 timeout 300 python3 benchmarks/organism_sweep.py /tmp/sw$i "[{$cfg}]" 150 > $OUT/o$i.jsonl 2> $OUT/o$i.err &
  i=$((i+1))
done
wait
cat $OUT/o*.jsonl | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); o = d['options']
    print(o.get('hidden_size'), o.get('pattern', 'M*M-'), o.get('learning_rate', ''), o.get('drills', ''), d['step'], d['train_s'], d['exact'], d['accept'], d['per_pos'])
"
tail -n 1 $OUT/o0.err
