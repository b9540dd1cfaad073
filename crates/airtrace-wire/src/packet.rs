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
    /// The link-layer header (Ethernet, SLL, loopback, PPP, PPPoE, FDDI, raw IP).
    Link,
    /// The radiotap capture header.
    Radiotap,
    /// The IEEE 802.11 MAC header.
    Wlan,
    /// The IEEE 802.2 LLC / SNAP header.
    Llc,
    /// An IEEE 802.1Q / 802.1ad VLAN tag.
    Vlan,
    /// An MPLS label stack.
    Mpls,
    /// The IPv4 header.
    Ipv4,
    /// The IPv6 fixed header.
    Ipv6,
    /// An IPv6 extension header.
    Ipv6Ext,
    /// The DSR options header (RFC 4728).
    Dsr,
    /// A tunnel header (GTP-U, GRE, VXLAN, Geneve, L2TP, AYIYA).
    Tunnel,
    /// The TCP fixed header.
    Tcp,
    /// The TCP options.
    TcpOptions,
    /// The UDP header.
    Udp,
}

impl Layer {
    /// A short lower-case name for messages and tables.
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
            Layer::Dsr => "dsr",
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
    /// The layer carries something airtrace does not decode (not an error): ARP, an
    /// encrypted 802.11 body, a tunnel's control message, nothing to analyse.
    Unsupported,
    /// The layer is a tunnel whose payload airtrace does not decode, though it may
    /// carry TCP (the static text names it): the file's report counts these frames,
    /// rather than let their TCP go unseen in silence (issue 18, class 4).
    NotDecoded(&'static str),
}

/// Where and why decoding stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The layer whose header could not be decoded.
    pub layer: Layer,
    /// Why.
    pub reason: StopReason,
}

/// Fields of a radiotap header (only those present are `Some`).
///
/// Field meanings and units follow the field table at radiotap.org ("Defined fields").
/// A field present in several radiotap namespaces (later ones usually repeat
/// per-antenna values) keeps its first value; vendor namespaces are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Radiotap {
    /// The first `it_present` word (bit n set: field n present).
    pub present: u32,
    /// TSFT: the MAC's 64-bit 802.11 time synchronization function timer, in microseconds.
    pub tsft_us: Option<u64>,
    /// Radiotap "flags" field (bit 0x10: frame includes FCS, 0x40: bad FCS).
    pub flags: Option<u8>,
    /// Legacy rate in units of 500 kbit/s.
    pub rate_500kbps: Option<u8>,
    /// Channel centre frequency in MHz.
    pub channel_mhz: Option<u16>,
    /// Channel flags (0x0080 2 GHz, 0x0100 5 GHz, 0x0020 CCK, 0x0040 OFDM...).
    pub channel_flags: Option<u16>,
    /// Antenna signal in dBm.
    pub signal_dbm: Option<i8>,
    /// Antenna noise in dBm.
    pub noise_dbm: Option<i8>,
    /// Antenna index.
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
    /// RX flags (0x0002: PLCP CRC check failed).
    pub rx_flags: Option<u16>,
    /// TX flags (0x0001: transmission failed).
    pub tx_flags: Option<u16>,
    /// Number of RTS retries a transmitted frame used.
    pub rts_retries: Option<u8>,
    /// Number of data retries a transmitted frame used.
    pub data_retries: Option<u8>,
    /// Extended channel (XChannel) field.
    pub xchannel: Option<XChannel>,
    /// A-MPDU status field.
    pub ampdu: Option<AmpduStatus>,
    /// VHT (802.11ac) field.
    pub vht: Option<Vht>,
    /// Timestamp field.
    pub timestamp: Option<RadiotapTimestamp>,
    /// HE field: data1..data6.
    pub he: Option<[u16; 6]>,
    /// HE-MU field.
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
    /// Channel flags.
    pub flags: u32,
    /// Centre frequency in MHz.
    pub freq_mhz: u16,
    /// Channel number.
    pub channel: u8,
    /// Maximum transmit power.
    pub max_power: u8,
}

