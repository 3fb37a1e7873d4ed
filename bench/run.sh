#!/usr/bin/env bash
# Prints one TSV line per side-by-side comparison: name<TAB>ratio<TAB>goal,
# where ratio = median(our ns/op) / median(peer ns/op) over interleaved runs
# in one `go test` process, and goal is the highest ratio we accept.
# Add a comparison by appending a row to COMPARISONS: name ours peer goal package.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${BENCH_COUNT:-5}"
COMPARISONS=(
	"compile-vs-cue-export BenchmarkCompile BenchmarkCUEExport 2.0 ./bench"
)
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
for row in "${COMPARISONS[@]}"; do
	read -r name ours peer goal pkg <<<"$row"
	out="$(go test -run '^$' -bench "^(${ours}|${peer})\$" -count "$COUNT" "$pkg")"
	o="$(awk -v b="$ours" '$1 ~ "^"b"(-[0-9]+)?$" {print $3}' <<<"$out" | median)"
	p="$(awk -v b="$peer" '$1 ~ "^"b"(-[0-9]+)?$" {print $3}' <<<"$out" | median)"
	if [[ -z "$o" || -z "$p" ]]; then
		echo "bench/run.sh: $name: no results" >&2
		echo "$out" >&2
		exit 1
	fi
	printf '%s\t%s\t%s\n' "$name" "$(awk -v o="$o" -v p="$p" 'BEGIN {printf "%.2f", o/p}')" "$goal"
done
