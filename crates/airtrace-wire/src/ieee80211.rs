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
