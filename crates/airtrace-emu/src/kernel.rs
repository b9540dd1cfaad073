//! The scenario's TCP settings (`[flow.tcp]`, docs/scenarios.md) on the kernel's TCP:
//! which Linux knob each one turns, and, for those Linux has no knob for, why not.
//!
//! A setting is *in force* for a flow when the scenario sets its key, or sets the
//! `profile` (or, for SACK, the `variant`) it comes from; its value is the one the
//! simulator would use ([`airtrace_sim::build::tcp_config`]). Keys in force go to:
//!
//! - per-namespace sysctls (`net.ipv4.tcp_sack`, `tcp_timestamps`,
//!   `tcp_window_scaling`, `tcp_ecn`, `tcp_reordering`, `tcp_rto_max_ms`), written in
//!   both namespaces of the run and nowhere else;
//! - attributes of the one host route in each namespace (`initcwnd`, `rto_min`,
//!   `quickack`);
//! - socket options, set by the generator (`cc`, `mss`, `sndbuf`, `rcvbuf`; only when
//!   set explicitly: a profile's buffer sizes and MSS would switch off the kernel's
//!   buffer autotuning and MTU-derived MSS);
//! - nothing, when the kernel already behaves so (`limited_transmit = true`, ...);
//! - or the list of settings not applied, with the reason (`initial_rto` other than
//!   1 s, `granularity`, `max_backoff_shift`, ...).
//!
//! Sysctls and routes hold for a whole namespace, so for every flow: two flows that
//! put different values of one of them in force are an error. [`plan`] decides,
//! without touching the system; [`crate::netns::Namespaces::apply`] applies.

use std::collections::BTreeMap;

use airtrace_sim::scenario::{FlowSpec, TcpSpec};
use airtrace_tcp::{RtoRule, SpuriousRtoDetection, UndoRule, Variant};
use serde::Serialize;

/// A kernel knob that holds for a whole namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Knob {
    /// A sysctl (dotted name, as `sysctl` writes it), set in both namespaces.
    Sysctl(&'static str),
    /// An attribute of the host route in each namespace (`ip route replace ... ATTR V`).
    Route(&'static str),
}

/// One setting, applied or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The flow (1-based, as in error messages) and its name.
    pub flow: String,
    /// The `[flow.tcp]` key.
    pub key: &'static str,
    /// Its value in force.
    pub value: String,
    /// Where the value comes from: `set`, `profile NAME` or `variant NAME`.
    pub from: String,
    /// How it was applied, or why it was not.
    pub note: String,
}

/// What to do to the kernel, and the account of it for meta.json.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Namespace-wide knobs and their values.
    pub knobs: BTreeMap<Knob, String>,
    /// Settings in force that were applied (through a knob, a socket option, or
    /// because the kernel already behaves so).
    pub applied: Vec<Setting>,
    /// Settings in force that the kernel has no knob for.
    pub not_applied: Vec<Setting>,
}

/// What the running kernel offers besides the knobs every supported kernel has.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kernel {
    /// `net.ipv4.tcp_rto_max_ms` exists (Linux 6.15 and later).
    pub rto_max_sysctl: bool,
}

impl Kernel {
    /// Looks at the running kernel.
    pub fn probe() -> Kernel {
        Kernel {
            rto_max_sysctl: std::path::Path::new("/proc/sys/net/ipv4/tcp_rto_max_ms").exists(),
        }
    }
}

/// The sysctls whose values meta.json records (as read back in host a's namespace):
/// those the plan may set, and the kernel's loss-recovery defaults it leaves alone.
pub const RECORDED_SYSCTLS: &[&str] = &[
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_rto_min_us",
    "net.ipv4.tcp_rto_max_ms",
    "net.ipv4.tcp_retries2",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_congestion_control",
];

const MS: i64 = 1_000_000;

fn ms(ns: i64) -> String {
    if ns % MS == 0 {
        format!("{} ms", ns / MS)
    } else {
        format!("{} ms", ns as f64 / MS as f64)
    }
}

