#!/usr/bin/env bash
# Runs every fuzzer of the module one after the other with -parallel 1 (a 2-core box is
# shared), FUZZTIME each (default 100s), and prints one line per fuzzer: package, name,
# time and the last progress line (execs, new interesting).
# The new corpus entries land in $(go env GOCACHE)/fuzz/runsdesk/<package>/<FuzzName>.
set -euo pipefail
cd "$(dirname "$0")/../.."
fuzztime="${FUZZTIME:-100s}"
log="${FUZZLOG:-$(mktemp -d)}"
grep -rln --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	pkg="./$(dirname "${file#./}")"
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		out="$log/$name.log"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 1 "$pkg" >"$out" 2>&1 || {
			echo "FAIL $pkg $name (see $out)"; tail -30 "$out"; exit 1; }
		last=$(grep -E '^fuzz: elapsed' "$out" | tail -1)
		echo "$pkg $name $fuzztime | $last"
	done
done
