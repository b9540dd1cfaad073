//! The two network namespaces of a run and their TUN devices.
//!
//! Every namespace name carries the fixed prefix, the run's pid and its run number in
//! that process (runs in threads of one process each have their own):
//! `airtrace-<pid>-<n>-a` / `airtrace-<pid>-<n>-b` (bind-mounted by `ip netns add`
//! under /run/netns). The devices inside them, `at<pid>a` / `at<pid>b`, need no run
//! number: each lives in its own namespace. A device is created by a thread that has
//! entered its namespace (`setns`) and opened /dev/net/tun there; the descriptor then
//! works from any thread, and the device disappears when it is closed. Configuration
//! goes through iproute2 (`ip -n NS ...`), each command checked.
//!
//! Safety: addresses only from 198.18.0.0/15 (host a 198.18.0.1, host b 198.18.1.1),
//! one host route to the peer through the TUN device, loopback up, IPv6 off, no
//! default route (checked after setup). [`Namespaces`] ends the processes left inside
//! and deletes both namespaces when dropped; [`cleanup_stale`] does the same for the
//! namespaces of runs whose process is gone.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::sched::{setns, CloneFlags};

use crate::contain::{self, Process};

/// Prefix of every namespace a run creates.
pub const NS_PREFIX: &str = "airtrace-";
/// Host a's address (sender side).
pub const ADDR_A: [u8; 4] = airtrace_sim::packet::ADDR_A;
/// Host b's address (receiver side).
pub const ADDR_B: [u8; 4] = airtrace_sim::packet::ADDR_B;

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// Runs `ip ARGS`, failing with its stderr on a non-zero exit. It runs in a process
/// group of its own: a Ctrl-C at the terminal goes to the foreground group, and must
/// not cut short the `ip netns del` of a teardown (the run sees the signal itself).
pub fn ip(args: &[&str]) -> io::Result<String> {
    use std::os::unix::process::CommandExt;
    let out = Command::new("ip")
        .args(args)
        .process_group(0)
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run `ip` (iproute2): {e}")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Names of the existing network namespaces (`ip netns list`).
pub fn list() -> io::Result<Vec<String>> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect())
}

