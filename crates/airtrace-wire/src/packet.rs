//! The decoded summary of one captured frame: what the analysis layers read.
//!
//! [`Decoded`] is a plain value filled in place by [`crate::decode`]; it borrows
//! nothing, except the captured transport payload, which the caller gets back as a
//! slice range into the frame. Decoding is lax: a frame cut short by the snap length
//! or malformed at some layer decodes as far as its bytes go, and [`Decoded::stop`]
//! records the layer where it stopped and why.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A protocol layer, used to say where decoding stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    Link,
    Radiotap,
    Wlan,
    Llc,
    Vlan,
    Mpls,
    Ipv4,
    Ipv6,
    Ipv6Ext,
    Tunnel,
    Tcp,
    TcpOptions,
    Udp,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Link => "link",
            Layer::Radiotap => "radiotap",
            Layer::Wlan => "802.11",
            Layer::Llc => "llc",
            Layer::Vlan => "vlan",
            Layer::Mpls => "mpls",
            Layer::Ipv4 => "ipv4",
            Layer::Ipv6 => "ipv6",
            Layer::Ipv6Ext => "ipv6-ext",
            Layer::Tunnel => "tunnel",
            Layer::Tcp => "tcp",
            Layer::TcpOptions => "tcp-options",
            Layer::Udp => "udp",
        }
    }
}

/// Why decoding stopped before the end of the frame's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The captured bytes end inside this layer's header (snap length).
    Truncated,
    /// A field of this layer holds an impossible value (the static text says which).
    Malformed(&'static str),
    /// The layer carries something airtrace does not decode (not an error).
    Unsupported,
}

/// Where and why decoding stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    pub layer: Layer,
    pub reason: StopReason,
}

/// Fields of a radiotap header (only those present are `Some`).
///
/// Field meanings and units follow the field table at radiotap.org ("Defined fields").
/// Only the first (default) radiotap namespace is recorded; later radiotap namespaces,
/// which usually repeat per-antenna values, and vendor namespaces are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Radiotap {
    /// The first `it_present` word (bit n set: field n present).
    pub present: u32,
    pub tsft_us: Option<u64>,
    /// Radiotap "flags" field (bit 0x10: frame includes FCS, 0x40: bad FCS).
    pub flags: Option<u8>,
    /// Legacy rate in units of 500 kbit/s.
    pub rate_500kbps: Option<u8>,
    pub channel_mhz: Option<u16>,
    pub channel_flags: Option<u16>,
    pub signal_dbm: Option<i8>,
    pub noise_dbm: Option<i8>,
    pub antenna: Option<u8>,
    /// MCS field: (known, flags, index).
    pub mcs: Option<(u8, u8, u8)>,
    /// FHSS field: (hop set, hop pattern).
    pub fhss: Option<(u8, u8)>,
    /// Barker code lock quality.
    pub lock_quality: Option<u16>,
    /// TX attenuation, unitless distance from maximum power.
    pub tx_attenuation: Option<u16>,
    /// TX attenuation in dB from maximum power.
    pub tx_attenuation_db: Option<u16>,
    /// Transmit power in dBm.
    pub tx_power_dbm: Option<i8>,
    /// Antenna signal in dB above an arbitrary reference.
    pub signal_db: Option<u8>,
    /// Antenna noise in dB above an arbitrary reference.
    pub noise_db: Option<u8>,
    pub rx_flags: Option<u16>,
    pub tx_flags: Option<u16>,
    pub rts_retries: Option<u8>,
    pub data_retries: Option<u8>,
    pub xchannel: Option<XChannel>,
    pub ampdu: Option<AmpduStatus>,
    pub vht: Option<Vht>,
    pub timestamp: Option<RadiotapTimestamp>,
    /// HE field: data1..data6.
    pub he: Option<[u16; 6]>,
    pub he_mu: Option<HeMu>,
    /// HE-MU-other-user field: (per_user_1, per_user_2, per_user_position, per_user_known).
    pub he_mu_other_user: Option<(u16, u16, u8, u8)>,
    /// 0-length-PSDU field: the type (0 sounding, 1 not captured, 0xff vendor).
    pub zero_length_psdu: Option<u8>,
    /// L-SIG field: (data1, data2).
    pub lsig: Option<(u16, u16)>,
}

