//! Capture times that cannot be true: one frame dated decades away from the frames
//! around it (a clock set wrong for an instant, a corrupt record) must not poison the
//! times, RTTs and spans of a whole capture (issue 18, class 5).
//!
//! A [`TimeGuard`] sees every frame's time in capture order and gives the time to
//! analyse it at. A frame more than [`JUMP_NS`] away from the clock (the last time
//! accepted) is either a real jump of the capture's clock (two captures of different
//! days in one file, a capture paused for days), when the frames after it go on from
//! its time, or a time anomaly, analysed at the clock's time. The frames after it are
//! read ahead from the file, by a second reader (a jump is rare; at most
//! [`MAX_LOOKS`] per file). A stream, which cannot be read ahead, takes a jump once
//! [`CONFIRM`] frames in a row agree with each other away from the clock; the frames
//! before that were analysed at the old time, and are reported.
//!
//! When the file can be read ahead (a regular file), the clock starts at the first of its
//! first [`LEADING`] frames that begins [`CONFIRM`] frames in a row each within a day of
//! the one before, so that an anomalous first frame is caught too (a slow capture, a
//! frame an hour, starts at its first frame); a stream starts from its first frame.

use airtrace_pcap::CaptureReader;

/// A frame this far from the clock (1 day) is a time anomaly.
pub const JUMP_NS: i64 = 86_400 * 1_000_000_000;
/// Frames in a row agreeing with each other away from the clock that make a real jump.
pub const CONFIRM: usize = 3;
/// Frames read ahead to start the clock.
pub const LEADING: usize = 16;
/// Jumps judged by reading the file ahead; later ones are judged as in a stream.
pub const MAX_LOOKS: u32 = 64;

/// See the module documentation.
#[derive(Debug, Default)]
pub struct TimeGuard {
    /// The file to read ahead in, if it is a regular one.
    file: Option<std::path::PathBuf>,
    /// Times it was read ahead.
    looks: u32,
    /// The last time accepted, ns.
    clock: Option<i64>,
    /// The frames away from the clock that agree with each other, waiting for
    /// [`CONFIRM`]: their times.
    away: Vec<i64>,
    /// Frames analysed at another time than their own: how many, the first's number
    /// and its own time.
    anomalies: Option<(u64, u64, i64)>,
}

impl TimeGuard {
    /// A guard whose clock starts as the module documentation says, from the first
    /// [`LEADING`] frames of `reader`'s file read ahead by a second reader when the file
    /// is a regular one; at the first frame otherwise.
    pub fn for_reader(reader: &CaptureReader) -> Self {
        let Some(path) = reader.regular_file() else {
            return TimeGuard::default();
        };
        let Ok(mut ahead) = CaptureReader::open(path) else {
            return TimeGuard::default();
        };
        let mut times = Vec::with_capacity(LEADING);
        while let Some(Ok(record)) = ahead.next_record() {
            times.push(record.ts_ns);
            if times.len() == LEADING {
                break;
            }
        }
        TimeGuard {
            file: Some(path.to_path_buf()),
            clock: steady_start(&times),
            ..TimeGuard::default()
        }
    }

    /// The times of the [`CONFIRM`] − 1 frames after frame `frame`, read ahead in the
    /// file; None if it cannot be (a stream, or [`MAX_LOOKS`] used up).
    fn after(&mut self, frame: u64) -> Option<Vec<i64>> {
        if self.looks >= MAX_LOOKS {
            return None;
        }
        self.looks += 1;
        let mut ahead = CaptureReader::open(self.file.as_deref()?).ok()?;
        let mut times = Vec::with_capacity(CONFIRM - 1);
        while let Some(Ok(record)) = ahead.next_record() {
            if record.frame > frame {
                times.push(record.ts_ns);
                if times.len() == CONFIRM - 1 {
                    break;
                }
            }
        }
        Some(times)
    }

