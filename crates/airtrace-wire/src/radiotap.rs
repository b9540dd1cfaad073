//! Radiotap capture headers (LINKTYPE_IEEE802_11_RADIOTAP, 127), as specified at
//! radiotap.org: a version/length/presence header, then fields in presence-bit order,
//! each aligned to its natural size relative to the start of the header, then the
//! 802.11 frame at `it_len`.
//!
//! Presence words chain with bit 31. Bit 29 starts a new radiotap namespace in the next
//! word and bit 30 a vendor namespace, whose data (after a 6-byte OUI/sub-namespace/
//! skip-length header) is skipped whole. Only the first radiotap namespace is recorded
//! (later ones usually repeat per-antenna values). At the first field whose size is not
//! known, reading stops; `it_len` still locates the 802.11 frame.

use crate::decoder::{Cx, Next};
use crate::packet::{
    AmpduStatus, Decoded, HeMu, Layer, Radiotap, RadiotapTimestamp, Stop, Vht, XChannel,
};
use crate::read::{bytes, le16, le32, malformed, need, truncated};

/// (alignment, size) of the fields for presence bits 0..=27, from the radiotap.org
/// "Defined fields" table (the same table as Linux `net/wireless/radiotap.c`). Bit 28
/// (TLVs) and anything above is unknown here.
const FIELDS: [(usize, usize); 28] = [
    (8, 8),  // 0 TSFT: u64 microseconds
    (1, 1),  // 1 Flags
    (1, 1),  // 2 Rate: 500 kbit/s units
    (2, 4),  // 3 Channel: u16 MHz, u16 flags
    (2, 2),  // 4 FHSS: u8 hop set, u8 hop pattern
    (1, 1),  // 5 dBm antenna signal
    (1, 1),  // 6 dBm antenna noise
    (2, 2),  // 7 Lock quality
    (2, 2),  // 8 TX attenuation
    (2, 2),  // 9 dB TX attenuation
    (1, 1),  // 10 dBm TX power
    (1, 1),  // 11 Antenna
    (1, 1),  // 12 dB antenna signal
    (1, 1),  // 13 dB antenna noise
    (2, 2),  // 14 RX flags
    (2, 2),  // 15 TX flags
    (1, 1),  // 16 RTS retries
    (1, 1),  // 17 data retries
    (4, 8),  // 18 XChannel: u32 flags, u16 MHz, u8 channel, u8 max power
    (1, 3),  // 19 MCS: known, flags, index
    (4, 8),  // 20 A-MPDU status: u32 reference, u16 flags, u8 CRC, u8 reserved
    (2, 12), // 21 VHT
    (8, 12), // 22 timestamp: u64, u16 accuracy, u8 unit/position, u8 flags
    (2, 12), // 23 HE: 6 x u16
    (2, 12), // 24 HE-MU: u16, u16, 4 x u8, 4 x u8
    (2, 6),  // 25 HE-MU-other-user: u16, u16, u8, u8
    (1, 1),  // 26 0-length-PSDU
    (2, 4),  // 27 L-SIG: u16, u16
];

const BIT_RADIOTAP_NS: u32 = 1 << 29;
const BIT_VENDOR_NS: u32 = 1 << 30;
const BIT_EXT: u32 = 1 << 31;

/// Decode the radiotap header at the start of the frame; strip a trailing FCS when the
/// Flags field says there is one.
pub(crate) fn decode(cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<8>(cx.f, 0, Layer::Radiotap)?;
    if h[0] != 0 {
        return Err(malformed(Layer::Radiotap, "radiotap version is not 0"));
    }
    let it_len = usize::from(le16([h[2], h[3]]));
    if it_len < 8 {
        return Err(malformed(Layer::Radiotap, "radiotap length below 8"));
    }
    if cx.f.len() < it_len {
        return Err(truncated(Layer::Radiotap));
    }
    let header = &cx.f[..it_len];
    let rt = out.radiotap.insert(Radiotap { present: le32([h[4], h[5], h[6], h[7]]), ..Radiotap::default() });
    read_fields(header, rt)?;
    if rt.flags.is_some_and(|f| f & Radiotap::FLAG_FCS_AT_END != 0) {
        // The FCS ends the frame as it was on the air; a frame cut by the snap length
        // lost it already.
        cx.cut(cx.end.saturating_sub(4).max(it_len));
    }
    Ok(Next::Wlan(it_len))
}