/// Decides what to apply for `flows` on `kernel`. Errors: a TCP setting the simulator
/// refuses, or two flows wanting different values of one namespace-wide knob (the
/// message names both flows and the knob).
pub fn plan(flows: &[FlowSpec], kernel: Kernel) -> Result<Plan, String> {
    let mut plan = Plan::default();
    // Knob -> (value, flow index, key) of the first flow that put it in force.
    let mut owner: BTreeMap<Knob, (String, usize, &'static str)> = BTreeMap::new();
    for (i, spec) in flows.iter().enumerate() {
        let Some(t) = spec.tcp.as_ref().filter(|_| spec.app.is_tcp()) else {
            continue;
        };
        let c = airtrace_sim::build::tcp_config(Some(t))
            .map_err(|e| format!("flow[{}].tcp: {e}", i + 1))?;
        let flow = format!(
            "{} ({})",
            i + 1,
            spec.name
                .clone()
                .unwrap_or_else(|| format!("flow{}", i + 1))
        );
        let profile = t.profile.as_deref().map(|p| format!("profile {p}"));
        let mut f = FlowPlan {
            plan: &mut plan,
            owner: &mut owner,
            i,
            flow,
            profile,
        };
        f.settings(t, &c, kernel)?;
    }
    Ok(plan)
}

/// One flow's part of the plan.
struct FlowPlan<'a> {
    plan: &'a mut Plan,
    owner: &'a mut BTreeMap<Knob, (String, usize, &'static str)>,
    i: usize,
    flow: String,
    profile: Option<String>,
}

/// What to do with one setting in force.
enum Action {
    Knob(Knob, String),
    Knobs(Vec<(Knob, String)>),
    /// Set on the socket by the generator (`note` says which option).
    Socket(&'static str),
    /// The kernel already behaves so (`note` says how).
    Kernel(String),
    /// No knob (`note` says why).
    None(String),
}

impl FlowPlan<'_> {
    /// Where `key`'s value comes from, if it is in force: the scenario's key, else the
    /// profile.
    fn source(&self, explicit: bool) -> Option<String> {
        if explicit {
            Some("set".into())
        } else {
            self.profile.clone()
        }
    }

    fn record(
        &mut self,
        key: &'static str,
        value: String,
        from: String,
        action: Action,
    ) -> Result<(), String> {
        let setting = |note: String| Setting {
            flow: self.flow.clone(),
            key,
            value: value.clone(),
            from: from.clone(),
            note,
        };
        let knobs = match action {
            Action::Knob(k, v) => vec![(k, v)],
            Action::Knobs(v) => v,
            Action::Socket(how) => {
                self.plan.applied.push(setting(how.into()));
                return Ok(());
            }
            Action::Kernel(how) => {
                self.plan.applied.push(setting(how));
                return Ok(());
            }
            Action::None(why) => {
                self.plan.not_applied.push(setting(why));
                return Ok(());
            }
        };
        let mut notes = Vec::new();
        for (knob, v) in knobs {
            if let Some((v0, j, key0)) = self.owner.get(&knob) {
                if *v0 != v {
                    return Err(format!(
                        "flow[{}].tcp.{key} = {value} ({from}) needs {} {v}, but flow[{}].tcp.{key0} needs {v0}: one setting for the whole namespace, every flow shares it",
                        self.i + 1,
                        knob_name(knob),
                        j + 1
                    ));
                }
            } else {
                self.owner.insert(knob, (v.clone(), self.i, key));
            }
            notes.push(format!("{} {v}", knob_name(knob)));
            self.plan.knobs.insert(knob, v);
        }
        self.plan
            .applied
            .push(setting(format!("{} (both namespaces)", notes.join(", "))));
        Ok(())
    }

