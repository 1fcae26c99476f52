#!/usr/bin/env bash
# The test command (README, .ci/run): the whole suite, in two pytest processes at once.
#
#   lane 1 (this terminal): unit, integration, docker and Slurm tiers, then the real-vLLM tests that need a docker
#           engine or the Slurm cluster (last: tests/conftest.py), so that they never compete with the docker and
#           Slurm tests of the other tiers for the engine or the cluster's two CPUs;
#   lane 2 (background, `nice -n 5`): the real-vLLM tests on this host (marker `vllm`, not `docker`, not `slurm`):
#           canary, bug zoo, stacks, P/D, reliability, CPU patches. Its output is printed when both lanes are done
#           (and kept in $SPECQUAL_TEST_LOG, default a temporary file named on the first line).
#
# On the 2-core CI machine one after the other took about 60 minutes (2026-12-07); beside each other the two lanes
# did 84 minutes of (loaded) test time in 45 minutes of one rehearsal (docs/develop/testing.md, "CI": measured on a
# loaded machine, not yet on a quiet one). Arguments go to both processes (`-x`, `-k EXPR`, paths); with `-m` given, or
# SPECQUAL_TEST_LANES=1, one process runs everything in order instead.
# Exit status: 0 when both lanes passed (a lane that selected no test counts as passed), else the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
py=${SPECQUAL_TEST_PYTHON:-.venv/bin/python}

one_lane=${SPECQUAL_TEST_LANES:-2}
for arg in "$@"; do
    case $arg in -m | -m* | --markexpr*) one_lane=1 ;; esac
done
if [ "$one_lane" = 1 ]; then
    exec "$py" -m pytest -q "$@"
fi

log=${SPECQUAL_TEST_LOG:-$(mktemp -t specqual-vllm-lane.XXXXXX)}
basetemp=$(mktemp -d -t specqual-vllm-lane-tmp.XXXXXX)
echo "real-vLLM lane: running beside this one, its output at the end (log: $log)"
nice -n 5 "$py" -m pytest -q -p no:cacheprovider --basetemp="$basetemp" -m "vllm and not docker and not slurm" \
    "$@" > "$log" 2>&1 &
lane2=$!
trap 'kill -TERM "$lane2" 2>/dev/null; wait "$lane2"; cat "$log"; exit 130' INT TERM

"$py" -m pytest -q -m "not vllm or docker or slurm" "$@"
code1=$?
wait "$lane2"
code2=$?
echo
echo "=== real-vLLM lane (vllm and not docker and not slurm), exit $code2 ==="
cat "$log"
[ "$code1" = 5 ] && code1=0 # pytest's "no tests collected" (a -k or a path that selects none in this lane)
[ "$code2" = 5 ] && code2=0
if [ "$code1" != 0 ]; then exit "$code1"; fi
exit "$code2"