    /// The time to analyse frame `frame`, captured at `ts_ns`, at; and whether that is
    /// not its own (a time anomaly).
    #[inline]
    pub fn time(&mut self, frame: u64, ts_ns: i64) -> (i64, bool) {
        let Some(clock) = self.clock else {
            self.clock = Some(ts_ns);
            return (ts_ns, false);
        };
        if ts_ns.abs_diff(clock) <= JUMP_NS as u64 {
            self.clock = Some(ts_ns);
            self.away.clear();
            return (ts_ns, false);
        }
        let near = |a: i64, b: i64| a.abs_diff(b) <= JUMP_NS as u64;
        if let Some(next) = self.after(frame) {
            // Read ahead: a jump if the frames after this one go on from it.
            let mut prev = ts_ns;
            let goes_on = !next.is_empty()
                && next.iter().all(|&t| {
                    let steady = near(prev, t);
                    prev = t;
                    steady
                });
            if goes_on {
                self.clock = Some(ts_ns);
                self.away.clear();
                return (ts_ns, false);
            }
        } else {
            if self.away.last().is_some_and(|&last| near(ts_ns, last)) {
                self.away.push(ts_ns);
            } else {
                self.away.clear();
                self.away.push(ts_ns);
            }
            if self.away.len() >= CONFIRM {
                // The capture's clock really jumped: go on from here.
                self.clock = Some(ts_ns);
                self.away.clear();
                return (ts_ns, false);
            }
        }
        let (count, first, first_ts) = self.anomalies.unwrap_or((0, frame, ts_ns));
        self.anomalies = Some((count + 1, first, first_ts));
        (clock, true)
    }

    /// The warning for the frames analysed at another time than their own, if any;
    /// `name` names the file.
    pub fn warning(&self, name: &str) -> Option<String> {
        let (count, first, first_ts) = self.anomalies?;
        Some(format!(
            "{name}: {count} frame(s) dated more than a day away from the frames around them (first: frame \
             {first}, at {} s since 1970), analysed at the time of the frames around them",
            first_ts.div_euclid(1_000_000_000)
        ))
    }
}

/// The first of `times` that begins [`CONFIRM`] times in a row, each within
/// [`JUMP_NS`] of the one before.
fn steady_start(times: &[i64]) -> Option<i64> {
    times
        .windows(CONFIRM)
        .find(|run| {
            run.windows(2)
                .all(|p| p[0].abs_diff(p[1]) <= JUMP_NS as u64)
        })
        .map(|run| run[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const NOW: i64 = 1_700_000_000 * S;

    fn run(times: &[i64]) -> (Vec<i64>, TimeGuard) {
        let mut g = TimeGuard::default();
        let out = times
            .iter()
            .enumerate()
            .map(|(i, &t)| g.time(i as u64 + 1, t).0)
            .collect();
        (out, g)
    }

    #[test]
    fn one_frame_decades_away_is_analysed_at_the_time_before_it() {
        let future = NOW + 46 * 365 * 86_400 * S;
        let (out, g) = run(&[NOW, NOW + S, future, NOW + 2 * S, NOW + 3 * S]);
        assert_eq!(out, [NOW, NOW + S, NOW + S, NOW + 2 * S, NOW + 3 * S]);
        assert_eq!(g.anomalies, Some((1, 3, future)));
        assert!(g.warning("f.pcap").unwrap().starts_with(
            "f.pcap: 1 frame(s) dated more than a day away from the frames around them (first: frame 3"
        ));
    }

    #[test]
    fn a_real_jump_is_taken_after_three_frames_agree() {
        let later = NOW + 3 * 86_400 * S;
        let (out, g) = run(&[NOW, later, later + S, later + 2 * S, later + 3 * S]);
        assert_eq!(out, [NOW, NOW, NOW, later + 2 * S, later + 3 * S]);
        assert_eq!(g.anomalies.map(|a| a.0), Some(2));
    }

    #[test]
    fn small_steps_back_are_times_like_any_other() {
        let (out, g) = run(&[NOW, NOW - S, NOW + 5 * S]);
        assert_eq!(out, [NOW, NOW - S, NOW + 5 * S]);
        assert!(g.warning("f").is_none());
    }

    #[test]
    fn the_clock_starts_at_the_first_steady_run_of_frames() {
        let hour = 3600 * S;
        assert_eq!(steady_start(&[0, NOW, NOW + S, NOW + 2 * S]), Some(NOW));
        let slow: Vec<i64> = (0..16).map(|i| NOW + i * 2 * hour).collect();
        assert_eq!(steady_start(&slow), Some(NOW), "a frame every two hours");
        assert_eq!(steady_start(&[NOW, 0]), None, "too few frames to say");
    }

    #[test]
    fn a_clock_started_from_the_leading_frames_catches_a_bad_first_frame() {
        let mut g = TimeGuard {
            clock: Some(NOW),
            ..TimeGuard::default()
        };
        assert_eq!(g.time(1, 0), (NOW, true));
        assert_eq!(g.time(2, NOW + S), (NOW + S, false));
    }
}
