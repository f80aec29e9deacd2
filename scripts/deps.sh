#!/bin/sh
# Check every build and test dependency; as root, install what is missing
# with apt-get (Debian 12). Otherwise print the exact command and fail.
#   scripts/deps.sh         what make and make test need
#   scripts/deps.sh plots   also what scripts/plot-utxo.py draws with (matplotlib)
set -u
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
PYTHON=${PYTHON:-/usr/bin/python3}

# pkg-config module -> Debian package
mods="libuv:libuv1-dev libsodium:libsodium-dev libsecp256k1:libsecp256k1-dev
nettle:nettle-dev jansson:libjansson-dev inih:libinih-dev
libsystemd:libsystemd-dev lmdb:liblmdb-dev cmocka:libcmocka-dev
libmicrohttpd:libmicrohttpd-dev libcares:libc-ares-dev gmp:libgmp-dev
libzmq:libzmq3-dev"

missing=""
command -v "$PKG_CONFIG" >/dev/null 2>&1 || missing="$missing pkg-config"
for m in $mods; do
	mod=${m%%:*}
	deb=${m#*:}
	"$PKG_CONFIG" --exists "$mod" 2>/dev/null || missing="$missing $deb"
done
command -v clang >/dev/null 2>&1 || missing="$missing clang"
command -v clang-format >/dev/null 2>&1 || missing="$missing clang-format"
# libFuzzer and the sanitizer runtimes for clang.
[ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ] ||
	missing="$missing libclang-rt-14-dev"
"$PYTHON" -c 'import pytest' 2>/dev/null || missing="$missing python3-pytest"
"$PYTHON" -c 'import bitcoin' 2>/dev/null || missing="$missing python3-bitcoinlib"
"$PYTHON" -c 'import zmq' 2>/dev/null || missing="$missing python3-zmq"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
# promtool and prometheus for the metrics tests (tests/integration/test_metrics.py).
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 ||
	missing="$missing prometheus"
# The benchmarks' plots (make bench-utxo draws doc/bench-utxo-*.png).
[ "${1:-}" = plots ] && ! "$PYTHON" -c 'import matplotlib' 2>/dev/null &&
	missing="$missing python3-matplotlib"

# Bitcoin Core for the interop tests, found as they find it: $BITCOIND,
# else ../shared/bin/ beside the checkout, else bitcoind on PATH. Without
# one those tests are skipped; with one, its runtime libraries must be there.
root=$(cd "$(dirname "$0")/.." && pwd)
bitcoind=${BITCOIND:-}
[ -z "$bitcoind" ] && [ -x "$root/../shared/bin/bitcoind" ] && bitcoind=$root/../shared/bin/bitcoind
[ -z "$bitcoind" ] && bitcoind=$(command -v bitcoind 2>/dev/null)
if [ -n "$bitcoind" ] && [ -x "$bitcoind" ]; then
	for deb in libevent-2.1-7 libevent-extra-2.1-7 libevent-pthreads-2.1-7 libsqlite3-0; do
		dpkg -s "$deb" 2>/dev/null | grep -q '^Status: install ok installed' ||
			missing="$missing $deb"
	done
fi

if [ -z "$missing" ]; then
	echo "deps: all dependencies present"
	exit 0
fi

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing:$missing" >&2
	echo "deps: run as root: apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh image has empty package lists: update first, once.
if [ -z "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] ||
	! apt-get install -y --no-install-recommends$missing >/dev/null 2>&1; then
	apt-get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
	$cmd -qq || { echo "deps: apt-get install failed" >&2; exit 1; }
fi
echo "deps: installed:$missing"
