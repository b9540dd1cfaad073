//! Files and values a person gives (scenarios, plans, traces): read with a bound on
//! their size, so that a huge or endless file (`/dev/zero`) is an error and not all of
//! memory, and quoted short in messages, so that a 10 MB line is not echoed back whole.

use std::io::{self, Read};
use std::path::Path;

/// Largest scenario or plan file read: 1 MiB (the bundled ones are a few kB).
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// Largest trace file read (delivery traces, loss traces): 256 MiB, a Mahimahi trace of
/// hours at hundreds of Mbit/s.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Longest text quoted in a message, in characters.
const QUOTE_CHARS: usize = 40;

/// The text of the file at `path`, if it holds at most `limit` bytes of UTF-8; a larger
/// (or endless) file is an `InvalidData` error saying so, read no further than the limit.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::other("a directory, not a file"));
    }
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {limit} bytes"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

/// `text` in double quotes, as `{:?}` writes it, cut after its first 40 characters
/// (`"xxxx…" (10000000 bytes)`).
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &text[..cut], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_cut_short() {
        assert_eq!(quote("20 ms"), "\"20 ms\"");
        let long = "x".repeat(10_000_000);
        assert_eq!(
            quote(&long),
            format!("\"{}\"… (10000000 bytes)", "x".repeat(40))
        );
        assert_eq!(
            quote(&"é".repeat(41)),
            format!("\"{}\"… (82 bytes)", "é".repeat(40))
        );
    }

    #[test]
    fn an_endless_file_is_read_no_further_than_the_limit() {
        let e = read_text(Path::new("/dev/zero"), 1000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(e.to_string(), "larger than the limit of 1000 bytes");
        let dir = std::env::temp_dir().join(format!("airtrace-input-{}", std::process::id()));
        std::fs::write(&dir, "0123456789").unwrap();
        assert_eq!(read_text(&dir, 10).unwrap(), "0123456789");
        assert!(read_text(&dir, 9).is_err());
        std::fs::remove_file(&dir).unwrap();
    }
}
