#!/usr/bin/env bash
# make_sample_capture.sh — record the small sample capture that `airtrace demo` analyzes.
#
# A REAL Linux TCP transfer between two network namespaces, through a third namespace
# ("bs", the base station) that plays a slow, lossy wireless hop:
#
#     ns snd (198.18.0.1)            ns bs (no IP stack)                 ns rcv (198.18.0.2)
#     snd0 ===veth=== bs-snd  <-- L2 delay relay -->  bs-rcv ===veth=== rcv0
#        ^ capture "sender"        egress qdiscs on bs-snd and bs-rcv:   ^ capture "receiver"
#                                  HTB rate limit + deep pfifo buffer
#                                  + random loss (classic-BPF `ld rand`)
#
# The kernel here has no netem and no act_gact, so:
#   * rate + buffer: HTB class with a pfifo leaf of QUEUE packets (tail drop when full);
#   * random loss:   a cls_bpf classic-BPF filter that draws `ld #rand` and sends a
#                    fraction of packets to a second HTB class whose pfifo has limit 0;
#   * delay:         scripts/netns_helpers.py relay (AF_PACKET, userspace delay line);
#                    with --delay-ms 0 the kernel forwards instead (tc mirred redirect);
#   * fade / stall:  timed events during the bulk transfer: a "fade" drops every frame
#                    in both directions for 0.6 s (a u32 filter into the limit-0 class);
#                    a "stall" (link-layer retries) holds every frame in the relay for
#                    2.5 s and drops nothing (the classic cause of spurious timeouts).
#
# Traffic: one bulk transfer snd -> rcv (port 5001; python sockets, so that it ends
# with a clean FIN exchange: iperf3 -n ends in RSTs), and a few short request/response
# connections (port 8080; client in rcv, server in snd) before, during and after it.
#
# NETWORK SAFETY: everything lives in namespaces this script creates; only addresses
# in 198.18.0.0/15; no default route; namespaces, veths and processes are torn down on
# exit, on error and on SIGINT/SIGTERM.  Only processes started here are killed (by PID).
set -euo pipefail

usage() {
  cat <<EOF
Usage: $(basename "$0") OUT.pcapng [options]

Records a real TCP transfer over an emulated slow wireless hop and writes the
sender-side capture to OUT.pcapng and the receiver-side capture next to it
(…sender… in the name becomes …receiver…, else OUT-receiver.pcapng).

Options:
  --receiver-out FILE   where to write the receiver-side capture
  --no-receiver         do not write a receiver-side capture
  --bytes N             bulk transfer size, e.g. 4M (default: $BYTES)
  --rate R              wireless hop rate, tc syntax (default: $RATE)
  --queue N             base-station buffer in packets (default: $QUEUE)
  --loss P              random loss probability on the data direction (default: $LOSS)
  --ack-loss P          random loss probability on the ACK direction (default: $ACK_LOSS)
  --delay-ms D          one-way propagation delay in ms, 0 = none (default: $DELAY_MS)
  --no-events           no fade / stall events during the bulk transfer
  --rr-count N          short request/response connections (default: $RR_COUNT)
  --cc NAME             TCP congestion control in both namespaces (default: $CC;
                        this kernel's default is $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown))
  --snaplen N           capture snap length (default: $SNAPLEN)
  -h, --help            this help

Needs root, iproute2 (ip, tc), tcpdump, editcap/capinfos (wireshark-common),
tshark (for the summary) and python3.
EOF
}

# ------------------------------------------------------------------ defaults / args
BYTES=4M
RATE=2mbit
QUEUE=50
LOSS=0.02
ACK_LOSS=0.005
DELAY_MS=50
EVENTS=1
RR_COUNT=6
RR_SIZE=30000
SNAPLEN=128
CC=cubic
RECEIVER=1
OUT=""
RECV_OUT=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --receiver-out) RECV_OUT=$2; shift 2 ;;
    --no-receiver) RECEIVER=0; shift ;;
    --bytes) BYTES=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --queue) QUEUE=$2; shift 2 ;;
    --loss) LOSS=$2; shift 2 ;;
    --ack-loss) ACK_LOSS=$2; shift 2 ;;
    --delay-ms) DELAY_MS=$2; shift 2 ;;
    --no-events) EVENTS=0; shift ;;
    --rr-count) RR_COUNT=$2; shift 2 ;;
    --snaplen) SNAPLEN=$2; shift 2 ;;
    --cc) CC=$2; shift 2 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) if [[ -z $OUT ]]; then OUT=$1; shift; else echo "error: unexpected argument $1" >&2; exit 2; fi ;;
  esac
