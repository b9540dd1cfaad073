//! Reading one capture file end to end: records → decoder → analyzer.

use std::collections::BTreeMap;
use std::path::Path;

use airtrace_pcap::{CaptureReader, Record};
use airtrace_wire::{decode, linktype_name, peek_tcp, Decoded, LinkType, StopReason, Transport};
use serde::Serialize;

use crate::analyzer::{Analyzer, PacketIn};
use crate::annotation::Annotation;
use crate::flow::Endpoint;
use crate::shard::Sharder;
use crate::metrics::ConnSummary;

/// Receives every packet with its annotation, in capture order.
pub trait PacketSink {
    fn packet(&mut self, record: &Record<'_>, decoded: &Decoded, annotation: &Annotation);
}

/// A sink that keeps nothing: for summaries only.
impl PacketSink for () {
    #[inline]
    fn packet(&mut self, _: &Record<'_>, _: &Decoded, _: &Annotation) {}
}

/// What analysing one file produced.
#[derive(Debug, Serialize)]
pub struct FileReport {
    pub path: String,
    /// Frames read (the last frame number).
    pub frames: u64,
    /// Frames that carried TCP.
    pub tcp_frames: u64,
    /// Problems that did not stop the analysis, one line each.
    pub warnings: Vec<String>,
    /// The error that ended reading early, if any (the file is truncated or corrupt).
    pub error: Option<String>,
    pub connections: Vec<ConnSummary>,
}

/// How often (in frames) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Analyses the capture at `path`. `Err` only when the file could not be opened
/// or no frame could be read; a later error is kept in [`FileReport::error`].
/// `progress` is called now and then with (bytes read, file length).
pub fn analyze_file(
    path: &Path,
    sink: &mut impl PacketSink,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<FileReport, String> {
    let reader = CaptureReader::open(path).map_err(|e| e.to_string())?;
    analyze_capture(reader, &path.display().to_string(), sink, progress)
}

/// Analyses every record of an open capture; `name` names it in messages.
pub fn analyze_capture(
    mut reader: CaptureReader,
    name: &str,
    sink: &mut impl PacketSink,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<FileReport, String> {
    let mut analyzer = Analyzer::new();
    let mut decoded = Decoded::default();
    let mut ann = Annotation::default();
    let mut frames = 0u64;
    let mut tcp_frames = 0u64;
    let mut stops: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut error = None;
    while let Some(next) = reader.next_record() {
        let record = match next {
            Ok(r) => r,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        frames = record.frame;
        decode(LinkType(record.linktype), record.data, record.orig_len, &mut decoded);
        note_stop(&record, &decoded, &mut stops);
        tcp_frames += u64::from(decoded.tcp().is_some());
        let payload = decoded.payload.clone();
        analyzer.process(&PacketIn {
            frame: record.frame,
            ts_ns: record.ts_ns,
            wire_len: record.orig_len,
            decoded: &decoded,
            payload: record.data.get(payload).unwrap_or(&[]),
        }, &mut ann);
        sink.packet(&record, &decoded, &ann);
        if record.frame % PROGRESS_EVERY == 0 {
            progress(reader.position(), reader.file_len());
        }
    }
    progress(reader.position(), reader.file_len());
    report(name, Part { frames, tcp_frames, stops, error, connections: analyzer.finish() })
}

/// Frames that stopped decoding early, by what stopped them: (count, first frame).
type Stops = BTreeMap<String, (u64, u64)>;

/// Counts the frame in `stops` if its decoding stopped on something worth a warning.
#[inline]
fn note_stop(record: &Record<'_>, decoded: &Decoded, stops: &mut Stops) {
    let Some(stop) = decoded.stop else { return };
    let layer = stop.layer.name();
    let what = match stop.reason {
        StopReason::Truncated => Some(format!("cut short by the snap length in the {layer} header")),
        StopReason::Malformed(why) => Some(format!("with a malformed {layer} header ({why})")),
        StopReason::Unsupported if !LinkType::SUPPORTED.contains(&LinkType(record.linktype)) => Some(format!(
            "of link type {} ({}), which airtrace does not decode",
            record.linktype,
            linktype_name(LinkType(record.linktype))
        )),
        // ARP, encrypted 802.11 and the like: nothing to analyse, nothing wrong.
        StopReason::Unsupported => None,
    };
    if let Some(what) = what {
        stops.entry(what).or_insert((0, record.frame)).0 += 1;
    }
}

/// What one pass over a capture found (all of it, or one shard's share).
struct Part {
    frames: u64,
    tcp_frames: u64,
    stops: Stops,
    error: Option<String>,
    connections: Vec<ConnSummary>,
}

/// The report of a whole pass.
fn report(name: &str, part: Part) -> Result<FileReport, String> {
    let Part { frames, tcp_frames, stops, error, connections } = part;
    let name = name.to_string();
    if frames == 0 {
        return Err(error.unwrap_or_else(|| format!("{name}: no packets in the file")));
    }
    let warnings = stops
        .into_iter()
        .map(|(what, (count, first))| format!("{name}: {count} frame(s) {what} (first: frame {first})"))
        .collect();
    Ok(FileReport { path: name, frames, tcp_frames, warnings, error, connections })
}

/// Files smaller than this are analysed on one thread by [`analyze_file_summary`].
const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// The number of threads [`analyze_file_summary`] uses for a file of `len` bytes.
fn threads_for(len: u64) -> usize {
    if len < PARALLEL_MIN_BYTES {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// Analyses the capture at `path` for its report alone (no per-packet output), on as
/// many threads as pay (at most two; one for small, compressed or unmappable files).
/// The report is the same as [`analyze_file`]'s, byte for byte.
pub fn analyze_file_summary(path: &Path, name: &str, progress: &mut dyn FnMut(u64, Option<u64>)) -> Result<FileReport, String> {
    let threads = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => threads_for(meta.len()),
        _ => 1,
    };
    analyze_file_sharded(path, name, threads, progress)
}

/// [`analyze_file_summary`] with `threads` threads (if the file can be read more than
/// once: a plain file, not compressed). Each thread reads every record and analyses
/// the connections of its shard (see `shard.rs`); frames whose endpoints [`peek_tcp`]
/// cannot read without decoding are decoded by every thread, and their file-level
/// accounting is the first thread's.
pub fn analyze_file_sharded(
    path: &Path,
    name: &str,
    threads: usize,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<FileReport, String> {
    let first = CaptureReader::open(path).map_err(|e| e.to_string())?;
    if threads <= 1 || first.compressed() {
        return analyze_capture(first, name, &mut (), progress);
    }
    let parts = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads)
            .map(|shard| {
                scope.spawn(move || {
                    let reader = CaptureReader::open(path).map_err(|e| e.to_string())?;
                    Ok::<_, String>(shard_pass(reader, shard, threads, &mut |_, _| {}))
                })
            })
            .collect();
        let mine = shard_pass(first, 0, threads, progress);
        let mut parts = vec![mine];
        for other in others {
            match other.join() {
                Ok(Ok(part)) => parts.push(part),
                Ok(Err(e)) => return Err(e),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(parts)
    })?;
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("the first shard's part");
    for part in parts {
        // Every shard read the same records: frames and error are the same.
        all.tcp_frames += part.tcp_frames;
        for (what, (count, first)) in part.stops {
            let entry = all.stops.entry(what).or_insert((0, first));
            entry.0 += count;
            entry.1 = entry.1.min(first);
        }
        all.connections.extend(part.connections);
    }
    // Number the connections as one analyzer would have: in order of the frame that
    // opened them.
    all.connections.sort_by_key(|c| c.first_frame);
    for (id, c) in all.connections.iter_mut().enumerate() {
        c.id = id as u32;
    }
    report(name, all)
}

/// One shard's pass over every record of `reader`: the analysis of its connections,
/// and the file-level accounting of the frames it decoded alone (shard 0: also of the
/// frames that belong to no shard).
fn shard_pass(mut reader: CaptureReader, me: usize, shards: usize, progress: &mut dyn FnMut(u64, Option<u64>)) -> Part {
    let mut analyzer = Analyzer::new();
    let mut sharder = Sharder::new(shards);
    let mut decoded = Decoded::default();
    let mut ann = Annotation::default();
    let mut frames = 0u64;
    let mut tcp_frames = 0u64;
    let mut stops = Stops::new();
    let mut error = None;
    while let Some(next) = reader.next_record() {
        let record = match next {
            Ok(r) => r,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        frames = record.frame;
        let link = LinkType(record.linktype);
        let peeked = peek_tcp(link, record.data);
        let mine = match peeked {
            Some([(sa, sp), (da, dp)]) => {
                let (src, dst) = (Endpoint { addr: sa, port: sp }, Endpoint { addr: da, port: dp });
                sharder.shard(&src, &dst, record.ts_ns) == me
            }
            None => true,
        };
        if !mine {
            analyzer.skip(record.ts_ns);
        } else {
            decode(link, record.data, record.orig_len, &mut decoded);
            let owner = match (peeked, &decoded.ip, &decoded.transport) {
                (Some(_), _, _) => me,
                (None, Some(ip), Transport::Tcp(tcp)) => {
                    let (src, dst) = (Endpoint::new(ip.src, tcp.src_port), Endpoint::new(ip.dst, tcp.dst_port));
                    sharder.shard(&src, &dst, record.ts_ns)
                }
                _ => {
                    sharder.tick(record.ts_ns);
                    0
                }
            };
            let payload = decoded.payload.clone();
            let packet = PacketIn {
                frame: record.frame,
                ts_ns: record.ts_ns,
                wire_len: record.orig_len,
                decoded: &decoded,
                payload: record.data.get(payload).unwrap_or(&[]),
            };
            if owner == me {
                note_stop(&record, &decoded, &mut stops);
                tcp_frames += u64::from(decoded.tcp().is_some());
                analyzer.process(&packet, &mut ann);
            } else {
                analyzer.pass(&packet);
            }
        }
        if frames % PROGRESS_EVERY == 0 {
            progress(reader.position(), reader.file_len());
        }
    }
    progress(reader.position(), reader.file_len());
    Part { frames, tcp_frames, stops, error, connections: analyzer.finish() }
}