/// Radiotap XChannel field (bit 18).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XChannel {
    pub flags: u32,
    pub freq_mhz: u16,
    pub channel: u8,
    pub max_power: u8,
}

/// Radiotap A-MPDU status field (bit 20).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AmpduStatus {
    pub reference: u32,
    pub flags: u16,
    pub delimiter_crc: u8,
}

/// Radiotap VHT field (bit 21).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vht {
    pub known: u16,
    pub flags: u8,
    pub bandwidth: u8,
    /// Per user: MCS in the high nibble, number of spatial streams in the low nibble.
    pub mcs_nss: [u8; 4],
    pub coding: u8,
    pub group_id: u8,
    pub partial_aid: u16,
}

/// Radiotap timestamp field (bit 22).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadiotapTimestamp {
    pub timestamp: u64,
    pub accuracy: u16,
    /// Unit (low nibble) and sampling position (high nibble).
    pub unit_position: u8,
    pub flags: u8,
}

/// Radiotap HE-MU field (bit 24).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeMu {
    pub flags1: u16,
    pub flags2: u16,
    pub ru_channel1: [u8; 4],
    pub ru_channel2: [u8; 4],
}

impl Radiotap {
    pub const FLAG_FCS_AT_END: u8 = 0x10;
    pub const FLAG_BAD_FCS: u8 = 0x40;

    pub fn bad_fcs(&self) -> bool {
        self.flags.is_some_and(|f| f & Self::FLAG_BAD_FCS != 0)
    }
}

/// Fields of an IEEE 802.11 MAC header (IEEE Std 802.11-2020, clause 9.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wlan {
    /// 0 management, 1 control, 2 data, 3 extension.
    pub frame_type: u8,
    pub subtype: u8,
    pub to_ds: bool,
    pub from_ds: bool,
    pub retry: bool,
    pub protected: bool,
    /// Sequence number (12 bits); `None` for control frames, which carry none.
    pub seq: Option<u16>,
    pub frag: u8,
    /// Transmitter address (addr2) where present.
    pub transmitter: Option<[u8; 6]>,
    /// Receiver address (addr1).
    pub receiver: [u8; 6],
    /// Duration/ID field.
    pub duration: u16,
    pub more_fragments: bool,
    pub power_mgmt: bool,
    pub more_data: bool,
    /// The +HTC/Order bit.
    pub order: bool,
    /// Address 3 (management and data frames).
    pub addr3: Option<[u8; 6]>,
    /// Address 4 (data frames with both To DS and From DS).
    pub addr4: Option<[u8; 6]>,
    /// QoS Control field (QoS data subtypes).
    pub qos: Option<u16>,
    /// HT Control field (QoS data and management frames with the Order bit).
    pub ht_control: Option<u32>,
}

impl Wlan {
    pub const TYPE_MANAGEMENT: u8 = 0;
    pub const TYPE_CONTROL: u8 = 1;
    pub const TYPE_DATA: u8 = 2;
    pub const TYPE_EXTENSION: u8 = 3;

    /// True for data frames of a subtype that carries a frame body (not Null, CF-Ack...).
    pub fn carries_data(&self) -> bool {
        self.frame_type == Self::TYPE_DATA && self.subtype & 0x4 == 0
    }
}

