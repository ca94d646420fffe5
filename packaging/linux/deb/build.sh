#!/usr/bin/env bash
# Builds ghosttype's Debian packages from this checkout, on the Debian or Ubuntu release they are for:
#
#   packaging/linux/deb/build.sh [--kwin] [--out DIR]      (default DIR: dist/)
#
# ghosttype_VERSION_ARCH.deb: a Python environment at /usr/lib/ghosttype made with this machine's
#   python3 (llama-cpp-python compiled here once, or taken from PIP_FIND_LINKS; the default model inside
#   it), /usr/bin/ghosttype, the GNOME Shell extension for every user (and switched on by default: a
#   GSettings override of org.gnome.shell enabled-extensions, as distributions ship a default extension),
#   the settings window's menu entry. postinst writes the IBus component (with the machine's keyboard
#   layout) and refreshes IBus's system cache; postrm takes both back. Nothing in a home folder: each user
#   runs `ghosttype setup` once.
# ghosttype-kwin_VERSION_ARCH.deb (--kwin, needs `install-deps.sh --kde` first): the KWin effect built
#   against this machine's KWin, depending on exactly that kwin-wayland version.
#
# Why a staged tree and dpkg-deb rather than dpkg-buildpackage or dh-virtualenv: the package is a Python
# environment with its dependencies from PyPI (PyQt6's Qt among them), which Debian's source-package
# tooling would want built from Debian's own packages; dh-virtualenv is not in Debian any more. What
# dh-virtualenv does that matters is done here: the environment is built in a staging folder and its
# absolute paths rewritten to /usr/lib/ghosttype. /usr/lib and not /opt: Debian policy 9.1 keeps packages
# out of /opt (lintian: dir-or-file-in-opt). No bytecode in the package (postinst compiles it, prerm
# removes it), as Debian's Python packages do. Needs: python3-venv, binutils (strip, readelf); no root (dpkg-deb
# --root-owner-group makes every file root's, which `ibus install --system` requires).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=$REPO/dist
KWIN=no
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --kwin) KWIN=yes; shift ;;
    *) echo "usage: $0 [--kwin] [--out DIR]" >&2; exit 2 ;;
  esac
done
command -v dpkg-deb >/dev/null || { echo "build: dpkg-deb is missing (Debian and Ubuntu only)" >&2; exit 2; }
PYVER=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PY=/usr/bin/python$PYVER
[ -x "$PY" ] || { echo "build: $PY is missing" >&2; exit 2; }
$PY -c 'import ensurepip' 2>/dev/null || { echo "build: python$PYVER-venv is missing (sudo apt install python3-venv)" >&2; exit 2; }
VERSION=$($PY -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$REPO/pyproject.toml")
ARCH=$(dpkg --print-architecture)
APP=/usr/lib/ghosttype
MAINTAINER="ghosttype developers <ghosttype@users.noreply.github.com>"
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
# the runtime libraries, one list with the from-source install (install-deps.sh's runtime=(...))
eval "$(sed -n '/^runtime=(/,/^)/p' "$REPO/packaging/linux/install-deps.sh")"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
#: xz, as Debian's archive takes it (lintian refuses zstd); GHOSTTYPE_DEB_FAST=1 (the test tier): its
#: fastest level, a larger file
COMPRESS=(-Zxz ${GHOSTTYPE_DEB_FAST:+-z1})

doc() {  # doc ROOT PACKAGE: copyright and changelog, as Debian policy 12.5 and 12.7 ask
  local d=$1/usr/share/doc/$2
  mkdir -p "$d"
  cat >"$d/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ghosttype
Comment: Built from the ghosttype checkout (commit $COMMIT). The Python packages in
 /usr/lib/ghosttype/lib come from PyPI, each with its own licence in its
 *.dist-info folder there.

Files: *
Copyright: 2025-2026 ghosttype developers
License: MIT

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 SOFTWARE.
EOF
  printf '%s (%s) unstable; urgency=medium\n\n  * Built from the checkout at commit %s.\n\n -- %s  %s\n' \
    "$2" "$VERSION" "$COMMIT" "$MAINTAINER" "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")" \
    | gzip -9n >"$d/changelog.gz"
}

package() {  # package ROOT PACKAGE DEPENDS DESCRIPTION...: the control file, then OUT/PACKAGE_VERSION_ARCH.deb
  local root=$1 pkg=$2 deps=$3; shift 3
  mkdir -p "$root/DEBIAN"
  {
    echo "Package: $pkg"
    echo "Version: $VERSION"
    echo "Architecture: $ARCH"
    echo "Maintainer: $MAINTAINER"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
    echo "Depends: $deps"
    [ "$pkg" = ghosttype ] && echo "Suggests: ghosttype-kwin"
    echo "Section: utils"
    echo "Priority: optional"
    echo "Homepage: https://github.com/ghosttype/ghosttype"
    printf 'Description: %s\n' "$1"; shift
    for line in "$@"; do printf ' %s\n' "$line"; done
  } >"$root/DEBIAN/control"
  find "$root" -type d -exec chmod 0755 {} +
  dpkg-deb --root-owner-group "${COMPRESS[@]}" --build "$root" "$OUT/${pkg}_${VERSION}_${ARCH}.deb"
}

