//! The real-capture corpus (`shared/corpus/real`, beside the repository): every file
//! opens and reads to the end with the frame count, link type and format of its
//! MANIFEST.md row, plausible first and last times and the listed duration; and the
//! time of every frame tshark flagged (`tshark-ref/*.flags.tsv`) is tshark's, to the
//! nanosecond.
//!
//! Every file also reads the same opened by path (memory-mapped, unless compressed) as
//! streamed through `CaptureReader::from_reader`.
//!
//! Without the directory the test is skipped, unless `CI=true`: then it fails.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use airtrace_pcap::{CaptureReader, Format};

/// 1990-01-01 and 2030-01-01, in seconds since the epoch.
const PLAUSIBLE_S: (i64, i64) = (631_152_000, 1_893_456_000);

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/real");
    if dir.join("MANIFEST.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("corpus directory {} is missing (CI=true)", dir.display());
    }
    eprintln!("skipping: no corpus at {}", dir.display());
    None
}

/// One row of the MANIFEST.md table.
struct Row {
    file: String,
    pkts: u64,
    linktype: u32,
    format: Format,
    dur_s: f64,
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

fn manifest(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).unwrap();
    // The first table: its header, a separator line, then rows up to a blank line.
    let mut lines = text.lines().skip_while(|l| !l.starts_with("| file |"));
    let names = cells(lines.next().expect("table header"));
    let col = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (file, pkts, link, dur) = (
        col("file"),
        col("pkts"),
        col("link type (format)"),
        col("dur (s)"),
    );
    let mut rows = Vec::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let c = cells(line);
        let link_cell = &c[link];
        let linktype = match link_cell.split(' ').next().unwrap() {
            "ether" => 1,
            "fddi-swapped" => 10,
            "linux-sll" => 113,
            "ieee-802-11-radiotap" => 127,
            other => panic!("unknown link type {other} in MANIFEST.md"),
        };
        let format = if link_cell.contains("(pcapng)") {
            Format::PcapNg
        } else {
            Format::Pcap
        };
        let dur_s = c[dur].split(' ').next().unwrap().parse().unwrap();
        rows.push(Row {
            file: c[file].trim_matches('`').to_string(),
            pkts: c[pkts].parse().unwrap(),
            linktype,
            format,
            dur_s,
        });
    }
    rows
}

/// "12.345678900" or "-0.5" seconds, exactly, in nanoseconds.
fn parse_ns(s: &str) -> i64 {
    let (sign, s) = s.strip_prefix('-').map_or((1, s), |rest| (-1, rest));
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<9}");
    sign * (int.parse::<i64>().unwrap() * 1_000_000_000 + frac[..9].parse::<i64>().unwrap())
}

#[test]
fn every_corpus_capture_reads_as_the_manifest_and_tshark_say() {
    let Some(dir) = corpus_dir() else { return };
    let rows = manifest(&dir);
    assert!(rows.len() >= 29, "MANIFEST.md lists {} files", rows.len());

    // Every capture in the directory is in the manifest, and the other way round.
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n != "MANIFEST.md")
        .collect();
    let listed: BTreeSet<String> = rows.iter().map(|r| r.file.clone()).collect();
    assert_eq!(on_disk, listed);

    for row in &rows {
        let path = dir.join(&row.file);
        let mut reader = CaptureReader::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reader.format(), row.format, "{}", row.file);
        assert_eq!(
            reader.compressed(),
            row.file.ends_with(".gz"),
            "{}",
            row.file
        );
        let mut ts = Vec::new();
        while let Some(r) = reader.next_record() {
            let r = r.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(r.frame, ts.len() as u64 + 1);
            assert_eq!(r.linktype, row.linktype, "{} frame {}", row.file, r.frame);
            assert!(r.data.len() as u64 <= u64::from(r.orig_len).max(r.data.len() as u64));
            ts.push(r.ts_ns);
        }
        assert_eq!(ts.len() as u64, row.pkts, "{}: frame count", row.file);
        assert_eq!(
            reader.position(),
            reader.file_len().unwrap(),
            "{}: whole file read",
            row.file
        );

        let (first, last) = (ts[0], *ts.last().unwrap());
        for t in [first, last] {
            let s = t.div_euclid(1_000_000_000);
            assert!(
                (PLAUSIBLE_S.0..PLAUSIBLE_S.1).contains(&s),
                "{}: time {t} ns",
                row.file
            );
        }
        let dur_s = (last - first) as f64 / 1e9;
        assert!(
            (dur_s - row.dur_s).abs() <= 0.05 + row.dur_s * 1e-3,
            "{}: lasts {dur_s} s, MANIFEST.md says {}",
            row.file,
            row.dur_s
        );

        // Times relative to frame 1, as tshark printed them for the frames it flagged.
        let tsv = dir
            .join("tshark-ref")
            .join(format!("{}.flags.tsv", row.file));
        let text = std::fs::read_to_string(&tsv).unwrap();
        let mut lines = text.lines();
        let names = lines.next().unwrap().split('\t').collect::<Vec<_>>();
        assert_eq!(names[..2], ["frame", "time_rel"]);
        for line in lines {
            let mut fields = line.split('\t');
            let frame: usize = fields.next().unwrap().parse().unwrap();
            let rel = parse_ns(fields.next().unwrap());
            assert_eq!(ts[frame - 1] - first, rel, "{} frame {frame}", row.file);
        }
    }
}

/// Every corpus file reads the same opened by path (mapped, for the uncompressed ones) as
/// streamed through `from_reader`: records, end, and progress after every record.
#[test]
fn every_corpus_capture_reads_the_same_mapped_and_streamed() {
    let Some(dir) = corpus_dir() else { return };
    for row in manifest(&dir) {
        let read = common::read_both_ways(&dir.join(&row.file));
        assert_eq!(read.error, None, "{}", row.file);
        assert_eq!(read.recs.len() as u64, row.pkts, "{}", row.file);
    }
}

#[test]
fn parse_ns_is_exact() {
    assert_eq!(parse_ns("0.000201000"), 201_000);
    assert_eq!(parse_ns("128911033.782"), 128_911_033_782_000_000);
    assert_eq!(parse_ns("-1.5"), -1_500_000_000);
    assert_eq!(parse_ns("3"), 3_000_000_000);
}
