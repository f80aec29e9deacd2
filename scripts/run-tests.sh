#!/bin/sh
# Run peerd's test suites in order and print one total line at the end.
#   scripts/run-tests.sh            every suite
#   scripts/run-tests.sh unit       only the plain unit tests
#   scripts/run-tests.sh interop    every test that needs Bitcoin Core (marker interop)
#   scripts/run-tests.sh integration  the two pytest passes (plain and ASan binaries, side by side)
#   scripts/run-tests.sh layers     only the layering check (scripts/check-layers.py)
# The last line counts suites (test binaries, pytest runs, fuzz targets) and
# the tests in them, as cmocka and pytest report them.
# Environment: BUILD (build dir), VECTORS (test data, default tests/data), PYTHON,
# FUZZ_SECONDS (fuzzing time per target after its corpus), UNIT_TESTS and
# TSAN_TESTS (the Makefile's lists of unit test names: a binary in the build
# dir that is not on them, left by a renamed or deleted test, is not run;
# unset: every binary there runs), BITCOIND and
# BITCOIN_CLI (Bitcoin Core for the interop tests; default ../shared/bin/
# beside the checkout, else PATH; without one those tests are skipped and
# counted as skipped).
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
FUZZ_SECONDS=${FUZZ_SECONDS:-3}
export VECTORS=${VECTORS:-$(cd "$(dirname "$0")/.." && pwd)/tests/data}
only=${1:-all}
# The Makefile's lists are for this run only: the suites below (pytest runs
# this script again on fake build dirs) must not inherit them.
unit_tests=${UNIT_TESTS:-}
tsan_tests=${TSAN_TESTS:-}
unset UNIT_TESTS TSAN_TESTS

# Suites (a test binary, a pytest run, a fuzz target, the format check) and
# the tests inside them (cmocka's and pytest's own counts), both totalled.
passed=0
failed=0
t_passed=0
t_failed=0
t_skipped=0
failures=""

if [ ! -d "$VECTORS" ]; then
	echo "run-tests: test vectors not found at $VECTORS (the checkout's tests/data, or VECTORS=/path)" >&2
	exit 1
fi

# The tests a suite's log reports, as "passed failed skipped": cmocka's
# "[  PASSED  ] N test(s)." lines (one per group), or pytest's last summary
# line ("3 failed, 120 passed, 5 skipped in 9.1s"; errors count as failed).
# A log with neither (a fuzz run, the format check) reports "0 0 0".
count_tests() { # log
	awk '
		/^\[  PASSED  \] [0-9]+ test/ { cp += $4; cm = 1 }
		/^\[  FAILED  \] [0-9]+ test/ { cf += $4; cm = 1 }
		/^\[  SKIPPED \] [0-9]+ test/ { cs += $4; cm = 1 }
		/^=*[ ]*[0-9]+ (passed|failed|skipped|errors?|deselected)[, ]/ ||
		/^=*[ ]*no tests ran/ { last = $0 }
		END {
			if (cm) { print cp + 0, cf + 0, cs + 0; exit }
			p = f = s = 0
			n = split(last, w, /[ ,]+/)
			for (i = 2; i <= n; i++) {
				if (w[i] ~ /^passed/) p = w[i - 1]
				else if (w[i] ~ /^failed/) f += w[i - 1]
				else if (w[i] ~ /^errors?/) f += w[i - 1]
				else if (w[i] ~ /^skipped/) s = w[i - 1]
			}
			print p + 0, f + 0, s + 0
		}' "$1"
}

run() { # name, command...
	name=$1
	shift
	if "$@" >"$BUILD/test-logs/$name.log" 2>&1; then
		account "$name" 1
	else
		account "$name" 0
	fi
}

# A suite started in the background (start_bg) is counted once it ends
# (finish_bg), so the report still reads in order.
start_bg() { # name, command...
	name=$1
	shift
	rm -f "$BUILD/test-logs/$name.rc"
	("$@" >"$BUILD/test-logs/$name.log" 2>&1; echo $? >"$BUILD/test-logs/$name.rc") &
}

finish_bg() { # name, pid
	wait "$2"
	rc=$(cat "$BUILD/test-logs/$1.rc" 2>/dev/null || echo 1)
	if [ "$rc" -eq 0 ]; then
		account "$1" 1
	else
		account "$1" 0
	fi
}