/// Walk the presence words and the fields of `header` (exactly `it_len` bytes).
fn read_fields(header: &[u8], rt: &mut Radiotap) -> Result<(), Stop> {
    // The data starts after the last presence word.
    let mut data = 4;
    loop {
        let word = need::<4>(header, data, Layer::Radiotap)
            .map_err(|_| malformed(Layer::Radiotap, "radiotap presence words run past it_len"))?;
        data += 4;
        if le32(*word) & BIT_EXT == 0 {
            break;
        }
    }
    let mut pos = data;
    let mut word_at = 4;
    // Namespace state: which radiotap namespace we are in (0 = the default one), the
    // bit number of this word's bit 0 within it, or `None` inside a vendor namespace.
    let mut radiotap_ns = 0u32;
    let mut base = Some(0usize);
    while word_at < data {
        let word = bytes::<4>(header, word_at).map_or(0, |w| le32(*w));
        word_at += 4;
        if let Some(b) = base {
            let mut bits = word & !(BIT_RADIOTAP_NS | BIT_VENDOR_NS | BIT_EXT);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let Some(&(align, size)) = FIELDS.get(b + bit) else {
                    // Unknown field: its size is unknown, so nothing after it can be found.
                    return Ok(());
                };
                pos = pos.next_multiple_of(align);
                let Some(field) = header.get(pos..pos + size) else {
                    return Err(malformed(Layer::Radiotap, "radiotap field runs past it_len"));
                };
                if radiotap_ns == 0 {
                    store(rt, b + bit, field);
                }
                pos += size;
            }
        }
        if word & BIT_VENDOR_NS != 0 {
            // Vendor namespace header: OUI (3), sub-namespace (1), skip length (u16),
            // 2-aligned; its data follows and is skipped whole.
            pos = pos.next_multiple_of(2);
            let v = need::<6>(header, pos, Layer::Radiotap)
                .map_err(|_| malformed(Layer::Radiotap, "radiotap vendor namespace runs past it_len"))?;
            pos += 6 + usize::from(le16([v[4], v[5]]));
            if pos > header.len() {
                return Err(malformed(Layer::Radiotap, "radiotap vendor namespace runs past it_len"));
            }
            base = None;
        } else if word & BIT_RADIOTAP_NS != 0 {
            radiotap_ns += 1;
            base = Some(0);
        } else if let Some(b) = base {
            base = Some(b + 32);
        }
    }
    Ok(())
}

/// Record field number `bit` from its bytes (little-endian, radiotap.org).
fn store(rt: &mut Radiotap, bit: usize, f: &[u8]) {
    let u8_at = |i: usize| f.get(i).copied().unwrap_or(0);
    let u16_at = |i: usize| le16([u8_at(i), u8_at(i + 1)]);
    let u32_at = |i: usize| le32([u8_at(i), u8_at(i + 1), u8_at(i + 2), u8_at(i + 3)]);
    let u64_at = |i: usize| u64::from(u32_at(i)) | (u64::from(u32_at(i + 4)) << 32);
    match bit {
        0 => rt.tsft_us = Some(u64_at(0)),
        1 => rt.flags = Some(u8_at(0)),
        2 => rt.rate_500kbps = Some(u8_at(0)),
        3 => {
            rt.channel_mhz = Some(u16_at(0));
            rt.channel_flags = Some(u16_at(2));
        }
        4 => rt.fhss = Some((u8_at(0), u8_at(1))),
        5 => rt.signal_dbm = Some(u8_at(0) as i8),
        6 => rt.noise_dbm = Some(u8_at(0) as i8),
        7 => rt.lock_quality = Some(u16_at(0)),
        8 => rt.tx_attenuation = Some(u16_at(0)),
        9 => rt.tx_attenuation_db = Some(u16_at(0)),
        10 => rt.tx_power_dbm = Some(u8_at(0) as i8),
        11 => rt.antenna = Some(u8_at(0)),
        12 => rt.signal_db = Some(u8_at(0)),
        13 => rt.noise_db = Some(u8_at(0)),
        14 => rt.rx_flags = Some(u16_at(0)),
        15 => rt.tx_flags = Some(u16_at(0)),
        16 => rt.rts_retries = Some(u8_at(0)),
        17 => rt.data_retries = Some(u8_at(0)),
        18 => {
            rt.xchannel = Some(XChannel {
                flags: u32_at(0),
                freq_mhz: u16_at(4),
                channel: u8_at(6),
                max_power: u8_at(7),
            })
        }
        19 => rt.mcs = Some((u8_at(0), u8_at(1), u8_at(2))),
        20 => {
            rt.ampdu = Some(AmpduStatus {
                reference: u32_at(0),
                flags: u16_at(4),
                delimiter_crc: u8_at(6),
            })
        }
        21 => {
            rt.vht = Some(Vht {
                known: u16_at(0),
                flags: u8_at(2),
                bandwidth: u8_at(3),
                mcs_nss: [u8_at(4), u8_at(5), u8_at(6), u8_at(7)],
                coding: u8_at(8),
                group_id: u8_at(9),
                partial_aid: u16_at(10),
            })
        }
        22 => {
            rt.timestamp = Some(RadiotapTimestamp {
                timestamp: u64_at(0),
                accuracy: u16_at(8),
                unit_position: u8_at(10),
                flags: u8_at(11),
            })
        }
        23 => rt.he = Some([u16_at(0), u16_at(2), u16_at(4), u16_at(6), u16_at(8), u16_at(10)]),
        24 => {
            rt.he_mu = Some(HeMu {
                flags1: u16_at(0),
                flags2: u16_at(2),
                ru_channel1: [u8_at(4), u8_at(5), u8_at(6), u8_at(7)],
                ru_channel2: [u8_at(8), u8_at(9), u8_at(10), u8_at(11)],
            })
        }
        25 => rt.he_mu_other_user = Some((u16_at(0), u16_at(2), u8_at(4), u8_at(5))),
        26 => rt.zero_length_psdu = Some(u8_at(0)),
        27 => rt.lsig = Some((u16_at(0), u16_at(2))),
        _ => {}
    }
}
