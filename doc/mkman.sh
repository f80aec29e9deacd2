#!/bin/sh
# doc/mkman.sh BINDIR OUTDIR: the man pages of peerd, peerctl and peertool
# from doc/*.1.in, with the option lists taken from the built binaries'
# own help, so the pages never drift from what the binaries accept.
set -eu
bindir=$1
out=$2
here=$(dirname "$0")
mkdir -p "$out"
version=$("$bindir/peertool" -version | sed 's/^peertool //')
# The date of the last commit touching the sources, else today: reproducible.
date=$(git -C "$here" log -1 --format=%cs -- . ../tools ../conf 2>/dev/null || true)
[ -n "$date" ] || date=$(date +%Y-%m-%d)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fill() { # fill NAME MARKER FILE: the page with FILE's text at MARKER's line
	sed -e "s/@DATE@/$date/" -e "s/@VERSION@/$version/" "$here/$1.1.in" |
		sed -e "/^$2\$/{r $3" -e 'd;}' > "$out/$1.1"
}

"$bindir/peerd" -help | awk -v tail=0 -f "$here/help2roff.awk" > "$tmp/peerd"
fill peerd @OPTIONS@ "$tmp/peerd"

"$bindir/peerctl" -help | awk -f "$here/help2roff.awk" > "$tmp/peerctl"
fill peerctl @OPTIONS@ "$tmp/peerctl"

: > "$tmp/peertool"
for cmd in $("$bindir/peertool" help | awk '/^Commands/ { f = 1; next } f && /^$/ { exit } f && /^  [a-z]/ { print $1 }'); do
	printf '.SS %s\n.nf\n' "$cmd" >> "$tmp/peertool"
	"$bindir/peertool" help "$cmd" |
		sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/" >> "$tmp/peertool"
	printf '.fi\n' >> "$tmp/peertool"
done
fill peertool @COMMANDS@ "$tmp/peertool"
