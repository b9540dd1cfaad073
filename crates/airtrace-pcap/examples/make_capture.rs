//! Writes a synthetic capture to time the reader with (see the `count` example).
//!
//! ```text
//! cargo run --release -p airtrace-pcap --example make_capture -- OUT RECORDS CAPLEN
//! ```
//!
//! OUT ending in `.pcapng` makes a pcapng file (one nanosecond interface, Enhanced Packet
//! Blocks), anything else a nanosecond pcap. Records are CAPLEN bytes, 1 µs apart.

use std::fs::File;
use std::io::{self, BufWriter};

use airtrace_pcap::{ByteOrder, Interface, PcapNgWriter, PcapWriter, Resolution, TsResolution};

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, out, records, caplen] = &args[..] else {
        eprintln!("usage: make_capture OUT RECORDS CAPLEN");
        std::process::exit(2);
    };
    let records: u64 = records.parse().expect("RECORDS is a number");
    let caplen: usize = caplen.parse().expect("CAPLEN is a number");
    let data: Vec<u8> = (0..caplen).map(|i| i as u8).collect();
    let file = BufWriter::with_capacity(1 << 20, File::create(out)?);
    let t0 = 1_700_000_000_000_000_000i64;
    if out.ends_with(".pcapng") {
        let mut w = PcapNgWriter::new(file, ByteOrder::Little)?;
        let iface = Interface {
            linktype: 1,
            snaplen: 0,
            resolution: TsResolution::NANO,
            offset_s: 0,
        };
        let id = w.add_interface(&iface)?;
        for i in 0..records {
            w.write_packet(id, t0 + i as i64 * 1000, &data, 1514)?;
        }
        w.into_inner().into_inner()?.sync_all()
    } else {
        let mut w = PcapWriter::new(file, 1, 65535, Resolution::Nano)?;
        for i in 0..records {
            w.write_packet(t0 + i as i64 * 1000, &data, 1514)?;
        }
        w.into_inner().into_inner()?.sync_all()
    }
}
