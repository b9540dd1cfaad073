//! Reading one capture file end to end: records → decoder → analyzer.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;

use airtrace_pcap::{CaptureReader, Record};
use airtrace_wire::{decode, linktype_name, peek_tcp, Decoded, LinkType, StopReason, Transport};
use serde::Serialize;

use crate::analyzer::{Analyzer, PacketIn, SWEEP_EVERY};
use crate::annotation::{Annotation, Flags};
use crate::clock::TimeGuard;
use crate::flow::Endpoint;
use crate::metrics::ConnSummary;
use crate::shard::Sharder;

/// Receives every packet with its annotation, in capture order.
pub trait PacketSink {
    fn packet(&mut self, record: &Record<'_>, decoded: &Decoded, annotation: &Annotation);

    /// Called once after the last record, with the reader: what the file says about the
    /// capture itself (e.g. [`CaptureReader::drops`]).
    fn capture_end(&mut self, _reader: &CaptureReader) {}
}

/// A sink that keeps nothing: for summaries only.
impl PacketSink for () {
    #[inline]
    fn packet(&mut self, _: &Record<'_>, _: &Decoded, _: &Annotation) {}
}

/// What analysing one file produced.
#[derive(Debug, Default, Serialize)]
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
    let mut clock = TimeGuard::for_reader(&reader);
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
        decode(
            LinkType(record.linktype),
            record.data,
            record.orig_len,
            &mut decoded,
        );
        note_stop(record.linktype, record.frame, &decoded, &mut stops);
        tcp_frames += u64::from(decoded.tcp().is_some());
        let payload = decoded.payload.clone();
        let (ts_ns, anomaly) = clock.time(record.frame, record.ts_ns);
        analyzer.process(
            &PacketIn {
                frame: record.frame,
                ts_ns,
                wire_len: record.orig_len,
                decoded: &decoded,
                payload: record.data.get(payload).unwrap_or(&[]),
            },
            &mut ann,
        );
        if anomaly {
            ann.flags.insert(Flags::TIME_ANOMALY);
        }
        sink.packet(&record, &decoded, &ann);
        if record.frame % PROGRESS_EVERY == 0 {
            progress(reader.position(), reader.file_len());
        }
    }
    progress(reader.position(), reader.file_len());
    sink.capture_end(&reader);
    report(
        name,
        Part {
            frames,
            tcp_frames,
            stops,
            error,
            damaged: damaged(&reader),
            anomalies: clock.warnings(name),
            connections: analyzer.finish(),
        },
    )
}

/// Frames that stopped decoding early, by what stopped them: (count, first frame).
type Stops = BTreeMap<String, (u64, u64)>;

/// Counts the frame in `stops` if its decoding stopped on something worth a warning.
#[inline(always)]
fn note_stop(linktype: u32, frame: u64, decoded: &Decoded, stops: &mut Stops) {
    if decoded.stop.is_some() {
        note_stopped(linktype, frame, decoded, stops);
    }
}

/// [`note_stop`] for a frame whose decoding stopped.
#[cold]
#[inline(never)]
fn note_stopped(linktype: u32, frame: u64, decoded: &Decoded, stops: &mut Stops) {
    let Some(stop) = decoded.stop else { return };
    let layer = stop.layer.name();
    let what = match stop.reason {
        StopReason::Truncated => Some(format!(
            "cut short by the snap length in the {layer} header"
        )),
        StopReason::Malformed(why) => Some(format!("with a malformed {layer} header ({why})")),
        StopReason::Unsupported if !LinkType::SUPPORTED.contains(&LinkType(linktype)) => {
            Some(format!(
                "of link type {} ({}), which airtrace does not decode",
                linktype,
                linktype_name(LinkType(linktype))
            ))
        }
        StopReason::NotDecoded(what) => {
            Some(format!("carrying {what}, which airtrace does not decode"))
        }
        // ARP, encrypted 802.11 and the like: nothing to analyse, nothing wrong.
        StopReason::Unsupported => None,
    };
    if let Some(what) = what {
        stops.entry(what).or_insert((0, frame)).0 += 1;
    }
}

/// The warning for the packet blocks the reader skipped for damage inside them.
fn damaged(reader: &CaptureReader) -> Option<String> {
    reader.damaged().map(|(count, first)| match count {
        1 => format!("{first} (the block was skipped, the blocks after it read)"),
        n => format!(
            "{first} (skipped, with {} more damaged packet blocks; the blocks after them read)",
            n - 1
        ),
    })
}

