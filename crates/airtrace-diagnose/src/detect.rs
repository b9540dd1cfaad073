//! The detectors: each turns what [`collect`](crate::collect) gathered about one
//! direction of one connection into findings. Thresholds are named constants with the
//! reason for their value.

use std::collections::BTreeMap;

use airtrace_analysis::ConnSummary;

use crate::collect::{ConnState, DirState, SpuriousProof, Timeout};
use crate::finding::{Builder, Finding, MAX_EVIDENCE};

/// Timeout episodes reported one by one per direction; beyond this, one finding sums
/// them up.
const MAX_EPISODES: usize = 5;
/// Fast retransmit needs three duplicate ACKs: one lost segment and three behind it
/// (RFC 5681 §3.2).
const FAST_RETRANSMIT_SEGMENTS: i64 = 4;
/// Queueing is excessive when the median RTT is at least this many times the
/// smallest...
const QUEUE_RTT_FACTOR: f64 = 2.0;
/// ...and the difference at least this long (below, nobody notices).
const QUEUE_MIN_NS: i64 = 50_000_000;
/// RFC 6298's initial RTO, to compare queue drain times with.
const INITIAL_RTO_S: f64 = 1.0;
/// Loss runs longer than this on average (in segments) are bursts.
const BURST_MEAN_SEGMENTS: f64 = 2.0;
/// Fewer loss events than this say nothing about the pattern.
const MIN_LOSS_EVENTS: usize = 3;
/// Fewer than this tell bursts from random loss only weakly: the finding says so
/// (`low_confidence`) and fits no Gilbert-Elliott model. With 10 events the mean run
/// length is known to about ±30 % (docs/diagnosis-corpus.md problem 6: 3 events made a
/// "burst" with a fitted model in tcptrace_dsack).
const CONFIDENT_LOSS_EVENTS: usize = 10;
/// A lone segment's ACK that is later than the base RTT by more than this (or by the
/// base RTT, if longer) was delayed by the receiver.
const DELACK_MARGIN_NS: i64 = crate::collect::LONE_SLOW_NS;
/// The longest a receiver may delay an ACK (RFC 9293 §3.8.6.3: less than 0.5 s).
const MAX_DELACK_NS: i64 = 500_000_000;
/// Stalls reported when at least this many...
const MIN_STALLS: u64 = 3;
/// ...and this share of the data segments stalled.
const STALL_SHARE: f64 = 0.1;
/// ACK compression is reported with at least this many compressed ACKs...
const MIN_COMPRESSED_ACKS: u64 = 20;
/// ...making up this share of the ACKs timed.
const COMPRESSED_ACK_SHARE: f64 = 0.2;
/// The receiver's window is the limit when this share of data segments hit it...
const RWND_LIMITED_SHARE: f64 = 0.3;
/// Data segments needed before the share of window-limited ones means anything.
const MIN_DATA_FOR_WINDOW_SHARE: u64 = 10;
/// ...while the median RTT stays below this many times the smallest (no standing
/// queue: the window is below the bandwidth-delay product).
const NO_QUEUE_RTT_FACTOR: f64 = 1.15;

/// A direction with fewer data segments than this carries ACKs, not an application's data.
const MIN_DATA_FOR_APP_LIMIT: u64 = 10;
/// Application pauses are reported when they add up to this share of the connection.
const APP_IDLE_SHARE: f64 = 0.1;

const FIX_BURSTS: &str = "Make the link absorb its bursts: link-layer ARQ or interleaved FEC longer than a burst; SACK \
recovers several losses in one window; a TCP that tells wireless loss from congestion (ELN) keeps its window.";

const FIX_HANDSHAKE: &str = "Each lost SYN or SYN/ACK costs a whole initial RTO (1 s, RFC 6298 §2.1; 3 s in \
older stacks), doubling: find what drops the handshake (a filter, a full accept queue, a radio link not yet \
up), or let the link recover it.";

const FIX_REFUSED: &str =
    "Nothing listens on that address and port, or a firewall answers for it with \
RSTs: check the address, the port and that the service runs; retrying only adds the timer's waits.";

const FIX_CLOSE: &str = "The transfer itself was not slowed: the peer, or the path to it, stopped answering \
before the close (it went away without a RST, a middlebox dropped the connection's state, the link broke). \
An application waiting for the close waits out these timeouts; one that does not need the peer's \
acknowledgment can close without lingering (SO_LINGER).";

const FIX_OUTAGE: &str =
    "Keep the connection alive across the outage at the link (buffer and retransmit at \
the base station; persistent ARQ), and tell TCP the link is back (ELFN-style notification, or a \
retransmission sent as soon as the link returns) instead of letting it wait out a doubled RTO.";

const FIX_TIMEOUTS: &str = "Losses on a wireless link are rarely congestion: let the link recover them \
(link-layer ARQ with enough persistence to outlast a fade), or shorten the wait for the timer (a finer \
timer clock, a lower minimum RTO, RACK-TLP, RFC 8985).";

/// The cost of a finding that explains timeout_backoff's waits (burst_loss,
/// random_loss, link_outage, fast_retransmit_impossible): none of its own, since
/// timeout_backoff counts that time; the seconds it explains are in its details
/// under [`EXPLAINS_TIMEOUT_S`]. One loss of time is counted once (issue 17: burst_loss
/// and timeout_backoff each read 60 % of one connection).
const TIMEOUTS_COUNT_IT: i64 = 0;
/// The details key of the seconds of timeout_backoff's cost a finding explains.
const EXPLAINS_TIMEOUT_S: &str = "explains_timeout_s";

/// Every finding for connection `conn`.
///
/// `one_way`: the capture holds one direction of every connection (see
/// [`Diagnoser::finish`](crate::Diagnoser::finish)).
pub fn connection(
    conn: u32,
    c: &ConnState,
    summary: Option<&ConnSummary>,
    start_ns: i64,
    one_way: bool,
) -> Vec<Finding> {
    let duration_ns = summary.map_or(c.last_ns - c.first_ns, |s| (s.duration_s * 1e9) as i64);
    let mut b = Builder {
        conn,
        start_ns,
        duration_ns,
        out: Vec::new(),
    };
    // A SYN was captured: the window scale (RFC 7323 §2.2), and so the window, is known.
    let window_scale_known = summary.is_some_and(|s| s.syn_seen);
    let handshake_rtt_ns = summary
        .and_then(|s| s.handshake_rtt_s)
        .map(|r| (r * 1e9) as i64);
    for (d, dir) in c.dirs.iter().enumerate() {
        crate::unseen::losses(&mut b, d, dir);
        if dir.data_packets == 0 && dir.timeouts.is_empty() && dir.spurious.is_empty() {
            continue;
        }
        let episodes = episodes(&dir.timeouts);
        // The other direction is not in the capture at all (not a peer that fell silent,
        // which a capture of both directions shows the same way for one connection).
        let peer_captured = !one_way || c.dirs[1 - d].packets > 0;
        timeout_backoff(&mut b, d, &episodes, peer_captured);
        link_outage(&mut b, d, &episodes);
        fast_retransmit_impossible(&mut b, d, dir, &episodes, peer_captured);
        fast_retransmit_suppressed(&mut b, d, dir);
        spurious_timeouts(&mut b, d, dir);
        spurious_retransmissions(&mut b, d, dir);
        excessive_queueing(&mut b, d, dir);
        loss_pattern(&mut b, d, dir, &episodes);
        receiver_limited(&mut b, d, dir, window_scale_known, handshake_rtt_ns);
        delayed_ack_stall(&mut b, d, dir, handshake_rtt_ns);
        ack_compression(&mut b, d, dir);
        sender_limited(&mut b, d, dir, duration_ns, window_scale_known);
    }
    artifacts(&mut b, c);
    capture_drops(&mut b, c);
    let data_dir = usize::from(c.dirs[1].data_bytes > c.dirs[0].data_bytes);
    crate::air::findings(&mut b, &c.air, data_dir, (c.first_ns, c.last_ns));
    b.out
}

