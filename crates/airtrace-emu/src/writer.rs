//! The writer thread: captures, link log and TCP state log into the bundle, off the
//! forwarder's path.

use std::io::{self, Write};
use std::sync::mpsc::Receiver;

use airtrace_link::record::LinkRecord;
use airtrace_sim::bundle::BundleWriter;
use airtrace_sim::scenario::Vantage;

/// Capture at host a's device.
pub const V_SENDER: u8 = 1;
/// Capture at host b's device.
pub const V_RECEIVER: u8 = 2;
/// Capture where packets enter the link.
pub const V_LINK_IN: u8 = 4;
/// Capture where packets leave the link.
pub const V_LINK_OUT: u8 = 8;

/// The bit of a vantage point.
pub fn bit(v: Vantage) -> u8 {
    match v {
        Vantage::Sender => V_SENDER,
        Vantage::Receiver => V_RECEIVER,
        Vantage::LinkIn => V_LINK_IN,
        Vantage::LinkOut => V_LINK_OUT,
    }
}

/// What the other threads hand the writer.
pub enum Msg {
    /// A packet read from a device, offered to the link (packet `id`).
    Ingress {
        /// Packet id.
        id: u64,
        /// When it was read, ns since the start.
        t_ns: i64,
        /// Its flow, if it belongs to one.
        flow: Option<u32>,
        /// IPv4 identification.
        ip_id: u16,
        /// Where to capture it.
        vantages: u8,
        /// The bytes to capture (snaplen applied), if any vantage applies.
        bytes: Option<Vec<u8>>,
    },
    /// A packet written to a device when it left the link.
    Egress {
        /// When it was written, ns since the start.
        t_ns: i64,
        /// Where to capture it.
        vantages: u8,
        /// Its bytes (snaplen applied).
        bytes: Vec<u8>,
    },
    /// Link log records.
    Link(Vec<LinkRecord>),
    /// A tcpstate.jsonl line.
    Tcp(Vec<u8>),
}

/// Writes everything received until every sender is gone; `epoch_ns` is added to the
/// run's time for pcap stamps. Returns the bundle, ready to finish.
pub fn run(mut bundle: BundleWriter, rx: Receiver<Msg>, epoch_ns: i64) -> io::Result<BundleWriter> {
    // Packet ids are consecutive from 0: (flow, ip_id) of each, for the link log.
    let mut info: Vec<(Option<u32>, u16)> = Vec::new();
    let mut line = Vec::with_capacity(256);
    let vantages = [
        Vantage::Sender,
        Vantage::Receiver,
        Vantage::LinkIn,
        Vantage::LinkOut,
    ];
    let capture =
        |bundle: &mut BundleWriter, t_ns: i64, mask: u8, bytes: &[u8]| -> io::Result<()> {
            for v in vantages {
                if mask & bit(v) != 0 {
                    if let Some(pcap) = bundle.capture(v) {
                        let ts = epoch_ns + t_ns;
                        pcap.write_packet(ts, bytes, bytes.len() as u32)?;
                    }
                }
            }
            Ok(())
        };
    for msg in rx {
        match msg {
            Msg::Ingress {
                id,
                t_ns,
                flow,
                ip_id,
                vantages,
                bytes,
            } => {
                debug_assert_eq!(id, info.len() as u64);
                info.push((flow, ip_id));
                if let Some(b) = bytes {
                    capture(&mut bundle, t_ns, vantages, &b)?;
                }
            }
            Msg::Egress {
                t_ns,
                vantages,
                bytes,
            } => capture(&mut bundle, t_ns, vantages, &bytes)?,
            Msg::Link(records) => {
                if let Some(log) = bundle.link_log.as_mut() {
                    let lookup = |id: u64| {
                        info.get(id as usize)
                            .and_then(|&(f, ip_id)| f.map(|f| (f, ip_id)))
                    };
                    airtrace_sim::bundle::write_link_records(log, &records, lookup, &mut line)?;
                }
            }
            Msg::Tcp(l) => {
                if let Some(log) = bundle.tcp_log.as_mut() {
                    log.write_all(&l)?;
                }
            }
        }
    }
    Ok(bundle)
}
