#!/usr/bin/env bash
# Inside the sid chroot (root, via enter.sh), after readme_check.sh installed ghosttype into
# /opt/ghosttype/.venv: installs the engine for all users as a user would (`ghosttype ibus install
# --system`), then runs one desktop session (../inside/session.py) as an unprivileged user under
# dbus-run-session, bounded in time; afterwards stops every process of that user by PID and uninstalls.
#
#   desktop.sh gnome|kde SCENARIO...      results in /out/results.json, screenshots in /out
#   (GT_DISPLAY sets the engine's ibus_display, GT_LAYOUT the machine's keyboard layout, GT_EXT=off has the
#   user switch ghosttype's GNOME Shell extension off (KDE: the KWin effect is not installed), GT_SCHEME=prefer-dark GNOME's dark style, GT_USER=1
#   ghosttype's default config and the user scenario, GT_SCALE the monitor's scale, GT_LOCK=1 a lock screen for GNOME Shell, the screen locker for KWin,
#   GT_PKG=1 ghosttype from its Debian packages instead: `apt install` of /root/debs/*.deb, the user runs
#   `ghosttype setup` (inside/session.py), and `apt purge` afterwards)
set -u
D=$1; shift
GT=/opt/ghosttype/.venv/bin/ghosttype
U=ghosttest UID_=61051 H=/home/ghosttest
BUDGET=${SESSION_BUDGET:-900}
# GT_LAYOUT: the machine's keyboard layout, as a German installation sets it (install --system reads it)
# (restored afterwards: the sessions of one run share the overlay)
KB=/etc/default/keyboard
[ -e $KB ] && cp -p $KB $KB.before-session
[ -n "${GT_LAYOUT:-}" ] && printf 'XKBMODEL="pc105"\nXKBLAYOUT="%s"\nXKBVARIANT=""\n' "$GT_LAYOUT" >$KB
# the test user's password, and sudo with it (the user sessions type it at sudo's prompt in a terminal)
id $U >/dev/null 2>&1 || useradd -u $UID_ -M -d $H -s /bin/bash $U
echo "$U:Tq7 plain horse" | chpasswd
printf '%s ALL=(ALL:ALL) ALL\n' $U >/etc/sudoers.d/ghosttest && chmod 0440 /etc/sudoers.d/ghosttest
# what each install writes outside home, and whether uninstall takes it back (footprint.py; checked by
# test_uninstall_leaves_the_system_as_install_found_it)
FP="/usr/bin/python3 /opt/ghosttype/tests/desktop/sid/footprint.py"
kwin_effect=no
if [ -n "${GT_PKG:-}" ]; then
  # GT_PKG=1 (the user sessions): ghosttype from its packages in /root/debs (conftest.py copies them into
  # this fresh overlay), installed the README's way; whether a compiler or pip is here, for the record
  GT=/usr/bin/ghosttype
  for t in cc gcc c++ pip pip3; do command -v $t; done >/out/pkg-tools.txt
  dpkg-query -W -f '${Package}\n' | sort >/tmp/packages-before
  $FP snapshot before-pkg
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /root/debs/*.deb; } \
    >/out/pkg-install.log 2>&1 || { echo "apt install of $(ls /root/debs) failed: $(tail -3 /out/pkg-install.log)" >&2; exit 3; }
  $FP snapshot after-pkg
  brackets="before-pkg after-pkg"
else
$FP snapshot before-ibus
$GT ibus install --system >/out/ibus-install.log 2>&1 \
  || { echo "ghosttype ibus install --system failed: $(tail -1 /out/ibus-install.log)" >&2; exit 3; }
# KDE: the README's steps for the KWin effect (what building it needs, then the effect for every user);
# GT_EXT=off (kde-popup): Plasma without it
$FP snapshot after-ibus
brackets="before-ibus after-ibus"
fi
if [ -z "${GT_PKG:-}" ] && [ "$D" = kde ] && [ "${GT_EXT:-}" != off ]; then
  kwin_effect=yes
  bash /opt/ghosttype/packaging/linux/install-deps.sh --kde >/out/kde-deps.log 2>&1 \
    || { echo "install-deps.sh --kde failed: $(tail -3 /out/kde-deps.log)" >&2; exit 3; }
  $FP snapshot before-kde
  $GT kde install --system >/out/kde-install.log 2>&1 \
    || { echo "ghosttype kde install --system failed: $(tail -5 /out/kde-install.log)" >&2; exit 3; }
  $FP snapshot after-kde
  brackets="$brackets before-kde after-kde"
fi
id $U >/dev/null 2>&1 || useradd -u $UID_ -M -d $H -s /bin/bash $U
rm -rf $H; mkdir -p $H; chown $U: $H /out
RUNDIR=/run/user/$UID_; mkdir -p $RUNDIR; chown $U: $RUNDIR; chmod 700 $RUNDIR
# GT_LOCK=1 (gnome-lock): systemd's seats, which GNOME Shell looks for before it builds a lock screen (with
# inside/fake_gdm.py on the session's system bus); /run is this run's own tmpfs
[ -n "${GT_LOCK:-}" ] && mkdir -p /run/systemd/seats
timeout -k 10 "$BUDGET" runuser -u $U -- env -i PATH=/usr/bin:/bin HOME=$H USER=$U LOGNAME=$U LANG=C.UTF-8 \
  XDG_RUNTIME_DIR=$RUNDIR GT_PKG="${GT_PKG:-}" GT_DISPLAY="${GT_DISPLAY:-}" GT_EXT="${GT_EXT:-}" GT_SCHEME="${GT_SCHEME:-}" GT_LAYOUT="${GT_LAYOUT:-}" GT_BUSY="${GT_BUSY:-}" GT_USER="${GT_USER:-}" GT_SCALE="${GT_SCALE:-}" GT_LOCK="${GT_LOCK:-}" PHRASE="${PHRASE:-Vim is a highly configurable text edi}" \
  dbus-run-session -- /usr/bin/python3 /opt/ghosttype/tests/desktop/inside/session.py "$D" /out "$@" >/out/session.log 2>&1
rc=$?
[ $rc = 124 ] && echo "the $D session did not finish within $BUDGET s" >>/out/session.log
# nothing of the test user may outlive the session: by PID, TERM then KILL
for sig in TERM KILL; do
  for p in $(pgrep -u $UID_); do kill -s $sig "$p" 2>/dev/null; done
  sleep 1
done
left=$(pgrep -u $UID_ | tr '\n' ' ')
[ -z "$left" ] || echo "processes of $U still alive: $left" >>/out/session.log
cp $H/.local/state/ghosttype/log/ghosttype.log /out/engine.log 2>/dev/null
for i in 1 2 3; do cp $H/.local/state/ghosttype/log/ghosttype.log.$i /out/engine.log.$i 2>/dev/null; done
cp $H/.local/state/ghosttype/log/stacks.txt /out/engine-stacks.txt 2>/dev/null
if [ -n "${GT_PKG:-}" ]; then
  # `apt purge` of ghosttype's packages, then of the packages apt brought in for them (what `apt autoremove`
  # would take), so the system can be compared with the one before the install
  pkgs=$(dpkg-query -W -f '${Package}\n' 'ghosttype*' 2>/dev/null | tr '\n' ' ')
  DEBIAN_FRONTEND=noninteractive apt-get purge -y $pkgs >/out/pkg-purge.log 2>&1
  echo $? >/out/pkg-purge.rc
  dpkg-query -W -f '${Package}\n' | sort >/tmp/packages-after
  brought=$(comm -13 /tmp/packages-before /tmp/packages-after | tr '\n' ' ')
  echo "brought in by apt: $brought" >>/out/pkg-purge.log
  [ -z "$brought" ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y $brought >>/out/pkg-purge.log 2>&1
  { ls -A /usr/share/ibus/component; ibus read-cache --system 2>/dev/null | grep -c '<name>ghosttype</name>'; } \
    >/out/pkg-purge-ibus.txt 2>&1
else
$GT ibus uninstall --system >/out/ibus-uninstall.log 2>&1
echo $? >/out/ibus-uninstall.rc
fi
if [ $kwin_effect = yes ]; then
  $GT kde uninstall --system >/out/kde-uninstall.log 2>&1
  echo $? >/out/kde-uninstall.rc
fi
$FP snapshot after-uninstall
# shellcheck disable=SC2086
$FP compare /out/uninstall.json $brackets after-uninstall >/out/uninstall.log 2>&1 || echo "footprint compare failed" >>/out/uninstall.log
[ -n "${GT_LOCK:-}" ] && rmdir /run/systemd/seats /run/systemd 2>/dev/null
if [ -e $KB.before-session ]; then mv -f $KB.before-session $KB; else rm -f $KB; fi
exit $rc
