//! 802.11 frames behind a radiotap header: the records of LINKTYPE_IEEE802_11_RADIOTAP
//! captures, as both kinds of air capture write them (the one-link `air` vantage,
//! [`crate::air`], and a network's `air-<node>.pcap`, [`crate::netair`]).
//!
//! A [`Record`] is built front to back: [`Record::begin`] writes the radiotap header
//! ([`Radiotap`]), [`Record::header`] the MAC header's fields in order, then the body
//! ([`Record::llc_snap`], [`Record::extend`]), and [`Record::finish`] the FCS. This
//! module knows the layouts; which addresses and flags a frame gets is the caller's.
//!
//! ```
//! use airtrace_sim::wlan::{Radiotap, Record, SUBTYPE_ACK};
//! let mut r = Record::default();
//! r.begin(&Radiotap { rate_500kbps: 2, ..Radiotap::default() });
//! r.header(SUBTYPE_ACK, 0, 0, &[[0x02, 0, 0, 0, 0, 1]]);
//! let record = r.finish(false);
//! assert_eq!(record.len(), 14 + 10 + 4);
//! ```

/// Frame Control, first octet: protocol version 0, type and subtype (IEEE 802.11-2020
/// §9.2.4.1.3, Table 9-1) of a data frame.
pub const SUBTYPE_DATA: u8 = 0x08;
/// See [`SUBTYPE_DATA`]: beacon (management, subtype 8; §9.3.3.2).
pub const SUBTYPE_BEACON: u8 = 0x80;
/// See [`SUBTYPE_DATA`]: RTS (control, subtype 11; §9.3.1.2).
pub const SUBTYPE_RTS: u8 = 0xb4;
/// See [`SUBTYPE_DATA`]: CTS (control, subtype 12; §9.3.1.3).
pub const SUBTYPE_CTS: u8 = 0xc4;
/// See [`SUBTYPE_DATA`]: ACK (control, subtype 13; §9.3.1.4).
pub const SUBTYPE_ACK: u8 = 0xd4;

/// Frame Control, second octet (§9.2.4.1.1): To DS.
pub const FC_TO_DS: u8 = 0x01;
/// See [`FC_TO_DS`]: From DS.
pub const FC_FROM_DS: u8 = 0x02;
/// See [`FC_TO_DS`]: Retry, set on every attempt after the first (§9.2.4.1.4).
pub const FC_RETRY: u8 = 0x08;

/// The broadcast address.
pub const BROADCAST: [u8; 6] = [0xff; 6];

/// Radiotap Flags field: the frame ends with its FCS.
const FLAG_FCS_AT_END: u8 = 0x10;
/// Radiotap Flags field: the FCS check failed.
const FLAG_BAD_FCS: u8 = 0x40;
/// Channel 6 of the 2.4 GHz band.
const CHANNEL_MHZ: u16 = 2437;
/// Radiotap channel flags: CCK, 2 GHz spectrum (802.11b).
const CHANNEL_FLAGS: u16 = 0x0020 | 0x0080;

/// Radiotap `it_present` bits (https://www.radiotap.org/fields/defined).
const PRESENT_TSFT: u32 = 1 << 0;
const PRESENT_FLAGS: u32 = 1 << 1;
const PRESENT_RATE: u32 = 1 << 2;
const PRESENT_CHANNEL: u32 = 1 << 3;
const PRESENT_ANTENNA_SIGNAL: u32 = 1 << 5;
const PRESENT_ANTENNA_NOISE: u32 = 1 << 6;

/// The radiotap fields of one record. Flags (FCS at end, bad FCS), Rate and Channel
/// (2437 MHz, 802.11b) are always there; the others when given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Radiotap {
    /// TSFT: the receiver's TSF timer, µs, when the MPDU's first bit arrived.
    pub tsft_us: Option<u64>,
    /// The data rate, in 500 kbit/s units.
    pub rate_500kbps: u8,
    /// The FCS check failed.
    pub bad_fcs: bool,
    /// Antenna signal, dBm.
    pub signal_dbm: Option<i8>,
    /// Antenna noise, dBm.
    pub noise_dbm: Option<i8>,
}

