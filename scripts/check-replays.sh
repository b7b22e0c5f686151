#!/usr/bin/env bash
# The replay sweep's rows at `neli-lab check`'s default bounds: a minute of
# model checking each in a release build, so they run here (in .ci/run,
# after the gate) and not in `cargo test`, which runs the small rows
# (scenarios/tests/it/replay_sweep.rs; scenarios/README.md, "Counterexamples
# that replay"). Each row must find its violation, and the simulator must
# reproduce every counterexample `check` prints as a break of the same
# guarantee; one that does not fails the row with its scenario file.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p neli-lab
LAB=target/release/neli-lab
out=target/neli-lab/check-replays
rm -rf "$out" && mkdir -p "$out"
failed=0

# row NAME FLAGS...: check at its defaults plus FLAGS. Every counterexample
# must replay as a break of the same guarantee.
row() {
    local name=$1; shift
    local code=0
    "$LAB" check --out "$out/$name" "$@" > "$out/$name.txt" 2>&1 || code=$?
    local violated reproduced unexplained
    violated=$(grep -c '^VIOLATED' "$out/$name.txt" || true)
    reproduced=$(grep -c '^replay    REPRODUCED' "$out/$name.txt" || true)
    unexplained=$(awk '/^VIOLATED  /{p=substr($0, 11)} /^replay    NOT REPRODUCED/{printf " \"%s\"", p}' "$out/$name.txt")
    if [ "$code" -ne 1 ] || [ "$violated" -eq 0 ] || [ "$violated" -ne "$reproduced" ]; then
        echo "check-replays: $name FAILED (exit $code, $violated violated, $reproduced reproduced${unexplained:+, not replayed:$unexplained}): neli-lab check $*" >&2
        cat "$out/$name.txt" >&2
        for f in "$out/$name"/*.toml; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
        failed=1
    else
        echo "check-replays: $name: $violated counterexample(s), $reproduced reproduced ($(grep '^explored' "$out/$name.txt"))"
    fi
}

# The consumer protocol without a grace: a pause, an isolation and a
# heartbeat failure at check's defaults (3 members, T=2, S=4).
row consumer-without-grace --group-protocol consumer --grace 0
# The membership proof off at check's defaults (a pause, an isolation).
row classic-without-proof --no-membership-proof

exit $failed
