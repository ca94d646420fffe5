#!/usr/bin/env bash
# Runs a command as root inside the desktop tier's sid chroot, on an overlay of it, in a private mount
# namespace: every mount made here (the overlay, /proc, /sys, /dev, a tmpfs /run, the caches, OUT)
# vanishes with the namespace when the command ends, and the chroot itself (ROOT/base) is never written.
#
#   tests/desktop/sid/enter.sh RUN OUT CMD...
#
# The host's DNS setup and its locally added CA certificates (/usr/local/share/ca-certificates) are
# copied in, so the chroot reaches the package registries the way the host does.
# RUN: a directory of this run; RUN/upper holds what the command writes into the chroot (kept, so a
# later call with the same RUN sees the venv an earlier one installed), RUN/work is overlayfs's, and
# RUN/root the mount point. OUT: a host directory seen as /out inside. ROOT (default $GHOSTTYPE_SID or
# /srv/ghosttype-sid) holds base/ (build.sh) and cache/ (pip's and apt's downloads, shared by runs, and
# wheels/: the llama-cpp-python wheel .ci/run built on the host, share_wheel.sh, seen as
# /var/cache/ghosttype-wheels inside).
set -euo pipefail
RUN=$1 OUT=$2; shift 2
ROOT=${GHOSTTYPE_SID:-/srv/ghosttype-sid}
BASE=$ROOT/base
[ -f "$BASE/etc/ghosttype-sid.hash" ] || { echo "enter: no sid chroot at $BASE (run tests/desktop/sid/build.sh)" >&2; exit 2; }
mkdir -p "$RUN/upper" "$RUN/work" "$RUN/root" "$OUT" "$ROOT/cache/pip" "$ROOT/cache/apt" "$ROOT/cache/wheels"
export RUN OUT ROOT BASE
exec unshare -m --propagation private -- bash -c '
  set -e
  R=$RUN/root
  mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$RUN/upper,workdir=$RUN/work" "$R"
  mount -t proc proc "$R/proc"
  for d in sys dev; do mount --rbind "/$d" "$R/$d"; done
  mount -t tmpfs -o mode=755 tmpfs "$R/run"; mkdir -p "$R/run/dbus"
  mkdir -p "$R/out" "$R/root/.cache/pip" "$R/var/cache/apt/archives" "$R/var/cache/ghosttype-wheels"
  mount --bind "$OUT" "$R/out"
  mount --bind "$ROOT/cache/pip" "$R/root/.cache/pip"
  mount --bind "$ROOT/cache/apt" "$R/var/cache/apt/archives"
  mount --bind -o ro "$ROOT/cache/wheels" "$R/var/cache/ghosttype-wheels"
  cp /etc/resolv.conf "$R/etc/resolv.conf"
  # the machine'"'"'s own trusted CAs (a proxy'"'"'s, a company'"'"'s): the chroot reaches the registries as the host does
  L=/usr/local/share/ca-certificates
  if [ -d $L ] && ! diff -rq $L "$R$L" >/dev/null 2>&1; then
    mkdir -p "$R$L"; cp -r $L/. "$R$L/"; chroot "$R" update-ca-certificates >/dev/null 2>&1
  fi
  exec chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb "$@"' enter "$@"
