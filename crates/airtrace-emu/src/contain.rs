//! Containing the processes a run starts: every one of them is ended before the run's
//! namespaces are deleted, and `--cleanup` ends those a killed run left.
//!
//! The container is the run's network namespace itself. A user's command or server
//! starts there (`ip netns exec`), and whatever it starts stays there, whether it
//! leaves the process group (`setsid -f`), double-forks or daemonizes: only setns(2)
//! or unshare(2) of a new network namespace leaves it, and a command doing that on
//! purpose is not contained. The processes are found as `ip netns pids` finds them:
//! those whose /proc/PID/ns/net is the namespace's inode (/run/netns/NAME). Each is
//! signalled through a pidfd (pidfd_open(2)) taken before its namespace is checked,
//! so a pid reused meanwhile is never signalled. The namespace outlives the run's
//! processes by construction: `ip netns del` runs after this, and `--cleanup` touches
//! only airtrace's namespaces whose run is gone.
//!
//! Why not a PID namespace or a cgroup: a PID namespace's init ignores the signals it
//! has no handler for (pid_namespaces(7)), so a plain `sleep` as init would need
//! SIGKILL at every stop; a cgroup needs a writable cgroup v2 hierarchy, mounted in
//! different places on different systems (or not at all in containers), and the
//! network namespace is there on every system the emulator runs on. A SIGKILLed run
//! still takes its direct commands with it (PR_SET_PDEATHSIG, [`crate::command`]);
//! what they daemonized waits in the namespace for `airtrace emulate --cleanup`.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

/// A process found in one of the run's namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// Its command line (the words joined by spaces, at most 200 bytes), or its name.
    pub command: String,
}

/// The identity of network namespace `ns` (device and inode of /run/netns/NAME).
fn identity(ns: &str) -> io::Result<(u64, u64)> {
    let m = std::fs::metadata(format!("/run/netns/{ns}"))
        .map_err(|e| io::Error::new(e.kind(), format!("namespace {ns}: {e}")))?;
    Ok((m.dev(), m.ino()))
}

/// True when process `pid`'s network namespace is the one of `id`.
fn lives_in(pid: u32, id: (u64, u64)) -> bool {
    std::fs::metadata(format!("/proc/{pid}/ns/net")).is_ok_and(|m| (m.dev(), m.ino()) == id)
}

/// Process `pid`'s command line, or its name when the line is empty (a kernel thread,
/// or a process that cleared it).
fn command_line(pid: u32) -> String {
    let words = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut line: String = String::from_utf8_lossy(&words)
        .split('\0')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if line.is_empty() {
        line = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        line = line.trim().to_string();
    }
    if line.len() > 200 {
        let mut end = 200;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
    }
    line
}

/// The processes in network namespace `ns`, this one excepted (its threads enter the
/// namespaces; the process itself never does).
pub fn processes_in(ns: &str) -> io::Result<Vec<Process>> {
    let id = identity(ns)?;
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Some(pid) = entry?
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != me && lives_in(pid, id) {
            found.push(Process {
                pid,
                command: command_line(pid),
            });
        }
    }
    Ok(found)
}

/// Sends `signal` to `pid` if it still lives in namespace `id`: through a pidfd taken
/// before the check, so that the check and the signal are about one process.
fn signal_if_inside(pid: u32, id: (u64, u64), signal: libc::c_int) {
    match crate::sys::pidfd_open(pid) {
        Ok(fd) if lives_in(pid, id) => {
            let _ = crate::sys::pidfd_send_signal(&fd, signal);
        }
        Ok(_) => {}
        // A kernel before 5.3: the plain kill(2) `ip netns pids | xargs kill` would do.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) && lives_in(pid, id) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::try_from(signal).ok(),
            );
        }
        Err(_) => {}
    }
}

/// Ends every process in namespace `ns`: SIGTERM, up to `grace` for them to exit, then
/// SIGKILL until none is left (a process forking meanwhile is found on the next look).
/// Returns every process it signalled, in the order found.
pub fn end_all(ns: &str, grace: Duration) -> io::Result<Vec<Process>> {
    let id = identity(ns)?;
    let mut ended: Vec<Process> = Vec::new();
    let mut note = |found: &[Process]| {
        for p in found {
            if !ended.iter().any(|e| e.pid == p.pid) {
                ended.push(p.clone());
            }
        }
    };
    let first = processes_in(ns)?;
    if first.is_empty() {
        return Ok(Vec::new());
    }
    note(&first);
    for p in &first {
        signal_if_inside(p.pid, id, libc::SIGTERM);
    }
    let t = Instant::now();
    let mut left = processes_in(ns)?;
    while !left.is_empty() && t.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(10));
        left = processes_in(ns)?;
    }
    let t = Instant::now();
    while !left.is_empty() {
        note(&left);
        if t.elapsed() > Duration::from_secs(5) {
            let pids: Vec<String> = left.iter().map(|p| p.pid.to_string()).collect();
            return Err(io::Error::other(format!(
                "processes {} in {ns} survive SIGKILL",
                pids.join(", ")
            )));
        }
        for p in &left {
            signal_if_inside(p.pid, id, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
        left = processes_in(ns)?;
    }
    Ok(ended)
}

/// One line naming `processes`, for messages: `123 (sleep 985), 130 (iperf3 -s)`.
pub fn describe(processes: &[Process]) -> String {
    let each: Vec<String> = processes
        .iter()
        .map(|p| format!("{} ({})", p.pid, p.command))
        .collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_described_by_its_pid_and_command_line() {
        let me = std::process::id();
        let line = command_line(me);
        assert!(!line.is_empty() && !line.contains('\0'), "{line:?}");
        let d = describe(&[
            Process {
                pid: 5,
                command: "sleep 985".into(),
            },
            Process {
                pid: 7,
                command: "iperf3 -s".into(),
            },
        ]);
        assert_eq!(d, "5 (sleep 985), 7 (iperf3 -s)");
    }
}
