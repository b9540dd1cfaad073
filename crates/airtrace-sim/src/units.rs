//! Quantities with units, as scenario files write them: durations (`"20 ms"`), bit
//! rates (`"11 Mbit/s"`) and sizes (`"3.57 MB"`, `"128 KiB"`, or a plain integer of
//! bytes).
//!
//! A duration or a rate always carries its unit: a bare `20` could mean seconds or
//! milliseconds, and a scenario that reads one way to its author and another to the
//! simulator is worse than an error. Sizes may be bare integers (bytes), as every tool
//! writes buffer sizes. Decimal prefixes are powers of 1000 (`kB`, `MB`, `kbit/s`),
//! binary ones powers of 1024 (`KiB`, `MiB`).

use std::fmt;

use airtrace_link::input::quote;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// The longest time a scenario may give, ns: 10^7 s (116 days). Longer ones are no run
/// that finishes (a delay of 10^9 s keeps every retransmitted SYN in the link for the
/// whole run), and near 2^32 s past the clock's 2026 epoch captures cannot stamp them.
pub const MAX_TIME_NS: u64 = 10_000_000 * 1_000_000_000;

/// A duration in integer nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration(pub i64);

/// A bit rate in bits per second; `None` is unlimited (`"unlimited"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rate(pub Option<u64>);

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Size(pub u64);

impl Duration {
    /// The duration in nanoseconds.
    pub fn ns(self) -> i64 {
        self.0
    }
}

/// Splits `"1.5 ms"` into (1.5, "ms"); the number may be followed by spaces.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == '-' || c == '+')
        })
        .unwrap_or(text.len());
    // An exponent's 'e' could also start a unit; no unit here starts with 'e'.
    let number: String = text[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = number.parse().ok()?;
    Some((value, text[end..].trim()))
}

/// Rounds `value * scale` to an integer, refusing negative, non-finite or huge results.
fn scaled(value: f64, scale: f64) -> Option<u64> {
    let v = (value * scale).round();
    (0.0..9.2e18).contains(&v).then_some(v as u64)
}

/// Parses a duration such as `"20 ms"`, `"1.5s"`, `"250 us"`, `"0"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let q = quote(text);
    let (value, unit) =
        split_number(text).ok_or_else(|| format!("{q} is not a duration such as \"20 ms\""))?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" if value == 0.0 => 0.0,
        "" => return Err(format!("duration {q} needs a unit (ns, us, ms, s or min)")),
        other => {
            return Err(format!(
                "unknown duration unit {} in {q} (use ns, us, ms, s or min)",
                quote(other)
            ))
        }
    };
    match scaled(value, scale) {
        Some(ns) if ns <= MAX_TIME_NS => Ok(Duration(ns as i64)),
        Some(_) => Err(format!(
            "duration {q} is longer than any run can be (at most 10^7 s, 116 days)"
        )),
        None => Err(format!("duration {q} is negative or too large")),
    }
}

/// Parses a bit rate such as `"11 Mbit/s"`, `"9.6 kbit/s"`, `"430kbps"`, `"unlimited"`.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let q = quote(text);
    if text.trim() == "unlimited" {
        return Ok(Rate(None));
    }
    let (value, unit) =
        split_number(text).ok_or_else(|| format!("{q} is not a rate such as \"11 Mbit/s\""))?;
    let scale = match unit {
        "bit/s" | "bps" => 1.0,
        "kbit/s" | "kbps" => 1e3,
        "Mbit/s" | "Mbps" => 1e6,
        "Gbit/s" | "Gbps" => 1e9,
        "B/s" => 8.0,
        "kB/s" => 8e3,
        "MB/s" => 8e6,
        "" => {
            return Err(format!(
                "rate {q} needs a unit (bit/s, kbit/s, Mbit/s, Gbit/s, B/s, kB/s, MB/s)"
            ))
        }
        other => return Err(format!("unknown rate unit {} in {q}", quote(other))),
    };
    match scaled(value, scale) {
        Some(0) => Err(format!(
            "rate {q} is zero (write \"unlimited\" for no limit)"
        )),
        Some(bps) => Ok(Rate(Some(bps))),
        None => Err(format!("rate {q} is negative or too large")),
    }
}

/// Parses a size such as `"3.57 MB"`, `"128 KiB"`, `"1500 B"`, `"1500"`.
pub fn parse_size(text: &str) -> Result<Size, String> {
    let q = quote(text);
    let (value, unit) =
        split_number(text).ok_or_else(|| format!("{q} is not a size such as \"128 KiB\""))?;
    let scale = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown size unit {} in {q} (use B, kB, MB, GB, KiB, MiB, GiB)",
                quote(other)
            ))
        }
    };
    scaled(value, scale)
        .map(Size)
        .ok_or_else(|| format!("size {q} is negative or too large"))
}

/// A serde visitor accepting a string (parsed by `parse`) or, when `bare` names what a
/// bare integer means, an integer.
struct UnitVisitor<T> {
    expecting: &'static str,
    parse: fn(&str) -> Result<T, String>,
    bare_integer: Option<fn(u64) -> T>,
}