/// Radiotap A-MPDU status field (bit 20).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AmpduStatus {
    /// Reference number shared by the subframes of one A-MPDU.
    pub reference: u32,
    /// Flags (last subframe, delimiter CRC error...).
    pub flags: u16,
    /// Delimiter CRC value.
    pub delimiter_crc: u8,
}

/// Radiotap VHT field (bit 21).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vht {
    /// Which of the other fields are known.
    pub known: u16,
    /// STBC, TXOP_PS, short GI, LDPC extra symbol, beamformed.
    pub flags: u8,
    /// Bandwidth code (0: 20 MHz, 1: 40, 4: 80, 11: 160...).
    pub bandwidth: u8,
    /// Per user: MCS in the high nibble, number of spatial streams in the low nibble.
    pub mcs_nss: [u8; 4],
    /// Coding per user (bit set: LDPC).
    pub coding: u8,
    /// Group ID.
    pub group_id: u8,
    /// Partial AID.
    pub partial_aid: u16,
}

/// Radiotap timestamp field (bit 22).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadiotapTimestamp {
    /// The timestamp value, in the unit below.
    pub timestamp: u64,
    /// Accuracy, in the same unit.
    pub accuracy: u16,
    /// Unit (low nibble) and sampling position (high nibble).
    pub unit_position: u8,
    /// Flags (bit 0: 32-bit counter, bit 1: accuracy known).
    pub flags: u8,
}

/// Radiotap HE-MU field (bit 24).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeMu {
    /// HE-MU flags 1.
    pub flags1: u16,
    /// HE-MU flags 2.
    pub flags2: u16,
    /// RU allocations, channel 1.
    pub ru_channel1: [u8; 4],
    /// RU allocations, channel 2.
    pub ru_channel2: [u8; 4],
}

impl Radiotap {
    /// Flags bit: the frame ends with its 4-byte FCS (stripped by the decoder).
    pub const FLAG_FCS_AT_END: u8 = 0x10;
    /// Flags bit: the frame failed its FCS check.
    pub const FLAG_BAD_FCS: u8 = 0x40;

    /// True when the radio reported a bad FCS: the frame's contents are corrupt, and
    /// anything decoded from them is suspect.
    pub fn bad_fcs(&self) -> bool {
        self.flags.is_some_and(|f| f & Self::FLAG_BAD_FCS != 0)
    }
}

/// Fields of an IEEE 802.11 MAC header (IEEE Std 802.11-2020, clause 9.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wlan {
    /// 0 management, 1 control, 2 data, 3 extension.
    pub frame_type: u8,
    /// Subtype within the type (IEEE 802.11-2020 Table 9-1).
    pub subtype: u8,
    /// To DS flag.
    pub to_ds: bool,
    /// From DS flag.
    pub from_ds: bool,
    /// Retry flag: this frame is a MAC-layer retransmission.
    pub retry: bool,
    /// Protected Frame flag: the body is encrypted.
    pub protected: bool,
    /// Sequence number (12 bits); `None` for control frames, which carry none, and
    /// when the header was cut before it.
    pub seq: Option<u16>,
    /// Fragment number (0 for control frames).
    pub frag: u8,
    /// Transmitter address (addr2) where present.
    pub transmitter: Option<[u8; 6]>,
    /// Receiver address (addr1).
    pub receiver: [u8; 6],
    /// Duration/ID field.
    pub duration: u16,
    /// More Fragments flag.
    pub more_fragments: bool,
    /// Power Management flag.
    pub power_mgmt: bool,
    /// More Data flag.
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
    /// `frame_type` of management frames (beacons, probes, association...).
    pub const TYPE_MANAGEMENT: u8 = 0;
    /// `frame_type` of control frames (Ack, RTS, CTS, BlockAck...).
    pub const TYPE_CONTROL: u8 = 1;
    /// `frame_type` of data frames.
    pub const TYPE_DATA: u8 = 2;
    /// `frame_type` of extension frames.
    pub const TYPE_EXTENSION: u8 = 3;

    /// True for data frames of a subtype that carries a frame body (not Null, CF-Ack...).
    pub fn carries_data(&self) -> bool {
        self.frame_type == Self::TYPE_DATA && self.subtype & 0x4 == 0
    }
}