account() { # name, ok (1 or 0): the counts and the verdict from its log
	name=$1
	ok=$2
	log="$BUILD/test-logs/$name.log"
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(count_tests "$log")
	tp=$1 tf=$2 ts=$3
	# A suite that failed without reporting a failed test (a crash, a
	# sanitizer abort, a collection error) counts as one failed test.
	[ "$ok" -eq 0 ] && [ "$tf" -eq 0 ] && tf=1
	t_passed=$((t_passed + tp))
	t_failed=$((t_failed + tf))
	t_skipped=$((t_skipped + ts))
	counts=""
	[ $((tp + tf + ts)) -gt 0 ] && counts=" ($tp passed, $tf failed, $ts skipped)"
	if [ "$ok" -eq 1 ]; then
		passed=$((passed + 1))
		printf '  PASS  %s%s\n' "$name" "$counts"
	else
		failed=$((failed + 1))
		failures="$failures $name"
		printf '  FAIL  %s%s (log: %s)\n' "$name" "$counts" "$log"
		# The failed tests by name first (pytest's -rfE summary lines), so a
		# CI report cut to its last lines still says which tests failed.
		grep -E '^(FAILED|ERROR) ' "$log" | head -n 20 | sed 's/^/        /'
		tail -n 30 "$log" | sed 's/^/        /'
	fi
}

mkdir -p "$BUILD/test-logs"

# A pytest run's skipped tests, from its -rs summary ("SKIPPED [N] file:line:
# reason"): one line per reason (the total is pytest's own count). Skips for want of a
# bitcoind read "interop: N tests skipped: no bitcoind (set BITCOIND=/path)".
report_skips() { # name of the run (its log is $BUILD/test-logs/NAME.log)
	log="$BUILD/test-logs/$1.log"
	[ -f "$log" ] || return 0
	summary=$(awk -v run="$1" '
		/^SKIPPED \[[0-9]+\] / {
			n = substr($2, 2, length($2) - 2) + 0
			reason = $0
			sub(/^SKIPPED \[[0-9]+\] [^ ]*:[0-9]+: /, "", reason)
			label = (reason ~ /bitcoind/) ? "interop" : run
			key = label ": " reason
			if (!(key in count)) order[++keys] = key
			count[key] += n
			total += n
		}
		END {
			for (i = 1; i <= keys; i++) {
				k = order[i]
				split(k, part, ": ")
				printf "  SKIP  %s: %d test%s skipped: %s\n", part[1], count[k],
					count[k] == 1 ? "" : "s", substr(k, length(part[1]) + 3)
			}
		}' "$log")
	[ -n "$summary" ] && printf '%s\n' "$summary"
	return 0
}

run_each() { # prefix dir [names]: every test binary in dir (of names, when given)
	for t in "$2"/test_*; do
		[ -x "$t" ] || continue
		if [ -n "${3:-}" ]; then
			case " $3 " in
			*" $(basename "$t") "*) ;;
			*) continue ;; # left by a test that no longer exists
			esac
		fi
		run "$1-$(basename "$t")" "$t"
	done
}

suite_unit() {
	echo "== unit tests"
	run_each unit "$BUILD/test" "$unit_tests"
}

suite_asan() {
	echo "== unit tests under ASan+UBSan"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		run_each asan "$BUILD/asan/test" "$unit_tests"
}

suite_tsan() {
	echo "== pool/ tests under TSan"
	TSAN_OPTIONS=halt_on_error=1 run_each tsan "$BUILD/tsan/test" "$tsan_tests"
}

suite_fuzz() {
	echo "== fuzz smoke (corpus + ${FUZZ_SECONDS}s each)"
	for f in "$BUILD"/fuzz/bin/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		seeds="tests/fuzz/corpus/${name#fuzz_}"
		work="$BUILD/fuzz/work/${name#fuzz_}"
		rm -rf "$work" && mkdir -p "$work"
		gen="$BUILD/fuzz/seeds/${name#fuzz_}"
		set -- "$work"
		[ -d "$seeds" ] && set -- "$@" "$seeds"
		[ -d "$gen" ] && set -- "$@" "$gen"
		run "fuzz-${name#fuzz_}" "$f" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 "$@"
	done
}