done
[[ -n $OUT ]] || { usage >&2; exit 2; }
if [[ $RECEIVER == 1 && -z $RECV_OUT ]]; then
  if [[ $(basename "$OUT") == *sender* ]]; then
    RECV_OUT="$(dirname "$OUT")/$(basename "$OUT" | sed 's/sender/receiver/')"
  else
    RECV_OUT="${OUT%.pcapng}-receiver.pcapng"
  fi
fi

START=$(date +%s.%N)
log() { local now; now=$(date +%s.%N); awk -v a="$now" -v b="$START" -v m="$*" 'BEGIN{printf "[%6.2fs] %s\n", a-b, m}'; }
die() { echo "error: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "needs root (network namespaces, tc, tcpdump)"
for c in ip tc tcpdump editcap capinfos tshark python3 awk; do
  command -v "$c" >/dev/null || die "missing command: $c (see scripts/install-system-packages.sh)"
done
PY=$(python3 -c 'import sys; print(sys.executable)')
HELPERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netns_helpers.py"
[[ -f $HELPERS ]] || die "missing $HELPERS"
prob_to_u32() { awk -v p="$1" 'BEGIN{ if (p < 0 || p > 1) exit 1; printf "%d", p * 4294967295 }'; }
LOSS_T=$(prob_to_u32 "$LOSS") || die "--loss must be in [0,1]"
ACK_LOSS_T=$(prob_to_u32 "$ACK_LOSS") || die "--ack-loss must be in [0,1]"

# ------------------------------------------------------------------ names, cleanup
TAG=at$$
NS_SND=$TAG-snd; NS_BS=$TAG-bs; NS_RCV=$TAG-rcv
SND_IP=198.18.0.1; RCV_IP=198.18.0.2
SND_MAC=02:00:c6:12:00:01; RCV_MAC=02:00:c6:12:00:02
BSS_MAC=02:00:c6:12:00:11; BSR_MAC=02:00:c6:12:00:12
TMP=$(mktemp -d /tmp/airtrace-sample.XXXXXX)
PIDS=()
NAMESPACES=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  local ns
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$TMP"
  if [[ $rc != 0 ]]; then echo "make_sample_capture: failed (exit $rc); everything torn down" >&2; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

# ------------------------------------------------------------------ topology
for ns in "$NS_SND" "$NS_BS" "$NS_RCV"; do
  ip netns add "$ns"; NAMESPACES+=("$ns")
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$ns" link set lo up
done
grep -qw "$CC" /proc/sys/net/ipv4/tcp_available_congestion_control \
  || die "congestion control '$CC' not available (have: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control))"
# set per socket by netns_helpers.py (a namespace's sysctl only takes the "allowed" ones)
TCP_INFO="$CC congestion control, sack=$(ip netns exec "$NS_SND" sysctl -n net.ipv4.tcp_sack), \
timestamps=$(ip netns exec "$NS_SND" sysctl -n net.ipv4.tcp_timestamps), ecn=$(ip netns exec "$NS_SND" sysctl -n net.ipv4.tcp_ecn)"
ip link add snd0 netns "$NS_SND" address $SND_MAC type veth peer name bs-snd netns "$NS_BS" address $BSS_MAC
ip link add rcv0 netns "$NS_RCV" address $RCV_MAC type veth peer name bs-rcv netns "$NS_BS" address $BSR_MAC
# wire-sized segments: no TSO/GSO super-packets in the captures
ip -n "$NS_SND" link set snd0 gso_max_segs 1
ip -n "$NS_RCV" link set rcv0 gso_max_segs 1
ip -n "$NS_SND" addr add $SND_IP/24 dev snd0
ip -n "$NS_RCV" addr add $RCV_IP/24 dev rcv0
# the base station is a layer-2 hop (like an access point): static neighbours, no ARP
ip -n "$NS_SND" neigh replace $RCV_IP lladdr $RCV_MAC dev snd0 nud permanent
ip -n "$NS_RCV" neigh replace $SND_IP lladdr $SND_MAC dev rcv0 nud permanent
for l in "$NS_SND snd0" "$NS_RCV rcv0" "$NS_BS bs-snd" "$NS_BS bs-rcv"; do
  set -- $l; ip -n "$1" link set "$2" up
done
if ip -n "$NS_SND" route show default | grep -q . || ip -n "$NS_RCV" route show default | grep -q .; then
  die "unexpected default route inside a namespace"
fi

# shape DEV LOSS_THRESHOLD: HTB rate limit, deep pfifo, random loss into a limit-0 sink
shape() {
  local dev=$1 thresh=$2
  tc -n "$NS_BS" qdisc add dev "$dev" root handle 1: htb default 1
  tc -n "$NS_BS" class add dev "$dev" parent 1: classid 1:1 htb rate "$RATE" ceil "$RATE" burst 1600 cburst 1600 quantum 1514
  tc -n "$NS_BS" class add dev "$dev" parent 1: classid 1:2 htb rate "$RATE" ceil "$RATE" quantum 1514
  tc -n "$NS_BS" qdisc add dev "$dev" parent 1:1 handle 10: pfifo limit "$QUEUE"
  tc -n "$NS_BS" qdisc add dev "$dev" parent 1:2 handle 20: pfifo limit 0
  if [[ $thresh -gt 0 ]]; then
    # classic BPF: A = random u32; if A >= thresh -> no match (class 1:1), else class 1:2 (dropped)
    tc -n "$NS_BS" filter add dev "$dev" parent 1: protocol ip prio 10 \
      bpf bytecode "4,32 0 0 4294963256,53 1 0 $thresh,6 0 0 65538,6 0 0 0"
  fi
}
shape bs-rcv "$LOSS_T"      # data direction (towards the receiver)
shape bs-snd "$ACK_LOSS_T"  # ACK direction (towards the sender)

if [[ $DELAY_MS != 0 ]]; then
  ip netns exec "$NS_BS" "$PY" "$HELPERS" relay --a bs-snd --b bs-rcv --delay-ms "$DELAY_MS" \
    --stall-seconds 2.5 --ready-file "$TMP/relay.ready" >"$TMP/relay.log" 2>&1 &
  RELAY_PID=$!; PIDS+=("$RELAY_PID")
  for _ in $(seq 50); do [[ -s $TMP/relay.ready ]] && break; sleep 0.1; done
  [[ -s $TMP/relay.ready ]] || { cat "$TMP/relay.log" >&2; die "relay did not start"; }
else
  for pair in "bs-snd bs-rcv" "bs-rcv bs-snd"; do
    set -- $pair
    tc -n "$NS_BS" qdisc add dev "$1" ingress
    tc -n "$NS_BS" filter add dev "$1" parent ffff: protocol all prio 1 u32 match u32 0 0 \
      action mirred egress redirect dev "$2"
  done
fi

# ------------------------------------------------------------------ captures
start_tcpdump() {  # NS IFACE FILE; sets TD_PID
  ip netns exec "$1" tcpdump -n -i "$2" -s "$SNAPLEN" -U --time-stamp-precision=nano \
    -w "$3" >/dev/null 2>"$3.log" &
  TD_PID=$!; PIDS+=("$TD_PID")
  for _ in $(seq 50); do grep -q "listening on" "$3.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "listening on" "$3.log" || { cat "$3.log" >&2; die "tcpdump on $2 did not start"; }
}
start_tcpdump "$NS_SND" snd0 "$TMP/sender.pcap"; SND_TD_PID=$TD_PID
if [[ $RECEIVER == 1 ]]; then
  start_tcpdump "$NS_RCV" rcv0 "$TMP/receiver.pcap"; RCV_TD_PID=$TD_PID
fi
START=$(date +%s.%N)
log "capturing; link: rate $RATE, buffer $QUEUE pkts, loss $LOSS (data) / $ACK_LOSS (ACKs), one-way delay ${DELAY_MS} ms; TCP: $TCP_INFO"

# ------------------------------------------------------------------ traffic
ip netns exec "$NS_SND" "$PY" "$HELPERS" rr-server --cc "$CC" --bind $SND_IP --port 8080 --count "$RR_COUNT" \
  --max-seconds 600 >"$TMP/rr-server.log" 2>&1 &
PIDS+=($!)
ip netns exec "$NS_RCV" "$PY" "$HELPERS" bulk-recv --cc "$CC" --bind $RCV_IP --port 5001 \
  --ready-file "$TMP/bulk.ready" >"$TMP/bulk-recv.log" 2>&1 &
BULK_R_PID=$!; PIDS+=("$BULK_R_PID")
for _ in $(seq 50); do [[ -s $TMP/bulk.ready ]] && break; sleep 0.1; done
ip netns exec "$NS_RCV" "$PY" "$HELPERS" rr-client --cc "$CC" --server $SND_IP --port 8080 --count "$RR_COUNT" \
  --size "$RR_SIZE" --gap 5 >"$TMP/rr-client.log" 2>&1 &
RR_PID=$!; PIDS+=("$RR_PID")
sleep 2
log "bulk transfer of $BYTES starts (snd -> rcv, port 5001)"
ip netns exec "$NS_SND" "$PY" "$HELPERS" bulk-send --cc "$CC" --server $RCV_IP --port 5001 --bytes "$BYTES" \
  >"$TMP/bulk-send.log" 2>&1 &
BULK_S_PID=$!; PIDS+=("$BULK_S_PID")

EV_T=(); EV_D=()
event() { EV_T+=("$(date +%s.%N)"); EV_D+=("$1"); }
if [[ $EVENTS == 1 ]]; then
  sleep 5
  log "fade: every frame lost in both directions for 0.6 s"
  event "fade (every frame dropped, both directions) for 0.6 s"
  for d in bs-rcv bs-snd; do
    tc -n "$NS_BS" filter add dev $d parent 1: protocol ip prio 1 u32 match u32 0 0 classid 1:2
  done
  sleep 0.6
  for d in bs-rcv bs-snd; do tc -n "$NS_BS" filter del dev $d parent 1: prio 1; done
  sleep 6
  log "stall: link-layer retries, nothing crosses the hop for 2.5 s (held, not dropped)"
  if [[ ${RELAY_PID:-} ]]; then
    event "stall (nothing crosses the hop in either direction, nothing dropped) for 2.5 s"
    kill -USR1 "$RELAY_PID"
    sleep 2.5
  else
    # no relay (--delay-ms 0): approximate with an 8 kbit/s trickle
    event "stall (hop throttled to 8 kbit/s both directions, nothing dropped) for 2.5 s"
    for d in bs-rcv bs-snd; do
      tc -n "$NS_BS" class change dev $d parent 1: classid 1:1 htb rate 8kbit ceil 8kbit burst 1600 cburst 1600 quantum 1514
    done
    sleep 2.5
    for d in bs-rcv bs-snd; do
      tc -n "$NS_BS" class change dev $d parent 1: classid 1:1 htb rate "$RATE" ceil "$RATE" burst 1600 cburst 1600 quantum 1514
    done
  fi
  log "link back to normal"
fi

wait "$BULK_S_PID" || { cat "$TMP/bulk-send.log" >&2; die "bulk sender failed"; }
wait "$BULK_R_PID" || { cat "$TMP/bulk-recv.log" >&2; die "bulk receiver failed"; }
log "$(cat "$TMP/bulk-recv.log")"
log "$(cat "$TMP/bulk-send.log")"
wait "$RR_PID" || { cat "$TMP/rr-client.log" >&2; die "request/response client failed"; }
log "request/response done: $(grep -c bytes "$TMP/rr-client.log") requests of $RR_SIZE bytes"
sleep 1
kill -INT "$SND_TD_PID"; wait "$SND_TD_PID" || true
[[ $RECEIVER == 1 ]] && { kill -INT "$RCV_TD_PID"; wait "$RCV_TD_PID" || true; }
if [[ ${RELAY_PID:-} ]]; then kill -TERM "$RELAY_PID"; wait "$RELAY_PID" || true; cat "$TMP/relay.log"; fi
echo "base-station qdisc drops (buffer overflow in 10:, random loss/fade in 20:):"
for d in bs-rcv bs-snd; do
  tc -n "$NS_BS" -s qdisc show dev $d | awk -v d=$d '/^qdisc (pfifo)/{q=$2} /Sent/{if(q) printf "  %s qdisc %s sent %s pkts, dropped %s\n", d, q, $4, $7; q=""}' | tr -d ','
done

# ------------------------------------------------------------------ write pcapng
KERNEL=$(uname -r); WHEN=$(date -u +%Y-%m-%dT%H:%M:%SZ)
FIRST=$(capinfos -a -S -M "$TMP/sender.pcap" | awk -F': *' '/First packet time/{print $2}')
EVENTS_TEXT=""
for i in "${!EV_T[@]}"; do
  EVENTS_TEXT+="${EV_D[$i]} from $(date -u -d "@${EV_T[$i]}" +%H:%M:%S.%3N) UTC \
(t=$(awk -v a="${EV_T[$i]}" -v b="$FIRST" 'BEGIN{printf "%.2f", a-b}') s after the first packet of the sender capture); "
done
EVENTS_TEXT=${EVENTS_TEXT%; }
[[ -n $EVENTS_TEXT ]] && echo "events: $EVENTS_TEXT"
COMMENT="airtrace sample capture made by scripts/make_sample_capture.sh on $WHEN, kernel $KERNEL. \
Sender $SND_IP <-> receiver $RCV_IP via an emulated wireless hop: rate $RATE, buffer $QUEUE packets, \
random loss $LOSS data / $ACK_LOSS ACKs, one-way delay ${DELAY_MS} ms. TCP: $TCP_INFO. \
Traffic: one bulk transfer of $BYTES sender->receiver (port 5001) and $RR_COUNT request/response \
connections of $RR_SIZE bytes (port 8080, client on the receiver side). Events: ${EVENTS_TEXT:-none}. \
Both captures use the same host clock."
write_pcapng() {  # IN OUT VANTAGE
  mkdir -p "$(dirname "$2")"
  editcap -F pcapng --capture-comment "vantage=$3. $COMMENT" "$1" "$2"
}
write_pcapng "$TMP/sender.pcap" "$OUT" sender
[[ $RECEIVER == 1 ]] && write_pcapng "$TMP/receiver.pcap" "$RECV_OUT" receiver

summary() {  # FILE
  local f=$1
  echo
  echo "=== $f"
  capinfos -c -s -u -l "$f" | sed 1d
  tshark -q -z conv,tcp -r "$f" 2>/dev/null | grep -v '^$'
  local r fr sr dup lost ooo
  r=$(tshark -r "$f" -Y tcp.analysis.retransmission 2>/dev/null | wc -l)
  fr=$(tshark -r "$f" -Y tcp.analysis.fast_retransmission 2>/dev/null | wc -l)
  sr=$(tshark -r "$f" -Y tcp.analysis.spurious_retransmission 2>/dev/null | wc -l)
  dup=$(tshark -r "$f" -Y tcp.analysis.duplicate_ack 2>/dev/null | wc -l)
  lost=$(tshark -r "$f" -Y tcp.analysis.lost_segment 2>/dev/null | wc -l)
  ooo=$(tshark -r "$f" -Y tcp.analysis.out_of_order 2>/dev/null | wc -l)
  echo "tshark tcp.analysis: retransmission=$r fast_retransmission=$fr spurious_retransmission=$sr duplicate_ack=$dup lost_segment=$lost out_of_order=$ooo"
}
log "wrote $OUT ($(stat -c %s "$OUT") bytes)"
summary "$OUT"
if [[ $RECEIVER == 1 ]]; then
  log "wrote $RECV_OUT ($(stat -c %s "$RECV_OUT") bytes)"
  summary "$RECV_OUT"
fi
for f in "$TMP"/*.pcap.log; do
  echo "$(basename "$f" .pcap.log) tcpdump: $(grep -E 'captured|dropped by kernel' "$f" | tr '\n' ' ')"
done
