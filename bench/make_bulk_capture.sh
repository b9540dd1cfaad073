#!/usr/bin/env bash
# make_bulk_capture.sh — record the big capture that bench/analyze_speed.py uses.
#
# iperf3 bulk TCP transfers between two network namespaces, captured with tcpdump
# at the sender until the file holds PACKETS packets (default 5,000,000; ~550 MB
# with snaplen 96).  Do not commit the result: write it under bench/out/ (gitignored).
#
#     ns snd (198.18.1.1)          ns bs (no IP stack)                 ns rcv (198.18.1.2)
#     snd0 ===veth=== bs-snd --tc mirred--> bs-rcv ===veth=== rcv0
#       ^ tcpdump -s 96              egress qdisc on bs-rcv: HTB (no rate limit)
#                                    + random loss (classic-BPF `ld rand`, default 0.1 %)
#
# The small random loss after the capture point gives the capture what real ones
# have (retransmissions, duplicate ACKs, SACK blocks), so the analyzer's loss
# bookkeeping is part of what gets measured.  Segments are wire-sized (GSO off).
#
# NETWORK SAFETY: only namespaces created here, only 198.18.0.0/15, no default route;
# namespaces, veths and processes are torn down on exit, error, SIGINT and SIGTERM.
set -euo pipefail

PACKETS=5000000
STREAMS_CYCLE="4 2 8"
RUN_SECONDS=15
LOSS=0.001
SNAPLEN=96
BUFFER_KIB=262144
CC=cubic

usage() {
  cat <<EOF
Usage: $(basename "$0") OUT.pcap [PACKETS] [options]

Captures iperf3 bulk TCP transfers between two namespaces until OUT.pcap holds
PACKETS packets (default $PACKETS).  Needs root, iproute2, iperf3, tcpdump, capinfos.

Options:
  --streams "A B C"   parallel streams of successive iperf3 runs, cycled (default "$STREAMS_CYCLE")
  --run-seconds S     length of one iperf3 run (default $RUN_SECONDS)
  --loss P            random loss probability after the capture point (default $LOSS; 0 = none)
  --snaplen N         tcpdump snap length (default $SNAPLEN)
  --buffer KIB        tcpdump -B capture buffer in KiB (default $BUFFER_KIB)
  --cc NAME           TCP congestion control in the namespaces (default $CC)
  -h, --help          this help

Writes OUT.pcap and OUT.pcap.info.txt (how it was made, tcpdump drop counts, timing).
EOF
}

OUT=""; POS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --streams) STREAMS_CYCLE=$2; shift 2 ;;
    --run-seconds) RUN_SECONDS=$2; shift 2 ;;
    --loss) LOSS=$2; shift 2 ;;
    --snaplen) SNAPLEN=$2; shift 2 ;;
    --buffer) BUFFER_KIB=$2; shift 2 ;;
    --cc) CC=$2; shift 2 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) POS+=("$1"); shift ;;
  esac
