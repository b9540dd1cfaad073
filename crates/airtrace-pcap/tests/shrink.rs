//! A capture that another process truncates while it is read (a rotated or rewritten
//! file): the reader maps the file, and on Linux a touch of a page past the new end,
//! which raised SIGBUS and killed the process (issue 19, item 2), now reads zeros while
//! the reader stops at the last whole record before the cut, returns every record before
//! it, and ends with an error naming the file and the byte where it stopped.
//!
//! Each test truncates the file from the test itself (`File::set_len`) between two
//! records, so where the reader is, and so what it must return, is known.

#![cfg(target_os = "linux")]

mod common;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use airtrace_pcap::{
    ByteOrder, CaptureReader, ErrorKind, Interface, PcapNgWriter, PcapWriter, Place, ReadError,
    Resolution, TsResolution,
};
use common::{reading, Rec};

/// The SIGBUS handler's table of mapped readers (64 slots) is one per process, and the
/// tests run on threads of one process. While `more_files_than_slots` holds 80 readers, a
/// reader another test opens finds no slot and reads with `read()`, whose 64 KiB buffer
/// already holds the records past a cut (it once read 64 records of `emptied_file`'s
/// emptied file instead of 1). The tests that read across a cut share the table; that
/// one takes it whole.
static SLOT_TABLE: RwLock<()> = RwLock::new(());

/// Held by a test whose readers must be mapped.
fn sharing_the_slot_table() -> RwLockReadGuard<'static, ()> {
    SLOT_TABLE.read().unwrap_or_else(PoisonError::into_inner)
}

/// A directory of its own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "airtrace-pcap-shrink-{}-{test}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

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

/// Records of 1000 bytes, none of them zero (so that zeros read in their place show).
const RECORDS: u64 = 4000;
const CAPLEN: usize = 1000;

fn payload(i: u64) -> Vec<u8> {
    vec![(i % 250) as u8 + 1; CAPLEN]
}

/// A pcap of [`RECORDS`] records: 24 + 4000 × 1016 bytes, about 4 MB.
fn big_pcap() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Nano).unwrap();
    for i in 0..RECORDS {
        w.write_packet(1_700_000_000_000_000_000 + i as i64, &payload(i), 1514)
            .unwrap();
    }
    w.into_inner()
}

/// The same records as Enhanced Packet Blocks.
fn big_pcapng() -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Little).unwrap();
    let iface = Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::NANO,
        offset_s: 0,
    };
    let id = w.add_interface(&iface).unwrap();
    for i in 0..RECORDS {
        w.write_packet(id, 1_700_000_000_000_000_000 + i as i64, &payload(i), 1514)
            .unwrap();
    }
    w.into_inner()
}

/// The records of `bytes`, and the offset where each ends, read from memory.
fn expected(bytes: &[u8]) -> (Vec<Rec>, Vec<u64>) {
    let reader = CaptureReader::from_reader("expected", std::io::Cursor::new(bytes.to_vec()));
    let read = reading(reader.unwrap());
    assert_eq!(read.error, None);
    (read.recs, read.positions)
}