/// Consecutive timeouts of the same data: a new episode starts at backoff 1.
fn episodes(timeouts: &[Timeout]) -> Vec<&[Timeout]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=timeouts.len() {
        if i == timeouts.len() || timeouts[i].backoff <= timeouts[i - 1].backoff {
            out.push(&timeouts[start..i]);
            start = i;
        }
    }
    out
}

/// How the waits of an episode of timeouts grew, as measured: RFC 6298 (5.5) doubles
/// the RTO after each expiry, and only waits that did about that are called doubling
/// (issue 18 class 7: "the RTO doubles" was printed over waits that did not). The
/// first wait is the silence since the direction's last packet, which may have left
/// after the timer started: it may be short of the RTO, so only a second wait no
/// longer than 1.6 times it counts against doubling. Once at its maximum (60 s and up:
/// BSD's 64 s, Linux's 120 s), the RTO stays.
fn backoff_growth(e: &[Timeout]) -> String {
    let ratios = wait_ratios(e);
    match doubled(e, &ratios) {
        Some(true) => {
            "the RTO doubled after each unanswered retransmission, up to its maximum".into()
        }
        Some(false) => "the RTO doubled after each unanswered retransmission".into(),
        None => {
            let factors: Vec<String> = ratios.iter().map(|r| format!("×{r:.2}")).collect();
            format!(
                "each wait {} the one before: not the doubling of RFC 6298's backoff, so a timer that does not \
back off, or resends that were not the retransmission timer's",
                factors.join(", then ")
            )
        }
    }
}

/// Each wait of an episode over the one before.
fn wait_ratios(e: &[Timeout]) -> Vec<f64> {
    e.windows(2)
        .map(|w| w[1].idle_gap_ns as f64 / w[0].idle_gap_ns.max(1) as f64)
        .collect()
}

/// Whether the waits of an episode (`ratios`, from [`wait_ratios`]) doubled as
/// [`backoff_growth`] says: `None` if not, else whether they reached the RTO's maximum.
fn doubled(e: &[Timeout], ratios: &[f64]) -> Option<bool> {
    let capped = e.iter().skip(1).any(|t| t.idle_gap_ns >= 60_000_000_000);
    let doubling = ratios.iter().enumerate().all(|(i, &r)| {
        let lo_ok = r >= 1.6 || (capped && r >= 0.9);
        lo_ok && (r <= 2.5 || i == 0)
    });
    doubling.then_some(capped)
}

/// Whether every episode of more than one timeout had waits that about doubled.
fn all_doubling(episodes: &[&[Timeout]]) -> bool {
    episodes
        .iter()
        .filter(|e| e.len() > 1)
        .all(|e| doubled(e, &wait_ratios(e)).is_some())
}

/// When the silence before an episode began, ns.
fn silence_start(e: &[Timeout]) -> i64 {
    e[0].t_ns - e[0].idle_gap_ns
}

fn timeout_backoff(b: &mut Builder, d: usize, episodes: &[&[Timeout]], peer_captured: bool) {
    if episodes.len() > MAX_EPISODES {
        timeout_backoff_summary(b, d, episodes);
        return;
    }
    for e in episodes {
        if e.iter().all(|t| t.refused) {
            connection_refused(b, d, e);
            continue;
        }
        let cost: i64 = e.iter().map(|t| t.idle_gap_ns).sum();
        let max_backoff = e.iter().map(|t| t.backoff).max().unwrap_or(1);
        let gaps: Vec<String> = e
            .iter()
            .map(|t| format!("{:.2} s", t.idle_gap_ns as f64 / 1e9))
            .collect();
        let what = if d == 0 { "SYN" } else { "SYN/ACK" };
        let explanation = if e[0].handshake && e.len() > 1 {
            format!(
                "The connection could not open: its {what} went unanswered {} times in a row, after waits of {} \
({:.2} s in all).",
                e.len(),
                gaps.join(", then "),
                cost as f64 / 1e9
            )
        } else if e[0].handshake {
            format!(
                "The connection could not open for {}: its {what} went unanswered and was sent again.",
                gaps[0]
            )
        } else if e[0].closing {
            format!(
                "The connection could not close: all its data was through, but its FIN went unacknowledged {} \
time(s), after waits of {} ({:.2} s in all).",
                e.len(),
                gaps.join(", then "),
                cost as f64 / 1e9
            )
        } else if e.len() > 1 {
            format!(
                "{} retransmission timeouts in a row for the same data: the sender waited {} ({}), {:.2} s in \
all with data outstanding and nothing sent.",
                e.len(),
                gaps.join(", then "),
                backoff_growth(e),
                cost as f64 / 1e9
            )
        } else {
            format!(
                "A retransmission timeout: {} of silence with data outstanding before the sender \
retransmitted.",
                gaps[0]
            )
        };
        let mut details = BTreeMap::from([
            ("timeouts", e.len() as f64),
            ("max_backoff", f64::from(max_backoff)),
            ("first_wait_s", e[0].idle_gap_ns as f64 / 1e9),
        ]);
        let mut explanation = explanation;
        if shorter_than_common_rto(e) {
            details.insert("low_confidence", 1.0);
            explanation.push_str(SHORT_WAIT_CAVEAT);
        }
        if !peer_captured && !e[0].handshake {
            details.insert("low_confidence", 1.0);
            explanation.push_str(ACKS_UNSEEN_CAVEAT);
        }
        let end = e[e.len() - 1].t_ns;
        b.push(
            "timeout_backoff",
            d,
            (silence_start(e), end),
            cost,
            e.iter().map(|t| t.frame).collect(),
            explanation,
            if e[0].handshake {
                FIX_HANDSHAKE
            } else if e[0].closing {
                FIX_CLOSE
            } else {
                FIX_TIMEOUTS
            },
            details,
        );
    }
}

/// The minimum RTO of the common stacks: Linux's `TCP_RTO_MIN` (Windows keeps 300 ms,
/// RFC 6298 §2.4 asks for 1 s).
const COMMON_MIN_RTO_NS: i64 = 200_000_000;

/// Said of data timeouts whose first wait was shorter than [`COMMON_MIN_RTO_NS`]: the
/// capture cannot tell such a resend from a probe (second corpus review: `ndpi_teams`,
/// `ndpi_zoom`, `ndpi_opera-vpn`, resends 50-150 ms after the original with nothing
/// ACK-driven behind them).
const SHORT_WAIT_CAVEAT: &str = " The first wait is shorter than the 200 ms minimum RTO of the common stacks \
(Linux; Windows keeps 300 ms): this may have been a tail loss probe (RFC 8985) or a stack with a lower minimum \
rather than the retransmission timer (low confidence).";

/// A wait measured at the capture runs from the direction's last packet, which may have
/// left after the timer started, and timers tick coarsely: only a wait this much below
/// [`COMMON_MIN_RTO_NS`] (by a tenth) is too short for it (`libtrace_vlan` frame 266,
/// resent 197 ms after its original, is a 200 ms RTO).
const SHORT_WAIT_NS: i64 = COMMON_MIN_RTO_NS / 10 * 9;

