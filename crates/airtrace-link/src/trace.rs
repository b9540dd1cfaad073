//! Delivery-opportunity traces in Mahimahi's (`mm-link`) format.
//!
//! # Format
//!
//! One timestamp per line: a non-negative integer number of milliseconds from the start
//! of the trace, at which one MTU-sized packet ([`MTU_BYTES`] = 1500 bytes) may leave.
//! Lines are non-decreasing; `k` equal lines are `k` opportunities in that millisecond
//! (one line per millisecond is 12 Mbit/s). The trace loops: its period is its last
//! timestamp `P`, and opportunity `i` of cycle `c` is at `c·P + t[i]` ms. A trace
//! ending on `P` and starting on `0` thus has two opportunities at `P`, `2P`, …, exactly
//! as in Mahimahi, whose `LinkQueue` adds `P` to its base time each time it wraps.
//!
//! What was checked: Mahimahi's loader (`link_queue.cc`) rejects an empty
//! line ("invalid empty line"), a timestamp below the previous one ("timestamps must be
//! monotonically nondecreasing"), a file with no timestamp ("no valid timestamps
//! found") and a trace whose last timestamp is 0 ("trace must last for a nonzero amount
//! of time"), each message prefixed by the file name. The corpus in
//! `shared/corpus/linktraces/` (`MANIFEST.md`) matches: plain ASCII digits, one per
//! line, `\n` line ends, a final newline, no blank lines, no CR; first timestamps are 0
//! or a few ms to ~1 s (e.g. `mahimahi_TMobile-LTE-short.up` starts `7, 7, 10, 14, 18`
//! and ends on three `140000` lines, 155 381 opportunities in 140 s, 13.3 Mbit/s).
//! Note that Mahimahi itself charges 1504 bytes per opportunity (`PACKET_SIZE`, its TUN
//! payload size); the corpus statistics and this module use 1500.
//!
//! # Parsing rules here
//!
//! The same as Mahimahi's, stricter where Mahimahi's `atoi` is lax: every line must be
//! ASCII digits only (no sign, spaces or comments). **Blank lines are rejected**, as in
//! Mahimahi; a final newline is not a blank line, and `\r\n` line ends are accepted.
//! Timestamps must fit the crate's `i64` nanoseconds (≤ ~106 days). Errors display as
//! one line, `FILE:LINE: what rule was broken` (lines count from 1).
//!
//! # Using it
//!
//! Opportunities are numbered `0, 1, 2, …` across cycles, in time order.
//! [`DeliveryTrace::first_at_or_after`] finds the first one at or after a time (binary
//! search, O(log n)); [`DeliveryTrace::time_ns`] gives the time of any of them. A link
//! keeps the number of the next unused opportunity, sends one queued packet at each, and
//! wastes those that find its queue empty, as Mahimahi does.
//!
//! ```
//! use airtrace_link::trace::DeliveryTrace;
//!
//! const MS: i64 = 1_000_000;
//! let trace = DeliveryTrace::parse("demo", "0\n2\n2\n5\n")?;
//! let k = trace.first_at_or_after(MS + 1); // just after 1 ms
//! assert_eq!((trace.time_ns(k), trace.time_ns(k + 1)), (2 * MS, 2 * MS)); // two at 2 ms
//! assert_eq!(trace.time_ns(k + 2), 5 * MS);
//! assert_eq!(trace.time_ns(k + 3), 5 * MS); // the loop's first line, 0 + period
//! assert_eq!(trace.opportunity_at_or_after(6 * MS), 7 * MS); // 2 + period
//! # Ok::<(), airtrace_link::trace::TraceError>(())
//! ```

use std::fmt;
use std::path::Path;

use thiserror::Error;

use crate::input::quote;

/// Bytes one delivery opportunity may carry.
pub const MTU_BYTES: u64 = 1500;

const NS_PER_MS: i64 = 1_000_000;

/// The largest timestamp (ms) whose time in ns fits an `i64`.
const MAX_MS: u64 = (i64::MAX / NS_PER_MS) as u64;

