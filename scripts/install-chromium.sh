#!/usr/bin/env bash
# Headless Chromium for the info-page test (tests/unit/test_infopage_browser.py): Debian's own
# package, installed only when it is missing. Needs root (or sudo) and the Debian mirrors.
# Recommends stay in: they bring fonts-liberation, so the screenshots show real glyphs.
set -euo pipefail
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-chromium: not root and no sudo; install chromium by hand" >&2; exit 1; }
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
# An old or missing package list is the usual reason for "Unable to locate package".
$SUDO apt-get install -y chromium >/dev/null 2>&1 || {
  $SUDO apt-get update -qq
  $SUDO apt-get install -y chromium
}
[ -x "$CHROMIUM" ] || { echo "install-chromium: $CHROMIUM still missing" >&2; exit 1; }
