#!/usr/bin/env bash
# Installs the Debian/Ubuntu system libraries ghosttype needs at run time
# (the Qt xcb platform plugin's libraries, AT-SPI), a C/C++ compiler for
# llama-cpp-python (pip builds it from source), and with --test also the
# tools the test suite drives (Xvfb, xdotool, xterm, ImageMagick, a tray host (trayer, or stalonetray where
# the release has no trayer, as Debian sid), a D-Bus
# session bus, and the validators of the startup files: desktop-file-validate
# and systemd-analyze; for the IBus engine's tests the GTK3/GTK4 IBus IM
# modules and Debian's PyGObject for the GTK test app, and GNOME Shell for the
# headless Wayland test; the real applications of the X11 end-to-end tests:
# Firefox ESR, Chromium, mousepad (GTK 3) and dunst, a desktop notification
# server; openssl, which signs a certificate for the served-model TLS test;
# cmake and libssl-dev, to build llama.cpp's server with TLS for those tests).
# tesseract-ocr: the desktop tier reads the suggestion's text off its screenshots.
# libkf6config-bin (or 5): kwriteconfig, which `ghosttype setup` uses on Plasma.
# gnome-keyring: a real Secret Service for the tests of learn = "persist" (the memory file's key).
# mount: the IBus system-install tests mount a tmpfs in a private mount namespace (Debian sid no
# longer installs it with the base system).
# Python packages are installed by pip, not here. Elsewhere than Debian and Ubuntu it installs nothing: it
# names the packages for dnf, pacman or zypper and exits 3.
# IBus itself (ibus) is the input-method framework the `ghosttype ibus` engine
# plugs into. With --kde: what `ghosttype kde install` needs to build ghosttype's KWin effect
# against the installed KWin (its development files, CMake, a C++ compiler; Debian's kwin-dev
# leaves out a few of the libraries its CMake files ask for).
set -euo pipefail

runtime=(
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-render-util0 libxcb-image0
  libxcb-shape0 libxcb-xinerama0 libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1
  libdbus-1-3 at-spi2-core fonts-dejavu-core python3-venv ibus
)
# python3-dev: pip builds evdev (a pynput dependency) from source against Python.h
build=(build-essential python3-dev)
test_tools=(
  xvfb xdotool xterm x11-utils imagemagick dbus dbus-x11 desktop-file-utils xcompmgr openbox
  systemd firefox-esr chromium mousepad dunst
  ibus-gtk3 ibus-gtk4 python3-gi gir1.2-gtk-3.0 gir1.2-gtk-4.0 gnome-shell dconf-service libglib2.0-bin
  openssl cmake libssl-dev mount tesseract-ocr gnome-keyring
)

kde=(kwin-dev cmake make g++ extra-cmake-modules pkgconf libdrm-dev libvulkan-dev libwayland-dev)

packages=("${runtime[@]}" "${build[@]}")
if [[ "${1:-}" == "--test" ]]; then
  packages+=("${test_tools[@]}")
elif [[ "${1:-}" == "--kde" ]]; then
  packages=("${kde[@]}")
fi

if ! command -v apt-get >/dev/null 2>&1; then
  # Not Debian or Ubuntu: say what to install with this system's package manager and stop (exit 3), so a
  # `install-deps.sh && ...` chain stops here instead of failing later in a compiler error. The names are
  # those distributions' own spelling of the lists above (not tried here: this project tests on Debian).
  mode=${1:-}
  if [[ "$mode" == "--test" ]]; then
    echo "install-deps: the test suite's tools are installed on Debian or Ubuntu only (bash .ci/run runs there)" >&2
    exit 3
  fi
  # per system: its install command, then what ghosttype needs (runtime and build), then --kde's list
  if command -v dnf >/dev/null 2>&1; then
    pm="sudo dnf install"
    base="xcb-util-cursor xcb-util-wm xcb-util-keysyms xcb-util-renderutil xcb-util-image libxkbcommon-x11 mesa-libEGL mesa-libGL fontconfig dbus-libs at-spi2-core dejavu-sans-fonts python3 ibus gcc gcc-c++ make python3-devel"
    kde="kwin-devel cmake make gcc-c++ extra-cmake-modules pkgconf libdrm-devel vulkan-loader-devel wayland-devel"
  elif command -v pacman >/dev/null 2>&1; then
    pm="sudo pacman -S --needed"
    base="xcb-util-cursor xcb-util-wm xcb-util-keysyms xcb-util-renderutil xcb-util-image libxkbcommon-x11 libglvnd fontconfig dbus at-spi2-core ttf-dejavu python ibus base-devel"
    kde="kwin cmake make gcc extra-cmake-modules pkgconf libdrm vulkan-headers wayland"
  elif command -v zypper >/dev/null 2>&1; then
    pm="sudo zypper install"
    base="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-render-util0 libxcb-image0 libxcb-shape0 libxcb-xinerama0 libxkbcommon-x11-0 libEGL1 libGL1 fontconfig libdbus-1-3 at-spi2-core dejavu-fonts python3 ibus gcc gcc-c++ make python3-devel"
    kde="kwin6-devel cmake make gcc-c++ extra-cmake-modules pkgconf libdrm-devel vulkan-devel wayland-devel"
  else
    echo "install-deps: no apt-get, dnf, pacman or zypper here; install the equivalents of these Debian packages: ${packages[*]}" >&2
    exit 3
  fi
  names=$base
  [[ "$mode" == "--kde" ]] && names=$kde
  echo "install-deps: this is not Debian or Ubuntu. Install what ghosttype needs with:" >&2
  echo "  $pm $names" >&2
  echo "then run the rest of the command again (python3 -m venv .venv && ...)." >&2
  exit 3
fi

SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [[ "${1:-}" == "--test" ]]; then
  for tray in trayer stalonetray; do
    if [[ -n "$(apt-cache policy "$tray" 2>/dev/null | grep -v '(none)' | grep Candidate)" ]]; then
      packages+=("$tray")
      break
    fi
  done
  # kwriteconfig6 (KDE Frameworks 6), or kwriteconfig5 where the release has no 6: `ghosttype setup` on
  # Plasma writes kwinrc through it, and its test runs the real tool
  for kconfig in libkf6config-bin libkf5config-bin; do
    if [[ -n "$(apt-cache policy "$kconfig" 2>/dev/null | grep -v '(none)' | grep Candidate)" ]]; then
      packages+=("$kconfig")
      break
    fi
  done
fi
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}"
