#!/usr/bin/env bash
# Mutation testing of the election rules (docs/mutation.md; figures in
# BENCHMARKS.md, "Mutation testing"). cargo-mutants mutates neli's core and driver (and,
# judged by tests only, its config validation) and asks two test commands
# whether each mutant is caught:
#   harness  the mutation gate, scenarios/tests/it/mutation_gate.rs:
#            `neli-lab check` in each mode, the broken scenarios and unsafe
#            variants, then `neli-lab explore --all --seeds N --ablate
#            --fail-fast`, built with the `mutants` profile (release code,
#            incremental: a mutant rebuilds in seconds, not a minute)
#   tests    `cargo test -p neli` (unit and integration tests, no real broker)
# and prints one table: generated, unviable, caught by the harness, caught
# only by tests, missed by both. Each mutant costs a rebuild: hours for the
# whole set on 2 cores, so it is a documented command, not part of CI.
# Output, all under --out DIR (default target/mutation-runs): cargo-mutants'
# outcomes in DIR/harness/mutants.out and DIR/tests/mutants.out, and the
# merged lists (one mutant per line) in DIR/summary: caught-by-harness.txt,
# caught-only-by-tests.txt, missed.txt, unviable.txt.
#
#   scripts/mutants.sh [--seeds N] [--shard K/N] [--re REGEX] [--exclude-re REGEX] [--out DIR]
#                      [--only harness|tests] [--iterate] [--in-place] [--skip-kafka] [--timeout SECS] [FILE...]
#
# FILEs default to neli/src/core/{mod,lease,heartbeat,time}.rs and
# neli/src/driver/{mod,control,background}.rs (harness and tests) plus
# neli/src/config/{mod,bounds,validate,explain}.rs (tests only). --shard K/N runs every N-th
# mutant from K (cargo-mutants --shard), to split a run over sessions;
# --re keeps the mutants whose name matches (e.g. 'handle_record');
# --exclude-re leaves out those whose name matches (cargo-mutants' names as
# `cargo mutants --list` prints them, `file:line:col: replace ...`);
# --iterate tries again only what an earlier run into the same --out did not
# catch (after the gate got stronger); --in-place mutates this checkout
# instead of a copy (faster: the incremental build cache is reused; run it
# in a worktree of its own, since the tree is edited while it runs; a run
# killed mid-mutant may leave it mutated: `git checkout neli/src` there).
# --skip-kafka leaves the broker suites (tests named kafka_*: a mock broker,
# tansu, TLS; two thirds of `cargo test -p neli`'s time) out of the tests
# run: for config.rs, whose rules the unit, bad-input and CLI tests judge; a
# mutant it misses is then tried with the full suite (--iterate without it).
# --timeout SECS bounds each mutant's gate run (default 300; the gate takes
# about 70 s on 2 cores with nothing beside it): a mutant that hangs the
# gate (the model check never ends) counts as caught, after that long.
# Needs cargo-mutants (`cargo install cargo-mutants --locked`; installed on
# first use). cargo-mutants builds each mutant in a scratch copy of the tree
# (starting from a copy of target/), so a mutated build never lands in the
# shared target/ (ARCHITECTURE.md, "Build identity").
# Exit status: 0 when nothing was missed by both, 1 otherwise, 2 on bad arguments.
set -u

seeds=30
shard=""
re=""
exclude_re=""
out="target/mutation-runs"
iterate=""
in_place=""
only=""
skip_kafka=""
timeout=300
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) [ $# -ge 2 ] || { echo "mutants: --seeds needs a number" >&2; exit 2; }; seeds="$2"; shift 2 ;;
    --shard) [ $# -ge 2 ] || { echo "mutants: --shard needs K/N" >&2; exit 2; }; shard="$2"; shift 2 ;;
    --re) [ $# -ge 2 ] || { echo "mutants: --re needs a regex" >&2; exit 2; }; re="$2"; shift 2 ;;
    --exclude-re) [ $# -ge 2 ] || { echo "mutants: --exclude-re needs a regex" >&2; exit 2; }; exclude_re="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "mutants: --out needs a directory" >&2; exit 2; }; out="$2"; shift 2 ;;
    --iterate) iterate=1; shift ;;
    --in-place) in_place=1; shift ;;
    --skip-kafka) skip_kafka=1; shift ;;
    --timeout) [ $# -ge 2 ] || { echo "mutants: --timeout needs seconds" >&2; exit 2; }; timeout="$2"; shift 2 ;;
    --only) [ $# -ge 2 ] || { echo "mutants: --only needs harness or tests" >&2; exit 2; }; only="$2"; shift 2 ;;
    -h|--help) sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mutants: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) [ -f "$1" ] || { echo "mutants: no such file '$1'" >&2; exit 2; }; files+=("$1"); shift ;;
  esac
done
case "$seeds" in ''|*[!0-9]*) echo "mutants: --seeds must be a positive integer, got '$seeds'" >&2; exit 2 ;; esac
case "$timeout" in ''|*[!0-9]*|0) echo "mutants: --timeout must be a positive number of seconds, got '$timeout'" >&2; exit 2 ;; esac
case "$shard" in ''|[0-9]*/[0-9]*) ;; *) echo "mutants: --shard must look like 0/4, got '$shard'" >&2; exit 2 ;; esac
case "$only" in ''|harness|tests) ;; *) echo "mutants: --only must be harness or tests, got '$only'" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.." || exit 2
if ! cargo mutants --version >/dev/null 2>&1; then
  echo "mutants: installing cargo-mutants" >&2
  cargo install cargo-mutants --locked >&2 || { echo "mutants: cargo install cargo-mutants failed" >&2; exit 2; }