/// Said of timeouts in a capture of one direction (`ndpi_ocs`, `ndpi_whatsapp`): the
/// resend is seen, the ACK that may have made it needless is not.
const ACKS_UNSEEN_CAVEAT: &str = " No connection of the capture has packets both ways (it holds one direction \
of the traffic, or the only peer sent nothing): whether the original arrived cannot be told, so the timeout \
may have been spurious (low confidence).";

/// A data episode (not a handshake or a close) whose first wait was shorter than any
/// common stack's minimum RTO.
fn shorter_than_common_rto(e: &[Timeout]) -> bool {
    !e[0].handshake && !e[0].closing && e[0].idle_gap_ns < SHORT_WAIT_NS
}

/// SYNs sent again after RSTs refused them (issue 18 class 8: reported as SYNs that
/// "went unanswered").
fn connection_refused(b: &mut Builder, d: usize, e: &[Timeout]) {
    let cost: i64 = e.iter().map(|t| t.idle_gap_ns).sum();
    let gaps: Vec<String> = e
        .iter()
        .map(|t| format!("{:.2} s", t.idle_gap_ns as f64 / 1e9))
        .collect();
    let explanation = format!(
        "The connection was refused: the peer answered its SYN with a RST, and the SYN was tried {} more \
time(s), after waits of {} ({:.2} s in all), each refused the same way. Nothing on the path was lost.",
        e.len(),
        gaps.join(", then "),
        cost as f64 / 1e9
    );
    b.push(
        "connection_refused",
        d,
        (silence_start(e), e[e.len() - 1].t_ns),
        cost,
        e.iter().map(|t| t.frame).collect(),
        explanation,
        FIX_REFUSED,
        BTreeMap::from([("attempts", (e.len() + 1) as f64)]),
    );
}

/// " They came every 1.00 s, like clockwork: ..." when the pauses start at regular
/// intervals (the spread of the intervals under a tenth of their median), else "".
fn periodicity(episodes: &[&[Timeout]]) -> String {
    let starts: Vec<i64> = episodes.iter().map(|e| silence_start(e)).collect();
    let mut gaps: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.len() < 4 {
        return String::new();
    }
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    // The middle 80 % of the intervals within 10 % of the median.
    let (lo, hi) = (
        gaps[gaps.len() / 10],
        gaps[gaps.len() - 1 - gaps.len() / 10],
    );
    if median <= 0 || (hi - lo) * 10 > median {
        return String::new();
    }
    format!(
        " They came every {:.2} s, like clockwork: a periodic cause (a scan, a beacon, a handoff or power-save timer, \
a scheduled burst of interference) rather than a random one.",
        median as f64 / 1e9
    )
}

/// "1 pause", "12 pauses".
fn pauses_text(n: usize) -> String {
    if n == 1 {
        "1 pause".into()
    } else {
        format!("{n} pauses")
    }
}

/// What the evidence of a finding about `n` pauses holds, when it cannot hold them
/// all: the longest ones (the text's numbers are about all `n`; issue 17 item 1, say
/// "pauses" only with numbers that match).
fn longest_pauses_note(n: usize, what: &str) -> String {
    if n > MAX_EVIDENCE {
        format!(" The evidence lists {what} of the {MAX_EVIDENCE} longest.")
    } else {
        String::new()
    }
}

/// Many timeout pauses in one direction: one finding for all of them (a paragraph per
/// pause would bury the reader), with the longest named; the evidence is the first
/// retransmission of each of the costliest (at most [`MAX_EVIDENCE`]).
fn timeout_backoff_summary(b: &mut Builder, d: usize, episodes: &[&[Timeout]]) {
    let cost = |e: &[Timeout]| -> i64 { e.iter().map(|t| t.idle_gap_ns).sum() };
    let total: i64 = episodes.iter().map(|e| cost(e)).sum();
    let timeouts: usize = episodes.iter().map(|e| e.len()).sum();
    let max_backoff = episodes
        .iter()
        .flat_map(|e| e.iter())
        .map(|t| t.backoff)
        .max()
        .unwrap_or(1);
    let longest = episodes
        .iter()
        .max_by_key(|e| cost(e))
        .copied()
        .unwrap_or(episodes[0]);
    let repeated = episodes.iter().filter(|e| e.len() > 1).count();
    let mut worst: Vec<&&[Timeout]> = episodes.iter().collect();
    worst.sort_by_key(|e| std::cmp::Reverse(cost(e)));
    worst.truncate(MAX_EVIDENCE);
    let explanation = format!(
        "{} for the retransmission timer ({timeouts} timeouts), {:.1} s in all with data outstanding and nothing sent. {}; the longest waited {:.2} s from {:.2} s on.{}{}",
        pauses_text(episodes.len()),
        total as f64 / 1e9,
        match repeated {
            0 => "Each needed one timeout (no backoff)".to_string(),
            n if all_doubling(episodes) => format!("{n} needed more than one (the RTO doubled each time)"),
            n => format!("{n} needed more than one (their waits did not all double)"),
        },
        cost(longest) as f64 / 1e9,
        (silence_start(longest) - b.start_ns) as f64 / 1e9,
        periodicity(episodes),
        longest_pauses_note(episodes.len(), "the first retransmission")
    );
    b.push(
        "timeout_backoff",
        d,
        (
            silence_start(episodes[0]),
            episodes[episodes.len() - 1][0].t_ns,
        ),
        total,
        worst.iter().map(|e| e[0].frame).collect(),
        explanation,
        FIX_TIMEOUTS,
        BTreeMap::from([
            ("pauses", episodes.len() as f64),
            ("timeouts", timeouts as f64),
            ("max_backoff", f64::from(max_backoff)),
            ("longest_s", cost(longest) as f64 / 1e9),
        ]),
    );
}

/// A retransmission that went unanswered says the path was down: when the timer had
/// to fire twice or more for the same data, the path delivered nothing from the start
/// of the silence to at least the last unanswered retransmission.
fn link_outage(b: &mut Builder, d: usize, episodes: &[&[Timeout]]) {
    // Data that waited (a repeated SYN may just be a server that does not answer).
    let outages: Vec<&&[Timeout]> = episodes
        .iter()
        .filter(|e| e.len() >= 2 && e[0].flight_before > 0)
        .collect();
    if outages.len() > MAX_EPISODES {
        let span = |e: &[Timeout]| e[e.len() - 2].t_ns - silence_start(e);
        let total: i64 = outages.iter().map(|e| span(e)).sum();
        let longest = outages
            .iter()
            .max_by_key(|e| span(e))
            .copied()
            .copied()
            .unwrap_or(outages[0]);
        let explanation = format!(
            "{} times nothing got through for a while ({:.1} s in all; the longest at least {:.2} s, from {:.2} s on): retransmissions sent into the silence went unanswered. Both directions were silent while data waited: fades, handoffs or route failures, not congestion.",
            outages.len(),
            total as f64 / 1e9,
            span(longest) as f64 / 1e9,
            (silence_start(longest) - b.start_ns) as f64 / 1e9
        );
        let last = outages[outages.len() - 1];
        b.push(
            "link_outage",
            d,
            (silence_start(outages[0]), last[last.len() - 2].t_ns),
            TIMEOUTS_COUNT_IT,
            outages.iter().map(|e| e[0].frame).collect(),
            explanation,
            FIX_OUTAGE,
            BTreeMap::from([
                ("outages", outages.len() as f64),
                ("longest_s", span(longest) as f64 / 1e9),
                (EXPLAINS_TIMEOUT_S, total as f64 / 1e9),
            ]),
        );
        return;
    }
    for e in outages {
        let start = silence_start(e);
        let last_unanswered = e[e.len() - 2].t_ns;
        let explanation = format!(
            "Nothing got through for at least {:.2} s: {} retransmission(s) sent into the silence went \
unanswered before one got through. Both directions were silent while data waited: a fade, a handoff or a \
route failure, not congestion.",
            (last_unanswered - start) as f64 / 1e9,
            e.len() - 1
        );
        b.push(
            "link_outage",
            d,
            (start, last_unanswered),
            TIMEOUTS_COUNT_IT,
            e.iter().map(|t| t.frame).collect(),
            explanation,
            FIX_OUTAGE,
            BTreeMap::from([
                ("retransmissions_unanswered", (e.len() - 1) as f64),
                (EXPLAINS_TIMEOUT_S, (last_unanswered - start) as f64 / 1e9),
            ]),
        );
    }
}

