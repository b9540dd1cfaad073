//! The terminal summary table of `airtrace analyze`: one or two lines per connection.
//!
//! It speaks as every text of airtrace does (issue 17 item 1): a connection is `a → b`
//! and its directions `a_to_b` and `b_to_a`, as in the JSON, the diagnosis and the
//! report; rates in bit/s and times in seconds, with SI prefixes.

use airtrace_analysis::{CapturePoint, ConnState, DirMetrics, FileReport};

fn rate(bps: f64) -> String {
    for (unit, scale) in [("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)] {
        if bps >= scale {
            return format!("{} {unit}", three_digits(bps / scale));
        }
    }
    format!("{bps:.0} bit/s")
}

/// A time with the SI prefix that keeps three digits before or after the point:
/// `72.3 ms`, `697 µs`, `1.20 s`.
fn seconds(s: f64) -> String {
    for (unit, scale) in [("s", 1.0), ("ms", 1e-3)] {
        if s >= scale {
            return format!("{} {unit}", three_digits(s / scale));
        }
    }
    format!("{} µs", three_digits(s / 1e-6))
}

fn bytes(n: u64) -> String {
    let n = n as f64;
    for (unit, scale) in [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] {
        if n >= scale {
            return format!("{} {unit}", three_digits(n / scale));
        }
    }
    format!("{n:.0} B")
}

/// A value with three significant digits, as `%.3g` without the exponent.
fn three_digits(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The payload sent, new bytes and retransmitted ones apart: `648 B + 3.24 kB` (the
/// JSON's `unique_bytes` and `retransmitted_bytes`; `data_bytes` counts both).
fn data(d: &DirMetrics) -> String {
    if d.retransmitted_bytes == 0 {
        bytes(d.unique_bytes)
    } else {
        format!(
            "{} + {}",
            bytes(d.unique_bytes),
            bytes(d.retransmitted_bytes)
        )
    }
}

/// Retransmitted packets, split into genuine and spurious ones (data already
/// acknowledged) when any was spurious, then by kind (timeout, fast, SACK, tail loss
/// probe; spurious ones included).
fn retransmissions(d: &DirMetrics) -> String {
    if d.retransmitted_packets == 0 {
        return "0".into();
    }
    let kinds = [
        ("to", d.timeout_retransmissions),
        ("fr", d.fast_retransmissions),
        ("sack", d.sack_retransmissions),
        ("tlp", d.tail_loss_probes),
    ];
    let detail: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k}{n}"))
        .collect();
    let mut parts = Vec::new();
    if d.spurious_retransmissions > 0 {
        parts.push(format!(
            "{} genuine + {} spurious",
            d.genuine_retransmissions, d.spurious_retransmissions
        ));
    }
    if !detail.is_empty() {
        parts.push(detail.join(" "));
    }
    if parts.is_empty() {
        d.retransmitted_packets.to_string()
    } else {
        format!("{} ({})", d.retransmitted_packets, parts.join("; "))
    }
}

fn notes(d: &DirMetrics) -> Vec<String> {
    let mut notes = Vec::new();
    if d.timeouts > 0 {
        notes.push(format!("{} RTO", d.timeouts));
    }
    // The timer's real growth, not 2^(max_backoff - 1): stacks cap the RTO, and the
    // first wait may be short of it.
    if let (true, Some(first), Some(longest)) = (
        d.max_backoff > 1,
        d.backoff_first_wait_s,
        d.backoff_longest_wait_s,
    ) {
        notes.push(format!(
            "backoff {} → {} s",
            three_digits(first),
            three_digits(longest)
        ));
    }
    if d.capture_duplicates > 0 {
        notes.push(format!("{} capture dups", d.capture_duplicates));
    }
    if d.mac_retries > 0 {
        notes.push(format!("{} MAC retries", d.mac_retries));
    }
    notes
}

const HEADER: [&str; 12] = [
    "id",
    "connection (a → b)",
    "dir",
    "dur s",
    "pkts",
    "data + retx",
    "goodput",
    "retx",
    "dupack",
    "rtt",
    "zwin",
    "notes",
];
/// Columns aligned to the right (numbers).
const RIGHT: [usize; 8] = [0, 3, 4, 5, 6, 8, 9, 10];

/// A readable table of the connections in one file's report.
pub fn connection_table(report: &FileReport) -> String {
    selected_table(report, report.connections.len())
}

/// The table of a report whose connections [`crate::select`] chose among `total`: the
/// first line says how many it shows when that is not all.
pub fn selected_table(report: &FileReport, total: usize) -> String {
    let conns = &report.connections;
    let shown = if conns.len() == total {
        String::new()
    } else {
        format!(", {} shown", conns.len())
    };
    let mut out = format!(
        "{}: {} frames, {} TCP, {total} connections{shown}\n",
        report.path, report.frames, report.tcp_frames,
    );
    if conns.is_empty() {
        return out;
    }
    let mut rows: Vec<[String; 12]> = Vec::new();
    for c in conns {
        for (name, d) in [("a_to_b", &c.a_to_b), ("b_to_a", &c.b_to_a)] {
            if d.packets == 0 {
                continue;
            }
            let first = name == "a_to_b" || c.a_to_b.packets == 0;
            let mut notes = notes(d);
            let data_dir = if c.b_to_a.unique_bytes > c.a_to_b.unique_bytes {
                "b_to_a"
            } else {
                "a_to_b"
            };
            if name == data_dir && c.capture_point == Some(CapturePoint::Receiver) {
                notes.push("captured at the receiver".into());
            }
            if first && c.state != ConnState::Closed {
                notes.push(if c.state == ConnState::Reset {
                    "reset".into()
                } else {
                    "open".into()
                });
            }
            let when_first = |s: String| if first { s } else { String::new() };
            rows.push([
                when_first(c.id.to_string()),
                when_first(format!("{} → {}", c.a, c.b)),
                name.to_string(),
                when_first(format!("{:.2}", c.duration_s)),
                d.packets.to_string(),
                data(d),
                rate(d.goodput_bps),
                retransmissions(d),
                d.duplicate_acks.to_string(),
                d.rtt.avg_s.map_or("-".into(), seconds),
                d.zero_window_advertisements.to_string(),
                notes.join(", "),
            ]);
        }
    }
    let mut widths = HEADER.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            if RIGHT.contains(&i) {
                text.push_str(&format!("{cell:>w$}"));
            } else {
                text.push_str(&format!("{cell:<w$}"));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&HEADER.map(String::from));
    line(&widths.map(|w| "-".repeat(w)));
    for row in &rows {
        line(row);
    }
    out
}
