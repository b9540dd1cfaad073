//! Which connections `airtrace analyze` shows and in what order: `--conn` (tcptrace's
//! `-o`) and `--sort`. The table and the JSON show the same connections, in the same
//! order; the connection ids stay those of the whole capture.

use std::cmp::Ordering;

use airtrace_analysis::{ConnSummary, DirMetrics, FileReport};

/// What `--sort` orders the connections by. Quantities put the largest first; `id`
/// and `time` the earliest first. Ties keep the order of the ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    Id,
    Time,
    Duration,
    Packets,
    Bytes,
    Goodput,
    Retrans,
    Rtt,
}

impl SortKey {
    /// Every key, its name and what it orders by (the help text and docs list these).
    pub const ALL: [(SortKey, &'static str, &'static str); 8] = [
        (
            SortKey::Id,
            "id",
            "connection id (order of the first packet; the default)",
        ),
        (SortKey::Time, "time", "start time, earliest first"),
        (SortKey::Duration, "duration", "duration, longest first"),
        (SortKey::Packets, "packets", "packets both ways, most first"),
        (
            SortKey::Bytes,
            "bytes",
            "data bytes both ways (retransmissions included), most first",
        ),
        (
            SortKey::Goodput,
            "goodput",
            "goodput of the busier direction, highest first",
        ),
        (
            SortKey::Retrans,
            "retrans",
            "retransmitted packets both ways, most first",
        ),
        (
            SortKey::Rtt,
            "rtt",
            "average RTT of the slower direction, longest first",
        ),
    ];

    /// The key called `name`, if any.
    pub fn parse(name: &str) -> Option<SortKey> {
        Self::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(k, _, _)| *k)
    }

    /// The value compared: larger first, so `id` and `time` are negated.
    fn value(self, c: &ConnSummary) -> f64 {
        let both = |f: fn(&DirMetrics) -> u64| (f(&c.a_to_b) + f(&c.b_to_a)) as f64;
        match self {
            SortKey::Id => -f64::from(c.id),
            SortKey::Time => -c.start_s,
            SortKey::Duration => c.duration_s,
            SortKey::Packets => both(|d| d.packets),
            SortKey::Bytes => both(|d| d.data_bytes),
            SortKey::Goodput => c.a_to_b.goodput_bps.max(c.b_to_a.goodput_bps),
            SortKey::Retrans => both(|d| d.retransmitted_packets),
            SortKey::Rtt => [c.a_to_b.rtt.avg_s, c.b_to_a.rtt.avg_s]
                .into_iter()
                .flatten()
                .fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Keeps the connections of `report` whose id is in `ids` (all of them when `None`),
/// ordered by `key`, and returns the ids asked for that the report does not have.
pub fn select(report: &mut FileReport, ids: Option<&[u32]>, key: SortKey) -> Vec<u32> {
    let mut missing = Vec::new();
    if let Some(ids) = ids {
        report.connections.retain(|c| ids.contains(&c.id));
        missing = ids
            .iter()
            .copied()
            .filter(|id| !report.connections.iter().any(|c| c.id == *id))
            .collect();
        missing.sort_unstable();
        missing.dedup();
    }
    report.connections.sort_by(|x, y| {
        key.value(y)
            .partial_cmp(&key.value(x))
            .unwrap_or(Ordering::Equal)
            .then(x.id.cmp(&y.id))
    });
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(conns: &[(u32, f64, u64)]) -> FileReport {
        let mut r = FileReport::default();
        for &(id, start_s, bytes) in conns {
            let mut c = ConnSummary {
                id,
                start_s,
                ..Default::default()
            };
            c.b_to_a.data_bytes = bytes;
            r.connections.push(c);
        }
        r
    }

    fn ids(r: &FileReport) -> Vec<u32> {
        r.connections.iter().map(|c| c.id).collect()
    }

    #[test]
    fn bytes_puts_the_biggest_first_and_ties_keep_the_ids_order() {
        let mut r = report(&[(0, 0.0, 10), (1, 1.0, 500), (2, 2.0, 10), (3, 3.0, 90)]);
        assert!(select(&mut r, None, SortKey::Bytes).is_empty());
        assert_eq!(ids(&r), [1, 3, 0, 2]);
        select(&mut r, None, SortKey::Id);
        assert_eq!(ids(&r), [0, 1, 2, 3]);
    }

    #[test]
    fn conn_keeps_the_ids_asked_for_and_names_those_absent() {
        let mut r = report(&[(0, 2.0, 0), (1, 1.0, 0), (2, 0.5, 0)]);
        assert_eq!(select(&mut r, Some(&[2, 9, 1, 9]), SortKey::Time), [9]);
        assert_eq!(ids(&r), [2, 1]);
    }

    #[test]
    fn every_key_has_a_name_that_parses_back() {
        for (key, name, _) in SortKey::ALL {
            assert_eq!(SortKey::parse(name), Some(key));
        }
        assert_eq!(SortKey::parse("size"), None);
    }
}
