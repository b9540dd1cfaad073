//! Decoding never panics, whatever the bytes, and a frame cut short stops at the layer
//! where the cut fell.

mod common;

use airtrace_wire::{decode, Decoded, LinkType, StopReason};
use common::spec;
use proptest::prelude::*;

/// Ranges in `Decoded` always lie within the frame.
fn ranges_within(d: &Decoded, len: usize) {
    assert!(
        d.payload.start <= d.payload.end && d.payload.end <= len,
        "{d:?}"
    );
    assert!(
        d.ip_payload.start <= d.ip_payload.end && d.ip_payload.end <= len,
        "{d:?}"
    );
}

proptest! {
    #[test]
    fn random_bytes_under_every_link_type(
        link in proptest::sample::select(&LinkType::SUPPORTED[..]),
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        extra in 0..100u32,
    ) {
        let mut d = Decoded::default();
        decode(link, &bytes, bytes.len() as u32 + extra, &mut d);
        ranges_within(&d, bytes.len());
    }

    /// Random bytes rarely get past the first header; corrupting valid frames reaches
    /// every layer.
    #[test]
    fn corrupted_valid_frames(
        spec in spec(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8),
        other_link in proptest::sample::select(&LinkType::SUPPORTED[..]),
    ) {
        let mut frame = spec.build();
        for (at, value) in edits {
            let i = at.index(frame.len());
            frame[i] = value;
        }
        let mut d = Decoded::default();
        for link in [spec.link.link_type(), other_link] {
            decode(link, &frame, frame.len() as u32, &mut d);
            ranges_within(&d, frame.len());
        }
    }

    #[test]
    fn every_truncation_stops_at_the_cut_layer(spec in spec()) {
        let frame = spec.build();
        let mut d = Decoded::default();
        for cut in 0..=frame.len() {
            decode(spec.link.link_type(), &frame[..cut], frame.len() as u32, &mut d);
            ranges_within(&d, cut);
            let want = spec.stop_layer(cut);
            prop_assert_eq!(d.stop.map(|s| s.layer), want, "cut at {} of {}", cut, frame.len());
            if want.is_some() {
                prop_assert_eq!(d.stop.unwrap().reason, StopReason::Truncated);
            } else {
                // Once the headers are in, only the payload shrinks.
                prop_assert_eq!(d.payload.end, cut);
            }
        }
    }
}
