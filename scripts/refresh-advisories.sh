#!/usr/bin/env bash
# Replaces deny/advisory-db with the RustSec advisory database as it is now
# (CONTRIBUTING.md, "Supply chain and API"). Needs git access to GitHub,
# which CI does not have: run it where you have it, then commit the result.
# `scripts/refresh-advisories.sh PATH` takes a local clone instead.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$src" ]; then
    git clone --depth 1 https://github.com/rustsec/advisory-db "$tmp/db"
    src="$tmp/db"
fi
commit=$(git -C "$src" rev-parse HEAD)
date=$(git -C "$src" log -1 --format=%cs)
rm -rf deny/advisory-db/crates
git -C "$src" archive HEAD crates LICENSE.txt | tar -x -C deny/advisory-db
cat > deny/advisory-db/SNAPSHOT <<END
# The RustSec advisory database (https://github.com/rustsec/advisory-db,
# CC0-1.0, LICENSE.txt here), its \`crates/\` folder as of:
commit $commit
date $date
# Refreshed by scripts/refresh-advisories.sh where GitHub is reachable.
END
echo "advisory database at $commit ($date); commit deny/advisory-db"