fn fast_retransmit_impossible(
    b: &mut Builder,
    d: usize,
    dir: &DirState,
    episodes: &[&[Timeout]],
    peer_captured: bool,
) {
    let mss = i64::from(dir.mss.max(1));
    let rtt = dir.rtt.quantile(0.5).unwrap_or(0);
    let small: Vec<&Timeout> = episodes
        .iter()
        .map(|e| &e[0])
        .filter(|t| t.flight_before > 0 && t.flight_before < FAST_RETRANSMIT_SEGMENTS * mss)
        .collect();
    let cost: i64 = small.iter().map(|t| (t.idle_gap_ns - rtt).max(0)).sum();
    if small.is_empty() || cost == 0 {
        // No timeouts with a small flight, or they cost no more than the round trip
        // fast retransmit would have taken.
        return;
    }
    let mut flights: Vec<f64> = small
        .iter()
        .map(|t| t.flight_before as f64 / mss as f64)
        .collect();
    flights.sort_by(f64::total_cmp);
    let median = flights[flights.len() / 2];
    let short = small
        .iter()
        .filter(|t| t.idle_gap_ns < SHORT_WAIT_NS)
        .count();
    let mut caveat = match short {
        0 => String::new(),
        n => format!(
            " {n} of them waited less than the 200 ms minimum RTO of the common stacks: perhaps tail loss \
probes rather than the timer (low confidence)."
        ),
    };
    if !peer_captured {
        caveat.push_str(ACKS_UNSEEN_CAVEAT);
    }
    let explanation = format!(
        "{} of the retransmission timeouts came with fewer than four segments in flight (median {:.1}): too \
few to produce the three duplicate ACKs fast retransmit needs, so each loss waited for the timer instead \
of about one round trip ({:.2} s lost).{caveat}",
        small.len(),
        median,
        cost as f64 / 1e9
    );
    b.push(
        "fast_retransmit_impossible",
        d,
        (small[0].t_ns - small[0].idle_gap_ns, small[small.len() - 1].t_ns),
        TIMEOUTS_COUNT_IT,
        small.iter().map(|t| t.frame).collect(),
        explanation,
        "A larger window (receive buffer, initial window), limited transmit (RFC 3042), early retransmit \
(RFC 5827) or RACK-TLP (RFC 8985) recover with few segments in flight.",
        {
            let mut details = BTreeMap::from([
                ("timeouts", small.len() as f64),
                ("median_segments_in_flight", median),
                (EXPLAINS_TIMEOUT_S, cost as f64 / 1e9),
            ]);
            if short == small.len() || !peer_captured {
                details.insert("low_confidence", 1.0);
            }
            details
        },
    );
}

fn fast_retransmit_suppressed(b: &mut Builder, d: usize, dir: &DirState) {
    let s = &dir.suppressed;
    if s.is_empty() {
        return;
    }
    let dupacks: u32 = s.iter().map(|r| r.dupacks).sum();
    let explanation = format!(
        "In {} recoveries that began with a timeout, {} duplicate ACKs arrived and the sender did not fast \
retransmit. This is by design, not a bug: duplicate ACKs for data sent before a timeout are often caused by \
the go-back-N retransmissions themselves, and RFC 6582 §4.1 (NewReno) forbids a fast retransmit until the \
cumulative ACK passes what was sent before the timeout.",
        s.len(),
        dupacks
    );
    let mut evidence = Vec::new();
    for r in s {
        evidence.push(r.frame);
        evidence.push(r.first_dupack_frame);
    }
    b.push(
        "fast_retransmit_suppressed",
        d,
        (s[0].t_ns, s[s.len() - 1].t_ns),
        0,
        evidence,
        explanation,
        "Nothing to fix in the rule; SACK (RFC 6675) lets the sender see which segments are really missing \
after a timeout, and the link-layer fixes for the timeouts themselves apply.",
        BTreeMap::from([("recoveries", s.len() as f64), ("duplicate_acks", f64::from(dupacks))]),
    );
}

fn spurious_timeouts(b: &mut Builder, d: usize, dir: &DirState) {
    let s = &dir.spurious;
    if s.is_empty() {
        return;
    }
    // How each was shown: (already acknowledged data, already acknowledged SYN/ACKs,
    // D-SACKs, the too-soon ACKs' (delay, smallest RTT) pairs, and whether any of those
    // came after a second timeout of the same data, when the ACK may answer an earlier
    // copy).
    let (mut acked, mut handshake, mut dsack, mut soon, mut karn) = (0, 0, 0, Vec::new(), false);
    for x in s {
        match x.proof {
            SpuriousProof::AlreadyAcked { handshake: true } => handshake += 1,
            SpuriousProof::AlreadyAcked { handshake: false } => acked += 1,
            SpuriousProof::Dsack => dsack += 1,
            SpuriousProof::AckTooSoon {
                min_rtt_ns,
                backoff,
            } => {
                soon.push((x.proof_ns - x.retx_ns, min_rtt_ns));
                karn |= backoff > 1;
            }
        }
    }
    let whose = if karn {
        "the original's or an earlier retransmission's"
    } else {
        "the original's"
    };
    let ms = |ns: i64| ns as f64 / 1e6;
    let mut how = Vec::new();
    if acked > 0 {
        how.push(format!(
            "{acked} resent data the capture had already seen acknowledged"
        ));
    }
    if handshake > 0 {
        how.push(format!(
            "{handshake} resent a SYN/ACK the capture had already seen acknowledged"
        ));
    }
    match soon.as_slice() {
        [] => {}
        [(after, min)] => how.push(format!(
            "1 was answered {:.0} ms after it went out, sooner than any round trip seen before ({:.0} ms): the \
ACK was {whose}",
            ms(*after),
            ms(*min)
        )),
        many => how.push(format!(
            "{} were answered sooner after they went out than any round trip seen before ({:.0}–{:.0} ms after, \
against {:.0}–{:.0} ms): each ACK was {whose}",
            many.len(),
            ms(many.iter().map(|x| x.0).min().unwrap_or(0)),
            ms(many.iter().map(|x| x.0).max().unwrap_or(0)),
            ms(many.iter().map(|x| x.1).min().unwrap_or(0)),
            ms(many.iter().map(|x| x.1).max().unwrap_or(0)),
        )),
    }
    if dsack > 0 {
        how.push(format!(
            "for {dsack} the receiver reported getting the data twice (D-SACK, RFC 2883)"
        ));
    }
    let beyond_capture = acked + handshake;
    let why = if handshake == s.len() {
        "The client's ACK reached the capture point but not the server in time (lost or held up beyond it); \
the client went on, so nothing waited but the server's timer."
    } else if beyond_capture == s.len() {
        "The ACKs reached the capture point but not the sender in time (lost or held up beyond it); the \
sender resent what had arrived and collapsed its window for nothing."
    } else {
        "The delay spiked past the RTO; the sender resent data that had arrived and collapsed its window for \
nothing."
    };
    // Counted as `airtrace analyze` counts RTOs: expiries of the timer, apart from the
    // go-back-N segments sent after them (ndpi_weibo connection 10: "12 retransmission
    // timeouts" where analyze counts 6 RTOs).
    let expiries = s.iter().filter(|x| x.expiry).count();
    let what = match (expiries, s.len() - expiries) {
        (1, 0) => "1 retransmission timeout (RTO) was spurious".to_string(),
        (n, 0) => format!("{n} retransmission timeouts (RTOs) were spurious"),
        (0, k) => format!("{k} go-back-N retransmissions after a timeout were spurious"),
        (n, k) => format!(
            "{} retransmissions the timer sent were spurious ({n} RTO expiries, {k} go-back-N segments after them)",
            n + k
        ),
    };
    let explanation = format!("{what}: {}. {why}", how.join("; "));
    let mut evidence = Vec::new();
    for x in s {
        evidence.push(x.retx_frame);
        if x.proof_frame != x.retx_frame {
            evidence.push(x.proof_frame);
        }
    }
    let fix = if beyond_capture == s.len() {
        "Find what loses or delays the ACKs between the capture point and the sender (capture at the sender to \
see it); detect and undo spurious timeouts at the sender (F-RTO, RFC 5682; the Eifel response, RFC 4015)."
    } else {
        "Detect and undo spurious timeouts (F-RTO, RFC 5682; the Eifel response, RFC 4015); on the link, \
avoid delay spikes longer than the RTO (bounded ARQ persistence, buffering during handoffs)."
    };
    b.push(
        "spurious_timeout",
        d,
        (
            s.iter().map(|x| x.retx_ns).min().unwrap_or(0),
            s.iter().map(|x| x.proof_ns).max().unwrap_or(0),
        ),
        0,
        evidence,
        explanation,
        fix,
        BTreeMap::from([
            ("spurious_timeouts", s.len() as f64),
            ("expiries", expiries as f64),
            ("already_acknowledged", (acked + handshake) as f64),
            ("ack_too_soon", soon.len() as f64),
            ("dsack", dsack as f64),
        ]),
    );
}