/// Network-layer fields of the innermost IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ip {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IPv4 identification, or the IPv6 fragment header's identification if any.
    pub id: u32,
    /// IPv4 time to live / IPv6 hop limit.
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
    /// True for any fragment of a fragmented datagram (first, middle or last).
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
    /// No more data from sender.
    pub const FIN: u16 = 0x001;
    /// Synchronize sequence numbers.
    pub const SYN: u16 = 0x002;
    /// Reset the connection.
    pub const RST: u16 = 0x004;
    /// Push function.
    pub const PSH: u16 = 0x008;
    /// The acknowledgment field is significant.
    pub const ACK: u16 = 0x010;
    /// The urgent pointer field is significant.
    pub const URG: u16 = 0x020;
    /// ECN-Echo (RFC 3168 section 6.1).
    pub const ECE: u16 = 0x040;
    /// Congestion Window Reduced (RFC 3168 section 6.1).
    pub const CWR: u16 = 0x080;
    /// ECN nonce sum (RFC 3540, historic).
    pub const NS: u16 = 0x100;
}

/// Maximum number of SACK blocks a TCP header can carry (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP header fields and the options airtrace reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tcp {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flag bits, see [`tcp_flags`].
    pub flags: u16,
    /// Window field as sent (not scaled).
    pub window: u16,
    /// Checksum as sent (not verified).
    pub checksum: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Header length in bytes, from the data offset (options included).
    pub header_len: u16,
    /// Segment length: payload bytes according to the IP length, whether captured or not.
    pub payload_len: u32,
    /// Maximum segment size option (RFC 9293 section 3.7.1).
    pub mss: Option<u16>,
    /// Window scale option: the shift count as sent (RFC 7323 section 2).
    pub window_scale: Option<u8>,
    /// SACK-permitted option (RFC 2018 section 2).
    pub sack_permitted: bool,
    /// Timestamps option (RFC 7323 section 3): (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// Number of valid entries in `sack`.
    pub sack_count: u8,
    /// SACK blocks (left edge, right edge), the first `sack_count` are valid.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl Tcp {
    /// The SACK blocks the segment carries.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.sack_count).min(MAX_SACK_BLOCKS)]
    }
    /// True if `flag` (a [`tcp_flags`] bit) is set.
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
}

/// UDP header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Udp {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length according to the UDP length field.
    pub payload_len: u32,
    /// Checksum as sent (0: none; not verified).
    pub checksum: u16,
}

/// The transport layer of a decoded frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// No transport header: decoding stopped before it, or the packet is a non-first
    /// fragment.
    #[default]
    None,
    /// A TCP segment.
    Tcp(Tcp),
    /// A UDP datagram.
    Udp(Udp),
    /// Another protocol number (ICMP, ...), not decoded further.
    Other(u8),
}

/// Everything airtrace reads from one captured frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The radiotap header, for LINKTYPE_IEEE802_11_RADIOTAP frames.
    pub radiotap: Option<Radiotap>,
    /// The 802.11 MAC header, for 802.11 frames.
    pub wlan: Option<Wlan>,
    /// Innermost IP header (after any GTP-U, IP-in-IP or MPLS encapsulation).
    pub ip: Option<Ip>,
    /// Number of IP-level encapsulations removed to reach `ip` (GTP-U, IP-in-IP,
    /// IPv6-in-IP; 0 for a plain packet). VLAN tags, MPLS labels and PPPoE are link
    /// layer headers and are not counted.
    pub tunnel_depth: u8,
    /// The transport header of the innermost IP packet.
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
    /// The TCP header, if the transport is TCP.
    pub fn tcp(&self) -> Option<&Tcp> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    /// The UDP header, if the transport is UDP.
    pub fn udp(&self) -> Option<&Udp> {
        match &self.transport {
            Transport::Udp(u) => Some(u),
            _ => None,
        }
    }
}
