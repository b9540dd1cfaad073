//! Writing a bundle: the directory of files a run leaves behind (../shared/DESIGN.md).
//!
//! ```text
//! BUNDLE/
//!   meta.json       what produced it: scenario name, seed, airtrace version, vantage
//!                   points and their files, the clock
//!   scenario.toml   the scenario file, verbatim (with --set overrides: as overridden)
//!   <vantage>.pcap  one capture per vantage point (LINKTYPE_RAW, nanosecond stamps)
//!   link.jsonl      link events, one JSON object per line (docs/bundle.md)
//!   tcpstate.jsonl  TCP sender state at every change (docs/bundle.md)
//!   mobility.jsonl  a network's movement, one line per leg (docs/bundle.md)
//!   summary.json    per-flow results
//! ```
//!
//! Every file goes into a temporary directory beside the destination, which is
//! renamed into place only when the run has finished, so a bundle is never seen half
//! written. A previous bundle at the destination is replaced; any other existing path
//! is left alone and reported ([`crate::dest`]: what counts as a bundle, the lock,
//! the temporary names, what killed runs left). Nothing in a bundle depends on the
//! wall clock, the host or the run's path: the same scenario and seed give the same
//! bytes.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use airtrace_link::record::{LinkDir, LinkRecord};
use airtrace_pcap::{PcapWriter, Resolution};

use crate::dest::{Dest, Partial};
use crate::scenario::Vantage;

/// LINKTYPE_RAW: each record is an IPv4 or IPv6 packet with no link header.
pub const LINKTYPE_RAW: u32 = 101;
/// LINKTYPE_IEEE802_11_RADIOTAP: 802.11 frames behind a radiotap header.
pub const LINKTYPE_IEEE802_11_RADIOTAP: u32 = 127;

/// The link type of a vantage point's capture.
pub fn linktype(vantage: Vantage) -> u32 {
    match vantage {
        Vantage::Air => LINKTYPE_IEEE802_11_RADIOTAP,
        Vantage::Sender | Vantage::Receiver | Vantage::LinkIn | Vantage::LinkOut => LINKTYPE_RAW,
    }
}

/// The simulated clock's time 0 in pcap time stamps: 2026-01-01T00:00:00Z, so that
/// captures show a plausible date and times read as seconds from the start.
pub const EPOCH_NS: i64 = 1_767_225_600 * 1_000_000_000;

/// meta.json's `clock` of a simulated run.
pub fn simulated_clock_json() -> serde_json::Value {
    serde_json::json!({
        "kind": "simulated",
        "epoch_ns": EPOCH_NS,
        "note": "pcap time stamps are epoch_ns + simulated time; every vantage point shares this clock",
    })
}

/// meta.json's `files`: the scenario, the summary and the logs `scenario` asks for.
pub fn files_json(scenario: &crate::scenario::Scenario) -> serde_json::Value {
    serde_json::json!({
        "scenario": "scenario.toml",
        "summary": "summary.json",
        "link_log": scenario.link_log.then_some("link.jsonl"),
        "tcp_state_log": scenario.tcp_state_log.then_some("tcpstate.jsonl"),
    })
}

/// A JSON document as a bundle writes it: pretty, with a final newline.
pub fn json_file(value: &serde_json::Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A file being written inside the temporary directory.
pub type Out = BufWriter<File>;

/// A bundle under construction. Dropping it removes its temporary directory.
pub struct BundleWriter {
    dest: Dest,
    partial: Partial,
    captures: Vec<(Vantage, PcapWriter<Out>)>,
    /// Captures named by the scenario's nodes (`<node>.pcap`), by index.
    node_captures: Vec<PcapWriter<Out>>,
    snaplen: u32,
    /// The link event log, when the scenario asks for it.
    pub link_log: Option<Out>,
    /// The TCP state log, when the scenario asks for it.
    pub tcp_log: Option<Out>,
    /// The routing log (`routes.jsonl`) of a network with dynamic routing.
    pub routes_log: Option<Out>,
}

fn io_error(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn create(path: &Path) -> io::Result<Out> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|e| io_error(path, e))
}

impl BundleWriter {
    /// Starts a bundle that will appear at `dest`. Refused, before anything is
    /// written, when `dest` is the current directory or holds it, or when something
    /// other than a bundle this tool wrote is there ([`crate::dest`]); what killed runs
    /// left beside it goes.
    pub fn create(
        dest: &Path,
        captures: &[Vantage],
        snaplen: u32,
        link_log: bool,
        tcp_log: bool,
    ) -> io::Result<Self> {
        let dest = Dest::new(dest)?;
        let partial = {
            let _lock = dest.lock()?;
            dest.check_replaceable()?;
            dest.sweep()?;
            dest.start_partial()?
        };
        let mut writer = BundleWriter {
            dest,
            partial,
            captures: Vec::new(),
            node_captures: Vec::new(),
            snaplen,
            link_log: None,
            tcp_log: None,
            routes_log: None,
        };
        let tmp = writer.partial.path.clone();
        for &v in captures {
            let path = tmp.join(format!("{}.pcap", v.name()));
            let pcap = PcapWriter::new(create(&path)?, linktype(v), snaplen, Resolution::Nano)
                .map_err(|e| io_error(&path, e))?;
            writer.captures.push((v, pcap));
        }
        if link_log {
            writer.link_log = Some(create(&tmp.join("link.jsonl"))?);
        }
        if tcp_log {
            writer.tcp_log = Some(create(&tmp.join("tcpstate.jsonl"))?);
        }
        Ok(writer)
    }

