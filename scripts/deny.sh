#!/usr/bin/env bash
# cargo deny check, offline (CONTRIBUTING.md, "Supply chain and API"): the
# advisory database is the committed snapshot deny/advisory-db, put where
# cargo-deny looks for the database of deny.toml's URL as a one-commit git
# repository dated as the snapshot (cargo-deny reads the commit's date).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/deny
rm -rf "$out/advisory-dbs"
mkdir -p "$out/advisory-dbs"
# The crate graph, read with cargo's network (crates.io) before cargo-deny
# runs offline.
cargo metadata --format-version 1 --locked > "$out/metadata.json"
deny() { cargo deny --offline --metadata-path "$out/metadata.json" "$@"; }
# cargo-deny names the folder it opens for the URL when it is missing.
probe=$(deny check advisories 2>&1 || true)
dir=$(printf '%s\n' "$probe" | sed -n "s/.*cannot change to '\([^']*\)'.*/\1/p" | head -1)
if [ -z "$dir" ]; then
    printf '%s\n' "$probe" >&2
    echo "deny: cargo-deny did not say where it looks for the advisory database" >&2
    exit 1
fi
date=$(sed -n 's/^date //p' deny/advisory-db/SNAPSHOT)
mkdir -p "$dir"
cp -r deny/advisory-db/crates "$dir/"
git -C "$dir" init -q
git -C "$dir" add -A
GIT_AUTHOR_DATE="${date}T00:00:00Z" GIT_COMMITTER_DATE="${date}T00:00:00Z" \
    git -C "$dir" -c user.name=snapshot -c user.email=snapshot@localhost -c commit.gpgsign=false \
    commit -q -m "RustSec advisory database snapshot $(sed -n 's/^commit //p' deny/advisory-db/SNAPSHOT)"
deny check
