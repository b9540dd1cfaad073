//! Buffer autotuning (`Config::autotune`) as a packet exchange: a fat long link where
//! the linux profile's fixed 128 KiB buffers cap the goodput, and autotuning lifts the
//! cap as Linux's dynamic right-sizing and `tcp_sndbuf_expand` do.
//!
//! The path: 50 Mbit/s, 40 ms each way (BDP 500 kB, 345 segments), a 400-packet
//! queue, no random loss; 20 MB bulk, linux profile. With 128 KiB a window can carry
//! 131072 bytes per 80 ms RTT, 13.1 Mbit/s at most. With autotuning the receiver's
//! window follows the bytes delivered per RTT (about twice them, more while they
//! grow) and the send buffer twice cwnd, so cwnd alone limits the sender.
mod common;

use airtrace_tcp::Config;
use common::*;

const BYTES: u64 = 20_000_000;

/// (goodput in Mbit/s from the SYN to the last byte delivered, largest window B
/// advertised in bytes).
fn run(autotune: bool) -> (f64, u64) {
    let mut c = Config::linux();
    c.autotune = autotune;
    let mut net = Net::same(c, 40 * MS)
        .rate(50_000_000)
        .queue_packets(400)
        .bulk(BYTES);
    net.run();
    assert_eq!(net.delivered, BYTES);
    let (t_end, _) = *net.deliveries.last().unwrap();
    let scale = net
        .log
        .iter()
        .find(|s| s.from == B && s.seg.options.window_scale.is_some())
        .and_then(|s| s.seg.options.window_scale)
        .unwrap();
    let max_window = net
        .log
        .iter()
        .filter(|s| s.from == B && s.is_pure_ack())
        .map(|s| u64::from(s.seg.window) << scale)
        .max()
        .unwrap();
    (BYTES as f64 * 8.0 / (t_end as f64 / 1e9) / 1e6, max_window)
}

#[test]
fn fixed_128_kib_buffers_cap_a_fat_long_link_at_13_mbit_s() {
    let (mbps, window) = run(false);
    assert!(window <= 128 * 1024, "window {window}");
    assert!((10.0..13.2).contains(&mbps), "goodput {mbps:.2} Mbit/s");
}

#[test]
fn autotuning_lifts_the_cap_to_near_the_link_rate() {
    let (mbps, window) = run(true);
    // The window grew past the path's BDP (500 kB) ...
    assert!(window > 500_000, "window {window}");
    // ... and the goodput is three times the fixed buffers' cap (slow start and the
    // handshake's RTT are part of the 20 MB's time).
    assert!(mbps > 40.0, "goodput {mbps:.2} Mbit/s");
}

#[test]
fn autotuning_announces_the_window_scale_of_tcp_rmem_max() {
    // 6 MiB needs a shift of 7 (6 MiB >> 7 = 49152 ≤ 65535), as Linux announces.
    let mut c = Config::linux();
    c.autotune = true;
    let mut net = Net::same(c, 40 * MS).bulk(1448);
    net.run();
    let syn = net.log.iter().find(|s| s.from == A).unwrap();
    assert_eq!(syn.seg.options.window_scale, Some(7));
}
