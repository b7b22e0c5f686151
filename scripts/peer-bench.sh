#!/bin/sh
# Side by side with goNELI on tansu (BENCHMARKS.md, "Side by side with goNELI"):
# RUNS runs of each scenario for goNELI (heartbeat.interval.ms=600) and for
# `neli exec` at its defaults, interleaved run by run, every member's group
# client logging its JoinGroup/SyncGroup/heartbeat steps (debug=cgrp) so that
# scripts/handover-phases.py can split each handover into its phases.
#
#   sh scripts/peer-bench.sh OUT [RUNS] [SCENARIOS]
#
# Needs ../shared/peer-goneli built (its README.txt: build.sh -> /tmp/peer/bin)
# and /tmp/peer/bin/neli (cargo build -p neli --bin neli; cp target/debug/neli /tmp/peer/bin/).
set -eu
OUT=${1:?usage: peer-bench.sh OUT [RUNS] [SCENARIOS]}
RUNS=${2:-5}
SCENARIOS=${3:-graceful crash pause follower-restart}
case "$RUNS" in ''|*[!0-9]*) echo "peer-bench: RUNS must be a whole number of runs (got '$RUNS')" >&2; exit 2;; esac
for s in $SCENARIOS; do
  case "$s" in graceful|crash|pause|follower-restart) ;;
    *) echo "peer-bench: unknown scenario '$s' (graceful, crash, pause, follower-restart)" >&2; exit 2;; esac
done
HERE=$(cd "$(dirname "$0")/.." && pwd)
PEER=${PEER:-$HERE/../shared/peer-goneli}
for bin in /tmp/peer/bin/gonelimember /tmp/peer/bin/neli /tmp/peer/bin/ticker; do
  [ -x "$bin" ] || { echo "peer-bench: $bin is missing (see the header of this script)" >&2; exit 2; }
done
mkdir -p "$OUT"
k=1
while [ "$k" -le "$RUNS" ]; do
  for s in $SCENARIOS; do
    echo "peer-bench: run $k of $RUNS, $s" >&2
    python3 "$PEER/orchestrate.py" --impl goneli --variant hb600 -X heartbeat.interval.ms=600 -X debug=cgrp \
      --scenario "$s" --runs 1 --run-start "$k" --out "$OUT" > /dev/null
    RUST_LOG=neli=debug,librdkafka=debug python3 "$PEER/orchestrate.py" --impl neli --variant default \
      --neli-arg=-X --neli-arg=debug=cgrp --scenario "$s" --runs 1 --run-start "$k" --out "$OUT" > /dev/null
  done
  k=$((k + 1))
done
python3 "$PEER/summarize.py" "$OUT/results.jsonl"
