#!/usr/bin/env bash
# install-bench-packages.sh — install the Debian packages the benchmarks beside ns-3 need.
#
# bench/sim_speed.py, bench/net_speed.py and bench/ns3_tcp_compare.py build the ns-3 programs of
# ../shared/anchors/ns3/ (tcp_lossy_link.cc, wifi_chain.cc, manet.cc) against Debian's
# ns-3.37 (libns3-dev, which brings the wifi, mobility, propagation, aodv and dsr modules;
# ns3_tcp_compare.py builds its own bench/ns3/tcp_cc_link.cc)
# with g++, and time every run under /usr/bin/time (package `time`). The list is
# scripts/bench-packages.txt plus `time`; only the missing ones are installed, as
# scripts/install-system-packages.sh does (root installs; others get the command to run).
#
#   bash scripts/install-bench-packages.sh            install what is missing
#   bash scripts/install-bench-packages.sh --check    only report; exit 1 if something is missing
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LIST="$(mktemp)"
trap 'rm -f "$LIST"' EXIT
{ cat "$HERE/bench-packages.txt"; echo "time"; } >"$LIST"
bash "$HERE/install-system-packages.sh" --list "$LIST" "$@"

# The headers and libraries the ns-3 programs are built against (their build.sh).
if [[ ${1:-} != --check ]]; then
  missing=()
  for h in core-module network-module internet-module applications-module wifi-module \
           mobility-module propagation-module point-to-point-module traffic-control-module \
           aodv-module dsr-module; do
    [[ -r /usr/include/ns3/$h.h ]] || missing+=("ns3/$h.h")
  done
  for l in core network internet applications wifi mobility propagation point-to-point \
           traffic-control aodv dsr; do
    compgen -G "/usr/lib/*/libns3-$l.so" >/dev/null || missing+=("libns3-$l.so")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "error: ns-3 files still missing: ${missing[*]}" >&2
    exit 1
  fi
  echo "ns-3 headers and libraries for the anchor programs: present"
fi
