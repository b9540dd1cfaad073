//! Timestamp resolution and offset: turning a capture file's raw time stamps into
//! nanoseconds since the Unix epoch, and back (for the writers).
//!
//! pcap stores seconds and a fraction in micro- or nanoseconds. pcapng stores one 64-bit
//! count of units per interface, where the unit is set by the interface's `if_tsresol`
//! option and an `if_tsoffset` (seconds) is added
//! (draft-ietf-opsawg-pcapng §4.2, options if_tsresol and if_tsoffset).

/// The length of one time stamp unit of an interface: 10^-n or 2^-n seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsResolution {
    /// 10^-n seconds (6: microseconds, the pcapng default; 9: nanoseconds). n ≤ 19.
    Decimal(u8),
    /// 2^-n seconds. n ≤ 63.
    Binary(u8),
}

impl TsResolution {
    /// Microseconds, the pcapng default when an interface has no `if_tsresol`.
    pub const MICRO: TsResolution = TsResolution::Decimal(6);
    /// Nanoseconds.
    pub const NANO: TsResolution = TsResolution::Decimal(9);

    /// Decodes the `if_tsresol` option byte: "if the most significant bit is equal to
    /// zero, the remaining bits indicates the resolution of the timestamp as a negative
    /// power of 10 [...] If the most significant bit is equal to one, [...] as negative
    /// power of 2" (draft-ietf-opsawg-pcapng §4.2). `None` when the unit count per
    /// second would not fit 64 bits (10^20 and beyond, 2^64 and beyond).
    pub fn from_option(byte: u8) -> Option<TsResolution> {
        let exp = byte & 0x7f;
        if byte & 0x80 == 0 {
            (exp <= 19).then_some(TsResolution::Decimal(exp))
        } else {
            (exp <= 63).then_some(TsResolution::Binary(exp))
        }
    }

    /// The `if_tsresol` option byte for this resolution.
    pub fn to_option(self) -> u8 {
        match self {
            TsResolution::Decimal(n) => n & 0x7f,
            TsResolution::Binary(n) => 0x80 | (n & 0x7f),
        }
    }

    /// Number of units in one second.
    pub fn units_per_second(self) -> u64 {
        match self {
            TsResolution::Decimal(n) => 10u64.saturating_pow(u32::from(n)),
            TsResolution::Binary(n) => 1u64.checked_shl(u32::from(n)).unwrap_or(u64::MAX),
        }
    }

    /// The arithmetic that turns counts of this unit into nanoseconds.
    pub(crate) fn scale(self) -> Scale {
        match self {
            TsResolution::Decimal(n) if n <= 9 => Scale::Mul(10i128.pow(9 - u32::from(n))),
            TsResolution::Decimal(n) => Scale::Div(10i128.pow(u32::from(n) - 9)),
            TsResolution::Binary(n) => Scale::Shift(u32::from(n)),
        }
    }

    /// The number of units in `ns` nanoseconds, rounded down; `None` if negative or past
    /// 64 bits.
    pub(crate) fn ns_to_units(self, ns: i128) -> Option<u64> {
        let units = match self {
            TsResolution::Decimal(n) if n <= 9 => ns.div_euclid(10i128.pow(9 - u32::from(n))),
            TsResolution::Decimal(n) => ns.checked_mul(10i128.pow(u32::from(n) - 9))?,
            TsResolution::Binary(n) => ns.checked_mul(1i128 << n)?.div_euclid(1_000_000_000),
        };
        u64::try_from(units).ok()
    }
}

/// How counts of an interface's unit turn into nanoseconds, worked out once per
/// interface so that the hot path does one multiplication (or division, or shift).
/// Computed in 128 bits, where no count can overflow; results are rounded down, as
/// Wireshark does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// Nanoseconds per unit: 10^-n s with n ≤ 9.
    Mul(i128),
    /// Units per nanosecond: 10^-n s with n > 9.
    Div(i128),
    /// 2^-n s: multiply by 10^9, shift right by n.
    Shift(u32),
}