/// The pid in an airtrace namespace name `airtrace-<pid>-<n>-a|b` (or
/// `airtrace-<pid>-a|b`, as runs named them before the run number).
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let (run, side) = rest.rsplit_once('-')?;
    if side != "a" && side != "b" {
        return None;
    }
    let (pid, n) = run.split_once('-').unwrap_or((run, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(n) || !digits(pid) {
        return None;
    }
    pid.parse().ok()
}

/// True when process `pid` exists.
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A namespace [`cleanup_stale`] removed.
#[derive(Debug, Clone)]
pub struct Removed {
    /// Its name.
    pub namespace: String,
    /// The processes it ended there first (a user's command or server of the dead
    /// run, and whatever they started).
    pub processes: Vec<Process>,
}

/// Deletes the namespaces (and with them their devices) of airtrace runs whose
/// process no longer exists, after ending the processes inside them
/// ([`crate::contain`]). Returns what it removed.
pub fn cleanup_stale() -> io::Result<Vec<Removed>> {
    let mut removed = Vec::new();
    for name in list()? {
        if let Some(pid) = owner_pid(&name) {
            // A live pid may be a run in progress (or, rarely, a new process that
            // reused a dead run's pid): never touch it.
            if !alive(pid) {
                let processes = contain::end_all(&name, STOP_GRACE)?;
                ip(&["netns", "del", &name])?;
                removed.push(Removed {
                    namespace: name,
                    processes,
                });
            }
        }
    }
    Ok(removed)
}

/// How long processes left in a namespace get between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// One side's namespace and device.
pub struct Side {
    /// Namespace name.
    pub ns: String,
    /// TUN device name inside it.
    pub dev: String,
}

/// Both namespaces of a run; deleted on drop.
pub struct Namespaces {
    /// Host a (sender side).
    pub a: Side,
    /// Host b (receiver side).
    pub b: Side,
    created: Vec<String>,
}

/// Runs of this process so far: the run number in namespace names.
static RUNS: AtomicU64 = AtomicU64::new(0);

impl Namespaces {
    /// Names for a new run of this process.
    fn names() -> (Side, Side) {
        let pid = std::process::id();
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let side = |s: &str| Side {
            ns: format!("{NS_PREFIX}{pid}-{n}-{s}"),
            dev: format!("at{pid}{s}"),
        };
        (side("a"), side("b"))
    }

    /// Creates both namespaces, a TUN device in each (MTUs `mtu[0]` for a's, the
    /// forward direction, `mtu[1]` for b's), addresses and host routes. Returns the
    /// namespaces and the two TUN descriptors (a, b).
    pub fn create(mtu: [u32; 2]) -> io::Result<(Namespaces, OwnedFd, OwnedFd)> {
        let (a, b) = Self::names();
        let mut me = Namespaces {
            a,
            b,
            created: Vec::new(),
        };
        for ns in [me.a.ns.clone(), me.b.ns.clone()] {
            // A namespace left by an earlier process with our pid (and run number) would
            // make `add` fail; no run of this process has the name.
            if list()?.contains(&ns) {
                ip(&["netns", "del", &ns])?;
            }
            ip(&["netns", "add", &ns])?;
            me.created.push(ns);
        }
        let tun_a = me.side_setup(&me.a, ADDR_A, ADDR_B, mtu[0])?;
        let tun_b = me.side_setup(&me.b, ADDR_B, ADDR_A, mtu[1])?;
        for side in [&me.a, &me.b] {
            let routes = ip(&["-n", &side.ns, "route", "show", "default"])?;
            if !routes.trim().is_empty() {
                return Err(io::Error::other(format!(
                    "{} has a default route; refusing to run",
                    side.ns
                )));
            }
        }
        Ok((me, tun_a, tun_b))
    }

    fn side_setup(
        &self,
        side: &Side,
        local: [u8; 4],
        peer: [u8; 4],
        mtu: u32,
    ) -> io::Result<OwnedFd> {
        let ns = side.ns.clone();
        let dev = side.dev.clone();
        let fd = std::thread::scope(|s| {
            s.spawn(|| -> io::Result<OwnedFd> {
                enter(&ns)?;
                // /proc/sys/net shows the namespace of the thread that opens it.
                for key in ["all", "default"] {
                    let path = format!("/proc/sys/net/ipv6/conf/{key}/disable_ipv6");
                    if Path::new(&path).exists() {
                        File::create(&path).and_then(|mut f| f.write_all(b"1"))?;
                    }
                }
                crate::sys::open_tun(&dev)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("namespace setup thread panicked")))
        })?;
        let local = format!("{}/32", dotted(local));
        let peer = format!("{}/32", dotted(peer));
        let mtu = mtu.to_string();
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        ip(&["-n", &ns, "link", "set", "dev", &dev, "mtu", &mtu])?;
        ip(&["-n", &ns, "addr", "add", &local, "dev", &dev])?;
        ip(&["-n", &ns, "link", "set", "dev", &dev, "up"])?;
        ip(&["-n", &ns, "route", "add", &peer, "dev", &dev])?;
        Ok(fd)
    }
}

/// What [`Namespaces::apply`] found in place afterwards (meta.json's record).
#[derive(Debug, Clone, Default)]
pub struct KernelState {
    /// Values of [`crate::kernel::RECORDED_SYSCTLS`] in host a's namespace (those
    /// this kernel has).
    pub sysctls: std::collections::BTreeMap<String, String>,
    /// `ip route show` of each namespace (a, b), attributes included.
    pub routes: [String; 2],
}

impl Namespaces {
    /// Each side with its peer's address.
    fn sides(&self) -> [(&Side, [u8; 4]); 2] {
        [(&self.a, ADDR_B), (&self.b, ADDR_A)]
    }

    /// Applies the namespace-wide knobs of `plan` in both namespaces (sysctls, then
    /// the host routes' attributes) and reads back what is in force. Errors name the
    /// sysctl or the `ip` command that failed.
    pub fn apply(&self, plan: &crate::kernel::Plan) -> io::Result<KernelState> {
        use crate::kernel::Knob;
        let sysctls: Vec<(&str, &str)> = plan
            .knobs
            .iter()
            .filter_map(|(k, v)| match k {
                Knob::Sysctl(name) => Some((*name, v.as_str())),
                Knob::Route(_) => None,
            })
            .collect();
        let route: Vec<&str> = plan
            .knobs
            .iter()
            .filter_map(|(k, v)| match k {
                Knob::Route(attr) => Some([*attr, v.as_str()]),
                Knob::Sysctl(_) => None,
            })
            .flatten()
            .collect();
        let mut state = KernelState::default();
        for (n, (side, peer)) in self.sides().into_iter().enumerate() {
            let read = in_namespace(&side.ns, |ns| {
                for (name, value) in &sysctls {
                    let path = format!("/proc/sys/{}", name.replace('.', "/"));
                    File::create(&path)
                        .and_then(|mut f| f.write_all(value.as_bytes()))
                        .map_err(|e| {
                            io::Error::new(
                                e.kind(),
                                format!("sysctl {name} = {value} in {ns}: {e}"),
                            )
                        })?;
                }
                let mut read = std::collections::BTreeMap::new();
                for name in crate::kernel::RECORDED_SYSCTLS {
                    if let Ok(v) =
                        std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
                    {
                        read.insert(name.to_string(), v.trim().to_string());
                    }
                }
                Ok(read)
            })?;
            if n == 0 {
                state.sysctls = read;
            }
            let peer = format!("{}/32", dotted(peer));
            if !route.is_empty() {
                let mut args = vec!["-n", &side.ns, "route", "replace", &peer, "dev", &side.dev];
                args.extend(&route);
                ip(&args)?;
            }
            state.routes[n] = ip(&["-n", &side.ns, "route", "show"])?.trim().to_string();
        }
        Ok(state)
    }
}

/// Runs `f` (given the namespace's name) on a thread inside namespace `ns`:
/// /proc/sys/net shows the namespace of the thread that opens it.
fn in_namespace<T: Send>(ns: &str, f: impl FnOnce(&str) -> io::Result<T> + Send) -> io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(ns)?;
            f(ns)
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")))
    })
}

