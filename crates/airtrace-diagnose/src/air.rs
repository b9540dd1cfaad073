//! The 802.11 layer of a connection, from a radiotap capture: collisions between TCP
//! data and TCP ACKs, frames corrupted on the channel, and rate adaptation that thrashes.
//!
//! Kuang, Xiao and Williamson found TCP's MAC retry rate five times UDP's between a
//! laptop and an access point a metre apart: the access point sending data and the
//! laptop sending ACKs contend for one channel, and their backoffs end in the same slot
//! (the "TCP data/ACK collision problem"). A sniffer that keeps frames with a bad FCS
//! sees such a collision directly: two frames of the connection, one in each direction,
//! on the air at once. Under CSMA/CA one transmitter holds the channel at a time, so
//! two frames whose starts (radiotap TSFT, else the time stamps) are closer than the
//! shorter one's air time overlapped.
//! The retry that follows an overlapped frame is a collision retry; one that follows a
//! frame with a bad FCS and no overlap is a retry after channel corruption.
//!
//! At 100 m the same study saw the rate adaptation thrash: it keeps stepping up to a
//! rate the channel cannot carry, loses the frame, and steps back down. Each attempt's
//! radiotap rate shows the steps; a step up whose frame is retried is a failed probe.
//!
//! [`AirState`] is fed each frame of the connection in capture order ([`AirState::frame`]),
//! keeps a few numbers per direction ([`AirDir`]), and [`findings`] turns them into the
//! `data_ack_collisions`, `bad_fcs` and `rate_adaptation_thrash` findings.

use std::collections::BTreeMap;

use airtrace_wire::Decoded;

use crate::finding::{Builder, MAX_EVIDENCE};

/// Fewest collisions that make a `data_ack_collisions` finding.
const MIN_COLLISIONS: u64 = 3;
/// Smallest share of a direction's frames with a bad FCS (collisions aside) that makes a
/// `bad_fcs` finding, and the fewest such frames.
const MIN_BAD_FCS_SHARE: f64 = 0.01;
const MIN_BAD_FCS_FRAMES: u64 = 5;
/// Rate thrash: at least this many frames with a rate...
const MIN_RATED_FRAMES: u64 = 20;
/// ...and either rate changes on this share of them, mostly reversing the last change...
const RATE_CHANGE_SHARE: f64 = 0.2;
/// ...or this many steps up, at least half of them failed probes.
const MIN_STEP_UPS: u64 = 5;

/// The latest frame of one direction.
#[derive(Debug, Clone, Copy)]
struct Seen {
    t_ns: i64,
    /// When the frame began on the air: its radiotap TSFT (the first bit's arrival),
    /// else its time stamp. Captures stamp a frame at its start or at its end (a
    /// node's own capture, frames in the order they ended); overlaps are judged on
    /// starts.
    start_ns: i64,
    frame: u64,
    airtime_ns: i64,
    seq: u16,
    bad_fcs: bool,
    collided: bool,
    /// Sent at a higher rate than the attempt before it.
    step_up: bool,
}

/// One direction's 802.11 frames.
#[derive(Debug, Clone, Default)]
pub struct AirDir {
    /// 802.11 frames of the connection with a radiotap header.
    pub frames: u64,
    /// Frames with the Retry flag.
    pub retries: u64,
    /// Frames with a bad FCS that did not overlap another frame.
    pub bad_fcs: u64,
    /// Their frame numbers (at most [`MAX_EVIDENCE`]).
    pub bad_fcs_frames: Vec<u64>,
    /// Time from a corrupted frame to its retry, summed, ns.
    pub bad_fcs_cost_ns: i64,
    /// Frames with a legacy radiotap rate.
    pub rated: u64,
    /// The rates seen, in 500 kbit/s units.
    pub rates: Vec<u8>,
    /// Times the rate changed from one frame to the next...
    pub rate_changes: u64,
    /// ...and the changes that went the other way from the previous change.
    pub rate_reversals: u64,
    /// Frames where the rate changed.
    pub rate_change_frames: Vec<u64>,
    /// Steps up in rate, and those whose frame had to be retried (failed probes).
    pub step_ups: u64,
    /// See `step_ups`.
    pub failed_step_ups: u64,
    /// Frames of the failed probes.
    pub failed_step_up_frames: Vec<u64>,
    /// Time from a failed probe to its retry, summed, ns.
    pub failed_step_up_cost_ns: i64,
    /// First and last frame, ns.
    pub span: Option<(i64, i64)>,
    last: Option<Seen>,
    last_step: i8,
}

/// What was gathered about a connection's 802.11 frames (see the [module documentation](self)).
#[derive(Debug, Clone, Default)]
pub struct AirState {
    /// Per direction (0 is `a_to_b`).
    pub dirs: [AirDir; 2],
    /// Pairs of frames, one each way, on the air at once.
    pub collisions: u64,
    /// Retries of a frame that collided, both directions.
    pub collision_retries: u64,
    /// Time from a collided frame to its retry, summed, ns.
    pub collision_cost_ns: i64,
    /// Frames of the first collisions.
    pub collision_frames: Vec<u64>,
    /// First and last collision, ns.
    pub collision_span: Option<(i64, i64)>,
    /// The rate of each direction's latest frame, in 500 kbit/s units.
    last_rate: [Option<u8>; 2],
}

