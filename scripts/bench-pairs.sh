#!/usr/bin/env bash
# Benchmark rows of a base commit against the current tree, in one sitting.
#
#   scripts/bench-pairs.sh [-n PAIRS] BASE ROW...
#   scripts/bench-pairs.sh cac61ee ServeBlock PongDuringConnect InvFlood125 \
#       ConnectBlockAllEcdsa AcceptLargeTxPar2
#
# Builds `make bench`'s binaries and block files for BASE in a temporary
# detached worktree (removed at exit) and for the current tree (build/,
# uncommitted edits included), then runs peerbench on exactly the named rows
# base, head, base, head... PAIRS times (default 3). Interleaving puts both
# commits under the same machine load, which a before/after on two occasions
# cannot. Prints each row's median ns/op per side, head/base, and each side's
# spread ((max-min)/median) as a gauge of the noise. Exit 1 if a run failed.
set -euo pipefail

pairs=3
if [[ ${1:-} == -n ]]; then
	pairs=$2
	shift 2
fi
if [[ $# -lt 2 ]]; then
	sed -n '4,6p' "$0" | sed 's/^# *//' >&2
	exit 2
fi
base=$(git rev-parse --verify "$1^{commit}")
shift
# Exact names: peerbench takes a regex, and ServeBlock alone would also
# run ServeBlockReencode.
regex="^($(
	IFS='|'
	echo "$*"
))\$"

head_dir=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d /tmp/bench-pairs.XXXXXX)
base_dir=$tmp/base
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	git -C "$head_dir" worktree remove --force "$base_dir" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$head_dir" worktree add -q --detach "$base_dir" "$base"

# `make bench` with a regex no row matches: the binaries and the block
# files the rows need, built the way each commit's own Makefile says.
for dir in "$base_dir" "$head_dir"; do
	echo "building $dir" >&2
	make -C "$dir" --no-print-directory bench BENCH='^$' >/dev/null
done

run() { # run SIDE DIR: one peerbench run, its rows appended to $tmp/rows
	env -u PEERD_BIN -u VECTORS BENCH_DATA="$2/build/bench" \
		"$2/build/bin/peerbench" "$regex" >"$tmp/out" || failed=1
	cat "$tmp/out" >&2
	awk -v side="$1" 'NF == 4 && $2 ~ /^[0-9.]+$/ { print side, $1, $2 }' \
		"$tmp/out" >>"$tmp/rows"
}

failed=0
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 1; i <= pairs; i++)); do
	echo "pair $i of $pairs: base $(git rev-parse --short "$base")" >&2
	run base "$base_dir"
	echo "pair $i of $pairs: head $(git -C "$head_dir" rev-parse --short HEAD)+tree" >&2
	run head "$head_dir"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# The table: medians of the ns/op column per row and side.
sort -k2,2 -k1,1 -k3,3g "$tmp/rows" | awk -v pairs="$pairs" '
function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ key = $2 SUBSEP $1; v[key, ++n[key]] = $3; rows[$2] = 1 }
END {
	printf "%-30s %14s %14s %10s %12s %12s\n", "row (ns/op, median of " pairs ")",
		"base", "head", "head/base", "base spread", "head spread"
	for (r in rows) {
		for (s = 0; s < 2; s++) {
			side = s ? "head" : "base"; k = r SUBSEP side; c = n[k]
			delete a
			for (j = 1; j <= c; j++) a[j] = v[k, j]
			m[side] = c ? med(a, c) : 0
			sp[side] = c && m[side] > 0 ? (a[c] - a[1]) / m[side] * 100 : 0
		}
		printf "%-30s %14.1f %14.1f %10.3f %11.1f%% %11.1f%%\n", r, m["base"], m["head"],
			(m["base"] > 0 ? m["head"] / m["base"] : 0), sp["base"], sp["head"]
	}
}' | { IFS= read -r h; echo "$h"; sort; }
exit "$failed"