done
[[ ${#POS[@]} -ge 1 && ${#POS[@]} -le 2 ]] || { usage >&2; exit 2; }
OUT=${POS[0]}
[[ ${#POS[@]} == 2 ]] && PACKETS=${POS[1]}
[[ $PACKETS =~ ^[0-9]+$ && $PACKETS -gt 0 ]] || { echo "error: PACKETS must be a positive integer" >&2; exit 2; }

die() { echo "error: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (network namespaces, tc, tcpdump)"
for c in ip tc tcpdump iperf3 capinfos awk; do
  command -v "$c" >/dev/null || die "missing command: $c (see scripts/install-system-packages.sh)"
done
LOSS_T=$(awk -v p="$LOSS" 'BEGIN{ if (p < 0 || p > 1) exit 1; printf "%d", p * 4294967295 }') \
  || die "--loss must be in [0,1]"
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
rm -f "$OUT"

TAG=atb$$
NS_SND=$TAG-snd; NS_BS=$TAG-bs; NS_RCV=$TAG-rcv
SND_IP=198.18.1.1; RCV_IP=198.18.1.2
TMP=$(mktemp -d /tmp/airtrace-bulk.XXXXXX)
PIDS=(); NAMESPACES=()

cleanup() {
  local rc=$? pid ns
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$TMP"
  [[ $rc == 0 ]] || echo "make_bulk_capture: failed (exit $rc); everything torn down" >&2
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

T0=$(date +%s.%N)
elapsed() { awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{printf "%.1f", a-b}'; }
log() { echo "[$(elapsed)s] $*"; }

# ------------------------------------------------------------------ topology
for ns in "$NS_SND" "$NS_BS" "$NS_RCV"; do
  ip netns add "$ns"; NAMESPACES+=("$ns")
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$ns" link set lo up
done
grep -qw "$CC" /proc/sys/net/ipv4/tcp_available_congestion_control \
  || die "congestion control '$CC' not available (have: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control))"
ip link add snd0 netns "$NS_SND" type veth peer name bs-snd netns "$NS_BS"
ip link add rcv0 netns "$NS_RCV" type veth peer name bs-rcv netns "$NS_BS"
ip -n "$NS_SND" link set snd0 gso_max_segs 1
ip -n "$NS_RCV" link set rcv0 gso_max_segs 1
ip -n "$NS_SND" addr add $SND_IP/24 dev snd0
ip -n "$NS_RCV" addr add $RCV_IP/24 dev rcv0
for l in "$NS_SND snd0" "$NS_RCV rcv0" "$NS_BS bs-snd" "$NS_BS bs-rcv"; do
  set -- $l; ip -n "$1" link set "$2" up
done
for pair in "bs-snd bs-rcv" "bs-rcv bs-snd"; do
  set -- $pair
  tc -n "$NS_BS" qdisc add dev "$1" ingress
  tc -n "$NS_BS" filter add dev "$1" parent ffff: protocol all prio 1 u32 match u32 0 0 \
    action mirred egress redirect dev "$2"
done
if [[ $LOSS_T -gt 0 ]]; then
  tc -n "$NS_BS" qdisc add dev bs-rcv root handle 1: htb default 1 r2q 100000
  tc -n "$NS_BS" class add dev bs-rcv parent 1: classid 1:1 htb rate 40gbit quantum 60000
  tc -n "$NS_BS" class add dev bs-rcv parent 1: classid 1:2 htb rate 40gbit quantum 60000
  tc -n "$NS_BS" qdisc add dev bs-rcv parent 1:1 handle 10: pfifo limit 1000
  tc -n "$NS_BS" qdisc add dev bs-rcv parent 1:2 handle 20: pfifo limit 0
  tc -n "$NS_BS" filter add dev bs-rcv parent 1: protocol ip prio 10 \
    bpf bytecode "4,32 0 0 4294963256,53 1 0 $LOSS_T,6 0 0 65538,6 0 0 0"
fi

# ------------------------------------------------------------------ capture + traffic
ip netns exec "$NS_RCV" iperf3 -s -B $RCV_IP -p 5201 >"$TMP/iperf3-server.log" 2>&1 &
SRV_PID=$!; PIDS+=("$SRV_PID")
ip netns exec "$NS_SND" tcpdump -n -i snd0 -s "$SNAPLEN" -B "$BUFFER_KIB" -c "$PACKETS" \
  -w "$OUT" >/dev/null 2>"$TMP/tcpdump.log" &
TD_PID=$!; PIDS+=("$TD_PID")
for _ in $(seq 50); do grep -q "listening on" "$TMP/tcpdump.log" && break; sleep 0.1; done
grep -q "listening on" "$TMP/tcpdump.log" || { cat "$TMP/tcpdump.log" >&2; die "tcpdump did not start"; }
sleep 0.5
log "capturing $PACKETS packets to $OUT (snaplen $SNAPLEN, buffer ${BUFFER_KIB} KiB, loss $LOSS, $CC)"

read -r -a CYCLE <<<"$STREAMS_CYCLE"
RUN=0; RUNS_LOG=()
while kill -0 "$TD_PID" 2>/dev/null; do
  P=${CYCLE[$((RUN % ${#CYCLE[@]}))]}
  RUN=$((RUN + 1))
  log "iperf3 run $RUN: -P $P -t $RUN_SECONDS"
  ip netns exec "$NS_SND" iperf3 -c $RCV_IP -B $SND_IP -p 5201 -P "$P" -t "$RUN_SECONDS" -C "$CC" \
    --connect-timeout 3000 >"$TMP/iperf3-run$RUN.log" 2>&1 &
  CLI_PID=$!; PIDS+=("$CLI_PID")
  while kill -0 "$CLI_PID" 2>/dev/null && kill -0 "$TD_PID" 2>/dev/null; do
    sleep 1
    if (( ${SECONDS} % 5 == 0 )); then
      sz=$(stat -c %s "$OUT" 2>/dev/null || echo 0)
      echo "    ~$(( sz / (SNAPLEN + 16) )) packets so far ($(( sz / 1048576 )) MiB)"
    fi
  done
  if kill -0 "$CLI_PID" 2>/dev/null; then
    kill -TERM "$CLI_PID" 2>/dev/null || true   # capture is complete: stop this run early
    wait "$CLI_PID" 2>/dev/null || true
    RUNS_LOG+=("run $RUN: -P $P, stopped early when the capture was complete")
  else
    wait "$CLI_PID" || { cat "$TMP/iperf3-run$RUN.log" >&2; die "iperf3 run $RUN failed"; }
    summ=$(grep -E '(SUM|\[ *[0-9]+\]).*sender$' "$TMP/iperf3-run$RUN.log" | tail -1 | awk '{print $(NF-3), $(NF-2) ", retransmits", $(NF-1)}')
    RUNS_LOG+=("run $RUN: -P $P -t $RUN_SECONDS: $summ")
    log "  $summ"
  fi
done
wait "$TD_PID" || true
CAPTURE_SECONDS=$(elapsed)
log "tcpdump finished: $(grep -E 'captured|received by filter|dropped by kernel' "$TMP/tcpdump.log" | tr '\n' ';' | sed 's/;$//')"
DROPS=$(awk '/dropped by kernel/{print $1}' "$TMP/tcpdump.log")
LINK_DROPS=none
if [[ $LOSS_T -gt 0 ]]; then
  LINK_DROPS=$(tc -n "$NS_BS" -s qdisc show dev bs-rcv | awk '/^qdisc pfifo/{q=$3} /Sent/{if(q) printf "%s %s pkts sent, %s dropped; ", q, $4, $7; q=""}' | tr -d ',' | sed 's/; $//')
  log "link drops after the capture point (10: = queue, 20: = random loss): $LINK_DROPS"
fi

VETH_DROPS=$(for l in "$NS_SND snd0" "$NS_BS bs-snd" "$NS_BS bs-rcv" "$NS_RCV rcv0"; do
  set -- $l; ip -n "$1" -s -s link show dev "$2" | awk -v d="$2" '
    /RX:/{getline; rx=$4} /TX:/{getline; tx=$4} END{printf "%s rx_dropped %s tx_dropped %s; ", d, rx, tx}'
done | sed 's/; $//')
log "veth drop counters: $VETH_DROPS"

COUNT=$(capinfos -c -M "$OUT" | awk -F: '/Number of packets/{gsub(/ /,"",$2); print $2}')
SIZE=$(stat -c %s "$OUT")
log "capinfos: $COUNT packets, $SIZE bytes ($(( SIZE / 1048576 )) MiB)"
[[ $COUNT -ge $PACKETS ]] || die "only $COUNT packets in $OUT (wanted $PACKETS)"

{
  echo "file: $(basename "$OUT")"
  echo "made by: bench/make_bulk_capture.sh $(basename "$OUT") $PACKETS --streams \"$STREAMS_CYCLE\" --run-seconds $RUN_SECONDS --loss $LOSS --snaplen $SNAPLEN --buffer $BUFFER_KIB --cc $CC"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel: $(uname -r); nproc: $(nproc); cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "tools: $(tcpdump --version 2>&1 | head -1); $(iperf3 --version | head -1)"
  echo "packets: $COUNT; bytes: $SIZE; capture wall time: ${CAPTURE_SECONDS} s"
  echo "tcpdump: $(grep -E 'captured|received by filter|dropped by kernel' "$TMP/tcpdump.log" | tr '\n' ';' | sed 's/;$//')"
  echo "link drops after the capture point (qdisc 10: = queue overflow, 20: = random loss): $LINK_DROPS"
  echo "veth drop counters: $VETH_DROPS"
  printf '%s\n' "${RUNS_LOG[@]}"
} >"$OUT.info.txt"
cat "$OUT.info.txt"
echo "kernel drops reported by tcpdump: ${DROPS:-unknown}"