/// Network-layer fields of the innermost IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ip {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 identification, or the IPv6 fragment header's identification if any.
    pub id: u32,
    pub ttl: u8,
    /// DSCP and ECN bits (the IPv4 TOS byte / IPv6 traffic class).
    pub tos: u8,
    /// Transport protocol number after extension headers.
    pub protocol: u8,
    /// Length of the IP datagram from the IP header (header + payload).
    pub total_len: u32,
    /// IPv4 "more fragments" / IPv6 fragment M flag.
    pub more_fragments: bool,
    /// Fragment offset in bytes.
    pub fragment_offset: u32,
    /// True when this frame's transport header is the result of fragment reassembly.
    pub reassembled: bool,
    /// Header length: IPv4 header with options, or the IPv6 fixed header plus the
    /// extension headers that were walked.
    pub header_len: u16,
    /// Payload length after the headers counted in `header_len`, from the IP length
    /// field (the length of the fragment's data for a fragment).
    pub payload_len: u32,
}

impl Ip {
    pub fn is_fragment(&self) -> bool {
        self.more_fragments || self.fragment_offset != 0
    }
}

impl Default for Ip {
    fn default() -> Self {
        Ip {
            src: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            dst: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            id: 0,
            ttl: 0,
            tos: 0,
            protocol: 0,
            total_len: 0,
            more_fragments: false,
            fragment_offset: 0,
            reassembled: false,
            header_len: 0,
            payload_len: 0,
        }
    }
}

/// TCP header flag bits (RFC 9293 section 3.1, RFC 3168 for ECE/CWR).
pub mod tcp_flags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    pub const NS: u16 = 0x100;
}

/// Maximum number of SACK blocks a TCP header can carry (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP header fields and the options airtrace reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tcp {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// Flag bits, see [`tcp_flags`].
    pub flags: u16,
    /// Window field as sent (not scaled).
    pub window: u16,
    pub checksum: u16,
    pub urgent: u16,
    pub header_len: u16,
    /// Segment length: payload bytes according to the IP length, whether captured or not.
    pub payload_len: u32,
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// Timestamps option (RFC 7323 section 3): (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    pub sack_count: u8,
    /// SACK blocks (left edge, right edge), the first `sack_count` are valid.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl Tcp {
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_count as usize]
    }
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
}

/// UDP header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Udp {
    pub src_port: u16,
    pub dst_port: u16,
    /// Payload length according to the UDP length field.
    pub payload_len: u32,
    pub checksum: u16,
}

/// The transport layer of a decoded frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    #[default]
    None,
    Tcp(Tcp),
    Udp(Udp),
    /// Another protocol number (ICMP, ...), not decoded further.
    Other(u8),
}

/// Everything airtrace reads from one captured frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    pub radiotap: Option<Radiotap>,
    pub wlan: Option<Wlan>,
    /// Innermost IP header (after any GTP-U, IP-in-IP or MPLS encapsulation).
    pub ip: Option<Ip>,
    /// Number of IP-level encapsulations removed to reach `ip` (GTP-U, IP-in-IP,
    /// IPv6-in-IP; 0 for a plain packet). VLAN tags, MPLS labels and PPPoE are link
    /// layer headers and are not counted.
    pub tunnel_depth: u8,
    pub transport: Transport,
    /// Byte range of the captured transport payload within the frame (or, when
    /// `ip.reassembled`, within [`crate::Reassembler::datagram`]). Empty when there is
    /// no transport payload.
    pub payload: std::ops::Range<usize>,
    /// Byte range of the captured payload of the innermost IP header within the frame:
    /// where the transport header (or, for a fragment, the fragment's data) begins,
    /// cut at the IP length. Empty when there is no IP header.
    pub ip_payload: std::ops::Range<usize>,
    /// Set when decoding stopped before the transport payload.
    pub stop: Option<Stop>,
}

impl Decoded {
    pub fn tcp(&self) -> Option<&Tcp> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    pub fn udp(&self) -> Option<&Udp> {
        match &self.transport {
            Transport::Udp(u) => Some(u),
            _ => None,
        }
    }
}