/// Fast or SACK retransmissions the receiver reported receiving twice (D-SACK).
fn spurious_retransmissions(b: &mut Builder, d: usize, dir: &DirState) {
    let s = &dir.dsack_spurious;
    if s.is_empty() {
        return;
    }
    let explanation = format!(
        "{} fast or SACK retransmissions were not needed: the receiver reported getting the data twice (D-SACK, \
RFC 2883). The original was delayed or reordered, not lost; the sender took the duplicate ACKs for loss and \
halved its window for nothing (RFC 3708).",
        s.len()
    );
    b.push(
        "spurious_retransmission",
        d,
        (s[0].2, s[s.len() - 1].2),
        0,
        s.iter().flat_map(|&(retx, dsack, _)| [retx, dsack]).collect(),
        explanation,
        "Let the sender adapt to reordering and undo the reduction: RACK-TLP (RFC 8985), D-SACK-based undo \
(RFC 3708; Linux does both); find what reorders packets on the path (parallel links, link-layer retransmission \
without in-order delivery).",
        BTreeMap::from([("spurious_retransmissions", s.len() as f64)]),
    );
}

fn excessive_queueing(b: &mut Builder, d: usize, dir: &DirState) {
    let (Some(min), Some(p50), Some(max), Some(first), Some(last)) = (
        dir.rtt.min(),
        dir.rtt.quantile(0.5),
        dir.rtt.max(),
        dir.first_data_ns,
        dir.last_data_ns,
    ) else {
        return;
    };
    if dir.rtt.count() < 10
        || min <= 0
        || (p50 as f64) < QUEUE_RTT_FACTOR * min as f64
        || p50 - min < QUEUE_MIN_NS
    {
        return;
    }
    let span_s = (last - first) as f64 / 1e9;
    let rate = if span_s > 0.0 {
        dir.data_bytes as f64 / span_s
    } else {
        0.0
    };
    let queue_s = (p50 - min) as f64 / 1e9;
    // No more can wait than the receiver lets be in flight (the RTT histogram's bins
    // round the median).
    let queue_bytes = dir
        .advertised
        .map_or(queue_s * rate, |w| (queue_s * rate).min(f64::from(w)));
    let queue_packets = queue_bytes / f64::from(dir.mss.max(1));
    if queue_packets < 1.0 {
        // Less than a packet waiting: the RTT varies for another reason (a delayed
        // ACK, a slow receiver), not a queue.
        return;
    }
    let worst_s = (max - min) as f64 / 1e9;
    let rto_note = if worst_s >= INITIAL_RTO_S {
        format!(
            "At its worst the queue took {worst_s:.1} s to drain, longer than the {INITIAL_RTO_S:.0} s initial RTO \
(RFC 6298): a new connection's SYN behind it would time out."
        )
    } else {
        format!("At its worst it took {worst_s:.2} s to drain.")
    };
    // A queue that stands keeps the bottleneck busy: its cost is delay, not throughput.
    let window_note = match dir.advertised {
        Some(w) if queue_bytes >= 0.8 * f64::from(w) => format!(
            " The queue holds nearly the receiver's whole window ({:.1} kB advertised): the window, not the buffer, \
sets its size.",
            f64::from(w) / 1e3
        ),
        _ => String::new(),
    };
    let rise = if max as f64 <= 1.05 * p50 as f64 {
        format!(
            "rose from {:.0} ms to about {:.0} ms and stayed there",
            min as f64 / 1e6,
            p50 as f64 / 1e6
        )
    } else {
        format!(
            "rose from {:.0} ms to a median of {:.0} ms (max {:.0} ms)",
            min as f64 / 1e6,
            p50 as f64 / 1e6,
            max as f64 / 1e6
        )
    };
    let explanation = format!(
        "Round-trip times {rise}: a standing queue of about {:.0} packets ({:.1} kB) at the bottleneck, which \
inflates the RTT and with it the RTO. While it stands the bottleneck is never idle, so it costs delay, not \
throughput (the data went at {:.0} kbit/s).{window_note} {rto_note}",
        queue_packets,
        queue_bytes / 1e3,
        rate * 8.0 / 1e3
    );
    b.push(
        "excessive_queueing",
        d,
        (first, last),
        0,
        Vec::new(),
        explanation,
        "Size the bottleneck buffer to about one bandwidth-delay product, or run active queue management \
(CoDel, RED) with ECN at both ends of the wireless link (Ludwig et al.); a smaller receive window also caps \
the queue.",
        BTreeMap::from([
            ("rtt_min_s", min as f64 / 1e9),
            ("rtt_median_s", p50 as f64 / 1e9),
            ("rtt_max_s", max as f64 / 1e9),
            ("standing_queue_packets", queue_packets),
            ("standing_queue_bytes", queue_bytes),
        ]),
    );
}