    fn settings(
        &mut self,
        t: &TcpSpec,
        c: &airtrace_tcp::Config,
        kernel: Kernel,
    ) -> Result<(), String> {
        let on = |b: bool| if b { "1" } else { "0" }.to_string();
        // Congestion control, MSS, buffers: socket options, only when set.
        if let Some(cc) = &t.cc {
            self.record(
                "cc",
                cc.clone(),
                "set".into(),
                Action::Socket("setsockopt TCP_CONGESTION"),
            )?;
        }
        if t.mss.is_some() {
            self.record(
                "mss",
                c.mss.to_string(),
                "set".into(),
                Action::Socket("setsockopt TCP_MAXSEG"),
            )?;
        } else if let Some(p) = self.profile.clone() {
            let why = "a profile's MSS is not applied: the kernel's follows the device MTU (set `mss` to fix it)";
            self.record("mss", c.mss.to_string(), p, Action::None(why.into()))?;
        }
        for (key, set, bytes, opt) in [
            (
                "sndbuf",
                t.sndbuf.is_some(),
                c.sndbuf,
                "setsockopt SO_SNDBUF",
            ),
            (
                "rcvbuf",
                t.rcvbuf.is_some(),
                c.rcvbuf,
                "setsockopt SO_RCVBUF on the listening socket",
            ),
        ] {
            if set {
                self.record(key, bytes.to_string(), "set".into(), Action::Socket(opt))?;
            } else if let Some(p) = self.profile.clone() {
                let why = format!("a profile's buffer size is not applied: the kernel autotunes the buffer (set `{key}` to fix it)");
                self.record(key, bytes.to_string(), p, Action::None(why))?;
            }
        }
        // The variant: SACK, and how loss recovery ends.
        let variant_from = t
            .variant
            .as_ref()
            .map(|v| format!("variant {v}"))
            .or_else(|| self.profile.clone());
        if let Some(from) = variant_from {
            let sack = c.variant == Variant::Sack;
            self.record(
                "sack",
                on(sack),
                from.clone(),
                Action::Knob(Knob::Sysctl("net.ipv4.tcp_sack"), on(sack)),
            )?;
            let (name, action) = match c.variant {
                Variant::Tahoe => ("tahoe", Action::None("the kernel has no Tahoe (slow start after every loss); its congestion control runs fast recovery".into())),
                Variant::Reno => ("reno", Action::None("Linux's loss recovery without SACK is NewReno's (RFC 6582: it stays in recovery through partial ACKs), not Reno's".into())),
                Variant::NewReno => ("newreno", Action::Kernel("without SACK, Linux recovers as NewReno (RFC 6582)".into())),
                Variant::Sack => ("sack", Action::Kernel("with SACK, Linux recovers by SACK (RFC 6675) and RACK-TLP (RFC 8985; net.ipv4.tcp_recovery)".into())),
            };
            self.record("variant", name.into(), from, action)?;
        }
        let explicit = [
            (
                "timestamps",
                t.timestamps.is_some(),
                c.timestamps,
                "net.ipv4.tcp_timestamps",
            ),
            (
                "window_scaling",
                t.window_scaling.is_some(),
                c.window_scaling,
                "net.ipv4.tcp_window_scaling",
            ),
            ("ecn", t.ecn.is_some(), c.ecn, "net.ipv4.tcp_ecn"),
        ];
        for (key, set, value, sysctl) in explicit {
            if let Some(from) = self.source(set) {
                self.record(
                    key,
                    value.to_string(),
                    from,
                    Action::Knob(Knob::Sysctl(sysctl), on(value)),
                )?;
            }
        }
        if let Some(from) = self.source(t.dupack_threshold.is_some()) {
            let n = c.dupack_threshold.to_string();
            self.record(
                "dupack_threshold",
                n.clone(),
                from,
                Action::Knob(Knob::Sysctl("net.ipv4.tcp_reordering"), n),
            )?;
        }
        if let Some(from) = self.source(t.initial_cwnd.is_some()) {
            let n = c.initial_cwnd_segments.to_string();
            self.record(
                "initial_cwnd",
                n.clone(),
                from,
                Action::Knob(Knob::Route("initcwnd"), n),
            )?;
        }
        if let Some(from) = self.source(t.min_rto.is_some()) {
            let v = c.rto.min_ns;
            let action = if v >= MS {
                // The route metric counts milliseconds.
                Action::Knob(Knob::Route("rto_min"), format!("{}ms", (v + MS - 1) / MS))
            } else {
                Action::None("the route attribute rto_min counts whole milliseconds; below 1 ms it cannot be set".into())
            };
            self.record("min_rto", ms(v), from, action)?;
        }
        if let Some(from) = self.source(t.max_rto.is_some()) {
            let v = c.rto.max_ns;
            let action = if !kernel.rto_max_sysctl {
                Action::None("this kernel has no net.ipv4.tcp_rto_max_ms (Linux 6.15 and later); its maximum RTO is 120 s".into())
            } else if (1000 * MS..=120_000 * MS).contains(&v) && v % MS == 0 {
                Action::Knob(
                    Knob::Sysctl("net.ipv4.tcp_rto_max_ms"),
                    (v / MS).to_string(),
                )
            } else {
                Action::None(
                    "net.ipv4.tcp_rto_max_ms takes whole milliseconds from 1000 to 120000".into(),
                )
            };
            self.record("max_rto", ms(v), from, action)?;
        }
        if let Some(from) = self.source(t.initial_rto.is_some()) {
            let v = c.rto.initial_ns;
            let action = if v == 1000 * MS {
                Action::Kernel("Linux's initial RTO is 1 s (RFC 6298 (2.1))".into())
            } else {
                Action::None("Linux's initial RTO is fixed at 1 s (TCP_TIMEOUT_INIT); no sysctl or route attribute changes it".into())
            };
            self.record("initial_rto", ms(v), from, action)?;
        }
        let quickack = (Knob::Route("quickack"), "1".to_string());
        if let Some(from) = self.source(t.delayed_ack.is_some()) {
            let action = if c.delayed_ack.enabled {
                Action::Kernel("Linux delays ACKs".into())
            } else {
                Action::Knobs(vec![quickack.clone()])
            };
            self.record(
                "delayed_ack",
                c.delayed_ack.enabled.to_string(),
                from,
                action,
            )?;
        }
        if let Some(from) = self.source(t.ack_every.is_some()) {
            let n = c.delayed_ack.every;
            let action = match n {
                1 => Action::Knobs(vec![quickack]),
                2 => Action::Kernel("Linux acknowledges at least every second full-sized segment".into()),
                _ => Action::None("Linux acknowledges at least every second full-sized segment (1 with quickack); no knob sets another count".into()),
            };
            self.record("ack_every", n.to_string(), from, action)?;
        }
        if let Some(from) = self.source(t.delayed_ack_timeout.is_some()) {
            let why = "no sysctl or route attribute sets Linux's delayed-ACK timer: it starts at 40 ms (TCP_ATO_MIN) and adapts to the flow, up to 200 ms (TCP_DELACK_MAX)";
            self.record(
                "delayed_ack_timeout",
                ms(c.delayed_ack.timeout_ns),
                from,
                Action::None(why.into()),
            )?;
        }
        if let Some(from) = self.source(t.granularity.is_some()) {
            let why = "Linux's TCP timers run on the kernel's own clock (jiffies and high-resolution timers); no knob coarsens them";
            self.record(
                "granularity",
                ms(c.rto.granularity_ns),
                from,
                Action::None(why.into()),
            )?;
        }
        if let Some(from) = self.source(t.max_backoff_shift.is_some()) {
            let why = "Linux doubles the RTO up to the maximum RTO, with no cap on the doublings (net.ipv4.tcp_retries2 ends the connection instead)";
            self.record(
                "max_backoff_shift",
                c.rto.max_backoff_shift.to_string(),
                from,
                Action::None(why.into()),
            )?;
        }
        if let Some(from) = self.source(t.limited_transmit.is_some()) {
            let action = if c.limited_transmit {
                Action::Kernel("Linux always uses limited transmit (RFC 3042)".into())
            } else {
                Action::None(
                    "Linux always uses limited transmit (RFC 3042); no knob turns it off".into(),
                )
            };
            self.record(
                "limited_transmit",
                c.limited_transmit.to_string(),
                from,
                action,
            )?;
        }
        if let Some(from) = self.source(t.byte_counting.is_some()) {
            let action = if c.byte_counting {
                Action::Kernel(
                    "Linux grows cwnd by the segments each ACK acknowledges (RFC 3465)".into(),
                )
            } else {
                Action::None("Linux grows cwnd by the segments each ACK acknowledges (RFC 3465); no knob makes it count ACKs".into())
            };
            self.record("byte_counting", c.byte_counting.to_string(), from, action)?;
        }
        if let Some(from) = self.source(t.ssthresh_from_pipe.is_some()) {
            let why = "the kernel's congestion control sets ssthresh on a loss (reno: half the congestion window), neither from FlightSize nor from the pipe";
            self.record(
                "ssthresh_from_pipe",
                c.ssthresh_from_pipe.to_string(),
                from,
                Action::None(why.into()),
            )?;
        }
        // Simulator options: recorded only when a scenario sets them.
        if t.prr.is_some() {
            let action = if c.prr {
                Action::Kernel(
                    "Linux reduces the window by PRR (RFC 6937) in every recovery".into(),
                )
            } else {
                Action::None("Linux always uses PRR (RFC 6937); no knob turns it off".into())
            };
            self.record("prr", c.prr.to_string(), "set".into(), action)?;
        }
        if t.hystart.is_some() {
            let why = "Linux has no HyStart++ (RFC 9406): its cubic has the older HyStart (a module parameter, on by default), reno none";
            self.record(
                "hystart",
                c.hystart.to_string(),
                "set".into(),
                Action::None(why.into()),
            )?;
        }
        if t.rack_tlp.is_some() {
            let action = if c.rack_tlp {
                Action::Kernel("Linux uses RACK-TLP (RFC 8985) by default (net.ipv4.tcp_recovery = 1, tcp_early_retrans = 3)".into())
            } else {
                Action::None("Linux uses RACK-TLP by default; the emulator does not change net.ipv4.tcp_recovery".into())
            };
            self.record("rack_tlp", c.rack_tlp.to_string(), "set".into(), action)?;
        }
        if t.spurious_rto.is_some() {
            let value = format!("{:?}", c.spurious_rto).to_lowercase();
            let action = if c.spurious_rto == SpuriousRtoDetection::Frto {
                Action::Kernel("Linux detects spurious timeouts with F-RTO (RFC 5682) by default (net.ipv4.tcp_frto = 2)".into())
            } else {
                Action::None("Linux uses F-RTO (net.ipv4.tcp_frto = 2); it has no Eifel detection and the emulator does not change tcp_frto".into())
            };
            self.record("spurious_rto", value, "set".into(), action)?;
        }
        if t.autotune.is_some() {
            let action = if c.autotune {
                Action::Kernel("Linux autotunes both buffers (net.ipv4.tcp_moderate_rcvbuf = 1, tcp_sndbuf_expand) unless rcvbuf or sndbuf is set".into())
            } else {
                Action::None("Linux autotunes the buffers; the emulator does not change net.ipv4.tcp_moderate_rcvbuf".into())
            };
            self.record("autotune", c.autotune.to_string(), "set".into(), action)?;
        }
        if t.ssthresh_from_cwnd.is_some() {
            let action = if c.ssthresh_from_cwnd {
                Action::Kernel("Linux's reno halves cwnd on a loss (tcp_reno_ssthresh), cubic multiplies it by 0.7".into())
            } else {
                Action::None(
                    "Linux reduces cwnd, not FlightSize, on a loss; no knob changes it".into(),
                )
            };
            self.record(
                "ssthresh_from_cwnd",
                c.ssthresh_from_cwnd.to_string(),
                "set".into(),
                action,
            )?;
        }
        if t.rto_rule.is_some() {
            let value = format!("{:?}", c.rto_rule).to_lowercase();
            let action = if c.rto_rule == RtoRule::Linux {
                Action::Kernel("Linux floors the RTO's variance term at the minimum RTO (tcp_rtt_estimator): RTO ≥ SRTT + rto_min".into())
            } else {
                Action::None("Linux's RTO is its own (SRTT + a variance term of at least rto_min); no knob makes it RFC 6298's".into())
            };
            self.record("rto_rule", value, "set".into(), action)?;
        }
        if t.undo.is_some() {
            let value = format!("{:?}", c.undo).to_lowercase();
            let action = if c.undo == UndoRule::Linux {
                Action::Kernel("Linux keeps a recovery's ssthresh on a timeout during it and undoes a spurious timeout to prior_ssthresh and prior_cwnd (tcp_enter_loss, tcp_undo_cwnd_reduction)".into())
            } else {
                Action::None("Linux's timeout and undo rules are its own (tcp_enter_loss, tcp_undo_cwnd_reduction); no knob makes them RFC 4015's".into())
            };
            self.record("undo", value, "set".into(), action)?;
        }
        if t.hystart_linux.is_some() {
            // The emulator's congestion control: `cc`, else cubic unless a variant
            // is given (reno then).
            let cubic = match t.cc.as_deref() {
                Some(name) => name == "cubic",
                None => t.variant.is_none(),
            };
            let action = if !cubic {
                Action::None("only the kernel's cubic has HyStart".into())
            } else if c.hystart_linux {
                Action::Kernel("the kernel's cubic has this HyStart on by default (module parameter tcp_cubic.hystart = 1, ACK train and delay detection)".into())
            } else {
                Action::None("the kernel's cubic uses HyStart by default; the emulator does not change the module parameter tcp_cubic.hystart".into())
            };
            self.record(
                "hystart_linux",
                c.hystart_linux.to_string(),
                "set".into(),
                action,
            )?;
        }
        Ok(())
    }
}

