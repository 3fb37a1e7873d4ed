#!/usr/bin/env bash
# Prints one TSV line per side-by-side comparison: name<TAB>ratio<TAB>goal,
# where ratio = median(our ns/op) / median(peer ns/op) and goal is the
# highest ratio we accept.
#
# Each comparison is one benchmark (see sideBySide in bench/compile_test.go)
# run in ONE `go test` process: it alternates its sub-benchmarks ours, peer,
# ours#01, peer#01, … BENCH_COUNT times each, so both sides see the same
# machine conditions. (`go test -bench 'A|B' -count N` would not interleave:
# it runs A N times, then B N times.)
#
# Add a comparison by appending a row to COMPARISONS: name benchmark goal package.
#
# After the comparisons, MEASURES rows print one absolute measurement
# against its goal as the same name<TAB>ratio<TAB>goal line, ratio being
# value/goal-value (so 1.00 is the goal): name benchmark metric goal-value package.
#
# Every row is printed, met or not; a row whose ratio is above its goal, or
# whose benchmark gave no result, is also named on stderr, and the script
# then exits 1 once all rows are printed. It is not part of CI (.ci/run):
# a shared machine is too noisy for a ratio to gate a merge.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${BENCH_COUNT:-5}"
COMPARISONS=(
	"compile-vs-cue-vet BenchmarkCompileVsCUEVet 2.0 ./bench"
	"compile-vs-cue-export BenchmarkCompileVsCUEExport 2.0 ./bench"
	"compile-vs-cue-jsonschema BenchmarkCompileVsCUEJSONSchema 0.5 ./bench"
	"http-vs-nethttp BenchmarkHTTPVsNetHTTP 1.15 ./bench"
	"http-vs-huma BenchmarkHTTPVsHuma 0.9 ./bench"
	"mcp-call-vs-gosdk BenchmarkMCPCallVsGoSDK 1.0 ./bench"
	"mcp-list-vs-gosdk BenchmarkMCPListVsGoSDK 1.05 ./bench"
	"mcp-list-prepared-vs-rebuild BenchmarkMCPListPreparedVsRebuild 0.10 ./bench"
	"realtime-fanout-vs-gorilla BenchmarkRealtimeFanoutVsGorilla 1.15 ./bench"
)
MEASURES=(
	"realtime-idle-conn-memory-vs-8KiB BenchmarkRealtimeIdleConnMemory B/idle-conn 8192 ./bench"
)
# allocs prints, on stderr (the TSV on stdout stays three columns), the
# median allocations per operation of both sides of a comparison whose
# benchmark calls b.ReportAllocs (the HTTP rows: allocations per request).
allocs() {
	local a b
	a="$(awk -v b="$2" '$1 ~ "^"b"/ours(#[0-9]+)?(-[0-9]+)?$" && $NF == "allocs/op" {print $(NF-1)}' <<<"$3" | median)"
	b="$(awk -v b="$2" '$1 ~ "^"b"/peer(#[0-9]+)?(-[0-9]+)?$" && $NF == "allocs/op" {print $(NF-1)}' <<<"$3" | median)"
	if [[ -n "$a" && -n "$b" ]]; then
		printf '%s: allocs/op ours %s, peer %s\n' "$1" "$a" "$b" >&2
	fi
}
misses=()
# verdict records a row that misses its goal (ratio above goal).
verdict() {
	if awk -v r="$2" -v g="$3" 'BEGIN {exit !(r > g)}'; then
		misses+=("$1: $2 > $3")
	fi
}
# median prints the median of its input's numbers, nothing for no input.
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) exit; if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
for row in "${COMPARISONS[@]}"; do
	read -r name bench goal pkg <<<"$row"
	out="$(go test -run '^$' -bench "^${bench}\$" -count 1 "$pkg" -args -bench.rounds="$COUNT" 2>&1)" || true
	o="$(awk -v b="$bench" '$1 ~ "^"b"/ours(#[0-9]+)?(-[0-9]+)?$" {print $3}' <<<"$out" | median)"
	p="$(awk -v b="$bench" '$1 ~ "^"b"/peer(#[0-9]+)?(-[0-9]+)?$" {print $3}' <<<"$out" | median)"
	if [[ -z "$o" || -z "$p" ]]; then
		echo "bench/run.sh: $name: no results" >&2
		echo "$out" >&2
		printf '%s\t%s\t%s\n' "$name" "none" "$goal"
		misses+=("$name: no results")
		continue
	fi
	if [[ -n "${BENCH_VERBOSE:-}" ]]; then
		grep "^${bench}/" <<<"$out" >&2
		printf '%s: median ours %s ns/op, peer %s ns/op\n' "$name" "$o" "$p" >&2
	fi
	ratio="$(awk -v o="$o" -v p="$p" 'BEGIN {printf "%.2f", o/p}')"
	printf '%s\t%s\t%s\n' "$name" "$ratio" "$goal"
	verdict "$name" "$ratio" "$goal"
	allocs "$name" "$bench" "$out"
done
for row in "${MEASURES[@]}"; do
	read -r name bench metric goal pkg <<<"$row"
	out="$(go test -run '^$' -bench "^${bench}\$" -benchtime 1x -count "$COUNT" "$pkg" 2>&1)" || true
	v="$(awk -v m="$metric" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}' <<<"$out" | median)"
	if [[ -z "$v" ]]; then
		echo "bench/run.sh: $name: no results" >&2
		echo "$out" >&2
		printf '%s\t%s\t%s\n' "$name" "none" "1.00"
		misses+=("$name: no results")
		continue
	fi
	printf '%s: median %s %s (goal %s)\n' "$name" "$v" "$metric" "$goal" >&2
	ratio="$(awk -v v="$v" -v g="$goal" 'BEGIN {printf "%.2f", v/g}')"
	printf '%s\t%s\t%s\n' "$name" "$ratio" "1.00"
	verdict "$name" "$ratio" "1.00"
done
if ((${#misses[@]} > 0)); then
	echo "bench/run.sh: ${#misses[@]} row(s) missed the goal:" >&2
	printf '  %s\n' "${misses[@]}" >&2
	exit 1
fi