fi
if [ ${#files[@]} -eq 0 ]; then
  rules=(neli/src/core/mod.rs neli/src/core/lease.rs neli/src/core/heartbeat.rs neli/src/core/time.rs
         neli/src/driver/mod.rs neli/src/driver/control.rs neli/src/driver/background.rs)
  config=(neli/src/config/mod.rs neli/src/config/bounds.rs neli/src/config/validate.rs neli/src/config/explain.rs)
else
  rules=("${files[@]}")
  config=()
fi
mkdir -p "$out" || exit 2
# cargo-mutants' own baseline would run the harness's test arguments against
# the mutated package (neli), where they match no test, and then derive a
# timeout from that empty run; so the harness baseline runs here, and each
# mutant gets a fixed timeout (--timeout) well above the gate's own time.
common=(--package neli --no-shuffle)
if [ -n "$in_place" ]; then common+=(--in-place); else common+=(--copy-target true); fi
[ -n "$iterate" ] && common+=(--iterate)
[ -n "$shard" ] && common+=(--shard "$shard")
[ -n "$re" ] && common+=(--re "$re")
[ -n "$exclude_re" ] && common+=(--exclude-re "$exclude_re")
as_files() { for f in "$@"; do printf -- '--file\n%s\n' "$f"; done; }

run() { # name, test package, extra cargo args..., -- test args
  local name="$1"; shift
  echo "mutants: $name run, logs in $out/$name" >&2
  mapfile -t fa < <(as_files "${targets[@]}")
  NELI_GATE_SEEDS="$seeds" cargo mutants "${common[@]}" "${fa[@]}" --output "$out/$name" "$@"
}

if [ "$only" != tests ]; then
  echo "mutants: harness baseline (the unmutated tree must pass the gate)" >&2
  NELI_GATE_SEEDS="$seeds" cargo test --profile mutants -p neli-lab --test it mutation_gate -- --include-ignored >&2 ||
    { echo "mutants: the unmutated tree fails the mutation gate; fix that first" >&2; exit 2; }
  targets=("${rules[@]}")
  # The gate kills its own neli-lab runs a little before cargo-mutants'
  # timeout (NELI_GATE_TIMEOUT, scenarios/tests/it/mutation_gate.rs): a
  # spinning mutant's neli-lab would otherwise outlive that timeout.
  export NELI_GATE_TIMEOUT=$(( timeout * 9 / 10 ))
  run harness --baseline skip --timeout "$timeout" --build-timeout 900 --test-package neli-lab \
    --profile mutants -- --test it mutation_gate -- --include-ignored
fi
if [ "$only" != harness ]; then
  targets=("${rules[@]}" "${config[@]}")
  # After a harness run, the tests judge only what it did not catch: the
  # tests run starts from the harness's outcomes and iterates (cargo-mutants
  # skips what was caught or unviable there), which halves a whole run.
  if [ -z "$only" ] && [ -d "$out/harness/mutants.out" ] && [ -z "$iterate" ]; then
    rm -rf "$out/tests" && mkdir -p "$out/tests" && cp -r "$out/harness/mutants.out" "$out/tests/" || exit 2
    common+=(--iterate)
  fi
  if [ -n "$skip_kafka" ]; then
    run tests --baseline run --test-package neli -- --lib --test it -- --skip kafka_
  else
    run tests --baseline run --test-package neli
  fi
fi

# One table from cargo-mutants' caught/missed lists (one mutant per line).
list() { cat "$out/$1/mutants.out/$2.txt" 2>/dev/null | sort -u; }
generated=$(cat "$out"/{harness,tests}/mutants.out/{caught,missed,unviable,timeout}.txt 2>/dev/null | sort -u | wc -l)
unviable=$(cat "$out"/{harness,tests}/mutants.out/unviable.txt 2>/dev/null | sort -u | wc -l)
harness_caught=$( { list harness caught; list harness timeout; } | sort -u)
tests_caught=$( { list tests caught; list tests timeout; } | sort -u)
only_tests=$(comm -13 <(printf '%s\n' "$harness_caught" | sed '/^$/d') <(printf '%s\n' "$tests_caught" | sed '/^$/d'))
missed=$(comm -12 <(list harness missed) <(list tests missed))
[ -n "$only" ] && missed=$(list "$only" missed)
count() { printf '%s\n' "$1" | sed '/^$/d' | wc -l; }
# The merged lists behind the table (docs/mutation.md, "What it writes").
summary="$out/summary"
mkdir -p "$summary" || exit 2
printf '%s\n' "$harness_caught" | sed '/^$/d' > "$summary/caught-by-harness.txt"
printf '%s\n' "$only_tests" | sed '/^$/d' > "$summary/caught-only-by-tests.txt"
printf '%s\n' "$missed" | sed '/^$/d' > "$summary/missed.txt"
cat "$out"/{harness,tests}/mutants.out/unviable.txt 2>/dev/null | sort -u > "$summary/unviable.txt"
echo "mutants: merged lists in $summary" >&2
echo
echo "| mutants | unviable | caught by harness | caught only by tests | missed |"
echo "|---|---|---|---|---|"
echo "| $generated | $unviable | $(count "$harness_caught") | $(count "$only_tests") | $(count "$missed") |"
if [ -n "$only_tests" ]; then echo; echo "caught only by tests:"; printf '%s\n' "$only_tests" | sed 's/^/  /'; fi
if [ -n "$missed" ]; then echo; echo "missed:"; printf '%s\n' "$missed" | sed 's/^/  /'; exit 1; fi
exit 0
