//! Sequence-number arithmetic modulo 2^32 (RFC 9293 section 3.4).
//!
//! TCP sequence numbers wrap; "a < b" means "a comes before b" within half the
//! sequence space. These helpers are the only place that comparison is spelled out.

/// `a` is before `b`.
#[inline]
pub fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a` is before or equal to `b`.
#[inline]
pub fn le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// `a` is after `b`.
#[inline]
pub fn gt(a: u32, b: u32) -> bool {
    lt(b, a)
}

/// `a` is after or equal to `b`.
#[inline]
pub fn ge(a: u32, b: u32) -> bool {
    le(b, a)
}

/// The later of two sequence numbers.
#[inline]
pub fn max(a: u32, b: u32) -> u32 {
    if gt(a, b) {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_wrap_around_zero() {
        assert!(lt(u32::MAX - 10, 5));
        assert!(gt(5, u32::MAX - 10));
        assert!(le(7, 7) && ge(7, 7));
        assert!(!lt(7, 7));
        assert_eq!(max(u32::MAX, 3), 3);
    }
}
