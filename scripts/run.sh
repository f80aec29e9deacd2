#!/bin/sh
# `make run`: start peerd on regtest in the foreground, with its datadir in
# run/ (beside build/, not in it: `make clean` must not delete the chain
# it made; git ignores run/), listening on 127.0.0.1 only. Ctrl-C stops it
# cleanly. `rm -rf run` starts over.
#
# Environment: BUILD (build dir, default build), DATADIR (default run, from
# the working directory: the checkout under make), PORT (P2P port, default
# regtest's 18444), PEERD_ARGS (extra options, e.g. "-debug=net
# -connect=127.0.0.1:18445").
set -eu
BUILD=${BUILD:-build}
PORT=${PORT:-18444}
DATADIR=${DATADIR:-run}
PEERD="$BUILD/bin/peerd"
PEERCTL="$BUILD/bin/peerctl"

if [ ! -x "$PEERD" ]; then
	echo "run: $PEERD not built (run make first)" >&2
	exit 1
fi
mkdir -p "$DATADIR"

cat <<MSG
peerd on regtest: P2P on 127.0.0.1:$PORT, datadir $DATADIR
regtest's state (bans, .lock): $DATADIR/regtest/
control socket: $DATADIR/regtest/control.sock

In another terminal (-regtest finds regtest's socket, as bitcoin-cli):
  $PEERCTL -regtest -datadir=$DATADIR getnetworkinfo
  $PEERCTL -regtest -datadir=$DATADIR getpeerinfo
  $PEERCTL -regtest -datadir=$DATADIR getstats
  $PEERCTL -regtest -datadir=$DATADIR addnode 127.0.0.1:18445 add
  $PEERCTL -regtest -datadir=$DATADIR stop
A regtest bitcoind can connect with: bitcoind -regtest -connect=127.0.0.1:$PORT
Ctrl-C (SIGINT) shuts peerd down cleanly.

MSG
# shellcheck disable=SC2086 # PEERD_ARGS is a list of options on purpose
exec "$PEERD" -regtest -datadir="$DATADIR" -bind=127.0.0.1 -port="$PORT" ${PEERD_ARGS:-}