/// How a knob is named in notes and errors.
pub fn knob_name(k: Knob) -> String {
    match k {
        Knob::Sysctl(s) => format!("sysctl {s} ="),
        Knob::Route(a) => format!("route attribute {a}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(text: &str) -> Vec<FlowSpec> {
        let toml = format!("[link]\nrate = \"1 Mbit/s\"\ndelay = \"1 ms\"\n{text}");
        airtrace_sim::Scenario::parse(std::path::Path::new("t.toml"), &toml)
            .unwrap()
            .flows
    }

    const NEW: Kernel = Kernel {
        rto_max_sysctl: true,
    };

    fn keys(s: &[Setting]) -> Vec<&'static str> {
        s.iter().map(|s| s.key).collect()
    }

    #[test]
    fn a_flow_without_tcp_settings_leaves_the_kernel_alone() {
        let p = plan(&flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\""), NEW).unwrap();
        assert!(p.knobs.is_empty() && p.applied.is_empty() && p.not_applied.is_empty());
    }

    #[test]
    fn explicit_keys_go_to_sysctls_and_routes() {
        let p = plan(
            &flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { timestamps = false, ecn = true, initial_cwnd = 4, min_rto = \"300 ms\", delayed_ack = false, variant = \"newreno\" }"),
            NEW,
        )
        .unwrap();
        let want: BTreeMap<Knob, String> = [
            (Knob::Sysctl("net.ipv4.tcp_sack"), "0"),
            (Knob::Sysctl("net.ipv4.tcp_timestamps"), "0"),
            (Knob::Sysctl("net.ipv4.tcp_ecn"), "1"),
            (Knob::Route("initcwnd"), "4"),
            (Knob::Route("rto_min"), "300ms"),
            (Knob::Route("quickack"), "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        assert_eq!(p.knobs, want);
        assert_eq!(
            keys(&p.applied),
            [
                "sack",
                "variant",
                "timestamps",
                "ecn",
                "initial_cwnd",
                "min_rto",
                "delayed_ack"
            ]
        );
        assert!(p.not_applied.is_empty());
        let ts = &p.applied[2];
        assert_eq!((ts.value.as_str(), ts.from.as_str()), ("false", "set"));
        assert_eq!(
            ts.note,
            "sysctl net.ipv4.tcp_timestamps = 0 (both namespaces)"
        );
    }

    #[test]
    fn a_profile_puts_all_its_values_in_force_and_says_what_it_cannot_apply() {
        let p = plan(
            &flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { profile = \"bsd\" }"),
            NEW,
        )
        .unwrap();
        assert_eq!(p.knobs[&Knob::Sysctl("net.ipv4.tcp_sack")], "0");
        assert_eq!(p.knobs[&Knob::Sysctl("net.ipv4.tcp_timestamps")], "0");
        assert_eq!(p.knobs[&Knob::Sysctl("net.ipv4.tcp_window_scaling")], "0");
        assert_eq!(p.knobs[&Knob::Sysctl("net.ipv4.tcp_rto_max_ms")], "64000");
        assert_eq!(p.knobs[&Knob::Route("initcwnd")], "1");
        assert_eq!(p.knobs[&Knob::Route("rto_min")], "1000ms");
        assert_eq!(
            keys(&p.not_applied),
            [
                "mss",
                "sndbuf",
                "rcvbuf",
                "variant",
                "initial_rto",
                "delayed_ack_timeout",
                "granularity",
                "max_backoff_shift",
                "limited_transmit",
                "byte_counting",
                "ssthresh_from_pipe"
            ]
        );
        assert!(p
            .not_applied
            .iter()
            .all(|s| s.from == "profile bsd" && !s.note.is_empty()));
        let rto = p
            .not_applied
            .iter()
            .find(|s| s.key == "initial_rto")
            .unwrap();
        assert_eq!(rto.value, "3000 ms");
    }

    #[test]
    fn the_simulators_prr_hystart_rack_tlp_and_spurious_rto_are_noted() {
        let p = plan(
            &flows(
                "[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { prr = true, hystart = true, rack_tlp = true, spurious_rto = \"eifel\" }",
            ),
            NEW,
        )
        .unwrap();
        assert!(p.knobs.is_empty());
        assert_eq!(keys(&p.applied), ["prr", "rack_tlp"]);
        assert_eq!(keys(&p.not_applied), ["hystart", "spurious_rto"]);
    }

    #[test]
    fn autotune_is_the_kernels_own_and_turning_it_off_is_not_applied() {
        let on = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { autotune = true }");
        let p = plan(&on, NEW).unwrap();
        assert!(p.knobs.is_empty());
        assert_eq!(keys(&p.applied), ["autotune"]);
        let off = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { autotune = false }");
        assert_eq!(keys(&plan(&off, NEW).unwrap().not_applied), ["autotune"]);
        let cwnd = flows(
            "[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { ssthresh_from_cwnd = true }",
        );
        assert_eq!(
            keys(&plan(&cwnd, NEW).unwrap().applied),
            ["ssthresh_from_cwnd"]
        );
    }

    #[test]
    fn the_linux_rto_undo_and_hystart_are_the_kernels_own() {
        let on = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { rto_rule = \"linux\", undo = \"linux\", hystart_linux = true }");
        let p = plan(&on, NEW).unwrap();
        assert!(p.knobs.is_empty());
        assert_eq!(keys(&p.applied), ["rto_rule", "undo", "hystart_linux"]);
        let off = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { rto_rule = \"rfc6298\", undo = \"rfc4015\" }");
        assert_eq!(
            keys(&plan(&off, NEW).unwrap().not_applied),
            ["rto_rule", "undo"]
        );
    }

    #[test]
    fn max_rto_needs_the_sysctl_and_its_range() {
        let f = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { max_rto = \"60 s\" }");
        assert_eq!(
            plan(&f, NEW).unwrap().knobs[&Knob::Sysctl("net.ipv4.tcp_rto_max_ms")],
            "60000"
        );
        let old = plan(
            &f,
            Kernel {
                rto_max_sysctl: false,
            },
        )
        .unwrap();
        assert!(old.knobs.is_empty());
        assert!(
            old.not_applied[0].note.contains("Linux 6.15"),
            "{:?}",
            old.not_applied
        );
        let f = flows("[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { max_rto = \"200 s\" }");
        assert!(plan(&f, NEW).unwrap().not_applied[0]
            .note
            .contains("from 1000 to 120000"));
    }

    #[test]
    fn flows_that_disagree_on_a_namespace_knob_are_an_error() {
        let f = flows(
            "[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { timestamps = true }\n\
             [[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { timestamps = true, initial_cwnd = 3 }\n\
             [[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { profile = \"bsd\" }",
        );
        assert_eq!(
            plan(&f, NEW).unwrap_err(),
            "flow[3].tcp.timestamps = false (profile bsd) needs sysctl net.ipv4.tcp_timestamps = 0, but flow[1].tcp.timestamps needs 1: one setting for the whole namespace, every flow shares it"
        );
        // Agreeing flows are fine; one value each.
        let f = flows(
            "[[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { ack_every = 1 }\n\
             [[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { delayed_ack = false }",
        );
        assert_eq!(
            plan(&f, NEW).unwrap().knobs,
            [(Knob::Route("quickack"), "1".to_string())]
                .into_iter()
                .collect()
        );
    }
}