/// The rule a trace broke (see [`TraceError::Invalid`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceRule {
    /// No line at all.
    #[error("empty trace: no timestamps")]
    Empty,
    /// An empty line (Mahimahi rejects these too).
    #[error("blank line (not allowed, as in Mahimahi)")]
    BlankLine,
    /// A line that is not a number.
    #[error("{0} is not a whole number of milliseconds")]
    NotANumber(String),
    /// A line holding a negative number.
    #[error("timestamp {0} is negative")]
    Negative(String),
    /// A timestamp beyond what `i64` nanoseconds can hold.
    #[error("timestamp {0} ms is too large (at most {MAX_MS} ms)")]
    TooLarge(String),
    /// A timestamp below the one on the previous line.
    #[error("timestamp {this} ms is before the previous one, {previous} ms (timestamps must be non-decreasing)")]
    Decreasing {
        /// The previous line's timestamp, ms.
        previous: u64,
        /// This line's timestamp, ms.
        this: u64,
    },
    /// The last timestamp is 0: the trace lasts no time, so it cannot loop.
    #[error("last timestamp is 0: the trace must last a nonzero time (its period)")]
    ZeroPeriod,
}

/// Why a trace could not be loaded or parsed.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file, as given.
        file: String,
        /// The reason.
        source: std::io::Error,
    },
    /// The text broke a rule at a line; displays as `FILE:LINE: rule`.
    #[error("{file}:{line}: {rule}")]
    Invalid {
        /// The trace's name (its file, for [`DeliveryTrace::load`]).
        file: String,
        /// The offending line, counted from 1.
        line: usize,
        /// What was wrong.
        rule: TraceRule,
    },
}

/// A looping delivery-opportunity trace (see the [module documentation](self)).
#[derive(Clone, PartialEq, Eq)]
pub struct DeliveryTrace {
    name: String,
    /// Opportunity times within one cycle, ms, non-decreasing, last one > 0.
    ms: Vec<u64>,
}

impl fmt::Debug for DeliveryTrace {
    /// Name, size and period only: traces hold hundreds of thousands of lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeliveryTrace")
            .field("name", &self.name)
            .field("opportunities", &self.ms.len())
            .field("period_ms", &self.period_ms())
            .finish()
    }
}

impl DeliveryTrace {
    /// Parses the text of a trace; `name` (usually the file name) prefixes errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, TraceError> {
        let invalid = |line: usize, rule| TraceError::Invalid {
            file: name.to_owned(),
            line,
            rule,
        };
        let mut ms: Vec<u64> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let value = parse_line(raw).map_err(|rule| invalid(line, rule))?;
            if let Some(&previous) = ms.last() {
                if value < previous {
                    return Err(invalid(
                        line,
                        TraceRule::Decreasing {
                            previous,
                            this: value,
                        },
                    ));
                }
            }
            ms.push(value);
        }
        match ms.last() {
            None => Err(invalid(1, TraceRule::Empty)),
            Some(0) => Err(invalid(ms.len(), TraceRule::ZeroPeriod)),
            Some(_) => Ok(Self {
                name: name.to_owned(),
                ms,
            }),
        }
    }

    /// Reads and parses the trace file at `path`; errors name the file as given.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        match crate::input::read_text(path, crate::input::MAX_TRACE_BYTES) {
            Ok(text) => Self::parse(&file, &text),
            Err(source) => Err(TraceError::Io { file, source }),
        }
    }

    /// The name given to [`parse`](Self::parse), or the path given to
    /// [`load`](Self::load).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The opportunity times of one cycle, in ms, as in the file.
    pub fn timestamps_ms(&self) -> &[u64] {
        &self.ms
    }

    /// The period (the last timestamp), in ms; always > 0.
    pub fn period_ms(&self) -> u64 {
        self.ms[self.ms.len() - 1]
    }

    /// The mean rate the trace allows, in bits/s: opportunities × [`MTU_BYTES`] × 8 per
    /// period.
    pub fn mean_rate_bps(&self) -> f64 {
        let bits = self.ms.len() as f64 * (MTU_BYTES * 8) as f64;
        bits * 1000.0 / self.period_ms() as f64
    }

    /// The number of the first opportunity at or after `now_ns` (times before 0 count
    /// as 0). Opportunities are numbered from 0 across cycles, in time order; several in
    /// one millisecond have consecutive numbers. O(log n).
    pub fn first_at_or_after(&self, now_ns: i64) -> u64 {
        // Opportunities fall on whole ms, so "at or after now" is "at or after ceil(now)".
        let t_ms = (now_ns.max(0) as u64).div_ceil(NS_PER_MS as u64);
        let period = self.period_ms();
        // Cycle c covers (c·P, (c+1)·P]: its last entry is at (c+1)·P, the same time as
        // a first entry 0 of cycle c+1, and comes first. So offset is in 1..=P (0 only
        // for t = 0), and some entry (the last, = P) is >= offset.
        let cycle = t_ms.saturating_sub(1) / period;
        let offset = t_ms - cycle * period;
        let index = self.ms.partition_point(|&ms| ms < offset) as u64;
        cycle * self.ms.len() as u64 + index
    }

    /// The time of opportunity number `k`, in ns, saturating at `i64::MAX`.
    pub fn time_ns(&self, k: u64) -> i64 {
        let n = self.ms.len() as u64;
        let cycle_start = u128::from(k / n) * u128::from(self.period_ms());
        let ms = cycle_start + u128::from(self.ms[(k % n) as usize]);
        i64::try_from(ms * NS_PER_MS as u128).unwrap_or(i64::MAX)
    }

    /// The time of the first opportunity at or after `now_ns`, in ns (looping).
    /// Shorthand for `time_ns(first_at_or_after(now_ns))`; with several opportunities
    /// in one millisecond, use those two to consume them one by one.
    pub fn opportunity_at_or_after(&self, now_ns: i64) -> i64 {
        self.time_ns(self.first_at_or_after(now_ns))
    }
}

