#!/usr/bin/env bash
# s22 call 2: machine facts; the cost of each driver query the shim makes; baseline re-capture bench (21 rounds)
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cat .dev/COMMIT
{ lscpu; cat /sys/kernel/mm/transparent_hugepage/enabled; command -v perf || echo "no perf"; } > $OUT/machine.txt 2>&1
grep -E "Model name|^CPU\(s\)|L1d|L2|L3|NUMA node\(s\)" $OUT/machine.txt
.dev/s22/qcost | tee $OUT/qcost.txt
ROUNDS=21 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "done at $SECONDS s"