/// What one pass over a capture found (all of it, or one shard's share).
struct Part {
    frames: u64,
    tcp_frames: u64,
    stops: Stops,
    error: Option<String>,
    /// Packet blocks skipped for damage (the reader's part only), as a warning.
    damaged: Option<String>,
    /// Frames analysed at another time than their own and jumps of the capture's clock
    /// (the reader's part only), as warnings (see `clock.rs`).
    anomalies: Vec<String>,
    connections: Vec<ConnSummary>,
}

/// The report of a whole pass.
fn report(name: &str, part: Part) -> Result<FileReport, String> {
    let Part {
        frames,
        tcp_frames,
        stops,
        error,
        damaged,
        anomalies,
        mut connections,
    } = part;
    let name = name.to_string();
    if frames == 0 {
        return Err(error.unwrap_or_else(|| format!("{name}: no packets in the file")));
    }
    let stray: Vec<String> = connections
        .iter()
        .filter_map(|c| {
            let (count, first) = c.stray_syn_acks?;
            Some(format!(
                "{name}: connection {}: {count} SYN/ACK(s) with another initial sequence number after data had \
                 flowed (first: frame {first}), left out of the analysis: the data goes on in the first sequence space",
                c.id
            ))
        })
        .collect();
    let mut warnings: Vec<String> = damaged
        .into_iter()
        .chain(anomalies)
        .chain(stops.into_iter().map(|(what, (count, first))| {
            format!("{name}: {count} frame(s) {what} (first: frame {first})")
        }))
        .chain(stray)
        .collect();
    warnings.extend(one_way(&name, &connections));
    // Last, over the finished numbers: what cannot be true is named, never printed.
    warnings.extend(crate::selfcheck::check(&name, tcp_frames, &mut connections));
    Ok(FileReport {
        path: name,
        frames,
        tcp_frames,
        warnings,
        error,
        connections,
    })
}

/// A warning when connections were seen in one direction only (issue 18 class 8: an
/// uplink-only capture went unsaid): one direction sent more than SYNs and RSTs, so the
/// other must have answered, and the capture holds nothing of it.
fn one_way(name: &str, connections: &[ConnSummary]) -> Option<String> {
    let answered_unseen = |seen: &crate::metrics::DirMetrics,
                           other: &crate::metrics::DirMetrics| {
        other.packets == 0 && seen.packets > seen.syn + seen.rst
    };
    let one_way: Vec<&ConnSummary> = connections
        .iter()
        .filter(|c| answered_unseen(&c.a_to_b, &c.b_to_a) || answered_unseen(&c.b_to_a, &c.a_to_b))
        .collect();
    let first = one_way.first()?;
    Some(format!(
        "{name}: {} of {} connection(s) seen in one direction only (first: connection {}, frame {}): \
         the capture holds one side of them (an asymmetric route, or a capture of one direction), so \
         what the other side sent, its losses and its timing are not known",
        one_way.len(),
        connections.len(),
        first.id,
        first.first_frame
    ))
}

