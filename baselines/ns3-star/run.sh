#!/usr/bin/env bash
# ns-3 reference of the 12-station Wi-Fi star of the lwIP evaluation (Debian's
# ns-3.37): TCP senders writing 1024 bytes every 0.4 s through 802.11b DCF at
# 2 Mbit/s to a sink behind a 10 Mbit/s wire. Usage:
#   run.sh [--stations=12] [--writes=1000] [--size=1024] [--interval=0.4]
#          [--mss=536] [--queue=8] [--seed=1]
# Prints one line of key=value: goodput, retransmissions, ns-3 events and the
# wall-clock seconds of Simulator::Run().
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/star.cc"
mods="ns3-core ns3-network ns3-internet ns3-wifi ns3-mobility ns3-point-to-point ns3-applications ns3-traffic-control"
if ! command -v g++ >/dev/null || ! command -v pkg-config >/dev/null ||
   ! pkg-config --exists $mods 2>/dev/null ||
   ! compgen -G "/usr/lib/*/libgsl.so" >/dev/null || ! compgen -G "/usr/lib/*/libsqlite3.so" >/dev/null; then
  echo "installing ns-3 from Debian (libns3-dev, libgsl-dev, libsqlite3-dev, pkg-config)..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
     libns3-dev libgsl-dev libsqlite3-dev pkg-config g++) >&2
fi
hash=$(sha256sum "$src" | cut -c1-16)
bin=${NS3_STAR_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/coapcc-star-ns3-$hash}
mkdir -p "$(dirname "$bin")"
if [ ! -x "$bin" ]; then
  echo "compiling $src -> $bin ..." >&2
  g++ -O2 -std=c++17 "$src" -o "$bin.tmp.$$" $(pkg-config --cflags --libs $mods)
  mv "$bin.tmp.$$" "$bin"
fi
exec "$bin" "$@"
