#!/usr/bin/env bash
# Soak: runs a test command N times in a row, optionally with a CPU hog of
# two busy threads beside it, and prints pass/fail counts per test.
# Not part of CI (it takes N times the suite); docs/benchmarks-log.md has its figures.
#
#   scripts/soak.sh [-n N] [--hog] [--keep DIR] [-- TEST COMMAND...]
#
# The default command is the README's test command, `cargo test --workspace`,
# run with --no-fail-fast so one failure does not hide the rest. Examples:
#   scripts/soak.sh -n 10                                   # the whole suite, idle
#   scripts/soak.sh -n 5 --hog                              # the whole suite beside 2 busy threads
#   scripts/soak.sh -n 20 -- cargo test -p neli-testcontainers --test it broker_restart
# Exit status: 0 if every run passed, 1 otherwise, 2 on bad arguments.
set -u

runs=3
hog=0
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) [ $# -ge 2 ] || { echo "soak: -n needs a number" >&2; exit 2; }
        runs="$2"; shift 2 ;;
    --hog) hog=1; shift ;;
    --keep) [ $# -ge 2 ] || { echo "soak: --keep needs a directory" >&2; exit 2; }
        keep="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$runs" in ''|*[!0-9]*) echo "soak: -n must be a positive integer, got '$runs'" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] || { echo "soak: -n must be at least 1" >&2; exit 2; }
if [ $# -eq 0 ]; then set -- cargo test --workspace --no-fail-fast; fi

cd "$(dirname "$0")/.." || exit 2
logs="${keep:-$(mktemp -d)}"
mkdir -p "$logs" || exit 2

hogs=()
stop_hogs() {
  # Only the processes this script started, by PID.
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hogs[@]}"; do wait "$p" 2>/dev/null; done
  hogs=()
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM
if [ "$hog" = 1 ]; then
  for _ in 1 2; do ( while :; do :; done ) & hogs+=("$!"); done
  echo "soak: CPU hog running (PIDs ${hogs[*]})"
fi

echo "soak: $runs runs of: $* (logs in $logs)"
failed_runs=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  "$@" >"$logs/run-$i.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  [ $rc -eq 0 ] || failed_runs=$((failed_runs + 1))
  echo "soak: run $i/$runs exit $rc in ${secs}s"
done
stop_hogs

# Per-test counts from libtest's "test NAME ... ok|FAILED" lines.
cat "$logs"/run-*.log | awk '
  /^test .* \.\.\. (ok|FAILED)$/ {
    name = $2; res = $NF
    if (res == "ok") pass[name]++; else fail[name]++
    seen[name] = 1
  }
  END {
    n = 0; bad = 0
    for (t in seen) { n++; if (fail[t] > 0) { bad++; printf "FLAKY/FAILING %s: %d passed, %d failed\n", t, pass[t], fail[t] } }
    printf "soak: %d distinct tests, %d with a failure\n", n, bad
  }'
total_pass=$(cat "$logs"/run-*.log | grep -cE '^test .* \.\.\. ok$')
total_fail=$(cat "$logs"/run-*.log | grep -cE '^test .* \.\.\. FAILED$')
echo "soak: $((runs - failed_runs)) of $runs runs passed"
echo "$total_pass passed, $total_fail failed"
[ "$failed_runs" -eq 0 ]