impl Radiotap {
    /// Appends the header to `out` (which holds nothing of this record yet). Fields
    /// go in bit order, each aligned to its natural size from the header's start, as
    /// radiotap requires.
    fn write(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let mut present = PRESENT_FLAGS | PRESENT_RATE | PRESENT_CHANNEL;
        present |= self.tsft_us.map_or(0, |_| PRESENT_TSFT);
        present |= self.signal_dbm.map_or(0, |_| PRESENT_ANTENNA_SIGNAL);
        present |= self.noise_dbm.map_or(0, |_| PRESENT_ANTENNA_NOISE);
        out.extend_from_slice(&[0, 0, 0, 0]); // version 0, pad, length (below)
        out.extend_from_slice(&present.to_le_bytes());
        let align = |out: &mut Vec<u8>, n: usize| {
            while (out.len() - start) % n != 0 {
                out.push(0);
            }
        };
        if let Some(tsft) = self.tsft_us {
            align(out, 8);
            out.extend_from_slice(&tsft.to_le_bytes());
        }
        let flags = FLAG_FCS_AT_END | if self.bad_fcs { FLAG_BAD_FCS } else { 0 };
        out.extend_from_slice(&[flags, self.rate_500kbps]);
        align(out, 2);
        out.extend_from_slice(&CHANNEL_MHZ.to_le_bytes());
        out.extend_from_slice(&CHANNEL_FLAGS.to_le_bytes());
        for dbm in [self.signal_dbm, self.noise_dbm].into_iter().flatten() {
            out.push(dbm as u8);
        }
        let len = (out.len() - start) as u16;
        out[start + 2..start + 4].copy_from_slice(&len.to_le_bytes());
    }
}

/// Power in W as radiotap's dBm (rounded, within an `i8`).
pub fn dbm(watts: f64) -> i8 {
    (10.0 * (watts * 1e3).log10()).round().clamp(-128.0, 127.0) as i8
}

/// One record under construction, its buffer kept between records.
#[derive(Debug, Default)]
pub struct Record {
    buf: Vec<u8>,
    /// Where the MAC frame starts (after the radiotap header).
    mac_start: usize,
}

impl Record {
    /// Starts a record with its radiotap header.
    pub fn begin(&mut self, radiotap: &Radiotap) {
        self.buf.clear();
        radiotap.write(&mut self.buf);
        self.mac_start = self.buf.len();
    }

    /// The MAC header (§9.2.3): Frame Control (`subtype`, `flags`), Duration/ID, then
    /// `addresses` in order (Address 1 first).
    pub fn header(&mut self, subtype: u8, flags: u8, duration_us: u16, addresses: &[[u8; 6]]) {
        self.buf.extend_from_slice(&[subtype, flags]);
        self.buf.extend_from_slice(&duration_us.to_le_bytes());
        for a in addresses {
            self.buf.extend_from_slice(a);
        }
    }

    /// The Sequence Control field (§9.2.4.4): fragment 0, sequence number `seq`
    /// (12 bits).
    pub fn sequence(&mut self, seq: u16) {
        self.buf
            .extend_from_slice(&((seq & 0x0fff) << 4).to_le_bytes());
    }

    /// The RFC 1042 LLC/SNAP header of a body carrying `ethertype`.
    pub fn llc_snap(&mut self, ethertype: u16) {
        self.buf.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
        self.buf.extend_from_slice(&ethertype.to_be_bytes());
    }

