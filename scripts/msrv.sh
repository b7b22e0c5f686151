#!/usr/bin/env bash
# The MSRV job (CONTRIBUTING.md, "Supply chain and API"): the workspace's
# declared `rust-version` is the toolchain this build runs on, so every build
# and test CI runs is a build with the declared version. With a newer
# toolchain it builds with the declared one if rustup has it installed, and
# otherwise fails naming both: no other toolchain can be fetched here, so the
# declaration would be unchecked.
set -euo pipefail
cd "$(dirname "$0")/.."
declared=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[ -n "$declared" ] || { echo "msrv: Cargo.toml's [workspace.package] declares no rust-version" >&2; exit 1; }
actual=$(rustc --version | awk '{print $2}')
short=$(echo "$actual" | cut -d. -f1,2)
if [ "$short" = "$declared" ]; then
    # .ci/run's clippy already built every target of the workspace with
    # this toolchain: nothing to build twice.
    echo "msrv: CI builds with the declared rust-version $declared (rustc $actual)"
elif rustup toolchain list 2>/dev/null | grep -q "^$declared"; then
    cargo "+$declared" check -p neli --all-targets --quiet
    echo "msrv: builds with the declared rust-version $declared (toolchain $declared, default rustc $actual)"
else
    echo "msrv: the workspace declares rust-version $declared but this build runs rustc $actual and no $declared toolchain is installed: install it (rustup toolchain install $declared) or change the declaration to what CI builds with" >&2
    exit 1
fi
