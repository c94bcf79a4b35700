# s22 call 6 (inline command, at 79de809, the last device seconds): the re-capture bench at 61 rounds,
# then launch_overhead with a 60 s limit (it ran out of time before its summary: rounds only in launch.txt)
export LD_LIBRARY_PATH=$PWD/.dev/extra; B=$PWD/.dev/build
ROUNDS=61 timeout 120 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture61.txt
timeout 60 bash bench/launch_overhead.sh $B 2>&1 | tail -4 | tee $OUT/launch.txt