    /// Appends body bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends the FCS (§9.2.4.8: the CRC-32 of the MAC header and body), wrong when
    /// `bad`, and returns the record.
    pub fn finish(&mut self, bad: bool) -> &[u8] {
        let crc = crc32fast::hash(&self.buf[self.mac_start..]);
        let fcs = if bad { !crc } else { crc };
        self.buf.extend_from_slice(&fcs.to_le_bytes());
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(radiotap: Radiotap, bad: bool) -> Vec<u8> {
        let mut r = Record::default();
        r.begin(&radiotap);
        r.header(SUBTYPE_DATA, FC_RETRY, 314, &[[1; 6], [2; 6], [3; 6]]);
        r.sequence(0x1abc);
        r.llc_snap(0x0800);
        r.extend(&[0x45; 20]);
        r.finish(bad).to_vec()
    }

    #[test]
    fn radiotap_fields_are_aligned_and_the_length_covers_them() {
        // Flags, rate, channel only: the one-link sniffer's 14-byte header.
        let short = record(
            Radiotap {
                rate_500kbps: 22,
                ..Radiotap::default()
            },
            false,
        );
        assert_eq!(&short[..8], &[0, 0, 14, 0, 0x0e, 0, 0, 0]);
        assert_eq!(&short[8..14], &[0x10, 22, 0x85, 0x09, 0xa0, 0x00]);
        // Every field: TSFT at offset 8 (8-aligned), flags 16, rate 17, channel 18
        // (2-aligned), signal 22, noise 23.
        let full = record(
            Radiotap {
                tsft_us: Some(0x0102_0304_0506_0708),
                rate_500kbps: 4,
                bad_fcs: true,
                signal_dbm: Some(-64),
                noise_dbm: Some(-101),
            },
            true,
        );
        assert_eq!(u16::from_le_bytes([full[2], full[3]]), 24);
        assert_eq!(
            u32::from_le_bytes([full[4], full[5], full[6], full[7]]),
            0x6f
        );
        assert_eq!(&full[8..16], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&full[16..18], &[0x50, 4], "FCS at end, bad FCS; 2 Mbit/s");
        assert_eq!(u16::from_le_bytes([full[18], full[19]]), 2437);
        assert_eq!((full[22] as i8, full[23] as i8), (-64, -101));
        let mac = |r: &[u8], at: usize| r[at..r.len() - 4].to_vec();
        assert_eq!(
            mac(&full, 24),
            mac(&short, 14),
            "the same MAC frame after it"
        );
    }

    #[test]
    fn the_fcs_is_the_crc_of_the_mac_frame_and_wrong_when_bad() {
        for (tsft, start) in [(None, 14), (Some(1), 24)] {
            let radiotap = Radiotap {
                tsft_us: tsft,
                signal_dbm: tsft.map(|_| -70),
                noise_dbm: tsft.map(|_| -101),
                ..Radiotap::default()
            };
            let good = record(radiotap, false);
            let bad = record(radiotap, true);
            let n = good.len();
            let fcs = |r: &[u8]| u32::from_le_bytes([r[n - 4], r[n - 3], r[n - 2], r[n - 1]]);
            assert_eq!(fcs(&good), crc32fast::hash(&good[start..n - 4]));
            assert_ne!(fcs(&bad), crc32fast::hash(&bad[start..n - 4]));
            assert_eq!(good[..n - 4], bad[..n - 4], "only the FCS differs");
        }
    }

    #[test]
    fn header_fields_in_order() {
        let r = record(Radiotap::default(), false);
        let mac = &r[14..];
        assert_eq!(&mac[..2], &[SUBTYPE_DATA, FC_RETRY]);
        assert_eq!(u16::from_le_bytes([mac[2], mac[3]]), 314);
        assert_eq!(
            (&mac[4..10], &mac[10..16], &mac[16..22]),
            (&[1; 6][..], &[2; 6][..], &[3; 6][..])
        );
        assert_eq!(
            u16::from_le_bytes([mac[22], mac[23]]),
            0xabc << 4,
            "12-bit sequence number"
        );
        assert_eq!(&mac[24..32], &[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
    }

    #[test]
    fn dbm_of_watts() {
        assert_eq!(dbm(1e-3), 0);
        assert_eq!(dbm(0.25), 24);
        assert_eq!(dbm(3.652e-10), -64);
        assert_eq!(dbm(0.0), -128);
    }
}
