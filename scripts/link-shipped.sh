#!/bin/sh
# Makes sim/shipped/ one symbolic link per shipped scenario file
# (scenarios/*.toml but Cargo.toml, scenarios/broken/*.toml): what neli-sim
# embeds (sim/build.rs) and what `cargo package` copies into the packaged
# crate. Run it after adding, renaming or removing a scenario file;
# sim/tests/it/packaged.rs fails until the links match the files.
set -eu
cd "$(dirname "$0")/.."
rm -rf sim/shipped
mkdir -p sim/shipped/broken
for f in scenarios/*.toml; do
    name=$(basename "$f")
    [ "$name" = Cargo.toml ] && continue
    ln -s "../../scenarios/$name" "sim/shipped/$name"
done
for f in scenarios/broken/*.toml; do
    name=$(basename "$f")
    ln -s "../../../scenarios/broken/$name" "sim/shipped/broken/$name"
done