/// Files smaller than this are analysed on one thread by [`analyze_file_summary`].
const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// The number of threads [`analyze_file_summary`] uses for a file of `len` bytes: one,
/// unless the environment variable `AIRTRACE_THREADS` asks for more (at most 8) and
/// the file is big enough for them to pay.
///
/// One is the default because on the 2-vCPU virtual machines airtrace is benchmarked
/// on, a second thread brings no throughput (two threads of pure arithmetic take 1.5 to
/// 2.2 times as long as one: the host does not run both vCPUs at once), and the split
/// costs about a quarter more instructions in all; see docs/benchmarks.md. On a machine
/// whose cores are its own, `AIRTRACE_THREADS=2` makes a big file about 1.4 times faster.
fn threads_for(len: u64) -> usize {
    let asked = std::env::var("AIRTRACE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1);
    if len < PARALLEL_MIN_BYTES {
        return 1;
    }
    asked.clamp(1, 8)
}

/// Analyses the capture at `path` for its report alone (no per-packet output), on the
/// number of threads `threads_for` picks (see there: one unless `AIRTRACE_THREADS`
/// asks for more). The report is the same as [`analyze_file`]'s, byte for byte.
pub fn analyze_file_summary(
    path: &Path,
    name: &str,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<FileReport, String> {
    let threads = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => threads_for(meta.len()),
        _ => 1,
    };
    analyze_file_sharded(path, name, threads, progress)
}

/// [`analyze_file_summary`] with `threads` threads: this one reads and walks the
/// records, and analyses some connections; each of the others is handed the frames of
/// the connections it analyses, in batches (see `shard.rs` for who gets what).
pub fn analyze_file_sharded(
    path: &Path,
    name: &str,
    threads: usize,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<FileReport, String> {
    let reader = CaptureReader::open(path).map_err(|e| e.to_string())?;
    if threads <= 1 {
        return analyze_capture(reader, name, &mut (), progress);
    }
    let parts = std::thread::scope(|scope| {
        let mut outs = Vec::new();
        let mut workers = Vec::new();
        for _ in 1..threads {
            let (to_worker, batches) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
            let (to_reader, spent) = mpsc::channel::<Batch>();
            workers.push(scope.spawn(move || worker(batches, to_reader)));
            outs.push(Out {
                batch: Batch::default(),
                to_worker,
                spent,
            });
        }
        let mine = reader_pass(reader, name, &mut outs, progress);
        drop(outs);
        let mut parts = vec![mine];
        for w in workers {
            match w.join() {
                Ok(part) => parts.push(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("the reader's part");
    for part in parts {
        // The reader's part has the frame count and the error.
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

/// Batches sent to a worker and not yet taken (besides the one it works on).
const BATCHES_IN_FLIGHT: usize = 2;
/// A batch is sent when it has this many frames, or this many bytes of them.
const BATCH_FRAMES: usize = 4096;
const BATCH_BYTES: usize = 1 << 20;

/// What a worker does with a frame.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    /// Count it: its time may end idle connections (see `Analyzer::skip`).
    Tick,
    /// Decode it for its 802.11 header (see `Analyzer::pass`).
    Pass,
    /// Decode and analyse it; `true`: and count its decoding problems and TCP in the
    /// file's totals (else the reader did).
    Analyse(bool),
}

/// A frame for a worker; its bytes are `Batch::bytes[start..start + len]`.
#[derive(Clone, Copy)]
struct Item {
    /// The frame's place among all the file's frames (1-based).
    index: u64,
    frame: u64,
    ts_ns: i64,
    linktype: u32,
    orig_len: u32,
    start: u32,
    len: u32,
    job: Job,
}

#[derive(Default)]
struct Batch {
    items: Vec<Item>,
    bytes: Vec<u8>,
}

/// The reader's end of a worker's channels, with the batch being filled.
struct Out {
    batch: Batch,
    to_worker: mpsc::SyncSender<Batch>,
    /// Batches the worker is done with, for reuse.
    spent: mpsc::Receiver<Batch>,
}

impl Out {
    #[inline]
    fn push(&mut self, index: u64, record: &Record<'_>, ts_ns: i64, job: Job) {
        let b = &mut self.batch;
        let start = b.bytes.len();
        let data: &[u8] = if job == Job::Tick { &[] } else { record.data };
        b.bytes.extend_from_slice(data);
        b.items.push(Item {
            index,
            frame: record.frame,
            ts_ns,
            linktype: record.linktype,
            orig_len: record.orig_len,
            start: start as u32,
            len: data.len() as u32,
            job,
        });
        if b.items.len() >= BATCH_FRAMES || b.bytes.len() >= BATCH_BYTES {
            self.send();
        }
    }

    fn send(&mut self) {
        let mut next = self.spent.try_recv().unwrap_or_default();
        next.items.clear();
        next.bytes.clear();
        let full = std::mem::replace(&mut self.batch, next);
        // A worker that is gone has panicked; joining it says so.
        let _ = self.to_worker.send(full);
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        if !self.batch.items.is_empty() {
            self.send();
        }
    }
}

/// The reader's pass: every record walked, the connections of shard 0 analysed, the
/// frames of the others' sent to them (with a `Tick` wherever a worker must count a
/// frame it is not given: the first, and every `SWEEP_EVERY`-th).
fn reader_pass(
    mut reader: CaptureReader,
    name: &str,
    outs: &mut [Out],
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Part {
    let mut analyzer = Analyzer::new();
    let mut clock = TimeGuard::for_reader(&reader);
    let mut sharder = Sharder::new(outs.len() + 1);
    let mut decoded = Decoded::default();
    let mut ann = Annotation::default();
    let mut frames = 0u64;
    let mut index = 0u64;
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
        index += 1;
        let (ts_ns, _) = clock.time(record.frame, record.ts_ns);
        let tick = index == 1 || index.is_multiple_of(SWEEP_EVERY);
        let link = LinkType(record.linktype);
        let peeked = peek_tcp(link, record.data);
        // The shard of the frame, and whether the workers must see its 802.11 header.
        let (owner, wlan) = match peeked {
            Some([(sa, sp), (da, dp)]) => {
                let (src, dst) = (
                    Endpoint { addr: sa, port: sp },
                    Endpoint { addr: da, port: dp },
                );
                match sharder.shard(&src, &dst, ts_ns) {
                    0 => {
                        decode(link, record.data, record.orig_len, &mut decoded);
                        (0, false)
                    }
                    k => (k, false),
                }
            }
            None => {
                decode(link, record.data, record.orig_len, &mut decoded);
                let owner = match (&decoded.ip, &decoded.transport) {
                    (Some(ip), Transport::Tcp(tcp)) => {
                        let (src, dst) = (
                            Endpoint::new(ip.src, tcp.src_port),
                            Endpoint::new(ip.dst, tcp.dst_port),
                        );
                        sharder.shard(&src, &dst, ts_ns)
                    }
                    _ => {
                        sharder.tick(ts_ns);
                        0
                    }
                };
                (owner, decoded.wlan.is_some())
            }
        };
        if owner == 0 || peeked.is_none() {
            // Decoded here: counted here.
            note_stop(record.linktype, record.frame, &decoded, &mut stops);
            tcp_frames += u64::from(decoded.tcp().is_some());
            let payload = decoded.payload.clone();
            let packet = PacketIn {
                frame: record.frame,
                ts_ns,
                wire_len: record.orig_len,
                decoded: &decoded,
                payload: record.data.get(payload).unwrap_or(&[]),
            };
            if owner == 0 {
                analyzer.process(&packet, &mut ann);
            } else {
                analyzer.pass(&packet);
            }
        } else {
            analyzer.skip(ts_ns);
        }
        for (k, out) in outs.iter_mut().enumerate() {
            if k + 1 == owner {
                out.push(index, &record, ts_ns, Job::Analyse(peeked.is_some()));
            } else if wlan {
                out.push(index, &record, ts_ns, Job::Pass);
            } else if tick {
                out.push(index, &record, ts_ns, Job::Tick);
            }
        }
        if frames.is_multiple_of(PROGRESS_EVERY) {
            progress(reader.position(), reader.file_len());
        }
    }
    progress(reader.position(), reader.file_len());
    Part {
        frames,
        tcp_frames,
        stops,
        error,
        damaged: damaged(&reader),
        anomalies: clock.warnings(name),
        connections: analyzer.finish(),
    }
}

/// A worker: analyses the frames it is sent, and hands the batches back.
fn worker(batches: mpsc::Receiver<Batch>, spent: mpsc::Sender<Batch>) -> Part {
    let mut analyzer = Analyzer::new();
    let mut decoded = Decoded::default();
    let mut ann = Annotation::default();
    let mut tcp_frames = 0u64;
    let mut stops = Stops::new();
    for batch in batches {
        for item in &batch.items {
            analyzer.set_packets_seen(item.index - 1);
            if item.job == Job::Tick {
                analyzer.skip(item.ts_ns);
                continue;
            }
            let data = &batch.bytes[item.start as usize..(item.start + item.len) as usize];
            decode(LinkType(item.linktype), data, item.orig_len, &mut decoded);
            let payload = decoded.payload.clone();
            let packet = PacketIn {
                frame: item.frame,
                ts_ns: item.ts_ns,
                wire_len: item.orig_len,
                decoded: &decoded,
                payload: data.get(payload).unwrap_or(&[]),
            };
            match item.job {
                Job::Analyse(count) => {
                    if count {
                        note_stop(item.linktype, item.frame, &decoded, &mut stops);
                        tcp_frames += u64::from(decoded.tcp().is_some());
                    }
                    analyzer.process(&packet, &mut ann);
                }
                Job::Pass => analyzer.pass(&packet),
                Job::Tick => unreachable!("handled above"),
            }
        }
        // The reader may be gone already: then the batch is simply dropped.
        let _ = spent.send(batch);
    }
    Part {
        frames: 0,
        tcp_frames,
        stops,
        error: None,
        damaged: None,
        anomalies: Vec::new(),
        connections: analyzer.finish(),
    }
}