/// Moves the calling thread into namespace `ns` (by name, /run/netns/NAME).
pub fn enter(ns: &str) -> io::Result<()> {
    let f = File::open(format!("/run/netns/{ns}"))
        .map_err(|e| io::Error::new(e.kind(), format!("namespace {ns}: {e}")))?;
    setns(f, CloneFlags::CLONE_NEWNET).map_err(|e| io::Error::other(format!("setns {ns}: {e}")))
}

impl Drop for Namespaces {
    /// Ends every process left inside ([`crate::contain`]: what a user's command or
    /// server daemonized), then deletes the namespaces.
    fn drop(&mut self) {
        for ns in self.created.drain(..) {
            match contain::end_all(&ns, STOP_GRACE) {
                Ok(ended) if !ended.is_empty() => eprintln!(
                    "airtrace emulate: ended the processes left in namespace {ns}: {}",
                    contain::describe(&ended)
                ),
                Ok(_) => {}
                Err(e) => eprintln!("airtrace emulate: {e}"),
            }
            if let Err(e) = ip(&["netns", "del", &ns]) {
                eprintln!("airtrace emulate: could not delete namespace {ns}: {e}");
            }
        }
    }
}

/// Checks what a run needs: root or CAP_NET_ADMIN, /dev/net/tun, iproute2. Returns a
/// one-line message for the first thing missing.
pub fn preflight() -> Result<(), String> {
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0);
    const CAP_NET_ADMIN: u64 = 1 << 12;
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    if !nix::unistd::geteuid().is_root() && caps & CAP_NET_ADMIN == 0 {
        return Err("emulation needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces and TUN devices; run it with sudo".into());
    }
    if caps & CAP_NET_ADMIN == 0 {
        return Err(
            "emulation needs CAP_NET_ADMIN (this root process lacks it: a restricted container?)"
                .into(),
        );
    }
    if caps & CAP_SYS_ADMIN == 0 {
        return Err("emulation needs CAP_SYS_ADMIN to create network namespaces (setns)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("/dev/net/tun does not exist: load the tun module (modprobe tun) or give the container the device".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err("iproute2's `ip` command is missing (apt-get install iproute2)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_has_its_own_namespaces_and_cleanup_knows_whose_they_are() {
        let (first, second) = (Namespaces::names(), Namespaces::names());
        assert_ne!(first.0.ns, second.0.ns);
        assert_ne!(first.1.ns, second.1.ns);
        let pid = std::process::id();
        for side in [&first.0, &first.1, &second.0, &second.1] {
            assert_eq!(owner_pid(&side.ns), Some(pid), "{}", side.ns);
        }
        assert_eq!(
            owner_pid("airtrace-123-a"),
            Some(123),
            "as runs named them before"
        );
        assert_eq!(owner_pid("airtrace-123-7-b"), Some(123));
        for other in [
            "airtrace-123-c",
            "airtrace-x-1-a",
            "airtrace-1-x-a",
            "airtrace--a",
            "other-1-a",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }
}
