//! Files opened by path: an uncompressed file is read through a memory map, everything
//! else (gzip, special files, empty files) with `read()`. Whichever way, the records, the
//! errors with their byte offsets, and the progress count are those of
//! [`CaptureReader::from_reader`] over the same bytes. (The corpus is compared the same
//! way in `corpus.rs`.)

mod common;

use std::path::{Path, PathBuf};

use airtrace_pcap::{
    ByteOrder, CaptureReader, ErrorKind, Interface, PcapNgWriter, PcapWriter, Place, ReadError,
    Resolution, TsResolution,
};
use common::{drain, read_both_ways, reading};

/// A directory of its own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("airtrace-pcap-files-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `bytes` to the file `name` in the directory.
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The error that `open` returns for `path`.
fn open_error(path: &Path) -> ReadError {
    match CaptureReader::open(path) {
        Ok(_) => panic!("{} opened, but should not", path.display()),
        Err(e) => e,
    }
}

/// A pcap of three 60-byte records: 24 + 3 × 76 = 252 bytes.
fn three_records() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Micro).unwrap();
    for i in 0..3 {
        w.write_packet(i * 1_000_000, &[i as u8; 60], 60).unwrap();
    }
    w.into_inner()
}

/// A pcapng of one interface and three 60-byte packets: 28 + 20 + 3 × 92 = 324 bytes.
fn ng_three_packets(order: ByteOrder) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new(), order).unwrap();
    let interface = Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::MICRO,
        offset_s: 0,
    };
    w.add_interface(&interface).unwrap();
    for i in 0..3 {
        w.write_packet(0, i * 1_000_000, &[i as u8; 60], 60)
            .unwrap();
    }
    w.into_inner()
}

#[test]
fn pcap_file_cut_inside_a_record() {
    let dir = TempDir::new("pcap-cut");
    let path = dir.file("cut.pcap", &three_records()[..252 - 30]);
    let read = read_both_ways(&path);
    assert_eq!(read.recs.len(), 2);
    assert_eq!(
        read.error.unwrap(),
        format!(
            "{}: record 3 at byte 176: file ends inside the record (needs 76 bytes, 46 left)",
            path.display()
        )
    );
    // Progress: after each record, and where the error was found.
    assert_eq!(read.positions, [100, 176, 176, 176]);

    let mut reader = CaptureReader::open(&path).unwrap();
    let (recs, error) = drain(&mut reader);
    let error = error.unwrap();
    assert_eq!(recs.len(), 2);
    assert!(error.is_truncated());
    assert_eq!(
        error.place,
        Place::Record {
            frame: 3,
            offset: 176
        }
    );
    assert_eq!(error.frames_read, 2);
}

#[test]
fn pcap_file_cut_inside_a_record_header_and_between_records() {
    let dir = TempDir::new("pcap-cut-header");
    let mut bytes = three_records();
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    let path = dir.file("cut-header.pcap", &bytes);
    let read = read_both_ways(&path);
    assert_eq!(read.recs.len(), 3);
    assert_eq!(
        read.error.unwrap(),
        format!(
            "{}: record 4 at byte 252: file ends inside the record header (needs 16 bytes, 5 left)",
            path.display()
        )
    );

    let path = dir.file("between.pcap", &three_records()[..176]);
    let read = read_both_ways(&path);
    assert_eq!((read.recs.len(), read.error), (2, None));
    assert_eq!(read.positions.last(), Some(&176));
}

#[test]
fn pcapng_file_cut_inside_a_block() {
    let dir = TempDir::new("pcapng-cut");
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let bytes = ng_three_packets(order);
        assert_eq!(bytes.len(), 324);
        let path = dir.file("cut.pcapng", &bytes[..300]);
        let read = read_both_ways(&path);
        assert_eq!(read.recs.len(), 2, "{order:?}");
        assert_eq!(
            read.error.unwrap(),
            format!(
                "{}: record 3 at byte 232: file ends inside the block (needs 92 bytes, 68 left)",
                path.display()
            )
        );
        // Whole: every record, and the position at the end of the file.
        let path = dir.file("whole.pcapng", &bytes);
        let read = read_both_ways(&path);
        assert_eq!((read.recs.len(), read.error), (3, None));
        assert_eq!(read.positions.last(), Some(&324));
    }
}