fn push_evidence(frames: &mut Vec<u64>, frame: u64) {
    if frames.len() < MAX_EVIDENCE {
        frames.push(frame);
    }
}

impl AirState {
    /// Takes in frame `frame` of the connection, travelling in direction `d` at `t_ns`,
    /// `len` bytes as captured on the air.
    pub fn frame(&mut self, t_ns: i64, frame: u64, len: u32, d: usize, decoded: &Decoded) {
        let (Some(wlan), Some(rt)) = (decoded.wlan.as_ref(), decoded.radiotap.as_ref()) else {
            return;
        };
        let Some(seq) = wlan.seq else { return };
        let rate = rt.rate_500kbps.filter(|&r| r > 0);
        // Air time of the frame at its legacy rate (unknown for HT/VHT rates).
        let airtime_ns = rate.map_or(0, |r| i64::from(len) * 8 * 2_000 / i64::from(r));
        let step_up = rate.is_some_and(|r| self.rate_step(d, r, frame));
        let start_ns = rt
            .tsft_us
            .and_then(|us| i64::try_from(us).ok())
            .map_or(t_ns, |us| us.saturating_mul(1_000));
        let mut seen = Seen {
            t_ns,
            start_ns,
            frame,
            airtime_ns,
            seq,
            bad_fcs: rt.bad_fcs(),
            collided: false,
            step_up,
        };
        let dir = &mut self.dirs[d];
        dir.frames += 1;
        let span = dir.span.get_or_insert((t_ns, t_ns));
        span.1 = t_ns;
        if wlan.retry {
            dir.retries += 1;
            if let Some(prev) = dir.last.filter(|p| p.seq == seq) {
                let wait = t_ns - prev.t_ns;
                if prev.collided {
                    self.collision_retries += 1;
                    self.collision_cost_ns += wait;
                } else if prev.bad_fcs {
                    dir.bad_fcs_cost_ns += wait;
                }
                if prev.step_up {
                    dir.failed_step_ups += 1;
                    dir.failed_step_up_cost_ns += wait;
                    push_evidence(&mut dir.failed_step_up_frames, prev.frame);
                }
            }
        }
        let [a, b] = &mut self.dirs;
        let (me, other) = if d == 0 { (a, b) } else { (b, a) };
        if let Some(o) = other.last.as_mut() {
            let overlap = (start_ns - o.start_ns).abs() < airtime_ns.min(o.airtime_ns);
            if overlap && !o.collided {
                o.collided = true;
                seen.collided = true;
                self.collisions += 1;
                if o.bad_fcs {
                    // Counted as corrupted when it came; it was a collision.
                    other.bad_fcs -= 1;
                    if other.bad_fcs_frames.last() == Some(&o.frame) {
                        other.bad_fcs_frames.pop();
                    }
                }
                let span = self.collision_span.get_or_insert((o.t_ns, t_ns));
                span.1 = t_ns;
                push_evidence(&mut self.collision_frames, o.frame);
                push_evidence(&mut self.collision_frames, frame);
            }
        }
        if seen.bad_fcs && !seen.collided {
            me.bad_fcs += 1;
            push_evidence(&mut me.bad_fcs_frames, frame);
        }
        me.last = Some(seen);
    }

    /// Notes the rate of direction `d`'s frame; true when it is a step up.
    fn rate_step(&mut self, d: usize, rate: u8, frame: u64) -> bool {
        let dir = &mut self.dirs[d];
        dir.rated += 1;
        if !dir.rates.contains(&rate) {
            dir.rates.push(rate);
        }
        let Some(last) = self.last_rate[d].replace(rate) else {
            return false;
        };
        if rate == last {
            return false;
        }
        let step = if rate > last { 1 } else { -1 };
        dir.rate_changes += 1;
        if dir.last_step == -step {
            dir.rate_reversals += 1;
        }
        dir.last_step = step;
        push_evidence(&mut dir.rate_change_frames, frame);
        if step > 0 {
            dir.step_ups += 1;
        }
        step > 0
    }
}

/// The 802.11 findings of a connection whose data flows in direction `data_dir`,
/// spanning `span` (ns).
pub(crate) fn findings(b: &mut Builder, air: &AirState, data_dir: usize, span: (i64, i64)) {
    collisions(b, air, data_dir, span);
    for (d, dir) in air.dirs.iter().enumerate() {
        bad_fcs(b, d, dir, span);
        rate_thrash(b, d, dir);
    }
}

