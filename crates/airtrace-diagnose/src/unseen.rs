//! Losses in a direction the capture does not hold (issue 18 class 8): a capture of
//! one side of a connection (an uplink-only tap, an asymmetric route) sees the
//! receiver's ACKs but not the data they answer. Runs of three or more duplicate ACKs
//! still say that the data lost segments and how long the receiver waited for each
//! repair: the analyzer's numbers for that direction are empty, so without this the
//! diagnosis said nothing (`ndpi_ocs`: 290 duplicate ACKs, no finding).

use std::collections::BTreeMap;

use crate::collect::DirState;
use crate::finding::Builder;

/// Runs of duplicate ACKs needed before the losses are reported: one could be
/// reordering that happened to reach three.
const MIN_REPAIRS: usize = 2;

const FIX_UNSEEN: &str = "Capture where both directions pass (at the receiver, or at a point every packet \
of the connection crosses) to see the losses themselves; the duplicate ACKs say only that data was lost \
on the way to the receiver and how long each repair took.";

/// The finding for direction `d`'s data when the capture holds none of it but its
/// receiver's ACKs asked for repairs.
pub(crate) fn losses(b: &mut Builder, d: usize, dir: &DirState) {
    let repairs = &dir.dupack_repairs;
    if dir.data_packets > 0 || dir.retransmissions > 0 || repairs.len() < MIN_REPAIRS {
        return;
    }
    let waited_ns: i64 = repairs.iter().map(|r| r.end_ns - r.start_ns).sum();
    let longest_ns = repairs.iter().map(|r| r.end_ns - r.start_ns).max().unwrap_or(0);
    let (first, last) = (repairs[0], repairs[repairs.len() - 1]);
    let explanation = format!(
        "The capture holds none of this direction's data, but its receiver's ACKs show {} holes in it: runs of \
three or more duplicate ACKs (segments lost, or overtaken by later ones), each ended by an ACK that moved on \
once the hole was filled. The receiver waited {:.2} s in all for them (the longest {:.2} s); what caused \
them, and whether the sender repaired them by fast retransmit or by its timer, the capture cannot tell.",
        repairs.len(),
        waited_ns as f64 / 1e9,
        longest_ns as f64 / 1e9,
    );
    b.push(
        "unseen_losses",
        d,
        (first.start_ns, last.end_ns),
        waited_ns,
        repairs.iter().map(|r| r.frame).collect(),
        explanation,
        FIX_UNSEEN,
        BTreeMap::from([
            ("repairs", repairs.len() as f64),
            ("waited_s", waited_ns as f64 / 1e9),
            ("longest_wait_s", longest_ns as f64 / 1e9),
        ]),
    );
}