fn loss_pattern(b: &mut Builder, d: usize, dir: &DirState, episodes: &[&[Timeout]]) {
    let runs = &dir.loss_runs;
    if runs.len() < MIN_LOSS_EVENTS {
        return;
    }
    let lost: u64 = runs.iter().map(|&r| u64::from(r)).sum();
    let mean = lost as f64 / runs.len() as f64;
    let sent = (dir.data_packets + lost).max(1) as f64;
    let loss_rate = lost as f64 / sent;
    let timeout_cost: i64 = episodes
        .iter()
        .flat_map(|e| e.iter())
        .map(|t| t.idle_gap_ns)
        .sum();
    let (first, last) = (
        dir.first_data_ns.unwrap_or(0),
        dir.last_data_ns.unwrap_or(0),
    );
    let mut details = BTreeMap::from([
        ("loss_events", runs.len() as f64),
        ("segments_lost", lost as f64),
        ("loss_rate", loss_rate),
        ("mean_burst_segments", mean),
        ("timeout_episodes", episodes.len() as f64),
        (EXPLAINS_TIMEOUT_S, timeout_cost as f64 / 1e9),
    ]);
    let few = runs.len() < CONFIDENT_LOSS_EVENTS;
    let caveat = if few {
        details.insert("low_confidence", 1.0);
        format!(
            " Only {} loss events: too few to be sure of the pattern (about {CONFIDENT_LOSS_EVENTS} are needed); \
read this as a hint.",
            runs.len()
        )
    } else {
        String::new()
    };
    if mean >= BURST_MEAN_SEGMENTS {
        // Several losses in one window can defeat fast recovery; when no timeout
        // followed, recovery coped (suri_tls-subjectaltname conn 14: "defeat fast
        // recovery: they caused 0 timeout episodes").
        let effect = if episodes.is_empty() {
            "Fast recovery repaired them without a timeout.".to_string()
        } else {
            format!(
                "Several losses in one window defeat fast recovery: they caused {} timeout episodes ({:.1} s idle).",
                episodes.len(),
                timeout_cost as f64 / 1e9
            )
        };
        let explanation = if few {
            format!(
                "Losses came {mean:.1} segments at a time: {} loss events ({:.1} % of segments lost). {effect}{caveat}",
                runs.len(),
                loss_rate * 100.0,
            )
        } else {
            // Gilbert-Elliott with a lossy bad state: a visit lasts the mean run, and
            // the good state is left once per loss event.
            let p_good_to_bad = runs.len() as f64 / dir.data_packets.max(1) as f64;
            details.insert("ge_p_good_to_bad", p_good_to_bad);
            details.insert("ge_p_bad_to_good", 1.0 / mean);
            format!(
                "Losses came in bursts: {} loss events of {mean:.1} segments on average ({:.1} % of segments lost). \
A Gilbert-Elliott fit: the bad state is entered after 1 in {:.0} segments and lasts {mean:.1}. Several losses \
in one window defeat fast recovery: they caused {} timeout episodes ({:.1} s idle: the pauses of timeout_backoff, \
not more).",
                runs.len(),
                loss_rate * 100.0,
                1.0 / p_good_to_bad,
                episodes.len(),
                timeout_cost as f64 / 1e9
            )
        };
        b.push(
            "burst_loss",
            d,
            (first, last),
            TIMEOUTS_COUNT_IT,
            episodes.iter().map(|e| e[0].frame).collect(),
            explanation,
            FIX_BURSTS,
            details,
        );
    } else {
        let explanation = format!(
            "Losses were isolated: {} loss events of {mean:.1} segments on average ({:.2} % of segments lost), \
as random (Bernoulli) loss gives. TCP reads each as congestion and halves its window: the square-root law \
(Mathis et al.) caps the rate at MSS/RTT·√(3/(2p)).{caveat}",
            runs.len(),
            loss_rate * 100.0
        );
        b.push(
            "random_loss",
            d,
            (first, last),
            TIMEOUTS_COUNT_IT,
            Vec::new(),
            explanation,
            "Recover the losses on the link (ARQ, FEC) so that TCP does not see them; TCP alone cannot tell \
them from congestion.",
            details,
        );
    }
}

fn receiver_limited(
    b: &mut Builder,
    d: usize,
    dir: &DirState,
    window_scale_known: bool,
    handshake_rtt_ns: Option<i64>,
) {
    let zw = &dir.zero_window;
    // Without the handshake the window scale is unknown and the raw window field says
    // nothing about how much may be in flight: only zero windows count then.
    // A share of a handful of segments says nothing: a two-segment request with its
    // second segment at the window's edge is "50 % window-limited" (ivre_ntlm-http
    // conns 5, 6, 11-13, each costing 0 s).
    let limited_share = if window_scale_known && dir.data_packets >= MIN_DATA_FOR_WINDOW_SHARE {
        (dir.rwnd_limited as f64 / dir.data_packets.max(1) as f64).min(1.0)
    } else {
        0.0
    };
    // A full window limits throughput only when it is smaller than the path's
    // bandwidth-delay product: then the RTT stays near its minimum. A larger window
    // fills a queue instead (excessive_queueing's business), and the link stays busy.
    let no_queue = match (dir.rtt.min(), dir.rtt.quantile(0.5)) {
        (Some(min), Some(p50)) => (p50 as f64) < NO_QUEUE_RTT_FACTOR * min as f64,
        _ => true,
    };
    if zw.is_empty() && (limited_share < RWND_LIMITED_SHARE || !no_queue) {
        return;
    }
    let zero_ns: i64 = zw.iter().map(|s| s.end_ns - s.start_ns).sum();
    let (from, to) = match (zw.first(), zw.last()) {
        (Some(f), Some(l)) => (f.start_ns, l.end_ns),
        _ => (
            dir.first_data_ns.unwrap_or(0),
            dir.last_data_ns.unwrap_or(0),
        ),
    };
    let mut evidence: Vec<u64> = zw.iter().map(|s| s.frame).collect();
    evidence.extend(&dir.window_full_frames);
    let mut details = BTreeMap::from([
        ("zero_window_periods", zw.len() as f64),
        ("zero_window_s", zero_ns as f64 / 1e9),
        ("window_limited_share", limited_share),
        ("window_full_segments", dir.window_full as f64),
    ]);
    let used = match (capacity_bps(dir, handshake_rtt_ns), active_goodput_bps(dir)) {
        (Ok(capacity), Some(goodput)) if goodput <= capacity => {
            details.insert("capacity_estimate_bps", capacity);
            details.insert("capacity_used", goodput / capacity);
            format!(
                " The path carried about {} when the window let it (the spacing of the returning ACKs); while \
it sent, the connection averaged {}, {:.0} % of that.",
                rate_text(capacity),
                rate_text(goodput),
                100.0 * goodput / capacity
            )
        }
        (Err(Some(why)), _) => format!(" No estimate of the path's rate: {why}."),
        _ => String::new(),
    };
    let explanation = format!(
        "The receiver's window held the sender back: {:.0} % of the data segments left less than one segment of the advertised window, and {} zero-window period(s) stopped it for {:.2} s in all.{used}",
        limited_share * 100.0,
        zw.len(),
        zero_ns as f64 / 1e9
    );
    b.push(
        "receiver_limited",
        d,
        (from, to),
        zero_ns,
        evidence,
        explanation,
        "A larger receive buffer (with window scaling) to cover the bandwidth-delay product, or an \
application that reads faster.",
        details,
    );
}

/// The bottleneck's rate as the returning ACKs show it: the median of the ACK
/// dispersion rates (packet pairs, Keshav 1991). A window-limited sender sends its
/// window back to back, so most ACKs come one bottleneck serialisation apart; an
/// application-paced one does not, which is why only window-limited findings use it.
/// The ACKs' spacing is the receiver's, not the path's, when they come bunched (ACK
/// compression) or when the capture sat at the receiver (its data-to-ACK times are far
/// below the handshake's round trip): then no figure, and the reason why.
fn capacity_bps(dir: &DirState, handshake_rtt_ns: Option<i64>) -> Result<f64, Option<String>> {
    let rate = (dir.ack_rate.count() >= 10)
        .then(|| dir.ack_rate.quantile(0.5))
        .flatten()
        .ok_or(None)?;
    if dir.compressed_acks as f64 >= COMPRESSED_ACK_SHARE * dir.ack_pairs as f64
        && dir.compressed_acks > 0
    {
        return Err(Some(format!(
            "{} of {} ACKs came back bunched, so their spacing is not the bottleneck's",
            dir.compressed_acks, dir.ack_pairs
        )));
    }
    if captured_at_receiver(dir, handshake_rtt_ns) {
        return Err(Some(
            "the capture sat at the receiver (its ACKs left within a tenth of the handshake's round trip), where \
the ACKs' spacing is the receiver's own"
                .to_string(),
        ));
    }
    Ok(rate as f64)
}