fn truncate(path: &Path, len: u64) {
    OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn owned(reader: &mut CaptureReader) -> Option<Result<Rec, ReadError>> {
    reader.next_record().map(|next| {
        next.map(|r| Rec {
            frame: r.frame,
            ts_ns: r.ts_ns,
            interface: r.interface,
            linktype: r.linktype,
            orig_len: r.orig_len,
            data: r.data.to_vec(),
        })
    })
}

/// Opens `path`, reads `before` records, truncates the file to `len` bytes, and reads
/// on: returns every record read and the error that ended them.
fn read_across_a_cut(path: &Path, before: usize, len: u64) -> (Vec<Rec>, ReadError) {
    let mut reader = CaptureReader::open(path).unwrap();
    let mut recs = Vec::new();
    for _ in 0..before {
        recs.push(owned(&mut reader).unwrap().unwrap());
    }
    truncate(path, len);
    let error = loop {
        match owned(&mut reader) {
            Some(Ok(rec)) => recs.push(rec),
            Some(Err(e)) => break e,
            None => panic!("the reader ended without an error after a cut"),
        }
    };
    assert!(
        owned(&mut reader).is_none(),
        "the reader must stay finished"
    );
    (recs, error)
}

/// The cut falls ahead of the reader, inside record 2001: the reader returns the 2000
/// records before it, untouched, and stops where record 2001 starts.
fn cut_ahead(name: &str, bytes: Vec<u8>) {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new(name);
    let path = dir.file(name, &bytes);
    let (all, ends) = expected(&bytes);
    let len = ends[1999] + 500;
    let (recs, error) = read_across_a_cut(&path, 10, len);
    assert_eq!(recs.len(), 2000);
    assert!(recs == all[..2000], "a record changed");
    assert!(
        matches!(error.kind, ErrorKind::Shrank { from, to } if from == bytes.len() as u64 && to == len),
        "{error}"
    );
    assert_eq!(error.place, Place::Byte(ends[1999]));
    assert_eq!(error.frames_read, 2000);
    assert!(error.is_truncated());
    assert_eq!(
        error.to_string(),
        format!(
            "{}: byte {}: the file shrank from {} to {len} bytes while it was read",
            path.display(),
            ends[1999],
            bytes.len()
        )
    );
}

#[test]
fn pcap_cut_ahead_of_the_reader_ends_at_the_last_whole_record() {
    cut_ahead("ahead.pcap", big_pcap());
}

#[test]
fn pcapng_cut_ahead_of_the_reader_ends_at_the_last_whole_block() {
    cut_ahead("ahead.pcapng", big_pcapng());
}

/// The cut falls behind the reader, which has read 1500 records (1.5 MB, several
/// windows): the page of the next record is gone, and the reader stops there.
fn cut_behind(name: &str, bytes: Vec<u8>) {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new(name);
    let path = dir.file(name, &bytes);
    let (all, ends) = expected(&bytes);
    let (recs, error) = read_across_a_cut(&path, 1500, 100_000);
    assert!(
        recs == all[..1500],
        "{} records, or a record changed",
        recs.len()
    );
    assert!(
        matches!(error.kind, ErrorKind::Shrank { to: 100_000, .. }),
        "{error}"
    );
    assert_eq!(error.place, Place::Byte(ends[1499]));
    assert_eq!(error.frames_read, 1500);
}

#[test]
fn pcap_cut_behind_the_reader_ends_where_it_is() {
    cut_behind("behind.pcap", big_pcap());
}

#[test]
fn pcapng_cut_behind_the_reader_ends_where_it_is() {
    cut_behind("behind.pcapng", big_pcapng());
}

/// The cut falls inside the window the reader has already checked (256 KiB from the
/// start of the file, where it has read 10 records), within record 101: nothing faults
/// (the page of the cut is still the file's, and reads as zeros past the new end).
/// pcapng sees it at once, in block 101's trailing length: the reader returns the 100
/// whole records. pcap cannot see it before it lends record 101, whose tail past the cut
/// reads as zeros; the record header of zeros after it is caught, and the reader stops
/// there. This is the narrow case the reader sees late (see "A file that shrinks" in
/// input.rs): a truncation in the few hundred kilobytes ahead of the reader, after it
/// checked them.
#[test]
fn cut_inside_the_checked_window() {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new("window");
    for (name, bytes) in [("window.pcapng", big_pcapng()), ("window.pcap", big_pcap())] {
        let path = dir.file(name, &bytes);
        let (all, ends) = expected(&bytes);
        let len = ends[99] + 500;
        let (recs, error) = read_across_a_cut(&path, 10, len);
        assert!(recs[..100] == all[..100], "{name}");
        assert!(
            matches!(error.kind, ErrorKind::Shrank { to, .. } if to == len),
            "{name}: {error}"
        );
        if name.ends_with(".pcapng") {
            assert_eq!(recs.len(), 100, "{name}");
            assert_eq!(error.place, Place::Byte(ends[99]), "{name}");
        } else {
            assert_eq!(recs.len(), 101, "{name}");
            let data = &recs[100].data;
            let kept = 500 - 16;
            assert_eq!(data[..kept], all[100].data[..kept], "{name}");
            assert!(data[kept..].iter().all(|&b| b == 0), "{name}");
            assert_eq!(error.place, Place::Byte(ends[100]), "{name}");
        }
    }
}

/// A file emptied (as `logrotate`'s copytruncate does) after the reader's first record.
#[test]
fn emptied_file() {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new("emptied");
    let bytes = big_pcap();
    let path = dir.file("emptied.pcap", &bytes);
    let (recs, error) = read_across_a_cut(&path, 1, 0);
    assert_eq!(recs.len(), 1);
    assert!(
        matches!(error.kind, ErrorKind::Shrank { to: 0, .. }),
        "{error}"
    );
    assert_eq!(error.place, Place::Byte(24 + 1016));
}

/// A cut inside the last page of the file, which no fault can reveal (the page is
/// still the file's; the bytes past the new end read as zeros): the file's length is
/// compared when the reader gets to the last window.
#[test]
fn cut_in_the_last_page() {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new("last-page");
    let bytes = big_pcap();
    let path = dir.file("last-page.pcap", &bytes);
    let (all, ends) = expected(&bytes);
    let len = bytes.len() as u64 - 100;
    let (recs, error) = read_across_a_cut(&path, 10, len);
    assert!(recs == all[..all.len() - 1]);
    assert!(matches!(error.kind, ErrorKind::Shrank { to, .. } if to == len));
    assert_eq!(error.place, Place::Byte(ends[RECORDS as usize - 2]));
}

/// A cut in one file leaves another mapped at the same time alone.
#[test]
fn other_maps_are_not_affected() {
    let _maps = sharing_the_slot_table();
    let dir = TempDir::new("two");
    let bytes = big_pcap();
    let (cut, whole) = (dir.file("cut.pcap", &bytes), dir.file("whole.pcap", &bytes));
    let mut other = CaptureReader::open(&whole).unwrap();
    for _ in 0..10 {
        owned(&mut other).unwrap().unwrap();
    }
    let (recs, _) = read_across_a_cut(&cut, 10, 50_000);
    assert!(recs.len() < 100);
    let rest = reading(other);
    assert_eq!((rest.recs.len(), rest.error), (RECORDS as usize - 10, None));
}

/// More files open than the SIGBUS handler's table has slots (64): the others are read
/// with `read()`, and every one reads whole.
#[test]
fn more_files_than_slots() {
    let _all_slots = SLOT_TABLE.write().unwrap_or_else(PoisonError::into_inner);
    let dir = TempDir::new("many");
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Micro).unwrap();
    for i in 0..3 {
        w.write_packet(i, &[7; 60], 60).unwrap();
    }
    let path = dir.file("small.pcap", &w.into_inner());
    let readers: Vec<CaptureReader> = (0..80)
        .map(|_| CaptureReader::open(&path).unwrap())
        .collect();
    for reader in readers {
        let read = reading(reader);
        assert_eq!((read.recs.len(), read.error), (3, None));
    }
}

/// A SIGBUS that is not in a reader's map still ends the process as it would without
/// airtrace: this test runs itself again as a child that maps a file of its own
/// (with the handler installed by a reader), truncates it and touches it.
#[test]
fn other_bus_errors_still_kill() {
    use std::os::unix::process::ExitStatusExt;
    const CHILD: &str = "AIRTRACE_PCAP_SHRINK_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return bus_error_outside_the_maps();
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "other_bus_errors_still_kill",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGBUS), "{status}");
}

#[allow(unsafe_code)]
fn bus_error_outside_the_maps() {
    let dir = TempDir::new("child");
    let bytes = big_pcap();
    let path = dir.file("reader.pcap", &bytes);
    let mut reader = CaptureReader::open(&path).unwrap();
    owned(&mut reader).unwrap().unwrap();
    let own = dir.file("own.bin", &bytes);
    // SAFETY: the test's own map, which it truncates to raise SIGBUS on purpose.
    let map = unsafe { memmap2::Mmap::map(&File::open(&own).unwrap()) }.unwrap();
    truncate(&own, 0);
    let sum: u32 = map.iter().map(|&b| u32::from(b)).sum();
    // Not reached: the child dies of SIGBUS above.
    println!("{sum}");
}
