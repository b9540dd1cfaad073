//! Reading one capture file end to end: records → decoder → analyzer.

use std::collections::BTreeMap;
use std::path::Path;

use airtrace_pcap::{CaptureReader, Record};
use airtrace_wire::{decode, linktype_name, Decoded, LinkType, StopReason};
use serde::Serialize;

use crate::analyzer::{Analyzer, PacketIn};
use crate::annotation::Annotation;
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
        if let Some(stop) = decoded.stop {
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
    let name = name.to_string();
    if frames == 0 {
        return Err(error.unwrap_or_else(|| format!("{name}: no packets in the file")));
    }
    let warnings = stops
        .into_iter()
        .map(|(what, (count, first))| format!("{name}: {count} frame(s) {what} (first: frame {first})"))
        .collect();
    Ok(FileReport { path: name, frames, tcp_frames, warnings, error, connections: analyzer.finish() })
}
