#!/usr/bin/env bash
# Installs the Debian packages Switchboard builds and tests against, only if missing.
# Idempotent; needs root (or sudo) on Debian 12.
set -euo pipefail
# Build: the C libraries behind the system-library modules. Tests: openssl (DTLS interop
# with s_client/s_server).
pkgs=(pkg-config libnice-dev libglib2.0-dev libsrtp2-dev libopus-dev libssl-dev
      libsoup-3.0-dev libsqlite3-dev openssl)
missing=()
# Browser integration tests: headless Chromium (fake media devices) and coturn (relay-only ICE).
pkgs+=(chromium coturn)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# aiortc integration test (Tests/IntegrationTests/aiortc/): an independent WebRTC stack from
# PyPI, a WebSocket client for the IM channel, and numpy (av needs it for AudioFrame ndarrays;
# neither aiortc nor av depends on it). Pinned so the test talks to the same peer on every
# machine; installed only when not importable at those versions.
if ! python3 -c 'import aiortc, websockets, numpy; assert (aiortc.__version__, websockets.__version__) == ("1.16.0", "15.0.1")' 2>/dev/null; then
  echo "installing: aiortc==1.16.0 websockets==15.0.1 numpy" >&2
  python3 -m pip install --quiet aiortc==1.16.0 websockets==15.0.1 numpy==2.4.6
fi