# --------------------------------------------------------------------------- ghosttype
R=$STAGE/ghosttype
echo "== the Python environment (python$PYVER) at $APP"
$PY -m venv "$R$APP"
"$R$APP/bin/python" -m pip install -q --no-compile "$REPO"
# what ghosttype does not use goes (the `llm` tool beside the default model, most of Qt), shared objects
# are stripped (trim.py says why and checks what stays loads)
"$R$APP/bin/python" "$HERE/trim.py"
"$R$APP/bin/python" -m pip uninstall -q -y pip
# the staging folder's absolute paths (scripts' #! lines, pyvenv.cfg) become /usr/lib/ghosttype's
grep -rlIZ --exclude-dir=__pycache__ -- "$R$APP" "$R$APP" | xargs -0 -r sed -i "s|$R$APP|$APP|g"
rm -f "$R$APP"/bin/activate* "$R$APP"/bin/Activate.ps1 "$R$APP"/.gitignore
rmdir "$R$APP"/include/* "$R$APP"/include 2>/dev/null || true
find "$R$APP" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$R/usr/bin"
ln -s "$APP/bin/ghosttype" "$R/usr/bin/ghosttype"
# the GNOME Shell extension, from where the engine's own installer takes it
"$R$APP/bin/python" - "$R" <<'EOF'
import pathlib, shutil, sys
from daemon.frontends.ibus.inline import shell_extension as ext
dest = pathlib.Path(sys.argv[1] + str(ext.target(True)))
dest.mkdir(parents=True)
for name, src in ext.SOURCES.items():
    shutil.copyfile(src, dest / name)
print(ext.UUID)
EOF
mkdir -p "$R/usr/share/glib-2.0/schemas" "$R/usr/share/applications"
cat >"$R/usr/share/glib-2.0/schemas/90_ghosttype.gschema.override" <<'EOF'
# ghosttype's GNOME Shell extension, on by default for every user who has not chosen their extensions
# (a user's own enabled-extensions wins; `ghosttype setup` adds it there too; Extensions turns it off)
[org.gnome.shell]
enabled-extensions=['ghosttype@ghosttype']
EOF
cat >"$R/usr/share/applications/ghosttype-settings.desktop" <<'EOF'
[Desktop Entry]
Type=Application
Name=ghosttype settings
Comment=Suggestions as you type: model, keys, applications where ghosttype is off
Exec=ghosttype settings
Icon=input-keyboard
Terminal=false
Categories=Settings;Utility;
Keywords=autocomplete;suggestions;input;
EOF
doc "$R" ghosttype
mkdir -p "$R/DEBIAN"
cp "$HERE/postinst" "$HERE/prerm" "$HERE/postrm" "$R/DEBIAN/"
chmod 0755 "$R/DEBIAN/postinst" "$R/DEBIAN/prerm" "$R/DEBIAN/postrm"
deps="python3, python$PYVER, libc6, libstdc++6, libgcc-s1, libglib2.0-bin"
for p in "${runtime[@]}"; do
  [ "$p" = python3-venv ] || deps="$deps, $p"
done
package "$R" ghosttype "$deps" \
  "Copilot-style suggestions in every text box, from a local model" \
  "ghosttype watches what you type in any application, asks a small local" \
  "language model (llama.cpp, SmolLM2-135M included) for a continuation, shows" \
  "it as grey text at the caret and types it in when you press Tab. It is an" \
  "IBus input method on Wayland (GNOME Shell draws the grey text through its" \
  "extension, KWin through ghosttype-kwin) and an overlay on X11. Nothing you" \
  "type leaves the machine. After installing, run \`ghosttype setup\` once." \
  "Built from commit $COMMIT."

# --------------------------------------------------------------------------- ghosttype-kwin
if [ $KWIN = yes ]; then
  K=$STAGE/ghosttype-kwin
  KV=$(dpkg-query -W -f='${Version}' kwin-wayland 2>/dev/null) \
    || { echo "build: kwin-wayland is not installed (packaging/linux/install-deps.sh --kde)" >&2; exit 2; }
  echo "== the KWin effect, for kwin-wayland $KV"
  "$R$APP/bin/python" - "$K" "$STAGE/kwin-build" <<'EOF'
import pathlib, shutil, subprocess, sys
from daemon.frontends.ibus.inline import kwin_effect
work = pathlib.Path(sys.argv[2])
work.mkdir()
plugin, dest = kwin_effect.build(work)
target = pathlib.Path(sys.argv[1] + str(dest)) / kwin_effect.PLUGIN_FILE
target.parent.mkdir(parents=True)
shutil.copyfile(plugin, target)
subprocess.run(["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note", str(target)],
               check=True)
target.chmod(0o644)
print(target, "built for KWin", kwin_effect.built_for(target))
EOF
  doc "$K" ghosttype-kwin
  package "$K" ghosttype-kwin "kwin-wayland (= $KV), ghosttype (= $VERSION), libc6, libstdc++6" \
    "ghosttype's suggestions drawn at the caret by KWin (Plasma 6)" \
    "The KWin effect that draws ghosttype's grey suggestion at the text caret in" \
    "Plasma's Wayland session. Built for exactly this kwin-wayland version: KWin" \
    "refuses an effect built for another one, so apt does too. Run" \
    "\`ghosttype setup\` once in Plasma, then log out and in."
fi
ls -l "$OUT"/*.deb