    /// The capture at `vantage`, if the scenario takes one there.
    pub fn capture(&mut self, vantage: Vantage) -> Option<&mut PcapWriter<Out>> {
        self.captures
            .iter_mut()
            .find(|(v, _)| *v == vantage)
            .map(|(_, w)| w)
    }

    /// Starts `<name>.pcap` (a node's capture) with `linktype`; returns the index
    /// [`BundleWriter::node_capture`] takes.
    pub fn add_node_capture(&mut self, name: &str, linktype: u32) -> io::Result<usize> {
        let path = self.partial.path.join(format!("{name}.pcap"));
        let pcap = PcapWriter::new(create(&path)?, linktype, self.snaplen, Resolution::Nano)
            .map_err(|e| io_error(&path, e))?;
        self.node_captures.push(pcap);
        Ok(self.node_captures.len() - 1)
    }

    /// Starts `routes.jsonl`.
    pub fn start_routes_log(&mut self) -> io::Result<()> {
        self.routes_log = Some(create(&self.partial.path.join("routes.jsonl"))?);
        Ok(())
    }

    /// The node capture number `index`.
    pub fn node_capture(&mut self, index: usize) -> &mut PcapWriter<Out> {
        &mut self.node_captures[index]
    }

    /// Which vantage points are captured.
    pub fn vantages(&self) -> Vec<Vantage> {
        self.captures.iter().map(|(v, _)| *v).collect()
    }

    /// Writes a small file (meta.json, summary.json, scenario.toml) into the bundle.
    pub fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.partial.path.join(name);
        fs::write(&path, bytes).map_err(|e| io_error(&path, e))
    }

    /// Writes the file `name` into the bundle with `write`, through a buffer.
    pub fn put_with(
        &self,
        name: &str,
        write: impl FnOnce(&mut Out) -> io::Result<()>,
    ) -> io::Result<()> {
        let path = self.partial.path.join(name);
        let mut out = create(&path)?;
        write(&mut out)
            .and_then(|()| out.flush())
            .map_err(|e| io_error(&path, e))
    }

    /// Writes the small files every bundle ends with (meta.json, the scenario text,
    /// summary.json), then [`finish`](Self::finish)es; on an error the partial bundle is
    /// removed (dropped).
    pub fn complete(
        self,
        meta: &[u8],
        scenario_text: &str,
        summary: &impl serde::Serialize,
    ) -> io::Result<PathBuf> {
        let write = || -> io::Result<()> {
            self.put("meta.json", meta)?;
            self.put("scenario.toml", scenario_text.as_bytes())?;
            let mut json = serde_json::to_vec_pretty(summary).map_err(io::Error::other)?;
            json.push(b'\n');
            self.put("summary.json", &json)
        };
        write()?;
        self.finish()
    }

    /// Flushes every file and moves the bundle into place, replacing a previous
    /// bundle, under the destination's lock (writers into one place take turns; the
    /// last one's bundle stays). Refused if something other than a bundle appeared there
    /// during the run; the partial bundle is then removed.
    pub fn finish(self) -> io::Result<PathBuf> {
        let BundleWriter {
            dest,
            partial,
            captures,
            node_captures,
            link_log,
            tcp_log,
            routes_log,
            ..
        } = self;
        let flush = |out: Out| -> io::Result<()> {
            let file = out.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()
        };
        for pcap in captures.into_iter().map(|(_, p)| p).chain(node_captures) {
            let mut out = pcap.into_inner();
            out.flush()?;
            flush(out)?;
        }
        for log in [link_log, tcp_log, routes_log].into_iter().flatten() {
            flush(log)?;
        }
        let old = {
            let _lock = dest.lock()?;
            dest.check_replaceable()?;
            dest.put(&partial)?
        };
        if let Some(old) = old {
            fs::remove_dir_all(&old).map_err(|e| io_error(&old, e))?;
        }
        Ok(dest.path)
    }

    /// Removes the temporary directory of a run that failed (as dropping the writer
    /// does).
    pub fn abandon(self) {
        drop(self);
    }
}

/// Appends `records` to a link.jsonl file (docs/link-log.md) with the two fields a
/// bundle adds after `packet`: `flow` and `ip_id`, which `info` gives for a packet id
/// (`None`: both null). `line` is a scratch buffer. The simulator and the emulator
/// both write the link log through here.
pub fn write_link_records(
    log: &mut impl Write,
    records: &[LinkRecord],
    info: impl Fn(u64) -> Option<(u32, u16)>,
    line: &mut Vec<u8>,
) -> io::Result<()> {
    for r in records {
        line.clear();
        let dir = if r.dir == LinkDir::Down { "down" } else { "up" };
        let kind = serde_json::to_value(r.kind).map_err(io::Error::other)?;
        let reason = serde_json::to_value(r.reason).map_err(io::Error::other)?;
        let info = r.packet.and_then(&info);
        let opt = |v: Option<u64>| v.map_or_else(|| "null".to_string(), |v| v.to_string());
        writeln!(
            line,
            r#"{{"t_ns":{},"dir":"{dir}","kind":{kind},"packet":{},"flow":{},"ip_id":{},"frame":{},"attempt":{},"bytes":{},"queue_packets":{},"reason":{reason},"fragments":{}}}"#,
            r.t_ns,
            opt(r.packet),
            opt(info.map(|i| u64::from(i.0))),
            opt(info.map(|i| u64::from(i.1))),
            opt(r.frame),
            opt(r.attempt.map(u64::from)),
            opt(r.bytes.map(u64::from)),
            opt(r.queue_packets.map(u64::from)),
            opt(r.fragments.map(u64::from)),
        )?;
        log.write_all(line)?;
    }
    Ok(())
}
