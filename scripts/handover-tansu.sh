#!/usr/bin/env bash
# Graceful handovers of `neli exec` on tansu, from neli's own logs
# (BENCHMARKS.md, "Read-back wait T/40"): three members (T = 1 s, S = 3 s)
# on a fresh broker and group per run; once one leads, SIGTERM it; the
# successor's log gives when it was dealt the role, when it read its first
# own heartbeat back (the evidence phase) and when it leased. Needs no Go:
# for the side by side with goNELI see scripts/peer-bench.sh.
#
#   bash scripts/handover-tansu.sh OUT RUNS BIN [BIN...]
#
# Runs are interleaved across the binaries (run 1 of each, then run 2, ...).
# Extra `neli exec` arguments go in NELI_ARGS (e.g. NELI_ARGS="-X debug=cgrp").
set -euo pipefail
OUT=${1:?usage: handover-tansu.sh OUT RUNS BIN [BIN...]}
RUNS=${2:?usage: handover-tansu.sh OUT RUNS BIN [BIN...]}
shift 2
[ $# -ge 1 ] || { echo "handover-tansu: name at least one neli binary" >&2; exit 2; }
case "$RUNS" in ''|*[!0-9]*) echo "handover-tansu: RUNS must be a whole number (got '$RUNS')" >&2; exit 2;; esac
bins=()
for bin in "$@"; do
  [ -f "$bin" ] && [ -x "$bin" ] || { echo "handover-tansu: $bin is not an executable file" >&2; exit 2; }
  bins+=("$(realpath "$bin")") # run as given, not looked up in PATH
done
HERE=$(cd "$(dirname "$0")/.." && pwd)
TANSU=$(sh "$HERE/scripts/fetch-tansu.sh")
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; pids=(); }
trap cleanup EXIT

# Waits up to $2 seconds for a line matching $1 in any member log of $3.
wait_for() {
  local deadline=$((SECONDS + $2))
  until grep -q "$1" "$3"/m*.log 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

one_run() { # BIN DIR
  local bin=$1 dir=$2 port
  mkdir -p "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$TANSU" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://127.0.0.1:$port" \
    > "$dir/tansu.log" 2>&1 &
  pids+=($!)
  disown $!
  sleep 1
  for i in 1 2 3; do
    # shellcheck disable=SC2086
    RUST_LOG=neli=debug,librdkafka=debug "$bin" exec --bootstrap-servers "127.0.0.1:$port" \
      --group "handover-$(basename "$dir")-$$" --name "m$i" --heartbeat-timeout 1s --session-timeout 3s \
      ${NELI_ARGS:-} -- sh -c 'while :; do sleep 1; done' > "$dir/m$i.log" 2>&1 &
    pids+=($!)
    disown $!
    echo $! > "$dir/m$i.pid"
  done
  wait_for "event=Acquired" 60 "$dir" || { echo "handover-tansu: nobody led in $dir within 60 s" >&2; cleanup; return 1; }
  sleep 5 # a settled group: every member joined
  # The member whose latest transition is an acquisition leads now.
  local leader="" log
  for log in "$dir"/m*.log; do
    if grep "leadership transition" "$log" | tail -1 | grep -q "event=Acquired"; then leader=$log; break; fi
  done
  [ -n "$leader" ] || { echo "handover-tansu: nobody leads in $dir after the group settled" >&2; cleanup; return 1; }
  date -u +%Y-%m-%dT%H:%M:%S.%6NZ > "$dir/signal_at"
  kill -TERM "$(cat "${leader%.log}.pid")"
  echo "${leader##*/}" > "$dir/old_leader"
  sleep 8
  cleanup
}

for k in $(seq 1 "$RUNS"); do
  for bin in "${bins[@]}"; do
    tag=$(basename "$bin")
    echo "handover-tansu: run $k of $RUNS, $tag" >&2
    # A run that fails is reported and skipped; the batch goes on.
    one_run "$bin" "$OUT/$tag/run$k" || true
  done
done
python3 "$HERE/scripts/handover-tansu.py" "$OUT"
