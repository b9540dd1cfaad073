//! A log-scale histogram of durations: bounded memory for RTT percentiles on captures
//! of any length, within about 3 % (32 buckets per factor of two).

/// Buckets per doubling.
const PER_OCTAVE: f64 = 32.0;
/// Smallest value resolved: 1 µs; everything below falls in bucket 0.
const MIN_NS: f64 = 1_000.0;
/// Buckets: 1 µs to about 1000 s.
const BUCKETS: usize = 32 * 30;

/// Counts of durations in logarithmic buckets, with the exact minimum and maximum.
#[derive(Debug, Clone)]
pub struct LogHistogram {
    counts: Vec<u32>,
    total: u64,
    min_ns: i64,
    max_ns: i64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self {
            counts: Vec::new(),
            total: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
        }
    }
}

impl LogHistogram {
    /// Adds one duration, in ns.
    pub fn add(&mut self, ns: i64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        let i = if (ns as f64) <= MIN_NS {
            0
        } else {
            (((ns as f64 / MIN_NS).log2() * PER_OCTAVE) as usize).min(BUCKETS - 1)
        };
        self.counts[i] = self.counts[i].saturating_add(1);
        self.total += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Number of durations added.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The smallest duration, in ns (None when empty).
    pub fn min(&self) -> Option<i64> {
        (self.total > 0).then_some(self.min_ns)
    }

    /// The largest duration, in ns (None when empty).
    pub fn max(&self) -> Option<i64> {
        (self.total > 0).then_some(self.max_ns)
    }

    /// How many durations were above `low` and at most `high` ns (to the bucket's
    /// resolution), and their sum, estimated from the buckets' middles.
    pub fn between(&self, low: i64, high: i64) -> (u64, f64) {
        let (mut n, mut sum) = (0u64, 0.0);
        for (i, &c) in self.counts.iter().enumerate() {
            let mid = MIN_NS * ((i as f64 + 0.5) / PER_OCTAVE).exp2();
            if c > 0 && mid > low as f64 && mid <= high as f64 {
                n += u64::from(c);
                sum += f64::from(c) * mid;
            }
        }
        (n, sum)
    }

    /// The `q` quantile (0 to 1), in ns, from the bucket's geometric middle, clamped
    /// to [min, max].
    pub fn quantile(&self, q: f64) -> Option<i64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let mid = MIN_NS * ((i as f64 + 0.5) / PER_OCTAVE).exp2();
                return Some((mid as i64).clamp(self.min_ns, self.max_ns));
            }
        }
        Some(self.max_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_three_percent() {
        let mut h = LogHistogram::default();
        for ms in 1..=1000 {
            h.add(ms * 1_000_000);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.min(), Some(1_000_000));
        assert_eq!(h.max(), Some(1_000_000_000));
        let p50 = h.quantile(0.5).unwrap() as f64;
        assert!((p50 / 500e6 - 1.0).abs() < 0.03, "{p50}");
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p99 / 990e6 - 1.0).abs() < 0.03, "{p99}");
        assert_eq!(LogHistogram::default().quantile(0.5), None);
    }
}
