//! IEEE 802.11 MAC headers (IEEE Std 802.11-2020, clause 9.2 "MAC frame formats"
//! and 9.3 "Format of individual frame types").
//!
//! Data frames continue into their LLC/SNAP header. Management frame bodies, protected
//! (encrypted) bodies, A-MSDUs and extension frames are not decoded (`Unsupported` at
//! [`Layer::Wlan`]); control frames and data subtypes without a body (Null, CF-Ack...)
//! simply end there.

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Wlan};
use crate::read::{arr, le16, le32, need, unsupported};

/// Control frame subtypes whose header is only frame control, duration and RA
/// (9.3.1.3 CTS, 9.3.1.4 Ack).
const SUBTYPE_CTS: u8 = 12;
const SUBTYPE_ACK: u8 = 13;
/// Data subtype bits (Table 9-1): bit 3 marks QoS subtypes, bit 2 those with no body.
const SUBTYPE_QOS: u8 = 0x8;
const SUBTYPE_NO_DATA: u8 = 0x4;
/// QoS Control bit 7: the body is an A-MSDU (9.2.4.5.9).
const QOS_AMSDU: u16 = 0x80;

/// Decode the MAC header at `off`. `out.wlan` is set once frame control, duration and
/// the receiver address are captured; fields cut off by the snap length stay `None`.
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<10>(cx.f, off, Layer::Wlan)?;
    // 9.2.4.1 Frame Control: protocol version (2 bits), type (2), subtype (4), then the
    // flag octet.
    let (fc0, fc1) = (h[0], h[1]);
    let w = out.wlan.insert(Wlan {
        frame_type: (fc0 >> 2) & 0x3,
        subtype: fc0 >> 4,
        to_ds: fc1 & 0x01 != 0,
        from_ds: fc1 & 0x02 != 0,
        more_fragments: fc1 & 0x04 != 0,
        retry: fc1 & 0x08 != 0,
        power_mgmt: fc1 & 0x10 != 0,
        more_data: fc1 & 0x20 != 0,
        protected: fc1 & 0x40 != 0,
        order: fc1 & 0x80 != 0,
        duration: le16([h[2], h[3]]),
        receiver: arr::<6, 10>(h, 4),
        ..Wlan::default()
    });
    if fc0 & 0x3 != 0 {
        // Protocol version 1 is the S1G PV1 format, with different headers.
        return Err(unsupported(Layer::Wlan));
    }
    let f = cx.f;
    match w.frame_type {
        Wlan::TYPE_CONTROL => {
            if w.subtype != SUBTYPE_ACK && w.subtype != SUBTYPE_CTS {
                // RTS, PS-Poll, BlockAck(Req), CF-End...: RA then TA.
                w.transmitter = Some(*need::<6>(f, off + 10, Layer::Wlan)?);
            }
            Ok(Next::Done)
        }
        Wlan::TYPE_MANAGEMENT | Wlan::TYPE_DATA => {
            let m = need::<24>(f, off, Layer::Wlan)?;
            w.transmitter = Some(arr::<6, 24>(m, 10));
            w.addr3 = Some(arr::<6, 24>(m, 16));
            // 9.2.4.4 Sequence Control: fragment number (4 bits), sequence number (12).
            let sc = le16([m[22], m[23]]);
            w.seq = Some(sc >> 4);
            w.frag = (sc & 0xF) as u8;
            let mut pos = off + 24;
            let is_data = w.frame_type == Wlan::TYPE_DATA;
            if is_data && w.to_ds && w.from_ds {
                w.addr4 = Some(*need::<6>(f, pos, Layer::Wlan)?);
                pos += 6;
            }
            let qos = is_data && w.subtype & SUBTYPE_QOS != 0;
            if qos {
                w.qos = Some(le16(*need::<2>(f, pos, Layer::Wlan)?));
                pos += 2;
            }
            // 9.2.4.6: HT Control is present in QoS data and management frames with the
            // +HTC/Order bit set (in non-QoS data frames the bit means strict order).
            if w.order && (qos || !is_data) {
                w.ht_control = Some(le32(*need::<4>(f, pos, Layer::Wlan)?));
                pos += 4;
            }
            if !is_data || w.protected || w.qos.is_some_and(|q| q & QOS_AMSDU != 0) {
                return Err(unsupported(Layer::Wlan));
            }
            if w.subtype & SUBTYPE_NO_DATA != 0 {
                return Ok(Next::Done);
            }
            Ok(Next::Llc(pos))
        }
        _ => Err(unsupported(Layer::Wlan)),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Decoded, Layer, StopReason, Wlan};
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const W: LinkType = LinkType::IEEE802_11;
    const A1: [u8; 6] = [2, 0, 0, 0, 0, 0xA1];
    const A2: [u8; 6] = [2, 0, 0, 0, 0, 0xA2];
    const A3: [u8; 6] = [2, 0, 0, 0, 0, 0xA3];
    const A4: [u8; 6] = [2, 0, 0, 0, 0, 0xA4];

    /// A MAC header (9.2.3): frame control (type/subtype byte, flags byte), duration 44,
    /// addresses 1-3, sequence control (sequence 0x123, fragment 2).
    fn mgmt_or_data(fc0: u8, fc1: u8) -> Vec<u8> {
        cat(&[&[fc0, fc1, 44, 0], &A1, &A2, &A3, &[0x32, 0x12]])
    }

    fn wlan(d: &Decoded) -> Wlan {
        d.wlan.unwrap()
    }

    #[test]
    fn data_frame_to_the_ds() {
        // Type 2 subtype 0 (fc0 0x08), To DS, Retry.
        let f = cat(&[&mgmt_or_data(0x08, 0x09), &snap(0x0800), &ipv4_tcp(2)]);
        let d = dec(W, &f);
        assert_eq!(d.stop, None);
        let w = wlan(&d);
        assert_eq!(
            (w.frame_type, w.subtype, w.to_ds, w.from_ds, w.retry),
            (2, 0, true, false, true)
        );
        assert_eq!((w.seq, w.frag, w.duration), (Some(0x123), 2, 44));
        assert_eq!(
            (w.receiver, w.transmitter, w.addr3, w.addr4),
            (A1, Some(A2), Some(A3), None)
        );
        assert!(w.carries_data() && !w.protected && !w.order);
        assert_eq!(d.payload, 72..74);
    }

    #[test]
    fn four_address_qos_data_with_ht_control() {
        // QoS data (subtype 8, fc0 0x88), To DS + From DS + Order: addr4, QoS control,
        // HT control (9.2.4.6), then the body.
        let f = cat(&[
            &mgmt_or_data(0x88, 0x83),
            &A4,
            &[0x05, 0x00],
            &[1, 2, 3, 4],
            &snap(0x86DD),
            &ipv6(6, &tcp(&[], &[])),
        ]);
        let d = dec(W, &f);
        assert_eq!(d.stop, None);
        let w = wlan(&d);
        assert_eq!(
            (w.addr4, w.qos, w.ht_control),
            (Some(A4), Some(5), Some(0x04030201))
        );
        assert!(d.tcp().is_some());
    }

    #[test]
    fn order_bit_on_non_qos_data_adds_no_ht_control() {
        let f = cat(&[&mgmt_or_data(0x08, 0x80), &snap(0x0800), &ipv4_tcp(0)]);
        let d = dec(W, &f);
        assert_eq!((wlan(&d).ht_control, d.stop), (None, None));
    }

    #[test]
    fn null_data_has_no_body() {
        for fc0 in [0x48, 0xC8] {
            // Null (subtype 4) and QoS Null (subtype 12).
            let qos: &[u8] = if fc0 == 0xC8 { &[0, 0] } else { &[] };
            let d = dec(W, &cat(&[&mgmt_or_data(fc0, 0x11), qos]));
            assert_eq!(d.stop, None);
            assert!(!wlan(&d).carries_data() && wlan(&d).power_mgmt);
        }
    }

    #[test]
    fn control_frames_have_no_sequence_number() {
        // Ack (type 1 subtype 13, fc0 0xD4): frame control, duration, RA (9.3.1.4).
        let d = dec(W, &cat(&[&[0xD4, 0x00, 0, 0], &A1]));
        assert_eq!(d.stop, None);
        assert_eq!(
            (
                wlan(&d).frame_type,
                wlan(&d).subtype,
                wlan(&d).seq,
                wlan(&d).transmitter
            ),
            (1, 13, None, None)
        );
        // RTS (subtype 11, fc0 0xB4): RA, TA (9.3.1.2).
        let d = dec(W, &cat(&[&[0xB4, 0x00, 0, 1], &A1, &A2]));
        assert_eq!(
            (wlan(&d).transmitter, wlan(&d).duration, d.stop),
            (Some(A2), 256, None)
        );
        // BlockAck (subtype 9): RA, TA, then a body not decoded.
        let d = dec(W, &cat(&[&[0x94, 0x00, 0, 0], &A1, &A2, &[5, 0, 0, 0]]));
        assert_eq!((wlan(&d).subtype, d.stop), (9, None));
    }

    #[test]
    fn management_protected_and_amsdu_bodies_are_unsupported() {
        let unsupported = |f: &[u8]| {
            let d = dec(W, f);
            assert_eq!(
                (d.stop.unwrap().layer, d.stop.unwrap().reason),
                (Layer::Wlan, StopReason::Unsupported)
            );
            wlan(&d)
        };
        // A beacon (type 0 subtype 8) still reports its header.
        assert_eq!(
            unsupported(&cat(&[&mgmt_or_data(0x80, 0x00), &[0; 12]])).seq,
            Some(0x123)
        );
        assert!(unsupported(&cat(&[&mgmt_or_data(0x08, 0x41), &[0; 16]])).protected);
        // QoS control bit 7: A-MSDU.
        assert_eq!(
            unsupported(&cat(&[&mgmt_or_data(0x88, 0x01), &[0x80, 0], &[0; 16]])).qos,
            Some(0x80)
        );
        // Extension frames (type 3) and protocol version 1.
        unsupported(&cat(&[&[0x0C, 0, 0, 0], &A1]));
        unsupported(&cat(&[&[0x09, 0, 0, 0], &A1]));
    }

    #[test]
    fn truncated_headers_keep_what_was_captured() {
        let f = cat(&[&mgmt_or_data(0x88, 0x09), &[0x05]]);
        let mut d = Decoded::default();
        decode(W, &f, 100, &mut d);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Wlan, StopReason::Truncated)
        );
        let w = wlan(&d);
        assert_eq!((w.retry, w.seq, w.qos), (true, Some(0x123), None));
        let d = dec(W, &f[..9]);
        assert_eq!((d.wlan, d.stop.unwrap().layer), (None, Layer::Wlan));
    }
}