# The two passes (plain binaries, then ASan+UBSan ones) run at the same
# time: their tests mostly wait on sockets and timers (the 31-minute run of
# session 9 used 16 minutes of CPU on two cores), so side by side they take
# little longer than the slower one. Each pass picks ports in its own range
# (PEERD_TEST_PORTS, tests/integration/bitcoind.py), below the kernel's
# ephemeral ports, so one never takes a port the other has chosen.
suite_integration() {
	[ -d tests/integration ] || return 0
	ls tests/integration/test_*.py >/dev/null 2>&1 || return 0
	asan_pid=""
	if [ -x "$BUILD/asan/bin/peerd" ] && [ -x "$BUILD/asan/bin/peertool" ] &&
		[ -x "$BUILD/asan/bin/peerctl" ]; then
		# The interop tests run here too when a bitcoind is found (a Core
		# peer reaches paths the scripted peers do not); without one the
		# plain pass reports them skipped, once.
		marks="" # pytest -m "": every test
		"$PYTHON" -c 'import sys; sys.path.insert(0, "tests/integration"); import bitcoind
sys.exit(0 if bitcoind.find_bitcoind()[0] else 1)' 2>/dev/null || marks="not interop"
		BUILD="$BUILD" PEERD_BIN="$BUILD/asan/bin/peerd" \
			PEERTOOL_BIN="$BUILD/asan/bin/peertool" PEERCTL_BIN="$BUILD/asan/bin/peerctl" \
			ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 PEERD_TEST_PORTS=24000-32000 \
			start_bg "integration-asan" "$PYTHON" -m pytest -q -rsfE --durations=40 \
			-p no:cacheprovider tests/integration \
			-k "not valgrind and not systemd and not test_data" -m "$marks"
		asan_pid=$!
	fi
	echo "== integration tests (pytest; test_interop*: Bitcoin Core as the peer)"
	BUILD="$BUILD" PEERD_TEST_PORTS=15000-23999 run "integration" "$PYTHON" -m pytest -q -rsfE \
		--durations=40 -p no:cacheprovider tests/integration
	report_skips integration
	if [ -n "$asan_pid" ]; then
		echo "== integration tests against ASan+UBSan binaries (leaks fail; run beside the plain pass)"
		finish_bg "integration-asan" "$asan_pid"
		report_skips integration-asan
	fi
}

suite_interop() {
	echo "== interop tests (Bitcoin Core as the peer)"
	# Every test that needs a bitcoind: marked `interop` (conftest.py marks
	# each one that starts a bitcoind through make_bitcoind, too).
	BUILD="$BUILD" run "interop" "$PYTHON" -m pytest -q -rsfE -p no:cacheprovider \
		-m interop tests/integration
	report_skips interop
}

suite_format() {
	command -v clang-format >/dev/null 2>&1 || return 0
	files=$(git ls-files '*.c' '*.h' 2>/dev/null)
	[ -n "$files" ] || return 0 # not a git checkout: nothing to list
	echo "== formatting (.clang-format)"
	# shellcheck disable=SC2086 # one argument per file
	run "clang-format" clang-format --dry-run --Werror $files
}

# Calls go one way: which folder may include which (issue 19), files under
# 1,000 lines; known violations are in scripts/check-layers.baseline.
suite_layers() {
	echo "== layering (scripts/check-layers.py)"
	run "layers" "$PYTHON" scripts/check-layers.py
	# How many known violations are left (the last line).
	tail -n 1 "$BUILD/test-logs/layers.log" | sed 's/^/        /'
}

case "$only" in
unit) suite_unit ;;
interop) suite_interop ;;
integration) suite_integration ;;
layers) suite_layers ;;
all)
	suite_format
	suite_layers
	suite_unit
	suite_asan
	suite_tsan
	suite_fuzz
	suite_integration
	;;
*)
	echo "run-tests: unknown suite '$only'" >&2
	exit 2
	;;
esac

echo
[ -n "$failures" ] && echo "failed:$failures"
echo "suites: $passed passed, $failed failed; tests: $t_passed passed, $t_failed failed, $t_skipped skipped"
[ "$failed" -eq 0 ]