impl Scale {
    /// Nanoseconds in `units` units.
    #[inline]
    pub(crate) fn to_ns(self, units: u64) -> i128 {
        let units = i128::from(units);
        match self {
            Scale::Mul(m) => units * m,
            Scale::Div(d) => units / d,
            Scale::Shift(n) => (units * 1_000_000_000) >> n,
        }
    }
}

/// Clamps a 128-bit nanosecond count into `i64`.
#[inline]
pub(crate) fn saturate_ns(ns: i128) -> i64 {
    ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_byte_round_trips() {
        for byte in 0..=255u8 {
            if let Some(r) = TsResolution::from_option(byte) {
                assert_eq!(r.to_option(), byte);
            }
        }
        assert_eq!(TsResolution::from_option(6), Some(TsResolution::MICRO));
        assert_eq!(
            TsResolution::from_option(19),
            Some(TsResolution::Decimal(19))
        );
        assert_eq!(TsResolution::from_option(20), None);
        assert_eq!(
            TsResolution::from_option(0x8a),
            Some(TsResolution::Binary(10))
        );
        assert_eq!(
            TsResolution::from_option(0x80 | 63),
            Some(TsResolution::Binary(63))
        );
        assert_eq!(TsResolution::from_option(0x80 | 64), None);
    }

    #[test]
    fn units_to_ns_by_resolution() {
        // '97 c3 04 00 aa 47 ca 64' in microseconds is 2012-06-29 07:28:25.298858 UTC
        // (the ISB example of draft-ietf-opsawg-pcapng §4.6).
        let units = (0x0004_c397u64 << 32) | 0x64ca_47aa;
        assert_eq!(
            TsResolution::MICRO.scale().to_ns(units),
            1_340_954_905_298_858_000
        );
        assert_eq!(TsResolution::NANO.scale().to_ns(7), 7);
        assert_eq!(TsResolution::Decimal(0).scale().to_ns(3), 3_000_000_000);
        assert_eq!(TsResolution::Decimal(12).scale().to_ns(5_999), 5);
        // 2^-10 s: 1 unit is 976562.5 ns, rounded down.
        assert_eq!(TsResolution::Binary(10).scale().to_ns(1), 976_562);
        assert_eq!(
            TsResolution::Binary(10).scale().to_ns(1024 * 3 + 512),
            3_500_000_000
        );
        assert_eq!(TsResolution::Binary(0).scale().to_ns(2), 2_000_000_000);
        // The largest counts cannot overflow.
        assert!(TsResolution::Decimal(0).scale().to_ns(u64::MAX) > i128::from(i64::MAX));
        assert_eq!(
            saturate_ns(TsResolution::Decimal(0).scale().to_ns(u64::MAX)),
            i64::MAX
        );
    }

    #[test]
    fn ns_to_units_inverts_when_exact() {
        for r in [
            TsResolution::MICRO,
            TsResolution::NANO,
            TsResolution::Binary(10),
        ] {
            let ns = 1_700_000_000_500_000_000i128;
            assert_eq!(r.scale().to_ns(r.ns_to_units(ns).unwrap()), ns);
        }
        assert_eq!(TsResolution::MICRO.ns_to_units(1_999), Some(1));
        assert_eq!(TsResolution::Decimal(12).ns_to_units(5), Some(5_000));
        assert_eq!(TsResolution::MICRO.ns_to_units(-1), None);
        assert_eq!(
            TsResolution::Decimal(19).ns_to_units(i128::from(i64::MAX)),
            None
        );
    }

    #[test]
    fn units_per_second() {
        assert_eq!(TsResolution::MICRO.units_per_second(), 1_000_000);
        assert_eq!(TsResolution::Binary(10).units_per_second(), 1024);
        assert_eq!(
            TsResolution::Decimal(19).units_per_second(),
            10_000_000_000_000_000_000
        );
    }
}
