//! A user's command run inside a namespace (`ip netns exec`), in its own process
//! group so that it and whatever it starts are stopped together at the end: SIGTERM to
//! the group whose id is the pid we started, then SIGKILL after a grace period.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// A command running in a namespace; stopped when dropped.
pub struct Running {
    child: Child,
    exit: Option<i32>,
}

/// Starts `argv` in namespace `ns`.
pub fn spawn(ns: &str, argv: &[String]) -> io::Result<Running> {
    let Some(program) = argv.first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command"));
    };
    let child = Command::new("ip")
        .args(["netns", "exec", ns, program])
        .args(&argv[1..])
        .process_group(0)
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot start {program:?} in {ns}: {e}")))?;
    Ok(Running { child, exit: None })
}

impl Running {
    /// Its exit code once it has exited (-signal when killed by one).
    pub fn exited(&mut self) -> Option<i32> {
        if self.exit.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                use std::os::unix::process::ExitStatusExt;
                self.exit = Some(
                    status
                        .code()
                        .unwrap_or_else(|| -status.signal().unwrap_or(0)),
                );
            }
        }
        self.exit
    }

    /// Stops it (and its process group) if still running; returns the exit code.
    pub fn stop(&mut self) -> Option<i32> {
        if self.exited().is_none() {
            let group = Pid::from_raw(self.child.id() as i32);
            let _ = killpg(group, Signal::SIGTERM);
            let t = Instant::now();
            while self.exited().is_none() && t.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(10));
            }
            if self.exited().is_none() {
                let _ = killpg(group, Signal::SIGKILL);
                let _ = self.child.wait();
                self.exited();
            }
        }
        // Whatever it left in its group.
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        self.exit
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}