/// The capture sat beside the receiver of `dir`: its data-to-ACK times are far below
/// the handshake's round trip (they are the receiver's turnaround, not the path's).
/// One rule with the analyzer's `capture_point` ([`airtrace_analysis::vantage`]), on
/// the diagnosis' own RTT samples.
fn captured_at_receiver(dir: &DirState, handshake_rtt_ns: Option<i64>) -> bool {
    airtrace_analysis::capture_point(dir.rtt.min(), handshake_rtt_ns)
        == Some(airtrace_analysis::CapturePoint::Receiver)
}

/// Data bytes over the time the sender could send: the data's span less the timeouts'
/// silences, the zero-window stalls and the application's pauses, bits/s.
fn active_goodput_bps(dir: &DirState) -> Option<f64> {
    let span = dir.last_data_ns? - dir.first_data_ns?;
    let timeouts: i64 = dir.timeouts.iter().map(|t| t.idle_gap_ns).sum();
    let stalls: i64 = dir
        .zero_window
        .iter()
        .chain(&dir.app_idle)
        .map(|s| s.end_ns - s.start_ns)
        .sum();
    let active = (span - timeouts - stalls).max(span / 10);
    (active > 0).then(|| dir.data_bytes as f64 * 8e9 / active as f64)
}

/// "35 ms", "0.4 ms", "19 µs".
fn duration_text(ns: i64) -> String {
    match ns {
        n if n >= 10_000_000 => format!("{:.0} ms", n as f64 / 1e6),
        n if n >= 100_000 => format!("{:.1} ms", n as f64 / 1e6),
        n => format!("{:.0} µs", n as f64 / 1e3),
    }
}

/// "9.6 Mbit/s", "640 kbit/s".
fn rate_text(bps: f64) -> String {
    if bps >= 1e6 {
        format!("{:.3} Mbit/s", bps / 1e6)
    } else {
        format!("{:.0} kbit/s", bps / 1e3)
    }
}

/// A receiver that delays its ACK (RFC 1122 §4.2.3.2: up to 500 ms, 200 ms in BSD, 40
/// ms in Linux) waits for a second segment; a sender that has only one in flight (a
/// window of one segment, or the end of a burst) then waits out the delayed-ACK timer
/// each round trip.
fn delayed_ack_stall(b: &mut Builder, d: usize, dir: &DirState, handshake_rtt_ns: Option<i64>) {
    let base = match (dir.rtt.min(), handshake_rtt_ns) {
        (Some(min), Some(h)) => min.min(h),
        (Some(min), None) => min,
        (None, Some(h)) => h,
        (None, None) => return,
    };
    // Longer than a round trip by more than jitter: the receiver sat on the ACK; but
    // no delayed-ACK timer runs longer than MAX_DELACK_NS, so a longer wait is
    // something else (a slow application, a lost ACK).
    let threshold = base + (base.max(DELACK_MARGIN_NS));
    let (stalls, total_ns) = dir
        .lone_ack_delay
        .between(threshold, threshold + MAX_DELACK_NS);
    if stalls < MIN_STALLS || (stalls as f64) < STALL_SHARE * dir.data_packets as f64 {
        return;
    }
    let cost = (total_ns - stalls as f64 * base as f64).max(0.0) as i64;
    let typical = dir.lone_ack_delay.quantile(0.9).unwrap_or(0);
    // Beside the receiver the capture sees the receiver's own delay; elsewhere the
    // path's round trip comes on top.
    let against = if captured_at_receiver(dir, handshake_rtt_ns) {
        format!(
            "the capture sat beside the receiver, which answered other segments within {}",
            duration_text(base)
        )
    } else {
        format!("the quickest round trip seen took {}", duration_text(base))
    };
    let explanation = format!(
        "{stalls} segments went out alone and waited about {:.0} ms for their ACK, where {against}: the receiver delays its ACK for a second segment (RFC 1122 §4.2.3.2) that the sender, with one segment of window, never sends. {:.2} s lost waiting for the delayed-ACK timer.",
        typical.min(threshold + MAX_DELACK_NS) as f64 / 1e6,
        cost as f64 / 1e9
    );
    b.push(
        "delayed_ack_stall",
        d,
        (dir.first_data_ns.unwrap_or(0), dir.last_data_ns.unwrap_or(0)),
        cost,
        dir.lone_slow
            .iter()
            .filter(|&&(wait, _)| wait > threshold && wait <= threshold + MAX_DELACK_NS)
            .map(|&(_, frame)| frame)
            .collect(),
        explanation,
        "Give the sender a window of at least two segments (send buffer, initial window), or have the receiver ACK every segment (quick ACKs, TCP_QUICKACK) when the sender is this limited.",
        BTreeMap::from([
            ("stalls", stalls as f64),
            ("base_rtt_s", base as f64 / 1e9),
            ("typical_ack_delay_s", typical as f64 / 1e9),
        ]),
    );
}

/// ACKs that arrive bunched release data in bursts at the sender: the ACK clock no
/// longer paces it at the bottleneck's rate (Zhang, Shenker & Clark 1991).
fn ack_compression(b: &mut Builder, d: usize, dir: &DirState) {
    let share = dir.compressed_acks as f64 / dir.ack_pairs.max(1) as f64;
    if dir.compressed_acks < MIN_COMPRESSED_ACKS || share < COMPRESSED_ACK_SHARE {
        return;
    }
    let explanation = format!(
        "{} of {} ACKs ({:.0} %) arrived at least {}× closer together than the data they acknowledge had been sent: the ACKs were bunched on the way back (queued behind other traffic, or released in bursts by the link), so the sender sends in bursts instead of at the bottleneck's pace, and its bursts fill queues.",
        dir.compressed_acks,
        dir.ack_pairs,
        share * 100.0,
        crate::collect::ACK_COMPRESSION_FACTOR
    );
    b.push(
        "ack_compression",
        d,
        (dir.first_data_ns.unwrap_or(0), dir.last_data_ns.unwrap_or(0)),
        0,
        dir.compressed_ack_frames.clone(),
        explanation,
        "Pace the sender (fq pacing, BBR) so that bunched ACKs do not become bursts of data; on the link, do not hold and release ACKs in batches.",
        BTreeMap::from([("compressed_acks", dir.compressed_acks as f64), ("share", share)]),
    );
}

