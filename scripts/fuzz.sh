#!/usr/bin/env bash
# Fuzzing: runs each cargo-fuzz target in fuzz/ for a set time, then merges
# what it found into the corpus kept in the repository (fuzz/corpus/<target>,
# replayed by `cargo test --workspace`). Not part of CI. fuzz/README.md says
# what each target checks; docs/benchmarks-log.md has the figures of the last run.
#
#   scripts/fuzz.sh [-t SECONDS] [-j JOBS] [TARGET...]
#
# -t  seconds per target (default 600); -j targets run at once (default 1;
#     on 2 cores, 2 keeps both busy). Release build with debug assertions,
#     so an integer overflow is a finding too. Needs the nightly toolchain
#     (libFuzzer with AddressSanitizer); installs cargo-fuzz if it is missing.
# Exit status: 0 if no target found a crash, 1 otherwise (the crashing input
# is in fuzz/artifacts/<target>/, and the log says how to reproduce it).
set -u
secs=600
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    -t) secs="${2:-}"; shift 2 ;;
    -j) jobs="${2:-}"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
case "$secs" in ''|*[!0-9]*|0) echo "fuzz: -t must be a positive number of seconds, got '$secs'" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "fuzz: -j must be a positive integer, got '$jobs'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/../fuzz" || exit 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(heartbeat_decode scenario_parse cli_flags)
rustup run nightly rustc --version >/dev/null 2>&1 || { echo "fuzz: needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 2; }
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz || exit 2
cargo +nightly fuzz build -O -a || exit 2
mkdir -p logs
failed=0
run() {
  local t="$1" before
  before=$(ls "corpus/$t" | wc -l)
  # New inputs go to a scratch directory, then only those that add coverage
  # are merged into the kept corpus.
  rm -rf "new/$t"; mkdir -p "new/$t"
  cargo +nightly fuzz run -O -a "$t" "new/$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 >"logs/$t.log" 2>&1
  local rc=$?
  cargo +nightly fuzz cmin -O -a "$t" "corpus/$t" >/dev/null 2>&1
  cargo +nightly fuzz run -O -a "$t" "corpus/$t" "new/$t" -- -merge=1 >/dev/null 2>&1
  local line
  line=$(grep -E '^#[0-9]+.*(DONE|pulse|REDUCE|NEW)' "logs/$t.log" | tail -n 1)
  echo "$t: exit $rc; corpus $before -> $(ls "corpus/$t" | wc -l) inputs; last: ${line:-none} (log fuzz/logs/$t.log)"
  return $rc
}
pids=()
for t in "${targets[@]}"; do
  run "$t" & pids+=("$!")
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || failed=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
rm -rf new
exit $failed
