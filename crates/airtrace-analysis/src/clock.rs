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
    /// Real jumps of the capture's clock: how many, the first's frame and its size.
    jumps: Option<(u64, u64, i64)>,
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
                return self.jump(frame, ts_ns - clock, ts_ns);
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
                let first_away = frame + 1 - self.away.len() as u64;
                return self.jump(first_away, self.away[0] - clock, ts_ns);
            }
        }
        let (count, first, first_ts) = self.anomalies.unwrap_or((0, frame, ts_ns));
        self.anomalies = Some((count + 1, first, first_ts));
        (clock, true)
    }

    /// Takes a real jump of the capture's clock, of `by_ns`, first seen at frame `frame`;
    /// the clock goes on from `ts_ns`.
    #[cold]
    fn jump(&mut self, frame: u64, by_ns: i64, ts_ns: i64) -> (i64, bool) {
        let (count, first, by) = self.jumps.unwrap_or((0, frame, by_ns));
        self.jumps = Some((count + 1, first, by));
        self.clock = Some(ts_ns);
        self.away.clear();
        (ts_ns, false)
    }

    /// The warnings for the frames analysed at another time than their own and for the
    /// jumps of the capture's clock (issue 18 class D: captures merged from files years
    /// apart reported spans of 1.67e9 s without a word); `name` names the file.
    pub fn warnings(&self, name: &str) -> Vec<String> {
        let anomalies = self.anomalies.map(|(count, first, first_ts)| {
            format!(
                "{name}: {count} frame(s) dated more than a day away from the frames around them (first: frame \
                 {first}, at {} s since 1970), analysed at the time of the frames around them",
                first_ts.div_euclid(1_000_000_000)
            )
        });
        let jumps = self.jumps.map(|(count, first, by)| {
            let way = if by < 0 { "back" } else { "forward" };
            format!(
                "{name}: the capture's clock jumps {way} by more than a day {count} time(s) (first: at frame \
                 {first}, by {:.0} s): the file holds captures taken at different times; no connection spans \
                 a jump, but the file's span includes them",
                by.unsigned_abs() as f64 * 1e-9
            )
        });
        anomalies.into_iter().chain(jumps).collect()
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
        assert!(g.warnings("f.pcap")[0].starts_with(
            "f.pcap: 1 frame(s) dated more than a day away from the frames around them (first: frame 3"
        ));
    }

    #[test]
    fn a_real_jump_is_taken_after_three_frames_agree() {
        let later = NOW + 3 * 86_400 * S;
        let (out, g) = run(&[NOW, later, later + S, later + 2 * S, later + 3 * S]);
        assert_eq!(out, [NOW, NOW, NOW, later + 2 * S, later + 3 * S]);
        assert_eq!(g.anomalies.map(|a| a.0), Some(2));
        assert_eq!(g.jumps, Some((1, 2, 3 * 86_400 * S)));
    }

    #[test]
    fn a_file_of_two_captures_years_apart_says_so() {
        let years = 4 * 365 * 86_400 * S;
        let (out, g) = run(&[NOW, NOW + S, NOW - years, NOW - years + S, NOW - years + 2 * S]);
        assert_eq!(out[4], NOW - years + 2 * S);
        let warnings = g.warnings("merged.pcap");
        assert_eq!(
            warnings.last().unwrap(),
            "merged.pcap: the capture's clock jumps back by more than a day 1 time(s) (first: at frame 3, \
             by 126144001 s): the file holds captures taken at different times; no connection spans a jump, \
             but the file's span includes them"
        );
    }

    #[test]
    fn small_steps_back_are_times_like_any_other() {
        let (out, g) = run(&[NOW, NOW - S, NOW + 5 * S]);
        assert_eq!(out, [NOW, NOW - S, NOW + 5 * S]);
        assert!(g.warnings("f").is_empty());
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