/// Pauses with nothing in flight while the receiver's window was open: the application
/// had nothing to send. Time spent waiting for a zero or sub-segment window is the
/// receiver's, not the application's, and is left out of each pause; the sub-segment
/// waits only when the window can be read (the handshake seen, or a flight never larger
/// than the raw window: then it is not scaled).
fn sender_limited(
    b: &mut Builder,
    d: usize,
    dir: &DirState,
    duration_ns: i64,
    window_scale_known: bool,
) {
    if dir.data_packets < MIN_DATA_FOR_APP_LIMIT {
        return; // a direction that carries (almost) only ACKs
    }
    let window_known = window_scale_known || !dir.flight_above_window;
    let mut waits: Vec<(i64, i64)> = dir
        .zero_window
        .iter()
        .chain(dir.window_waits.iter().filter(|_| window_known))
        .map(|s| (s.start_ns, s.end_ns))
        .collect();
    waits.sort_unstable();
    let app_idle = |s: &crate::collect::Span| {
        let waited: i64 = waits
            .iter()
            .map(|&(from, to)| (to.min(s.end_ns) - from.max(s.start_ns)).max(0))
            .sum();
        s.end_ns - s.start_ns - waited
    };
    let pauses: Vec<_> = dir
        .app_idle
        .iter()
        .map(|s| (s, app_idle(s)))
        .filter(|&(_, idle)| idle >= crate::collect::APP_IDLE_NS)
        .collect();
    let idle: i64 = pauses.iter().map(|&(_, idle)| idle).sum();
    if pauses.is_empty() || (idle as f64) < APP_IDLE_SHARE * duration_ns as f64 {
        return;
    }
    let explanation = format!(
        "The sender had nothing to send for {:.2} s: {} with no data in flight and the receiver's window \
open. The application, not the network, set the pace there.{}",
        idle as f64 / 1e9,
        pauses_text(pauses.len()),
        longest_pauses_note(pauses.len(), "the frame that ended each")
    );
    let mut longest: Vec<_> = pauses.iter().collect();
    longest.sort_by_key(|&&(_, idle)| std::cmp::Reverse(idle));
    b.push(
        "sender_limited",
        d,
        (pauses[0].0.start_ns, pauses[pauses.len() - 1].0.end_ns),
        idle,
        longest
            .iter()
            .take(MAX_EVIDENCE)
            .map(|(s, _)| s.frame)
            .collect(),
        explanation,
        "Look at the application (or its disk and CPU): larger writes, pipelined requests.",
        BTreeMap::from([
            ("pauses", pauses.len() as f64),
            ("idle_s", idle as f64 / 1e9),
        ]),
    );
}

/// Frames captured twice and 802.11 MAC retries, each direction on its own (issue 18
/// class 7: both used to be labelled `a_to_b` whatever direction they were in).
fn artifacts(b: &mut Builder, c: &ConnState) {
    for d in 0..2 {
        capture_duplicates(b, c, d);
        mac_retries(b, c, d);
    }
}

fn capture_duplicates(b: &mut Builder, c: &ConnState, d: usize) {
    let n = c.capture_duplicates[d];
    if n == 0 {
        return;
    }
    let explanation = format!(
        "{n} frames were captured twice (same IP ID, sequence numbers and payload): an artifact of where and \
how the capture was taken (a mirrored switch port, a bonded interface), not retransmissions on the network. \
tshark counts each as a retransmission."
    );
    b.push(
        "capture_artifact",
        d,
        (c.first_ns, c.last_ns),
        0,
        c.capture_duplicate_frames[d].clone(),
        explanation,
        "Nothing to fix on the network; capture at a single point, or remove duplicates (editcap -d).",
        BTreeMap::from([("duplicate_frames", n as f64)]),
    );
}

fn mac_retries(b: &mut Builder, c: &ConnState, d: usize) {
    let n = c.mac_retries[d];
    if n == 0 {
        return;
    }
    let collided = c.air.collision_retries.min(n);
    let (why, fix) = if 2 * collided >= n {
        (
            format!(" {collided} of them followed collisions between the connection's data and its ACKs (see data_ack_collisions)."),
            "Send fewer ACKs, aggregate frames, or give the access point priority (see data_ack_collisions).",
        )
    } else {
        (
            String::new(),
            "Improve the radio path (distance, antennas, interference) or use a more robust rate.",
        )
    };
    let explanation = format!(
        "{n} 802.11 MAC retries: the radio needed more than one attempt for these frames. They are link-layer \
copies, not TCP retransmissions, but they cost air time and add delay.{why}"
    );
    b.push(
        "mac_retries",
        d,
        (c.first_ns, c.last_ns),
        0,
        c.mac_retry_frames[d].clone(),
        explanation,
        fix,
        BTreeMap::from([("mac_retries", n as f64)]),
    );
}

/// RFC 9293 §3.7.1's default MSS (IPv4): a segment size any TCP may use.
const DEFAULT_MSS: u32 = 536;

const FIX_CAPTURE_DROPS: &str = "Nothing to fix on the network. For a complete capture: a larger capture \
buffer (tcpdump -B, dumpcap -B), headers only (-s 128), a capture host or tap that is not busy, and check the \
drop counters the capture tool reports at the end.";

/// Data the receiver acknowledged that the capture never saw, with no retransmission
/// between (see [`crate::gaps`]): the capture's losses, not the network's. Also what the
/// capture file says it dropped (pcapng interface statistics), on the connections
/// [`Diagnoser`](crate::Diagnoser) picks.
fn capture_drops(b: &mut Builder, c: &ConnState) {
    let file_note = |drops: Option<u64>| {
        match drops {
        Some(n) => format!(" The capture file itself reports {n} packet(s) dropped by the capture (its interface statistics)."),
        None => String::new(),
    }
    };
    let mut reported = false;
    for (d, dir) in c.dirs.iter().enumerate() {
        let g = &dir.capture_gaps;
        if g.gaps == 0 {
            continue;
        }
        reported = true;
        // A segment count needs a segment size: below RFC 9293's default MSS (536
        // bytes) the largest segment seen says nothing of it (issue 18: "291 segment(s)
        // (291 bytes)" of a connection that had sent only 1-byte segments).
        let sized = dir.mss >= DEFAULT_MSS;
        let amount = if sized {
            format!(
                "{} segment(s) ({} bytes, in {} gap(s))",
                g.segments, g.bytes, g.gaps
            )
        } else {
            format!("{} bytes (in {} gap(s))", g.bytes, g.gaps)
        };
        let explanation = format!(
            "{amount} of this direction never appear in the capture, yet the receiver \
acknowledged them and no retransmission of them was seen: they went through, and the capture, not the network, \
lost them.{} Read this connection's lost-segment and ACK-of-unseen-segment flags, and its loss and retransmission \
counts, with that in mind; the loss findings (burst_loss, random_loss) do not count these gaps.",
            file_note(c.file_drops)
        );
        let mut details = BTreeMap::from([
            ("bytes_not_captured", g.bytes as f64),
            ("gaps", g.gaps as f64),
        ]);
        if sized {
            details.insert("segments_not_captured", g.segments as f64);
        }
        if let Some(n) = c.file_drops {
            details.insert("file_drops", n as f64);
        }
        b.push(
            "capture_drops",
            d,
            (
                g.first_ns.unwrap_or(c.first_ns),
                g.last_ns.unwrap_or(c.last_ns),
            ),
            0,
            g.frames.clone(),
            explanation,
            FIX_CAPTURE_DROPS,
            details,
        );
    }
    if let (false, Some(n)) = (reported, c.file_drops) {
        let d = usize::from(c.dirs[1].data_bytes > c.dirs[0].data_bytes);
        let explanation = format!(
            "The capture file reports {n} packet(s) dropped by the capture (its interface statistics), but no \
connection's data shows a gap the receiver acknowledged: the dropped packets were ACKs or other traffic, or \
their gaps were never acknowledged. What the capture shows is incomplete; counts of losses and retransmissions \
may include the capture's own."
        );
        b.push(
            "capture_drops",
            d,
            (c.first_ns, c.last_ns),
            0,
            Vec::new(),
            explanation,
            FIX_CAPTURE_DROPS,
            BTreeMap::from([("file_drops", n as f64)]),
        );
    }
}