#[test]
fn empty_and_tiny_files() {
    let dir = TempDir::new("empty");
    // Zero bytes cannot be mapped: read, and refused as with `from_reader`.
    let path = dir.file("empty.pcap", &[]);
    let e = open_error(&path);
    assert_eq!(e.to_string(), format!("{}: empty file", path.display()));
    assert!(matches!(e.kind, ErrorKind::Empty));
    assert_eq!(e.place, Place::File);

    let path = dir.file("three.pcap", &[0xd4, 0xc3, 0xb2]);
    assert_eq!(
        open_error(&path).to_string(),
        format!(
            "{}: byte 0: file ends inside the magic number (needs 4 bytes, 3 left)",
            path.display()
        )
    );
    let path = dir.file("header.pcap", &three_records()[..10]);
    assert_eq!(
        open_error(&path).to_string(),
        format!(
            "{}: byte 0: file ends inside the file header (needs 24 bytes, 10 left)",
            path.display()
        )
    );
    let path = dir.file("page.pcap", b"<html><head>");
    assert_eq!(
        open_error(&path).to_string(),
        format!(
            "{}: byte 0: not a capture file (magic number 0x3c68746d)",
            path.display()
        )
    );
    // Only a file header: no records, and the position at its end.
    let path = dir.file("no-records.pcap", &three_records()[..24]);
    let read = read_both_ways(&path);
    assert_eq!((read.recs.len(), read.error), (0, None));
    assert_eq!(read.positions, [24]);
}

/// Records larger than the read path's buffer (256 KiB) and many small ones, in both
/// formats; and the same bytes gzip-compressed, which `open` reads rather than maps.
#[test]
fn big_and_many_records_and_gzip() {
    let dir = TempDir::new("big");
    let big: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
    let mut pcap = PcapWriter::new(Vec::new(), 1, 0, Resolution::Nano).unwrap();
    let mut ng = PcapNgWriter::new(Vec::new(), ByteOrder::Big).unwrap();
    let interface = Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::NANO,
        offset_s: 0,
    };
    ng.add_interface(&interface).unwrap();
    for i in 0..5_000u32 {
        let n = if i % 1000 == 0 {
            big.len()
        } else {
            (i % 1500) as usize
        };
        pcap.write_packet(i64::from(i), &big[..n], n as u32)
            .unwrap();
        ng.write_packet(0, i64::from(i), &big[..n], n as u32)
            .unwrap();
    }
    for (name, bytes) in [
        ("big.pcap", pcap.into_inner()),
        ("big.pcapng", ng.into_inner()),
    ] {
        let path = dir.file(name, &bytes);
        let read = read_both_ways(&path);
        assert_eq!((read.recs.len(), &read.error), (5_000, &None), "{name}");
        assert_eq!(read.recs[1000].data, big, "{name}");
        assert_eq!(read.positions.last(), Some(&(bytes.len() as u64)), "{name}");
        // Positions only grow.
        assert!(read.positions.windows(2).all(|w| w[0] <= w[1]), "{name}");

        let packed = common::gzip(&bytes);
        let path = dir.file(&format!("{name}.gz"), &packed);
        let mut reader = CaptureReader::open(&path).unwrap();
        assert!(reader.compressed());
        let (recs, error) = drain(&mut reader);
        assert!(error.is_none(), "{name}.gz: {error:?}");
        assert_eq!(recs, read.recs, "{name}.gz");
        assert_eq!(reader.position(), packed.len() as u64, "{name}.gz");
        // Cut inside the compressed stream: the same records as the cut plain stream.
        let path = dir.file(&format!("cut-{name}.gz"), &packed[..packed.len() / 2]);
        let gz = reading(CaptureReader::open(&path).unwrap());
        assert!(gz.error.unwrap().contains("file ends inside"), "{name}.gz");
        assert_eq!(gz.recs, read.recs[..gz.recs.len()], "{name}.gz");
    }
}

/// Special files are not mapped: they are read as a stream.
#[cfg(unix)]
#[test]
fn special_files_are_read() {
    let e = open_error(Path::new("/dev/null"));
    assert_eq!(e.to_string(), "/dev/null: empty file");

    // A named pipe, written by another thread while the reader reads it.
    let dir = TempDir::new("fifo");
    let path = dir.0.join("capture.pcap");
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipping the named pipe: mkfifo failed");
        return;
    }
    let bytes = three_records();
    let writer = {
        let (path, bytes) = (path.clone(), bytes.clone());
        std::thread::spawn(move || std::fs::write(path, &bytes[..252 - 30]).unwrap())
    };
    let mut reader = CaptureReader::open(&path).unwrap();
    assert_eq!(reader.file_len(), Some(0));
    let (recs, error) = drain(&mut reader);
    writer.join().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(
        error.unwrap().to_string(),
        format!(
            "{}: record 3 at byte 176: file ends inside the record (needs 76 bytes, 46 left)",
            path.display()
        )
    );
}
