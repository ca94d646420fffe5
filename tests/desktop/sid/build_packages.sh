#!/usr/bin/env bash
# Inside the sid chroot (root, via enter.sh), in the overlay where readme_check.sh ran: builds ghosttype's
# Debian packages from the checkout copy at /opt/ghosttype as a user would (packaging/linux/deb/build.sh
# --kwin, after install-deps.sh --kde for the KWin effect), then lists them and runs lintian on them.
# Writes to /out: the .deb files, build.log, contents-PACKAGE.txt (dpkg-deb -c), info-PACKAGE.txt
# (dpkg-deb -I), lintian.txt and lintian.rc, other-kwin.txt and other-kwin.rc (apt asked to install the
# packages on a system whose KWin moved on since they were built), packages.json (what was built, and how
# long each step took).
set -uo pipefail
cd /opt/ghosttype
t0=$(date +%s)
fail() { python3 -c 'import json, sys; json.dump({"ok": False, "reason": sys.argv[1]}, open("/out/packages.json", "w"))' "$1"; echo "$1" >&2; exit 1; }
bash packaging/linux/install-deps.sh --kde >/out/kde-deps.log 2>&1 || fail "install-deps.sh --kde failed: $(tail -3 /out/kde-deps.log)"
t1=$(date +%s)
# the tier's packages are compressed at xz's fastest level (a user's build: its default)
GHOSTTYPE_DEB_FAST=1 bash packaging/linux/deb/build.sh --kwin --out /out >/out/build.log 2>&1 \
  || fail "packaging/linux/deb/build.sh failed: $(grep -v WARNING /out/build.log | tail -5)"
t2=$(date +%s)
for deb in /out/*.deb; do
  name=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -c "$deb" >"/out/contents-$name.txt"
  dpkg-deb -I "$deb" >"/out/info-$name.txt"
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lintian >/out/lintian-install.log 2>&1 \
  || fail "apt-get install lintian failed: $(tail -3 /out/lintian-install.log)"
t3=$(date +%s)
lintian --no-tag-display-limit --display-level '>=warning' /out/*.deb >/out/lintian.txt 2>&1
echo $? >/out/lintian.rc
t4=$(date +%s)
# A user's KWin updated after ghosttype-kwin was built: apt, asked to install the packages, must refuse and
# name the KWin they need. dpkg's status as this system's with kwin-wayland one upload newer (a copy:
# apt only simulates against it, -s, and nothing on the system changes)
kv=$(dpkg-query -W -f='${Version}' kwin-wayland)
sed "/^Package: kwin-wayland$/,/^$/ s/^Version: .*/Version: ${kv}+1/" /var/lib/dpkg/status >/tmp/status-other-kwin
apt-get -s -o Dir::State::status=/tmp/status-other-kwin install /out/ghosttype_*.deb /out/ghosttype-kwin_*.deb \
  >/out/other-kwin.txt 2>&1
echo $? >/out/other-kwin.rc
python3 - "$((t1 - t0))" "$((t2 - t1))" "$((t4 - t3))" "$(dpkg-query -W -f='${Version}' kwin-wayland)" <<'PY'
import glob, json, sys
debs = sorted(glob.glob("/out/*.deb"))
json.dump({"ok": True, "debs": [d.rsplit("/", 1)[1] for d in debs], "kwin_wayland": sys.argv[4],
           "seconds": {"kde build deps": int(sys.argv[1]), "build": int(sys.argv[2]), "lintian": int(sys.argv[3])}},
          open("/out/packages.json", "w"), indent=1)
PY
cat /out/packages.json
