//! JSON as Python writes it with `json.dumps(value, indent=2)`: what the Python command
//! line prints after reading the simulator's JSON back into a dict (`airtrace simulate
//! --json`). serde_json's pretty printer lays it out the same way; floats differ (Python
//! writes `repr(x)`: `1e-05`, `1.5e+16`, `100.0`) and so do strings (`ensure_ascii`:
//! everything outside printable ASCII as `\uXXXX`).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};

/// `value` as `json.dumps(json.loads(serde_json::to_string(value)), indent=2)` gives it.
pub fn dumps<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter::default());
    value.serialize(&mut ser)?;
    Ok(String::from_utf8(out).expect("ASCII only"))
}

/// `x` (finite) as Python's `repr` writes a float: the shortest digits that read back
/// as `x`, positional from 1e-4 up to below 1e16, else with an exponent of at least two
/// digits.
pub fn float_repr(x: f64) -> String {
    // Rust's `{:e}` gives the same shortest digits: "-1.5e16", "1e-5", "0e0".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e}'s exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits = mantissa.replace('.', "");
    // x = 0.DIGITS × 10^point, as Python's float_repr_style 'short' reckons it.
    let point = exp + 1;
    let n = digits.len() as i32;
    if !(-4 < point && point <= 16) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{dot}{rest}e{exp_sign}{:02}", exp.abs())
    } else if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat(-point as usize))
    } else if point < n {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}{digits}{}.0", "0".repeat((point - n) as usize))
    }
}

/// serde_json's `PrettyFormatter` (two spaces), with Python's floats and strings.
#[derive(Default)]
struct PythonFormatter(PrettyFormatter<'static>);

impl Formatter for PythonFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(float_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        // serde_json writes an f32's shortest digits, which Python reads as a double.
        let read_back: f64 = value.to_string().parse().expect("a float's text");
        self.write_f64(w, read_back)
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        let mut plain = 0;
        for (i, c) in s.char_indices() {
            if (' '..='~').contains(&c) {
                continue;
            }
            w.write_all(&s.as_bytes()[plain..i])?;
            for unit in c.encode_utf16(&mut [0; 2]).iter() {
                write!(w, "\\u{unit:04x}")?;
            }
            plain = i + c.len_utf8();
        }
        w.write_all(&s.as_bytes()[plain..])
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, e: CharEscape) -> io::Result<()> {
        // serde_json escapes `"`, `\` and control characters as json.dumps does
        // (`\n`, ..., `\u001b`).
        self.0.write_char_escape(w, e)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_writes_them() {
        // Each pair: the value and Python 3.11's repr of it.
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (1.5e16, "1.5e+16"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (1234567890123456.8, "1234567890123456.8"),
            (123456.789, "123456.789"),
            (-2.5e-300, "-2.5e-300"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (349_612.16, "349612.16"),
            (1.0 / 3.0, "0.3333333333333333"),
        ];
        for (x, python) in cases {
            assert_eq!(float_repr(x), python, "{x:e}");
        }
    }

    #[test]
    fn documents_read_as_json_dumps_writes_them() {
        let value = serde_json::json!({
            "name": "caf\u{e9} \u{1f4e1}\t\"q\"\\ \u{7f}\u{1b}",
            "n": 7,
            "x": 2.5e-5,
            "empty": [],
            "none": {},
            "list": [1, 0.5, null, true],
        });
        // json.dumps(json.loads(serde_json::to_string(value)), indent=2); serde_json's
        // map orders keys here.
        let python = "{\n  \"empty\": [],\n  \"list\": [\n    1,\n    0.5,\n    null,\n    true\n  ],\n  \
                      \"n\": 7,\n  \"name\": \"caf\\u00e9 \\ud83d\\udce1\\t\\\"q\\\"\\\\ \\u007f\\u001b\",\n  \
                      \"none\": {},\n  \"x\": 2.5e-05\n}";
        assert_eq!(dumps(&value).unwrap(), python);
    }
}
