//! Radiotap capture headers (LINKTYPE_IEEE802_11_RADIOTAP, 127), as specified at
//! radiotap.org: a version/length/presence header, then fields in presence-bit order,
//! each aligned to its natural size relative to the start of the header, then the
//! 802.11 frame at `it_len`.
//!
//! Presence words chain with bit 31. Bit 29 starts a new radiotap namespace in the next
//! word and bit 30 a vendor namespace, whose data (after a 6-byte OUI/sub-namespace/
//! skip-length header) is skipped whole. A field present in several radiotap namespaces
//! (later ones usually repeat per-antenna values) keeps its first value. At the first
//! field whose size is not known, reading stops; `it_len` still locates the 802.11
//! frame.

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
    let rt = out.radiotap.insert(Radiotap {
        present: le32([h[4], h[5], h[6], h[7]]),
        ..Radiotap::default()
    });
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
    // The bit number of this word's bit 0 within the radiotap namespace, or `None`
    // inside a vendor namespace.
    let mut base = Some(0usize);
    // Fields already recorded (the first value of a field wins).
    let mut seen = 0u32;
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
                    return Err(malformed(
                        Layer::Radiotap,
                        "radiotap field runs past it_len",
                    ));
                };
                if seen & (1 << (b + bit)) == 0 {
                    seen |= 1 << (b + bit);
                    store(rt, b + bit, field);
                }
                pos += size;
            }
        }
        if word & BIT_VENDOR_NS != 0 {
            // Vendor namespace header: OUI (3), sub-namespace (1), skip length (u16),
            // 2-aligned; its data follows and is skipped whole.
            pos = pos.next_multiple_of(2);
            let v = need::<6>(header, pos, Layer::Radiotap).map_err(|_| {
                malformed(
                    Layer::Radiotap,
                    "radiotap vendor namespace runs past it_len",
                )
            })?;
            pos += 6 + usize::from(le16([v[4], v[5]]));
            if pos > header.len() {
                return Err(malformed(
                    Layer::Radiotap,
                    "radiotap vendor namespace runs past it_len",
                ));
            }
            base = None;
        } else if word & BIT_RADIOTAP_NS != 0 {
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
        23 => {
            rt.he = Some([
                u16_at(0),
                u16_at(2),
                u16_at(4),
                u16_at(6),
                u16_at(8),
                u16_at(10),
            ])
        }
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

#[cfg(test)]
mod tests {
    use super::FIELDS;
    use crate::packet::{Decoded, Layer, Radiotap, StopReason};
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const RT: LinkType = LinkType::IEEE802_11_RADIOTAP;

    /// The radiotap header of frame 1 of the corpus file arkime_80211http.pcap: present
    /// 0xa000402f (TSFT, flags, rate, channel, dBm signal, RX flags, radiotap namespace
    /// next, ext), 0x00000820 (dBm signal, antenna), then TSFT at 16 (aligned to 8),
    /// flags 0x10 (FCS at end), rate 0x16, channel 2462 MHz / 0x00a0, signal -70,
    /// pad, RX flags 0, then the second namespace's signal -70 and antenna 0.
    const ARKIME: [u8; 36] = [
        0x00, 0x00, 0x24, 0x00, 0x2f, 0x40, 0x00, 0xa0, 0x20, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x28, 0xeb, 0x68, 0x28, 0x00, 0x00, 0x00, 0x00, 0x10, 0x16, 0x9e, 0x09, 0xa0, 0x00,
        0xba, 0x00, 0x00, 0x00, 0xba, 0x00,
    ];

    /// An 802.11 data frame header, To DS (IEEE 802.11-2020 9.3.2.1), sequence 0x123,
    /// fragment 0, then LLC/SNAP.
    fn wlan_data() -> Vec<u8> {
        cat(&[
            &[0x08, 0x01, 0x2c, 0x00],
            &[
                2, 0, 0, 0, 0, 0xA1, 2, 0, 0, 0, 0, 0xA2, 2, 0, 0, 0, 0, 0xA3, 0x30, 0x12,
            ],
            &snap(0x0800),
        ])
    }

    /// A radiotap header with the given presence words and (already aligned) data.
    fn header(words: &[u32], data: &[u8]) -> Vec<u8> {
        let len = (4 + 4 * words.len() + data.len()) as u16;
        let w: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        cat(&[&[0, 0], &len.to_le_bytes(), &w, data])
    }

    fn with_fcs(mut frame: Vec<u8>) -> Vec<u8> {
        frame.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]);
        frame
    }

    #[test]
    fn arkime_header() {
        let f = with_fcs(cat(&[&ARKIME, &wlan_data(), &ipv4_tcp(4)]));
        let d = dec(RT, &f);
        assert_eq!(d.stop, None);
        let rt = d.radiotap.unwrap();
        assert_eq!(rt.present, 0xa000402f);
        assert_eq!(rt.tsft_us, Some(0x2868eb28));
        assert_eq!((rt.flags, rt.rate_500kbps), (Some(0x10), Some(0x16)));
        assert_eq!(
            (rt.channel_mhz, rt.channel_flags),
            (Some(2462), Some(0x00a0))
        );
        assert_eq!((rt.signal_dbm, rt.rx_flags), (Some(-70), Some(0)));
        // The antenna only appears in the second namespace.
        assert_eq!(rt.antenna, Some(0));
        assert!(!rt.bad_fcs());
        assert_eq!(d.tcp().unwrap().payload_len, 4);
        assert_eq!(d.payload.end, f.len() - 4);
    }

    #[test]
    fn every_defined_field_with_its_alignment() {
        // Fields 0..=27 present; each filled with bytes counting up from its bit number
        // times 16, placed at its natural alignment from the header start.
        let words = 1;
        let mut data = Vec::new();
        for (bit, &(align, size)) in FIELDS.iter().enumerate() {
            while (4 + 4 * words + data.len()) % align != 0 {
                data.push(0xEE);
            }
            data.extend((0..size).map(|i| (bit * 16 + i) as u8));
        }
        // The flags byte comes out as 0x10, "FCS at end": so add one.
        let f = with_fcs(cat(&[
            &header(&[0x0FFF_FFFF], &data),
            &wlan_data(),
            &ipv4_tcp(0),
        ]));
        let d = dec(RT, &f);
        assert_eq!(d.stop, None);
        let rt = d.radiotap.unwrap();
        let u16_at = |bit: usize, i: usize| {
            u16::from_le_bytes([(bit * 16 + i) as u8, (bit * 16 + i + 1) as u8])
        };
        let u32_at = |bit: usize, i: usize| {
            u32::from_le_bytes(std::array::from_fn(|k| (bit * 16 + i + k) as u8))
        };
        assert_eq!(rt.tsft_us, Some(0x0706050403020100));
        assert_eq!((rt.flags, rt.rate_500kbps), (Some(0x10), Some(0x20)));
        assert_eq!(
            (rt.channel_mhz, rt.channel_flags),
            (Some(u16_at(3, 0)), Some(u16_at(3, 2)))
        );
        assert_eq!(rt.fhss, Some((0x40, 0x41)));
        assert_eq!((rt.signal_dbm, rt.noise_dbm), (Some(0x50), Some(0x60)));
        assert_eq!(rt.lock_quality, Some(u16_at(7, 0)));
        assert_eq!(
            (rt.tx_attenuation, rt.tx_attenuation_db),
            (Some(u16_at(8, 0)), Some(u16_at(9, 0)))
        );
        assert_eq!(rt.tx_power_dbm, Some(0xA0u8 as i8));
        assert_eq!(
            (rt.antenna, rt.signal_db, rt.noise_db),
            (Some(0xB0), Some(0xC0), Some(0xD0))
        );
        assert_eq!(
            (rt.rx_flags, rt.tx_flags),
            (Some(u16_at(14, 0)), Some(u16_at(15, 0)))
        );
        assert_eq!((rt.rts_retries, rt.data_retries), (Some(0x00), Some(0x10)));
        let x = rt.xchannel.unwrap();
        assert_eq!(
            (x.flags, x.freq_mhz, x.channel, x.max_power),
            (u32_at(18, 0), u16_at(18, 4), 0x26, 0x27)
        );
        assert_eq!(rt.mcs, Some((0x30, 0x31, 0x32)));
        let a = rt.ampdu.unwrap();
        assert_eq!(
            (a.reference, a.flags, a.delimiter_crc),
            (u32_at(20, 0), u16_at(20, 4), 0x46)
        );
        let v = rt.vht.unwrap();
        assert_eq!((v.known, v.flags, v.bandwidth), (u16_at(21, 0), 0x52, 0x53));
        assert_eq!(
            (v.mcs_nss, v.coding, v.group_id, v.partial_aid),
            ([0x54, 0x55, 0x56, 0x57], 0x58, 0x59, u16_at(21, 10))
        );
        let t = rt.timestamp.unwrap();
        assert_eq!(
            (t.timestamp & 0xFF, t.accuracy, t.unit_position, t.flags),
            (0x60, u16_at(22, 8), 0x6A, 0x6B)
        );
        assert_eq!(rt.he.unwrap()[5], u16_at(23, 10));
        let m = rt.he_mu.unwrap();
        assert_eq!(
            (m.flags1, m.flags2, m.ru_channel1, m.ru_channel2[3]),
            (u16_at(24, 0), u16_at(24, 2), [0x84, 0x85, 0x86, 0x87], 0x8B)
        );
        assert_eq!(
            rt.he_mu_other_user,
            Some((u16_at(25, 0), u16_at(25, 2), 0x94, 0x95))
        );
        assert_eq!(rt.zero_length_psdu, Some(0xA0));
        assert_eq!(rt.lsig, Some((u16_at(27, 0), u16_at(27, 2))));
        // The TCP header was found right after `it_len`: the walk did not matter for it,
        // but every value above proves the field offsets.
        assert!(d.tcp().is_some());
    }

    #[test]
    fn vendor_namespace_is_skipped() {
        // Word 0: flags, vendor namespace next, ext. Word 1 (vendor): its bit 0, radiotap
        // namespace next, ext. Word 2: channel. Data at 16: flags; at 18 (2-aligned) the
        // vendor header (OUI 00:11:22, sub-namespace 0, skip length 3) and 3 vendor bytes;
        // at 28 (2-aligned) the channel.
        let data = [
            0x00, 0xEE, 0x00, 0x11, 0x22, 0x00, 3, 0, 0xAA, 0xBB, 0xCC, 0xEE, 0x6c, 0x09, 0x80,
            0x00,
        ];
        let h = header(
            &[
                (1 << 1) | (1 << 30) | (1 << 31),
                1 | (1 << 29) | (1 << 31),
                1 << 3,
            ],
            &data,
        );
        let d = dec(RT, &cat(&[&h, &wlan_data(), &ipv4_tcp(0)]));
        assert_eq!(d.stop, None);
        let rt = d.radiotap.unwrap();
        assert_eq!(
            (rt.flags, rt.channel_mhz, rt.channel_flags),
            (Some(0), Some(2412), Some(0x0080))
        );
        // A skip length past it_len is malformed.
        let mut bad = data;
        bad[6] = 200;
        let h = header(
            &[
                (1 << 1) | (1 << 30) | (1 << 31),
                1 | (1 << 29) | (1 << 31),
                1 << 3,
            ],
            &bad,
        );
        let d = dec(RT, &cat(&[&h, &wlan_data()]));
        assert_eq!(
            d.stop.unwrap(),
            crate::Stop {
                layer: Layer::Radiotap,
                reason: StopReason::Malformed("radiotap vendor namespace runs past it_len")
            }
        );
    }

    #[test]
    fn unknown_fields_stop_the_walk_but_not_the_frame() {
        // Rate, then bit 28 (TLVs, not read here), then 6 bytes of whatever.
        let h = header(&[(1 << 2) | (1 << 28)], &[0x6c, 1, 2, 3, 4, 5, 6]);
        let d = dec(RT, &cat(&[&h, &wlan_data(), &ipv4_tcp(0)]));
        assert_eq!(d.radiotap.unwrap().rate_500kbps, Some(0x6c));
        assert!(d.tcp().is_some());
        // Bit 32 (an extension word without a namespace switch) is unknown too.
        let h = header(&[(1 << 2) | (1 << 31), 1], &[0x02, 0xEE, 0xEE]);
        let d = dec(RT, &cat(&[&h, &wlan_data(), &ipv4_tcp(0)]));
        assert_eq!(d.radiotap.unwrap().rate_500kbps, Some(0x02));
        assert!(d.tcp().is_some());
    }

    #[test]
    fn fcs_is_stripped_only_when_captured() {
        // Flags 0x10: the last 4 bytes are the FCS. A data frame whose body is only the
        // FCS has no LLC header.
        let h = header(&[1 << 1], &[0x10]);
        let wlan_header = &wlan_data()[..24];
        let d = dec(RT, &with_fcs(cat(&[&h, wlan_header])));
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Llc, StopReason::Truncated)
        );
        // Without the flag, the 4 bytes would be read as LLC.
        let plain = header(&[1 << 1], &[0x00]);
        assert_eq!(
            dec(RT, &with_fcs(cat(&[&plain, wlan_header])))
                .stop
                .unwrap()
                .reason,
            StopReason::Unsupported
        );
        // IPv4 total length 0 (segmentation offload) measures up to the FCS.
        let mut ip = ipv4_tcp(10);
        ip[2] = 0;
        ip[3] = 0;
        let f = with_fcs(cat(&[&h, &wlan_data(), &ip]));
        assert_eq!(dec(RT, &f).ip.unwrap().total_len, 50);
        // A frame cut by the snap length lost its FCS already: all captured bytes count.
        let mut d = Decoded::default();
        decode(RT, &f[..f.len() - 8], f.len() as u32, &mut d);
        assert_eq!(d.payload.end, f.len() - 8);
    }

    #[test]
    fn bad_fcs_flag_is_reported() {
        let h = header(&[1 << 1], &[0x50]);
        let d = dec(RT, &with_fcs(cat(&[&h, &wlan_data(), &ipv4_tcp(0)])));
        assert!(d.radiotap.unwrap().bad_fcs());
        assert!(d.tcp().is_some());
        assert!(!Radiotap::default().bad_fcs());
    }

    #[test]
    fn broken_headers() {
        let malformed = |f: &[u8]| match dec(RT, f).stop.unwrap() {
            crate::Stop {
                layer: Layer::Radiotap,
                reason: StopReason::Malformed(what),
            } => what,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            malformed(&[1, 0, 8, 0, 0, 0, 0, 0]),
            "radiotap version is not 0"
        );
        assert_eq!(
            malformed(&[0, 0, 7, 0, 0, 0, 0, 0]),
            "radiotap length below 8"
        );
        assert_eq!(
            malformed(&header(&[1 << 31], &[])),
            "radiotap presence words run past it_len"
        );
        assert_eq!(
            malformed(&header(&[1 << 3], &[0, 0])),
            "radiotap field runs past it_len"
        );
        let d = dec(RT, &header(&[1], &[0; 8])[..12]);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Radiotap, StopReason::Truncated)
        );
        assert_eq!(
            dec(RT, &[0, 0, 8]).stop.unwrap().reason,
            StopReason::Truncated
        );
    }
}