impl<T> Visitor<'_> for UnitVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        match (self.bare_integer, u64::try_from(v)) {
            (Some(make), Ok(v)) => Ok(make(v)),
            (Some(_), Err(_)) => Err(E::custom(format!("{v} is negative"))),
            (None, _) if v == 0 => (self.parse)("0").map_err(E::custom),
            (None, _) => Err(E::custom(format!(
                "{v} needs a unit: write {}",
                self.expecting
            ))),
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_i64(i64::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))?)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!(
            "{v} needs a unit: write {}",
            self.expecting
        )))
    }
}

/// An optional duration that a plan or `--set` can also turn off: a duration such as
/// `"2 s"`, or `false` (off, as when the key is absent). For `#[serde(deserialize_with)]`.
pub fn duration_or_off<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    struct OrOff;
    impl Visitor<'_> for OrOff {
        type Value = Option<Duration>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a duration such as \"2 s\", or false (off)")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            if v {
                Err(E::custom(
                    "true is not a duration: write one such as \"2 s\", or false (off)",
                ))
            } else {
                Ok(None)
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            parse_duration(v).map(Some).map_err(E::custom)
        }
    }
    d.deserialize_any(OrOff)
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            expecting: "a duration such as \"20 ms\"",
            parse: parse_duration,
            bare_integer: None,
        })
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            expecting: "a rate such as \"11 Mbit/s\" or \"unlimited\"",
            parse: parse_rate,
            bare_integer: None,
        })
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            expecting: "a size in bytes such as 1500 or \"128 KiB\"",
            parse: parse_size,
            bare_integer: Some(Size),
        })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} s", self.0 as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20 ms"), Ok(Duration(20_000_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration(1_500_000_000)));
        assert_eq!(parse_duration("250 us"), Ok(Duration(250_000)));
        assert_eq!(parse_duration("0"), Ok(Duration(0)));
        assert_eq!(parse_duration("10_000 s"), Ok(Duration(10_000_000_000_000)));
        assert!(parse_duration("20").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("-1 s").is_err());
        assert!(parse_duration("5 fortnights")
            .unwrap_err()
            .contains("unknown duration unit"));
    }

    #[test]
    fn a_setting_that_can_be_off_takes_a_duration_or_false() {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default, deserialize_with = "duration_or_off")]
            every: Option<Duration>,
        }
        let read = |text: &str| toml::from_str::<Probe>(text).map(|p| p.every);
        assert_eq!(
            read("every = \"2 s\"").unwrap(),
            Some(Duration(2_000_000_000))
        );
        assert_eq!(read("every = false").unwrap(), None);
        assert_eq!(read("").unwrap(), None);
        let wrong = read("every = true").unwrap_err().to_string();
        assert!(wrong.contains("true is not a duration"), "{wrong}");
        let wrong = read("every = 2").unwrap_err().to_string();
        assert!(
            wrong.contains("a duration such as \"2 s\", or false (off)"),
            "{wrong}"
        );
    }

    #[test]
    fn impossible_times_are_refused_and_long_input_quoted_short() {
        assert_eq!(
            parse_duration("10000000 s"),
            Ok(Duration(10_000_000_000_000_000))
        );
        assert_eq!(
            parse_duration("1e9 s"),
            Err(
                "duration \"1e9 s\" is longer than any run can be (at most 10^7 s, 116 days)"
                    .into()
            )
        );
        let long = format!("1 {}", "x".repeat(10_000_000));
        let e = parse_duration(&long).unwrap_err();
        assert!(e.len() < 200, "{e}");
        assert!(e.contains("(10000002 bytes)"), "{e}");
        assert!(parse_size(&long).unwrap_err().len() < 200);
        assert!(parse_rate(&long).unwrap_err().len() < 200);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("11 Mbit/s"), Ok(Rate(Some(11_000_000))));
        assert_eq!(parse_rate("9.6 kbit/s"), Ok(Rate(Some(9_600))));
        assert_eq!(parse_rate("430kbps"), Ok(Rate(Some(430_000))));
        assert_eq!(parse_rate("1200 B/s"), Ok(Rate(Some(9_600))));
        assert_eq!(parse_rate("unlimited"), Ok(Rate(None)));
        assert!(parse_rate("0 bit/s").unwrap_err().contains("unlimited"));
        assert!(parse_rate("11").unwrap_err().contains("needs a unit"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("3.57 MB"), Ok(Size(3_570_000)));
        assert_eq!(parse_size("128 KiB"), Ok(Size(131_072)));
        assert_eq!(parse_size("1500"), Ok(Size(1500)));
        assert!(parse_size("1 parsec").is_err());
    }

    #[test]
    fn from_toml() {
        #[derive(Deserialize)]
        struct T {
            d: Duration,
            r: Rate,
            s: Size,
            n: Size,
        }
        let t: T = toml::from_str("d = \"5 ms\"\nr = \"2 Mbit/s\"\ns = \"1 KiB\"\nn = 50").unwrap();
        assert_eq!(
            (t.d, t.r, t.s, t.n),
            (
                Duration(5_000_000),
                Rate(Some(2_000_000)),
                Size(1024),
                Size(50)
            )
        );
        let err = toml::from_str::<T>("d = 5\nr = \"2 Mbit/s\"\ns = 1\nn = 1")
            .err()
            .unwrap();
        assert!(err.message().contains("needs a unit"), "{err}");
    }
}
