//! Per-connection metrics: at least what `tcptrace -l` reports, per direction.

use serde::Serialize;

use crate::annotation::Flags;

/// Statistics of RTT samples. Samples are summed as integers on the hot path;
/// the public fields are filled in by [`RttStats::finish`].
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RttStats {
    pub samples: u64,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub avg_s: Option<f64>,
    pub stdev_s: Option<f64>,
    #[serde(skip)]
    min_ns: i64,
    #[serde(skip)]
    max_ns: i64,
    #[serde(skip)]
    sum_ns: i128,
    #[serde(skip)]
    sum_sq_ns: f64,
}

impl RttStats {
    #[inline]
    pub fn add(&mut self, rtt_ns: i64) {
        if self.samples == 0 || rtt_ns < self.min_ns {
            self.min_ns = rtt_ns;
        }
        self.max_ns = self.max_ns.max(rtt_ns);
        self.samples += 1;
        self.sum_ns += rtt_ns as i128;
        self.sum_sq_ns += rtt_ns as f64 * rtt_ns as f64;
    }

    fn finish(&mut self) {
        if self.samples == 0 {
            return;
        }
        let n = self.samples as f64;
        let mean_ns = self.sum_ns as f64 / n;
        self.min_s = Some(self.min_ns as f64 * 1e-9);
        self.max_s = Some(self.max_ns as f64 * 1e-9);
        self.avg_s = Some(mean_ns * 1e-9);
        let var_ns = if self.samples > 1 {
            ((self.sum_sq_ns - n * mean_ns * mean_ns) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        self.stdev_s = Some(var_ns.sqrt() * 1e-9);
    }
}

/// What one direction of a connection sent, as seen at the capture point
/// (`repr(C)`: the counters every packet updates first).
#[derive(Clone, Debug, Default, Serialize)]
#[repr(C)]
pub struct DirMetrics {
    /// Packets captured in this direction (including duplicates of the capture).
    pub packets: u64,
    /// Bytes on the wire of those packets.
    pub wire_bytes: u64,
    /// Packets carrying TCP payload.
    pub data_packets: u64,
    /// TCP payload bytes, retransmissions included.
    pub data_bytes: u64,
    #[serde(skip)]
    segment_min: u32,
    #[serde(skip)]
    segment_max: u32,
    #[serde(skip)]
    window_min: u32,
    #[serde(skip)]
    window_max: u32,
    #[serde(skip)]
    window_sum: u64,
    #[serde(skip)]
    window_count: u64,
    #[serde(skip)]
    pub(crate) longest_idle_ns: i64,
    #[serde(skip)]
    pub(crate) max_retransmit_wait_ns: Option<i64>,
    #[serde(skip)]
    pub(crate) max_backoff_waits_ns: Option<(i64, i64)>,
    #[serde(skip)]
    pub(crate) first_flight_bytes: u64,
    #[serde(skip)]
    pub(crate) first_flight_packets: u64,
    /// Payload bytes never seen before (new sequence space that was captured).
    pub unique_bytes: u64,
    /// Captured payload bytes the peer acknowledged (cumulative ACKs): of
    /// `unique_bytes`, those that reached the receiver; bytes the capture missed
    /// (`missed_bytes`) are left out, as they are of `unique_bytes`.
    pub acked_bytes: u64,
    /// Sequence space skipped over without being captured (lost before the capture point).
    pub missed_bytes: u64,
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    pub fast_retransmissions: u64,
    pub sack_retransmissions: u64,
    /// Tail loss probes (RFC 8985 section 7.3) that resent the highest segment.
    pub tail_loss_probes: u64,
    /// Retransmissions sent because the retransmission timer expired, and the
    /// go-back-N retransmissions that follow each expiry.
    pub timeout_retransmissions: u64,
    /// Expiries of the retransmission timer (RTOs).
    pub timeouts: u64,
    /// Retransmissions of data the peer had already acknowledged (Wireshark's
    /// `spurious_retransmission`): the receiver did not need them.
    pub spurious_retransmissions: u64,
    /// The other retransmissions, of data not yet acknowledged: `retransmitted_packets`
    /// is these and the spurious ones.
    pub genuine_retransmissions: u64,
    /// Highest backoff index of a timeout (1: one timeout, 2: a doubled one, ...).
    pub max_backoff: u32,
    /// How long the timer waited in the episode of consecutive timeouts that reached
    /// `max_backoff` (RFC 6298 section 5.5 doubles the RTO after each expiry, up to a
    /// maximum): the wait before its first expiry and its longest wait, each the
    /// silence of this direction before the retransmission (s). `None` without a
    /// timeout.
    pub backoff_first_wait_s: Option<f64>,
    pub backoff_longest_wait_s: Option<f64>,
    pub out_of_order: u64,
    pub lost_segments: u64,
    pub duplicate_acks: u64,
    /// Runs of at least three duplicate ACKs.
    pub triple_dupacks: u64,
    pub zero_window_advertisements: u64,
    pub zero_window_probes: u64,
    pub window_full: u64,
    pub keep_alives: u64,
    pub capture_duplicates: u64,
    pub mac_retries: u64,
    /// ACK-only segments (no data, no SYN/FIN/RST).
    pub pure_acks: u64,
    /// Data packets with PSH set (tcptrace's "pushed data pkts").
    pub pushed_data_packets: u64,
    /// Data packets with URG set (tcptrace's "urgent data pkts"; RFC 9293 section 3.8.5).
    pub urgent_data_packets: u64,
    /// Data bytes and packets sent before the peer acknowledged any of this direction's
    /// data, retransmissions left out: the first flight, the initial window of slow
    /// start (RFC 5681 section 3.1; tcptrace's "initial window bytes/pkts"). `None` when
    /// the capture holds no SYN of this direction, so that the first flight is unknown.
    pub initial_window_bytes: Option<u64>,
    pub initial_window_packets: Option<u64>,
    pub sack_packets: u64,
    pub dsack_packets: u64,
    pub max_sack_blocks: u8,
    pub syn: u64,
    pub fin: u64,
    pub rst: u64,
    /// Frames whose headers were cut short by the snap length.
    pub truncated_packets: u64,
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    pub min_segment: Option<u32>,
    pub max_segment: Option<u32>,
    pub avg_segment: Option<f64>,
    /// Advertised receive window, scaled where the scale is known (bytes).
    pub min_window: Option<u32>,
    pub max_window: Option<u32>,
    pub avg_window: Option<f64>,
    /// RTT of this direction's data, from data/ACK pairs under Karn's rule.
    pub rtt: RttStats,
    /// Data bytes over the connection's duration (bit/s).
    pub throughput_bps: f64,
    /// Acknowledged bytes (`acked_bytes`) over the connection's duration (bit/s): data
    /// never acknowledged and retransmissions are no goodput (0 when the peer's ACKs
    /// were not captured).
    pub goodput_bps: f64,
    /// Longest time between two consecutive packets of this direction (s).
    pub longest_idle_s: f64,
    /// Longest time a segment waited between one transmission and its next
    /// retransmission (s), for segments not yet acknowledged (tcptrace's "max retr
    /// time"); `None` without such a retransmission.
    pub max_retransmit_wait_s: Option<f64>,
}

impl DirMetrics {
    /// Counts the Wireshark flags of one segment.
    pub(crate) fn count_flags(&mut self, flags: Flags, seglen: u32, dupack_num: u32) {
        let n = |f: Flags| u64::from(flags.contains(f));
        if flags.contains(Flags::RETRANSMISSION) {
            self.retransmitted_packets += 1;
            self.retransmitted_bytes += seglen as u64;
        }
        self.spurious_retransmissions += n(Flags::SPURIOUS_RETRANSMISSION);
        self.out_of_order += n(Flags::OUT_OF_ORDER);
        self.lost_segments += n(Flags::LOST_SEGMENT);
        self.duplicate_acks += n(Flags::DUPLICATE_ACK);
        self.triple_dupacks += u64::from(flags.contains(Flags::DUPLICATE_ACK) && dupack_num == 3);
        self.zero_window_advertisements += n(Flags::ZERO_WINDOW);
        self.zero_window_probes += n(Flags::ZERO_WINDOW_PROBE);
        self.window_full += n(Flags::WINDOW_FULL);
        self.keep_alives += n(Flags::KEEP_ALIVE);
    }

    #[inline]
    pub(crate) fn add_segment_size(&mut self, len: u32) {
        if self.data_packets == 1 || len < self.segment_min {
            self.segment_min = len;
        }
        self.segment_max = self.segment_max.max(len);
    }

    #[inline]
    pub(crate) fn add_window(&mut self, window: u32) {
        if self.window_count == 0 || window < self.window_min {
            self.window_min = window;
        }
        self.window_max = self.window_max.max(window);
        self.window_sum += window as u64;
        self.window_count += 1;
    }

    /// Fills in the derived fields; `duration_s` is the connection's duration.
    pub(crate) fn finish(&mut self, duration_s: f64) {
        if self.data_packets > 0 {
            self.min_segment = Some(self.segment_min);
            self.max_segment = Some(self.segment_max);
            self.avg_segment = Some(self.data_bytes as f64 / self.data_packets as f64);
        }
        if self.window_count > 0 {
            self.min_window = Some(self.window_min);
            self.max_window = Some(self.window_max);
            self.avg_window = Some(self.window_sum as f64 / self.window_count as f64);
        }
        self.rtt.finish();
        self.genuine_retransmissions = self
            .retransmitted_packets
            .saturating_sub(self.spurious_retransmissions);
        self.longest_idle_s = self.longest_idle_ns as f64 * 1e-9;
        self.max_retransmit_wait_s = self.max_retransmit_wait_ns.map(|ns| ns as f64 * 1e-9);
        if let Some((first, longest)) = self.max_backoff_waits_ns {
            self.backoff_first_wait_s = Some(first as f64 * 1e-9);
            self.backoff_longest_wait_s = Some(longest as f64 * 1e-9);
        }
        if self.syn > 0 {
            self.initial_window_bytes = Some(self.first_flight_bytes);
            self.initial_window_packets = Some(self.first_flight_packets);
        }
        if duration_s > 0.0 {
            self.throughput_bps = self.data_bytes as f64 * 8.0 / duration_s;
            self.goodput_bps = self.acked_bytes as f64 * 8.0 / duration_s;
        }
    }
}

/// How a connection ended, as far as the capture shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnState {
    /// Neither a FIN from both sides nor a RST was seen.
    #[default]
    Open,
    /// Both sides sent FIN.
    Closed,
    /// A RST was seen.
    Reset,
}

/// One TCP connection's summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ConnSummary {
    /// 0-based index in order of first packet, as tshark's tcp.stream.
    pub id: u32,
    /// The frame that opened the connection (its first packet, or the SYN that reused
    /// its ports): connections are numbered in this order. Not in the report.
    #[serde(skip)]
    pub first_frame: u64,
    /// The endpoint that sent the first SYN (or the first packet), and its peer.
    pub a: String,
    pub b: String,
    /// First and last packet, seconds since the first frame of the file.
    pub start_s: f64,
    pub end_s: f64,
    pub duration_s: f64,
    /// SYN to SYN/ACK to ACK: one round trip as seen at the capture point (s).
    pub handshake_rtt_s: Option<f64>,
    /// Where the capture sat for the main direction of data (the one with more
    /// `unique_bytes`): near its sender or its receiver; `None` when not known
    /// ([`crate::vantage`]).
    pub capture_point: Option<crate::vantage::CapturePoint>,
    pub syn_seen: bool,
    /// A SYN and a FIN were captured from each side (tcptrace's "complete conn: yes";
    /// where tcptrace says RESET, `state` is `reset`).
    pub complete: bool,
    pub state: ConnState,
    /// This connection reused the ports of an earlier one.
    pub reused_ports: bool,
    /// SYN/ACKs with another initial sequence number after data had flowed, left out
    /// of the analysis (a warning of the file's report): how many, and the first's
    /// frame.
    #[serde(skip)]
    pub stray_syn_acks: Option<(u32, u64)>,
    /// Direction a→b then b→a.
    pub a_to_b: DirMetrics,
    pub b_to_a: DirMetrics,
}
