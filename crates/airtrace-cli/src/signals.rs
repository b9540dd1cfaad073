//! The signals that stop a command, handled as the Python command line handles them
//! (python/airtrace/cli.py).
//!
//! Ctrl-C (SIGINT) ends a command at once with the line "airtrace: interrupted" and exit
//! status 130 ([`on_interrupt_say_so`]). While a simulation runs ([`StopSignals`]),
//! SIGINT, SIGTERM and SIGHUP are only noted: the run sees the note (its
//! `Options::cancel`), stops and removes its partial bundle, and the command ends with
//! "airtrace: interrupted" or "airtrace: interrupted by SIGTERM" (SIGHUP) and status
//! 128 + the signal's number ([`Stopped::say_so`]). A signal that is not at its default
//! disposition when the command starts (ignored under `nohup`, or by `trap '' INT`) is
//! left alone, as Python leaves it.

#[cfg(unix)]
pub use imp::*;

#[cfg(not(unix))]
pub use fallback::*;

/// A signal that asked the command to stop (its number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped(pub i32);

#[cfg(unix)]
#[allow(unsafe_code)]
mod imp {
    use std::io;
    use std::sync::atomic::{AtomicI32, Ordering};

    use libc::{c_int, sighandler_t, SIGHUP, SIGINT, SIGTERM, SIG_DFL};

    use super::Stopped;
    use crate::PROG;

    /// The signal that asked a run to stop; 0 while none has.
    static STOP: AtomicI32 = AtomicI32::new(0);

    extern "C" fn interrupted(_: c_int) {
        const MSG: &[u8] = b"airtrace: interrupted\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; MSG is a valid buffer of
        // MSG.len() bytes.
        unsafe {
            libc::write(libc::STDERR_FILENO, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(130);
        }
    }

    extern "C" fn note(sig: c_int) {
        STOP.store(sig, Ordering::Relaxed);
    }

    /// Installs `handler` for `sig` if `sig` is at its default disposition; true if it
    /// was.
    fn catch(sig: c_int, handler: sighandler_t) -> io::Result<bool> {
        // SAFETY: sigaction(2) with a zeroed (valid) struct to read the disposition
        // into, then one whose handler only makes async-signal-safe calls.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                return Err(io::Error::last_os_error());
            }
            if old.sa_sigaction != SIG_DFL {
                return Ok(false);
            }
            set(sig, handler)?;
        }
        Ok(true)
    }

    /// Makes `handler` the disposition of `sig`.
    fn set(sig: c_int, handler: sighandler_t) -> io::Result<()> {
        // SAFETY: as in `catch`; an empty mask, SA_RESTART.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Ctrl-C ends the command at once, as it ends the Python command line: with the
    /// line "airtrace: interrupted" and exit status 130.
    pub fn on_interrupt_say_so() -> io::Result<()> {
        catch(SIGINT, interrupted as extern "C" fn(c_int) as sighandler_t).map(drop)
    }

    /// While this lives, SIGINT, SIGTERM and SIGHUP are noted ([`StopSignals::received`])
    /// instead of ending the process; dropped, it makes SIGTERM and SIGHUP deadly again
    /// and leaves SIGINT as [`on_interrupt_say_so`] has it (Python's `_StoppedBySignals`
    /// and KeyboardInterrupt).
    pub struct StopSignals {
        caught: Vec<c_int>,
    }

    impl StopSignals {
        pub fn catch() -> io::Result<Self> {
            let mut caught = Vec::new();
            for sig in [SIGINT, SIGTERM, SIGHUP] {
                if catch(sig, note as extern "C" fn(c_int) as sighandler_t)? {
                    caught.push(sig);
                }
            }
            Ok(StopSignals { caught })
        }

        /// The signal that asked to stop, if one has.
        pub fn received(&self) -> Option<Stopped> {
            match STOP.load(Ordering::Relaxed) {
                0 => None,
                sig => Some(Stopped(sig)),
            }
        }
    }

    impl Drop for StopSignals {
        fn drop(&mut self) {
            for &sig in &self.caught {
                let handler = if sig == SIGINT {
                    interrupted as extern "C" fn(c_int) as sighandler_t
                } else {
                    SIG_DFL
                };
                // Restoring a disposition that could be set before cannot fail.
                let _ = set(sig, handler);
            }
        }
    }

    impl Stopped {
        /// Says on stderr what stopped the command, as the Python command line says it;
        /// returns the exit status, 128 + the signal's number.
        pub fn say_so(self) -> u8 {
            match self.0 {
                SIGINT => eprintln!("{PROG}: interrupted"),
                SIGTERM => eprintln!("{PROG}: interrupted by SIGTERM"),
                SIGHUP => eprintln!("{PROG}: interrupted by SIGHUP"),
                sig => eprintln!("{PROG}: interrupted by signal {sig}"),
            }
            (128 + self.0) as u8
        }
    }
}

#[cfg(not(unix))]
mod fallback {
    use std::io;

    use super::Stopped;
    use crate::PROG;

    pub fn on_interrupt_say_so() -> io::Result<()> {
        Ok(())
    }

    /// No signals to note here: a run is never stopped by one.
    pub struct StopSignals;

    impl StopSignals {
        pub fn catch() -> io::Result<Self> {
            Ok(StopSignals)
        }

        pub fn received(&self) -> Option<Stopped> {
            None
        }
    }

    impl Stopped {
        pub fn say_so(self) -> u8 {
            eprintln!("{PROG}: interrupted");
            130
        }
    }
}