/// One line's timestamp in ms, or the rule it breaks.
fn parse_line(raw: &str) -> Result<u64, TraceRule> {
    if raw.is_empty() {
        return Err(TraceRule::BlankLine);
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if raw.strip_prefix('-').is_some_and(digits) {
        return Err(TraceRule::Negative(quote(raw)));
    }
    if !digits(raw) {
        return Err(TraceRule::NotANumber(quote(raw)));
    }
    match raw.parse::<u64>() {
        Ok(ms) if ms <= MAX_MS => Ok(ms),
        _ => Err(TraceRule::TooLarge(quote(raw))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = NS_PER_MS;

    fn error(text: &str) -> String {
        DeliveryTrace::parse("t.up", text).unwrap_err().to_string()
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        assert_eq!(error(""), "t.up:1: empty trace: no timestamps");
        assert_eq!(
            error("1\n\n2\n"),
            "t.up:2: blank line (not allowed, as in Mahimahi)"
        );
        assert_eq!(
            error("1\n2\n\n"),
            "t.up:3: blank line (not allowed, as in Mahimahi)"
        );
        assert_eq!(
            error("1\n2x\n"),
            "t.up:2: \"2x\" is not a whole number of milliseconds"
        );
        assert_eq!(
            error(" 1\n"),
            "t.up:1: \" 1\" is not a whole number of milliseconds"
        );
        assert_eq!(
            error("+1\n"),
            "t.up:1: \"+1\" is not a whole number of milliseconds"
        );
        assert_eq!(error("0\n1\n-3\n"), "t.up:3: timestamp \"-3\" is negative");
        assert_eq!(
            error("0\n5\n5\n4\n9\n"),
            "t.up:4: timestamp 4 ms is before the previous one, 5 ms \
             (timestamps must be non-decreasing)"
        );
        assert_eq!(
            error("0\n0\n0\n"),
            "t.up:3: last timestamp is 0: the trace must last a nonzero time (its period)"
        );
        assert_eq!(
            error("99999999999999999999\n"),
            format!(
                "t.up:1: timestamp \"99999999999999999999\" ms is too large (at most {MAX_MS} ms)"
            )
        );
        assert!(!error("1\n\n").contains('\n'));
    }

    #[test]
    fn parse_accepts_crlf_and_missing_final_newline() {
        let a = DeliveryTrace::parse("a", "0\r\n3\r\n").unwrap();
        let b = DeliveryTrace::parse("a", "0\n3").unwrap();
        assert_eq!(a, b);
        assert_eq!((a.timestamps_ms(), a.period_ms()), (&[0, 3][..], 3));
    }

    #[test]
    fn load_names_the_file() {
        let err = DeliveryTrace::load("/nonexistent/x.down")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/nonexistent/x.down: cannot read: "),
            "{err}"
        );
    }

    #[test]
    fn loops_with_the_last_timestamp_as_period() {
        let t = DeliveryTrace::parse("t", "1\n4\n10\n").unwrap();
        let times: Vec<i64> = (0..7).map(|k| t.time_ns(k) / MS).collect();
        assert_eq!(times, [1, 4, 10, 11, 14, 20, 21]);
        assert_eq!(t.opportunity_at_or_after(0), MS);
        assert_eq!(t.opportunity_at_or_after(MS), MS); // "at" counts
        assert_eq!(t.opportunity_at_or_after(MS + 1), 4 * MS); // sub-ms rounds up
        assert_eq!(t.opportunity_at_or_after(10 * MS + 1), 11 * MS); // after the period
        assert_eq!(t.opportunity_at_or_after(1000 * MS + 5), 1001 * MS); // cycle 100
        assert_eq!(t.opportunity_at_or_after(-5 * MS), MS);
        assert_eq!(t.first_at_or_after(1000 * MS + 5), 300);
    }

    #[test]
    fn several_opportunities_in_one_millisecond() {
        let t = DeliveryTrace::parse("t", "0\n2\n2\n2\n5\n").unwrap();
        let k = t.first_at_or_after(2 * MS);
        assert_eq!(k, 1);
        assert_eq!(
            [t.time_ns(k), t.time_ns(k + 1), t.time_ns(k + 2)],
            [2 * MS; 3]
        );
        assert_eq!(t.time_ns(k + 3), 5 * MS);
        // Line "0" of the next cycle falls on the period too: two opportunities at 5 ms.
        assert_eq!(t.time_ns(k + 4), 5 * MS);
        assert_eq!(t.first_at_or_after(5 * MS), 4);
        assert_eq!(t.first_at_or_after(6 * MS), 6);
        assert_eq!(t.time_ns(6), 7 * MS);
        assert_eq!(t.mean_rate_bps(), 5.0 * 12_000.0 * 1000.0 / 5.0);
    }

    #[test]
    fn times_are_non_decreasing_and_saturate() {
        let t = DeliveryTrace::parse("t", "0\n0\n3\n3\n7\n").unwrap();
        let times: Vec<i64> = (0..40).map(|k| t.time_ns(k)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        // The answer is the first opportunity in time order, also across the loop
        // (the last line at 7 ms comes before the next cycle's first "0" at 7 ms).
        for at in (0..28 * MS).step_by((MS / 2) as usize) {
            let first = times.iter().position(|&x| x >= at).unwrap() as u64;
            assert_eq!(t.first_at_or_after(at), first, "at {at} ns");
        }
        assert_eq!(t.first_at_or_after(7 * MS), 4);
        assert_eq!(t.time_ns(u64::MAX), i64::MAX);
        assert_eq!(t.opportunity_at_or_after(i64::MAX), i64::MAX);
    }

    #[test]
    fn loads_every_mahimahi_trace_in_the_corpus() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/linktraces");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "corpus missing at {} (required when CI=true)",
                dir.display()
            );
            eprintln!("skipped: no corpus at {}", dir.display());
            return;
        };
        let mut paths: Vec<_> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("mahimahi_")
            })
            .collect();
        paths.sort();
        assert!(
            !paths.is_empty(),
            "no mahimahi_* trace in {}",
            dir.display()
        );
        for path in &paths {
            let trace = DeliveryTrace::load(path).unwrap_or_else(|e| panic!("{e}"));
            let rate = trace.mean_rate_bps();
            // Cellular traces: between 0.1 and 100 Mbit/s on average.
            assert!((1e5..1e8).contains(&rate), "{}: {rate} bit/s", trace.name());
            let period_ns = trace.period_ms() as i64 * MS;
            let n = trace.timestamps_ms().len() as u64;
            let first_ns = trace.timestamps_ms()[0] as i64 * MS;
            assert_eq!(trace.time_ns(n), period_ns + first_ns); // the loop starts again
            assert!(trace.first_at_or_after(period_ns + 1) >= n);
            if trace.name().ends_with("mahimahi_TMobile-LTE-short.up") {
                // MANIFEST.md: 155381 opportunities in 140.0 s, 13.32 Mbit/s.
                assert_eq!((n, trace.period_ms()), (155_381, 140_000));
                assert!((rate / 1e6 - 13.32).abs() < 0.01, "{rate}");
            }
        }
    }
}