fn collisions(b: &mut Builder, air: &AirState, data_dir: usize, span: (i64, i64)) {
    let retries = air.dirs[0].retries + air.dirs[1].retries;
    if air.collisions < MIN_COLLISIONS || air.collision_retries == 0 {
        return;
    }
    let share = air.collision_retries as f64 / retries.max(1) as f64;
    let explanation = format!(
        "{} times a frame of TCP data and a frame of TCP ACKs were on the air at once: the two stations' \
backoffs ended in the same slot (TCP data/ACK collisions). {} of the {} MAC retries ({:.0} %) followed a \
collision. TCP's ACKs make the receiver contend with the sender for the channel; each collision costs both a \
timeout and a doubled backoff ({:.3} s of retry delay in all), and at the retry limit a TCP loss.",
        air.collisions,
        air.collision_retries,
        retries,
        100.0 * share,
        air.collision_cost_ns as f64 / 1e9
    );
    b.push(
        "data_ack_collisions",
        data_dir,
        air.collision_span.unwrap_or(span),
        air.collision_cost_ns,
        air.collision_frames.clone(),
        explanation,
        "Send fewer ACKs (delayed ACKs, ACK thinning), aggregate frames (802.11n A-MPDU with block ACKs), or \
give the access point priority (802.11e EDCA/TXOP) so that data and ACKs do not contend.",
        BTreeMap::from([
            ("collisions", air.collisions as f64),
            ("collision_retries", air.collision_retries as f64),
            ("mac_retries", retries as f64),
            ("collision_retry_share", share),
        ]),
    );
}

fn bad_fcs(b: &mut Builder, d: usize, dir: &AirDir, span: (i64, i64)) {
    let (bad, frames) = (dir.bad_fcs, dir.frames);
    if bad < MIN_BAD_FCS_FRAMES || (bad as f64) < MIN_BAD_FCS_SHARE * frames as f64 {
        return;
    }
    let share = bad as f64 / frames as f64;
    let explanation = format!(
        "{bad} of this direction's {frames} 802.11 frames ({:.1} %) failed their FCS check, collisions aside: \
the channel corrupted them (as the sniffer received them). Each costs a MAC retry ({:.3} s of retry delay in \
all) and, past the retry limit, a TCP loss.",
        100.0 * share,
        dir.bad_fcs_cost_ns as f64 / 1e9
    );
    b.push(
        "bad_fcs",
        d,
        dir.span.unwrap_or(span),
        dir.bad_fcs_cost_ns,
        dir.bad_fcs_frames.clone(),
        explanation,
        "Improve the radio path (distance, antennas, interference), or use a more robust rate.",
        BTreeMap::from([
            ("bad_fcs_frames", bad as f64),
            ("frames", frames as f64),
            ("bad_fcs_share", share),
        ]),
    );
}

fn rate_thrash(b: &mut Builder, d: usize, dir: &AirDir) {
    let share = dir.rate_changes as f64 / dir.rated.max(1) as f64;
    let reversing = 2 * dir.rate_reversals >= dir.rate_changes;
    let frequent = share >= RATE_CHANGE_SHARE;
    let failing_probes = dir.step_ups >= MIN_STEP_UPS && 2 * dir.failed_step_ups >= dir.step_ups;
    if dir.rated < MIN_RATED_FRAMES || !reversing || !(frequent || failing_probes) {
        return;
    }
    let mut rates: Vec<f64> = dir.rates.iter().map(|&r| f64::from(r) / 2.0).collect();
    rates.sort_by(f64::total_cmp);
    let rates_text: Vec<String> = rates.iter().map(|r| format!("{r}")).collect();
    let probes = if dir.step_ups > 0 {
        format!(
            " {} of its {} steps up were lost and retried ({:.3} s of retry delay).",
            dir.failed_step_ups,
            dir.step_ups,
            dir.failed_step_up_cost_ns as f64 / 1e9
        )
    } else {
        String::new()
    };
    let explanation = format!(
        "The 802.11 rate changed on {:.0} % of the frames ({} changes, {} of them reversing the last one, between \
{} Mbit/s): the rate adaptation is thrashing. Each step down follows lost frames, each step up loses again, and \
frames sent at the wrong rate cost retries and air time.{probes}",
        share * 100.0,
        dir.rate_changes,
        dir.rate_reversals,
        rates_text.join(", ")
    );
    let evidence = if dir.failed_step_up_frames.is_empty() {
        dir.rate_change_frames.clone()
    } else {
        dir.failed_step_up_frames.clone()
    };
    b.push(
        "rate_adaptation_thrash",
        d,
        dir.span.unwrap_or_default(),
        dir.failed_step_up_cost_ns,
        evidence,
        explanation,
        "A rate control that judges over more frames (e.g. Minstrel's averaging) or a fixed robust rate; find \
what loses the frames (interference or collisions are not weak signal, and a lower rate does not cure them).",
        BTreeMap::from([
            ("rate_changes", dir.rate_changes as f64),
            ("rate_reversals", dir.rate_reversals as f64),
            ("change_share", share),
            ("step_ups", dir.step_ups as f64),
            ("failed_step_ups", dir.failed_step_ups as f64),
        ]),
    );
}
