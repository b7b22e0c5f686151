#!/usr/bin/env bash
# neli's public API held to its baseline (CONTRIBUTING.md, "Supply chain and
# API"): cargo-semver-checks compares this tree's rustdoc with the baseline
# commit's and fails on a change the version number does not allow. The
# baseline is the commit named in `semver-baseline` (the last release, or
# before the first one the commit the API was last allowed to break at).
# Checked with the features `cli endpoints sqlite postgres`: the `kafka`
# feature would build librdkafka and OpenSSL from source twice more, so the
# `neli::kafka` module is held by its tests, not by this check.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=$(grep -v '^#' semver-baseline | head -1 | tr -d '[:space:]')
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
    echo "semver: the baseline commit $baseline (semver-baseline) is not in this clone; a shallow clone needs 'git fetch --unshallow'" >&2
    exit 1
fi
command -v cargo-semver-checks >/dev/null || { echo "semver: cargo-semver-checks is not installed (cargo install --locked cargo-semver-checks)" >&2; exit 1; }
cargo semver-checks check-release -p neli --baseline-rev "$baseline" \
    --only-explicit-features --features cli,endpoints,sqlite,postgres "$@"
