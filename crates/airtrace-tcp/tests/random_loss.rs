//! Robustness: random losses in both directions, every variant, both presets. Every
//! transfer must finish with every byte delivered once, in order, both ends closed,
//! and the sender's accounting consistent at every step.
mod common;

use airtrace_tcp::{Config, Phase, SpuriousRtoDetection, Variant};
use common::*;
use proptest::prelude::*;

fn config(variant: Variant, bsd: bool, window_segments: u32) -> Config {
    let mut c = if bsd { Config::bsd() } else { Config::linux() };
    c.variant = variant;
    c.rcvbuf = (window_segments * 1460).min(65535);
    c
}

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![
        Just(Variant::Tahoe),
        Just(Variant::Reno),
        Just(Variant::NewReno),
        Just(Variant::Sack)
    ]
}

/// One bulk transfer of `segments` × 1000 + 7 bytes under `loss_permille` random
/// losses in both directions, checked at every step and at the end.
fn finishes_under_random_loss(
    cfg: Config,
    segments: u64,
    delay_ms: i64,
    seed: u64,
    loss_permille: u64,
) -> Result<(), TestCaseError> {
    let mut net = Net::same(cfg, delay_ms * MS)
        .rate(5_000_000)
        .bulk(segments * 1000 + 7);
    // A small deterministic generator per run (splitmix64).
    let mut state = seed;
    net.drop_if(move |_| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        z % 1000 < loss_permille
    });
    net.run_until(0);
    let limit = 20_000 * S;
    while net.step(limit) {
        let s = net.ep[A].sender_state();
        let outstanding = s.snd_nxt.wrapping_sub(s.snd_una);
        prop_assert!(s.bytes_in_flight <= outstanding, "{s:?}");
        prop_assert!(s.cwnd >= 1, "{s:?}");
        if s.phase == Phase::Recovery {
            prop_assert!(s.ssthresh < 0x7fff_ffff);
        }
    }
    prop_assert_eq!(net.delivered, segments * 1000 + 7);
    prop_assert!(net.ep[A].is_closed(), "A not closed");
    prop_assert!(net.ep[B].is_closed(), "B not closed");
    prop_assert!(net.ep[A].all_data_acked());
    prop_assert_eq!(net.ep[A].poll_at(), None);
    prop_assert_eq!(net.ep[A].stats().bytes_acked, segments * 1000 + 7);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn transfers_finish_under_random_loss(
        v in variant(),
        bsd in any::<bool>(),
        window in 2u32..40,
        segments in 1u64..120,
        delay_ms in 1i64..80,
        seed in any::<u64>(),
        loss_permille in 0u64..150,
    ) {
        finishes_under_random_loss(config(v, bsd, window), segments, delay_ms, seed, loss_permille)?;
    }

    /// The same with the optional mechanisms: RACK-TLP and PRR (SACK only), and the
    /// detection of spurious timeouts (any variant).
    #[test]
    fn optional_mechanisms_finish_under_random_loss(
        v in variant(),
        rack_tlp in any::<bool>(),
        prr in any::<bool>(),
        spurious in prop_oneof![
            Just(SpuriousRtoDetection::Off),
            Just(SpuriousRtoDetection::Frto),
            Just(SpuriousRtoDetection::Eifel)
        ],
        window in 2u32..40,
        segments in 1u64..120,
        delay_ms in 1i64..80,
        seed in any::<u64>(),
        loss_permille in 0u64..150,
    ) {
        let mut cfg = config(v, false, window);
        cfg.rack_tlp = rack_tlp;
        cfg.prr = prr;
        cfg.spurious_rto = spurious;
        finishes_under_random_loss(cfg, segments, delay_ms, seed, loss_permille)?;
    }
}
