#!/usr/bin/env bash
# Times `neli-lab check` on the model checker's benchmark bounds (BENCHMARKS.md,
# "Model checker") for two builds in one run, alternating, so that the ratio
# after/before is measured under the same load.
#
#   scripts/bench-check.sh BEFORE_BINARY AFTER_BINARY [REPEATS]
#
# Build each binary with `cargo build --release -p neli-lab`
# at the commit to compare and copy `target/release/neli-lab` aside. Prints one
# line per run: bound, search, threads, binary, the `explored` line, user and
# wall seconds.
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 BEFORE_BINARY AFTER_BINARY [REPEATS]" >&2
    exit 2
fi
before=$1 after=$2 repeats=${3:-3}
for b in "$before" "$after"; do
    [[ -x $b ]] || { echo "error: $b is not an executable neli-lab" >&2; exit 2; }
done
A=(check --members 3 --ticks 10 --pauses 1 --isolations 1 --heartbeat-timeout 2 --session-timeout 6 --sim-seeds 0)
run() {
    local label=$1 reps=$2
    shift 2
    for ((r = 0; r < reps; r++)); do
        for b in "$before" "$after"; do
            local line
            line=$({ /usr/bin/time -f "%U user %e wall" "$b" "${A[@]}" "$@" | grep '^explored'; } 2>&1 | tr '\n' ' ')
            echo "$label | $b | $line"
        done
    done
}
uptime
run "A, BFS + symmetry, 2 threads" "$repeats"
run "A, BFS + symmetry, 1 thread" "$repeats" --threads 1
run "A, DFS + symmetry, 2 threads" "$repeats" --dfs
run "A, DFS + symmetry, 1 thread" "$repeats" --dfs --threads 1
run "A + clock step, DFS + symmetry, 2 threads" 2 --dfs --clock-steps 1
run "A + log loss, DFS + symmetry, 2 threads" 2 --dfs --log-losses 1
run "A + clock step, BFS + symmetry, 2 threads" 1 --clock-steps 1
uptime
