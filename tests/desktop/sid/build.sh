#!/usr/bin/env bash
# Prepares the Debian sid chroot of the desktop test tier (tests/desktop), once per machine.
#
#   tests/desktop/sid/build.sh [ROOT]        (root; ROOT default $GHOSTTYPE_SID or /srv/ghosttype-sid)
#
# The chroot is ROOT/base, built with mmdebstrap from the Debian mirror of the host's apt sources
# (MIRROR overrides) with the packages of packages.txt beside this script. The hash of that list is
# stored in ROOT/base/etc/ghosttype-sid.hash: a second run with the same list does nothing; a changed
# list rebuilds from scratch. Exits non-zero, with the reason on the last line, when the mirror
# cannot be reached or a package cannot be installed: the tier must fail then, never skip.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${1:-${GHOSTTYPE_SID:-/srv/ghosttype-sid}}
BASE=$ROOT/base
LIST=$HERE/packages.txt
fail() { echo "sid-build FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "must run as root (mmdebstrap, chroot)"
# one build at a time: .ci/run starts one in the background while it installs the rest, and the tier's
# own call then waits here for it to finish (and finds the chroot up to date)
mkdir -p "$ROOT"
exec 9>"$ROOT/.build.lock"
flock 9
pkgs=$(sed 's/#.*//' "$LIST" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//')
hash=$( (sed 's/#.*//' "$LIST" | tr -s ' \n' '\n' | sort -u; echo v1) | sha256sum | cut -d' ' -f1)
if [ -f "$BASE/etc/ghosttype-sid.hash" ] && [ "$(cat "$BASE/etc/ghosttype-sid.hash")" = "$hash" ]; then
  echo "sid chroot up to date: $BASE ($hash)"
  exit 0
fi
# a stale mount inside the old chroot would make rm -rf walk into the host: refuse
if grep -q " $ROOT/" /proc/self/mounts; then fail "something is still mounted under $ROOT: $(grep " $ROOT/" /proc/self/mounts | cut -d' ' -f2 | head -3 | tr '\n' ' ')"; fi
if ! command -v mmdebstrap >/dev/null; then
  command -v apt-get >/dev/null || fail "mmdebstrap missing and no apt-get to install it"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >/dev/null || fail "could not install mmdebstrap (apt-get install mmdebstrap)"
fi
MIRROR=${MIRROR:-$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)}
MIRROR=${MIRROR:-$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
echo "building the sid chroot $BASE from $MIRROR (list hash $hash)"
rm -rf "$BASE" "$BASE.new"
mkdir -p "$ROOT"
t0=$(date +%s)
# Acquire::Check-Valid-Until: a mirror serving a dated snapshot has an expired Release file.
# Recommends off: the list names what the tier uses, nothing else is pulled in by chance.
mmdebstrap --variant=apt --components=main --mode=root \
  --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Check-Valid-Until "false"' \
  --include="$(echo "$pkgs" | tr ' ' ',')" sid "$BASE.new" "$MIRROR" \
  || fail "mmdebstrap sid from $MIRROR failed (registry unreachable or a package of $LIST missing)"
printf 'APT::Install-Recommends "false";\nAcquire::Check-Valid-Until "false";\n' >"$BASE.new/etc/apt/apt.conf.d/99ghosttype-sid"
[ -s "$BASE.new/etc/machine-id" ] || chroot "$BASE.new" sh -c 'dbus-uuidgen >/etc/machine-id'
# every listed package must be there (mmdebstrap --include fails on unknown names, but check anyway)
missing=""
for p in $pkgs; do chroot "$BASE.new" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"; done
[ -z "$missing" ] || fail "not installed in the chroot:$missing"
chroot "$BASE.new" dpkg-query -W gnome-shell kwin-wayland ibus libgtk-4-1 libqt6gui6 firefox chromium python3 >"$BASE.new/etc/ghosttype-sid.versions" 2>/dev/null || true
echo "$hash" >"$BASE.new/etc/ghosttype-sid.hash"
mv "$BASE.new" "$BASE"
echo "sid chroot built in $(( $(date +%s) - t0 )) s: $BASE"
cat "$BASE/etc/ghosttype-sid.versions"
