//! How many segments a second the endpoints handle (both ends, data and ACKs), on a
//! FIFO path with a fixed delay and occasional loss. Ignored by default; run with
//! `cargo test --release -p airtrace-tcp --test speed -- --ignored --nocapture`.
use std::collections::VecDeque;
use std::time::Instant;

use airtrace_tcp::{Config, Endpoint, Segment, Variant};

fn run(variant: Variant, loss_every: u64) -> (u64, f64) {
    let mut cfg = Config::linux();
    cfg.variant = variant;
    cfg.rcvbuf = 1 << 20;
    cfg.sndbuf = 1 << 20;
    let mut a = Endpoint::client(cfg.clone(), 1, 0);
    let mut b = Endpoint::server(cfg, 2, 0);
    let delay = 10_000_000i64;
    let gap = 12_000i64; // 1 Gbit/s-ish serialisation per segment
    let mut ab: VecDeque<(i64, Segment)> = VecDeque::new();
    let mut ba: VecDeque<(i64, Segment)> = VecDeque::new();
    let (mut busy_ab, mut busy_ba) = (0i64, 0i64);
    let total: u64 = 2_000_000_000;
    let mut written = 0u64;
    let mut now = 0i64;
    let mut segments = 0u64;
    let mut n = 0u64;
    let start = Instant::now();
    loop {
        written += a.write(total - written);
        if written == total {
            a.close();
        }
        while let Some(s) = a.poll_transmit(now) {
            segments += 1;
            n += 1;
            if loss_every > 0 && n % loss_every == 0 {
                continue;
            }
            busy_ab = busy_ab.max(now) + gap;
            ab.push_back((busy_ab + delay, s));
        }
        while let Some(s) = b.poll_transmit(now) {
            segments += 1;
            busy_ba = busy_ba.max(now) + 500;
            ba.push_back((busy_ba + delay, s));
        }
        b.take_delivered();
        let next = [
            ab.front().map(|x| x.0),
            ba.front().map(|x| x.0),
            a.poll_at(),
            b.poll_at(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next else { break };
        now = t;
        while ab.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = ab.pop_front().unwrap();
            b.on_segment(now, &s);
        }
        while ba.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = ba.pop_front().unwrap();
            a.on_segment(now, &s);
        }
    }
    assert!(a.is_closed() && b.is_closed());
    (segments, segments as f64 / start.elapsed().as_secs_f64())
}

#[test]
#[ignore]
fn segments_per_second() {
    for v in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        for loss in [0, 1000] {
            let (n, rate) = run(v, loss);
            println!(
                "{v:?} loss 1/{loss}: {n} segments, {:.2} M segments/s",
                rate / 1e6
            );
        }
    }
}
