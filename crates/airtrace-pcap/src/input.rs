//! [`Input`]: the refillable byte buffer between a file (plain or gzip) and the parsers.
//!
//! Parsers ask for `n` contiguous bytes with [`Input::fill`], look at them with
//! [`Input::bytes`], and move past them with [`Input::consume`]. A parser may keep using
//! the range it consumed until its next call to `fill`, which is what lets records be
//! lent without a copy.
//!
//! The buffer starts at 64 KiB and doubles at each refill up to 256 KiB, so that small
//! files cost little and big ones are read in big reads. Past that it only grows for a
//! record larger than itself, and then only as the record's bytes arrive: memory is
//! bounded by the largest record, whatever a length field claims.

use std::io::{self, Chain, Cursor, Read};

use flate2::read::MultiGzDecoder;

/// Size the buffer grows to, and so of most reads. Timed with `examples/count.rs`
/// (median of 5 runs, 3 rounds, from page cache) on 5 M records of 96 bytes and 1 M of
/// 1500: 256 KiB gave 5.2 and 7.1 GB/s, 64 KiB 4.9 and 6.8, 1 MiB 5.0 and 6.5, 4 MiB 4.1
/// and 5.5: the buffer that stays in the L2 cache wins.
const BUF_SIZE: usize = 256 << 10;
/// Size of the first buffer.
const FIRST_BUF_SIZE: usize = 64 << 10;

/// A reader that counts the bytes read through it.
pub(crate) struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// The raw file: the bytes already read to sniff the magic number, then the rest.
type Raw = Chain<Cursor<Vec<u8>>, Counted<Box<dyn Read + Send>>>;

enum Source {
    Plain(Raw),
    Gzip(Box<MultiGzDecoder<Raw>>),
}

/// The buffered, possibly decompressed, byte stream of a capture file.
pub(crate) struct Input {
    source: Source,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    /// The source returned end of file (or, for gzip, a cut-off stream).
    eof: bool,
    /// The gzip stream ended before its trailer.
    cut_short: bool,
}

impl Input {
    /// Wraps `reader`, sniffing the gzip magic (1f 8b). Returns the input and whether it
    /// is compressed.
    pub(crate) fn new(reader: Box<dyn Read + Send>) -> io::Result<(Input, bool)> {
        let mut raw = Counted {
            inner: reader,
            count: 0,
        };
        let mut head = [0u8; 2];
        let got = read_up_to(&mut raw, &mut head)?;
        let gzip = head[..got] == [0x1f, 0x8b];
        let raw: Raw = Cursor::new(head[..got].to_vec()).chain(raw);
        let source = if gzip {
            Source::Gzip(Box::new(MultiGzDecoder::new(raw)))
        } else {
            Source::Plain(raw)
        };
        let input = Input {
            source,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            cut_short: false,
        };
        Ok((input, gzip))
    }

    /// Offset, in the (decompressed) stream, of the first unconsumed byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes read from the underlying file: for a plain file, the bytes consumed by the
    /// parser; for gzip, the compressed bytes the decoder has pulled in.
    pub(crate) fn position(&self) -> u64 {
        match &self.source {
            Source::Plain(_) => self.offset,
            Source::Gzip(d) => d.get_ref().get_ref().1.count,
        }
    }

    /// Whether a gzip stream ended before its end-of-stream trailer.
    pub(crate) fn cut_short(&self) -> bool {
        self.cut_short
    }

    /// Makes at least `need` unconsumed bytes available, unless the file ends first.
    /// Returns the number available (less than `need` only at end of file).
    #[inline]
    pub(crate) fn fill(&mut self, need: usize) -> io::Result<usize> {
        let have = self.end - self.start;
        if have >= need || self.eof {
            return Ok(have);
        }
        self.fill_slow(need)
    }

    #[cold]
    fn fill_slow(&mut self, need: usize) -> io::Result<usize> {
        // Move the partial record to the front, so that the read is a big one.
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        // Start small, for small files, and double at each refill up to BUF_SIZE.
        if self.buf.len() < BUF_SIZE {
            self.grow((self.buf.len() * 2).clamp(FIRST_BUF_SIZE, BUF_SIZE));
        }
        while self.end < need {
            if self.end == self.buf.len() {
                // A record larger than the buffer: grow by doubling, up to what it needs,
                // so that a length field claiming 200 MiB in a small (or decompression
                // bomb) file costs only what is there.
                self.grow((self.buf.len() * 2).clamp(BUF_SIZE, need.max(BUF_SIZE)));
            }
            let room = &mut self.buf[self.end..];
            let read = match &mut self.source {
                Source::Plain(r) => r.read(room),
                Source::Gzip(r) => r.read(room),
            };
            match read {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::UnexpectedEof
                        && matches!(self.source, Source::Gzip(_)) =>
                {
                    self.eof = true;
                    self.cut_short = true;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.end - self.start)
    }

    fn grow(&mut self, len: usize) {
        if self.buf.is_empty() {
            // Zeroed by the allocator, so pages never reached are never touched.
            self.buf = vec![0; len];
        } else {
            self.buf.resize(len, 0);
        }
    }

    /// The unconsumed bytes (as many as the last `fill` made available, or more).
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Moves past `n` bytes, returning the buffer index where they start, valid for
    /// [`Input::buffer`] until the next call to `fill`. `n` must be at most the number
    /// of available bytes.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) -> usize {
        debug_assert!(n <= self.end - self.start);
        let at = self.start;
        self.start += n;
        self.offset += n as u64;
        at
    }

    /// The whole buffer, to index with a range returned by [`Input::consume`].
    #[inline]
    pub(crate) fn buffer(&self) -> &[u8] {
        &self.buf
    }
}

/// Reads until `buf` is full or the reader ends; returns the number of bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per call.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn fill_gathers_short_reads_and_grows_for_big_records() {
        let data: Vec<u8> = (0..3 * BUF_SIZE as u32).map(|i| i as u8).collect();
        let trickle = Trickle {
            data: data.clone(),
            pos: 0,
            step: 7,
        };
        let (mut input, gzip) = Input::new(Box::new(trickle)).unwrap();
        assert!(!gzip);
        assert!(input.fill(10).unwrap() >= 10);
        assert_eq!(input.bytes()[..10], data[..10]);
        input.consume(3);
        // Larger than the buffer: it grows.
        let need = 2 * BUF_SIZE + 5;
        assert!(input.fill(need).unwrap() >= need);
        assert_eq!(input.offset(), 3);
        assert_eq!(input.bytes()[..need], data[3..3 + need]);
        let at = input.consume(need);
        assert_eq!(input.buffer()[at..at + 4], data[3..7]);
        // Only what is left comes back at the end.
        let left = data.len() - 3 - need;
        assert_eq!(input.fill(BUF_SIZE).unwrap(), left);
        assert_eq!(input.position(), input.offset());
        assert!(!input.cut_short());
    }
}
