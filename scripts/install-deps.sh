#!/usr/bin/env bash
# Installs what Switchboard needs, only if missing. Idempotent; needs root (or sudo) on
# Debian 12.
#   install-deps.sh         build and run: the C libraries behind the system-library modules
#   install-deps.sh --test  also what the tests drive: openssl (DTLS interop), chromium and
#                           coturn (browser tests), aiortc from PyPI (independent WebRTC peer),
#                           debootstrap and systemd-nspawn (the deploy/ checks)
set -euo pipefail
pkgs=(pkg-config libnice-dev libglib2.0-dev libsrtp2-dev libopus-dev libssl-dev
      libsoup-3.0-dev libsqlite3-dev libtcmalloc-minimal4)
with_tests=false
[ "${1:-}" = "--test" ] && with_tests=true
if $with_tests; then
  pkgs+=(openssl chromium coturn python3-pip debootstrap systemd-container)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A python3 with pip already on PATH (e.g. pyenv) needs no Debian pip.
if $with_tests && python3 -m pip --version >/dev/null 2>&1; then
  missing=("${missing[@]/python3-pip}")
  filtered=(); for p in "${missing[@]}"; do [ -n "$p" ] && filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
$with_tests || exit 0
# aiortc integration test (Tests/IntegrationTests/aiortc/): an independent WebRTC stack from
# PyPI, a WebSocket client for the IM channel, and numpy (av needs it for AudioFrame ndarrays;
# neither aiortc nor av depends on it). Pinned so the test talks to the same peer on every
# machine; installed only when not importable at those versions.
if ! python3 -c 'import aiortc, websockets, numpy; assert (aiortc.__version__, websockets.__version__) == ("1.16.0", "15.0.1")' 2>/dev/null; then
  echo "installing: aiortc==1.16.0 websockets==15.0.1 numpy" >&2
  spec=(aiortc==1.16.0 websockets==15.0.1 numpy==2.4.6)
  # Debian's own python3 is "externally managed" (PEP 668): there pip needs the override.
  python3 -m pip install --quiet "${spec[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "${spec[@]}"
fi
