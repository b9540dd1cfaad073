//! Reno congestion control (RFC 5681 §3.1, eq. (4)): slow start, then additive
//! increase of one SMSS per window, and ssthresh = max(FlightSize/2, 2·SMSS) on a
//! congestion event. Linux calls it `reno` (`tcp_reno_ssthresh`,
//! `tcp_reno_cong_avoid`).
//!
//! It is the default of every [`Config`](crate::Config), whatever the loss recovery
//! ([`Variant`](crate::Variant)): the window arithmetic every scenario had before
//! congestion control became selectable, byte for byte.

use super::{CaEvent, CcContext, CongestionOps, HyStart};

/// Reno's state: the RFC 3465 byte counter of congestion avoidance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reno {
    /// Bytes acknowledged in congestion avoidance since cwnd last grew.
    ca_acked: u32,
    /// HyStart++ in the initial slow start (inert unless `Config::hystart`).
    hystart: HyStart,
}

impl Reno {
    /// The HyStart++ state.
    pub fn hystart(&self) -> &HyStart {
        &self.hystart
    }
}

impl CongestionOps for Reno {
    /// RFC 5681 eq. (4): max(FlightSize/2, 2·SMSS), on the flight size the endpoint
    /// passes (FlightSize, or the pipe with `ssthresh_from_pipe`).
    fn ssthresh(&mut self, ctx: &CcContext) -> u32 {
        (ctx.flight_size / 2).max(2 * ctx.smss)
    }

    /// RFC 5681 §3.1 slow start and congestion avoidance: with byte counting (RFC 3465)
    /// cwnd grows by SMSS once a cwnd's worth of bytes is acknowledged; per ACK, as
    /// 4.4BSD and ns-3 do, by max(1, SMSS²/cwnd) each ACK (SMSS in slow start).
    fn cong_avoid(&mut self, ctx: &CcContext, acked: u32) -> u32 {
        let (cwnd, smss) = (ctx.cwnd, ctx.smss);
        if cwnd < ctx.ssthresh {
            return self.hystart.slow_start(ctx, acked);
        }
        if !ctx.byte_counting {
            return cwnd + (smss * smss / cwnd.max(1)).max(1);
        }
        self.ca_acked += acked;
        if self.ca_acked >= cwnd {
            self.ca_acked -= cwnd;
            cwnd + smss
        } else {
            cwnd
        }
    }

    /// Every reduction restarts the byte counter (and ends HyStart++).
    fn cwnd_event(&mut self, _ctx: &CcContext, _ev: CaEvent) {
        self.ca_acked = 0;
        self.hystart.end();
    }

    /// HyStart++ (RFC 9406).
    fn pkts_acked(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        self.hystart.on_ack(ctx, rtt_ns)
    }
}
