//! [`Mapped`]: a capture file mapped into memory, read-only, that survives the file
//! shrinking under it.
//!
//! When another process truncates a mapped file (a capture rotated or rewritten while
//! airtrace reads it), the pages past the new end leave the map, and touching one makes
//! the kernel send SIGBUS, whose default action kills the process: `airtrace analyze`
//! exited with status 135 and no message, and `airtrace.read()` took the Python
//! interpreter with it. This module keeps that from happening:
//!
//! - Every map is registered in a fixed table of [`SLOTS`] lock-free slots (its start,
//!   its length, and where it was cut, as atomics).
//! - A SIGBUS handler, installed once for the process on the first map, looks the
//!   faulting address up in the table. Inside a registered map, it notes the page that
//!   faulted as the map's cut and maps zeros (anonymous memory) over the map from that
//!   page on, so that the faulting load, executed again, reads 0, and the program goes
//!   on. A SIGBUS anywhere else goes on to the handler that was there before, or, if
//!   there was none, to the default action: the process dies as it did before.
//! - The reader (`input.rs`) asks [`Mapped::cut`] before it trusts a stretch of the map
//!   and compares the file's length ([`Mapped::file_len`]) at the end: it stops at the
//!   last whole record before the cut, and reports how far the file shrank.
//!
//! The handler makes only async-signal-safe calls: lock-free atomics, `sigaction(2)`,
//! `raise(3)`, `write(2)`, and `mmap(2)`, which is not on POSIX's list but is a bare
//! system call on Linux (no lock, no allocation); and the previous handler, if it
//! handles the signal.
//!
//! If the table is full (64 files mapped at once) or the handler cannot be installed,
//! [`Mapped::new`] says so and the caller reads the file instead: a map on Linux is
//! always one the handler covers. Elsewhere (no handler) files are mapped as before, and
//! a file truncated under the reader still ends the process.
//!
//! A SIGBUS handler installed after airtrace's first map (Python's
//! `faulthandler.enable()` called after the first `airtrace.read()`, say) runs first,
//! and faulthandler then ends the process as before, with its own message; one
//! installed earlier (pytest's, `python -X faulthandler`) is chained to.

use std::fs::File;
use std::io;

use memmap2::Mmap;

/// How many maps can be covered at once.
pub(crate) const SLOTS: usize = 64;

/// A page size that divides every real one (4 KiB): offsets rounded down to a multiple
/// of it are page-aligned.
pub(crate) const PAGE: usize = 4096;

/// A file mapped into memory, read-only and whole, and registered with the SIGBUS
/// handler for as long as it lives.
pub(crate) struct Mapped {
    map: Mmap,
    /// The file, kept open to ask its current length.
    file: File,
    /// The map's slot in the handler's table (Linux).
    #[cfg(target_os = "linux")]
    slot: &'static guard::Slot,
}

impl Mapped {
    /// Maps `file`, and tells the kernel it will be read in order. `Ok(None)` when the
    /// map could not be covered by the SIGBUS handler (the table is full, or the handler
    /// could not be installed): the caller should read the file instead.
    pub(crate) fn new(file: &File) -> io::Result<Option<Mapped>> {
        #[cfg(target_os = "linux")]
        if !guard::install() {
            return Ok(None);
        }
        let map = map(file)?;
        let file = file.try_clone()?;
        // Read-ahead, and pages behind may be dropped early. Only a hint: errors are
        // ignored.
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        #[cfg(target_os = "linux")]
        {
            let Some(slot) = guard::register(map.as_ptr() as usize, map.len()) else {
                return Ok(None);
            };
            Ok(Some(Mapped { map, file, slot }))
        }
        #[cfg(not(target_os = "linux"))]
        Ok(Some(Mapped { map, file }))
    }

    /// The mapped bytes.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The map's length: the file's when it was mapped.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Reads the byte at `at` (less than the map's length), so that if the file no
    /// longer holds its page, the page faults now, and [`Mapped::cut`] says so. (Touching
    /// every page of each window instead, ahead of the parsers, cost `airtrace analyze`
    /// 2 % of its time.)
    pub(crate) fn probe(&self, at: usize) {
        // The load is needed for its fault, not its value.
        std::hint::black_box(self.bytes()[at]);
    }

    /// Where the map stopped being the file's: the offset of the first page (the lowest,
    /// if several) that the file no longer held when it was touched, and that now reads
    /// as zeros. `None` while no page has faulted.
    #[inline]
    pub(crate) fn cut(&self) -> Option<usize> {
        #[cfg(target_os = "linux")]
        {
            self.slot.cut()
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The file's length now (`fstat`), `None` if that fails.
    pub(crate) fn file_len(&self) -> Option<u64> {
        self.file.metadata().ok().map(|m| m.len())
    }

    /// Hands the pages of `[from, to)` back to the kernel (`madvise(MADV_DONTNEED)`);
    /// both are multiples of [`PAGE`]. The map stays valid: the next touch of those
    /// bytes faults them in again from the page cache (a read-only shared file mapping
    /// has no private copy to lose; the zeros mapped over a cut are zeros again).
    #[allow(unsafe_code)]
    pub(crate) fn release(&self, from: usize, to: usize) {
        if to > from {
            // SAFETY: `unchecked_advise_range` is unsafe because MADV_DONTNEED discards
            // a private mapping's modified pages. This map is read-only and shared with
            // the file, and the zeros the handler maps over a cut are read-only: there
            // are no such pages, and later reads see the same bytes as before.
            #[cfg(unix)]
            let _ = unsafe {
                self.map
                    .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Mapped {
    fn drop(&mut self) {
        // Before the map goes (the field is dropped after this): the handler must not
        // take a later map at the same address for this one.
        self.slot.unregister();
    }
}

/// Maps `file` into memory, read-only.
#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<Mmap> {
    // SAFETY: `Mmap::map` is unsafe because Rust takes the bytes behind the `&[u8]` it
    // lends to be unchanging, and only the users of the file can promise that. airtrace
    // never writes to a capture it reads: the file is opened read-only and mapped
    // read-only. Another process could.
    // - If it truncates the file, the pages past the new end leave the map. On Linux,
    //   the SIGBUS a touch of one of them raises is caught (this module), zeros are
    //   mapped in their place, and the reader stops before them with a warning; so the
    //   bytes lent may turn to zeros while lent, which, like a write in place below,
    //   makes for a wrong record at worst. Elsewhere the process dies of the SIGBUS.
    // - If it writes into the file in place, records may change under the parsers;
    //   every index they use is checked against the map's fixed length, so the worst
    //   expected is a wrong record or a corrupt-record error.
    // ripgrep maps the files it searches and accepts the same risk. Capture files are
    // written once and then read; one still being written is only appended to, which is
    // harmless (the map ends where the file ended when it was mapped).
    unsafe { Mmap::map(file) }
}

/// Tests only: if the environment variable `AIRTRACE_TEST_STOP_AT` holds a byte offset
/// within `[from, to)`, the process stops itself (SIGSTOP) until it is continued. The
/// reader calls this before it checks each new stretch `[from, to)` of a map, so that a
/// test can truncate the file at a known point of the reading, with the map made, and
/// then let it go on (tests/test_shrinking_capture.py).
pub(crate) fn test_stop(from: usize, to: usize) {
    use std::sync::OnceLock;
    static AT: OnceLock<Option<usize>> = OnceLock::new();
    let at = *AT.get_or_init(|| std::env::var("AIRTRACE_TEST_STOP_AT").ok()?.parse().ok());
    if let Some(at) = at {
        if (from..to).contains(&at) {
            #[cfg(unix)]
            stop();
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn stop() {
    // SAFETY: raise(3) has no preconditions.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
}

/// The table of maps and the SIGBUS handler.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod guard {
    use std::ptr;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    use super::SLOTS;

    /// One map's entry. `start` is 0 when the slot is free; `len` is 0 until the entry
    /// is complete (so the handler never matches a half-written one); `cut` is
    /// `usize::MAX` until a page of the map faults.
    pub(crate) struct Slot {
        start: AtomicUsize,
        len: AtomicUsize,
        cut: AtomicUsize,
    }

    impl Slot {
        const fn free() -> Slot {
            Slot {
                start: AtomicUsize::new(0),
                len: AtomicUsize::new(0),
                cut: AtomicUsize::new(usize::MAX),
            }
        }

        /// See [`super::Mapped::cut`].
        #[inline]
        pub(crate) fn cut(&self) -> Option<usize> {
            match self.cut.load(Ordering::Acquire) {
                usize::MAX => None,
                cut => Some(cut),
            }
        }

        pub(crate) fn unregister(&self) {
            self.len.store(0, Ordering::Release);
            self.cut.store(usize::MAX, Ordering::Release);
            self.start.store(0, Ordering::Release);
        }
    }

    static TABLE: [Slot; SLOTS] = [const { Slot::free() }; SLOTS];
    /// The system's page size (the handler may not call `sysconf`).
    static PAGE_SIZE: AtomicUsize = AtomicUsize::new(0);
    /// The SIGBUS disposition before ours: where faults outside our maps go.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
    /// Whether our handler is installed (decided once).
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    /// Installs the handler, the first time; whether it is installed.
    pub(crate) fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: sysconf and sigaction are given valid arguments; the handler only
            // makes async-signal-safe calls (see on_sigbus), and reads PREVIOUS and
            // PAGE_SIZE, which are set before it is installed.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                if page <= 0 || (page as usize) % super::PAGE != 0 {
                    return false;
                }
                PAGE_SIZE.store(page as usize, Ordering::Release);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, ptr::null(), &mut previous) != 0 {
                    return false;
                }
                let _ = PREVIOUS.set(previous);
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
                // SA_ONSTACK: on the thread's alternate stack if it has one (Rust's
                // threads do, for their stack overflow handler). No SA_NODEFER: SIGBUS
                // stays blocked while the handler runs, so that one re-raised for the
                // previous disposition is delivered when it returns.
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(libc::SIGBUS, &action, ptr::null_mut()) == 0
            }
        })
    }

    /// Enters the map `[start, start + len)` in the table; `None` if the table is full.
    pub(crate) fn register(start: usize, len: usize) -> Option<&'static Slot> {
        let slot = TABLE.iter().find(|slot| {
            slot.start
                .compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        slot.cut.store(usize::MAX, Ordering::Release);
        slot.len.store(len, Ordering::Release);
        Some(slot)
    }

    /// The SIGBUS handler.
    extern "C" fn on_sigbus(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo (SA_SIGINFO); si_addr is the
        // faulting address when si_code > 0 (a fault, not a signal sent by a process).
        // errno is saved and restored around the calls that may set it.
        unsafe {
            let errno = *libc::__errno_location();
            let fault = (*info).si_code > 0;
            if !(fault && zero_fill((*info).si_addr() as usize)) {
                chain(signal, info, context);
            }
            *libc::__errno_location() = errno;
        }
    }

    /// If `addr` lies in a registered map: notes the cut, maps zeros over the map from
    /// the faulting page on, and returns true (the load, executed again, reads 0).
    unsafe fn zero_fill(addr: usize) -> bool {
        let page_size = PAGE_SIZE.load(Ordering::Acquire);
        for slot in &TABLE {
            let start = slot.start.load(Ordering::Acquire);
            if start == 0 {
                continue;
            }
            let len = slot.len.load(Ordering::Acquire);
            let end = start + len.next_multiple_of(page_size);
            if !(start..end).contains(&addr) {
                continue;
            }
            let page = addr & !(page_size - 1);
            slot.cut.fetch_min(page - start, Ordering::AcqRel);
            // SAFETY (caller's): [page, end) lies within the map, whose owner is
            // borrowed by the code that faulted, so it is still mapped and ours to
            // replace; the replacement is read-only, as the map was.
            let zeros = libc::mmap(
                page as *mut libc::c_void,
                end - page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            );
            if zeros == libc::MAP_FAILED {
                const MSG: &[u8] =
                    b"airtrace: a capture file shrank while it was read, and zeros could not be mapped in its place\n";
                libc::write(libc::STDERR_FILENO, MSG.as_ptr().cast(), MSG.len());
                return false;
            }
            return true;
        }
        false
    }

    /// Hands the signal to the disposition that was there before ours: calls its
    /// handler, or, for the default action (or ignoring it), puts it back so that the
    /// faulting load, executed again on return, meets it (a signal sent by a process is
    /// raised again, to be delivered on return).
    unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        let default = {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            action
        };
        let previous = PREVIOUS.get().unwrap_or(&default);
        let handler = previous.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            libc::sigaction(signal, previous, ptr::null_mut());
            if (*info).si_code <= 0 {
                libc::raise(signal);
            }
        } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            handler(signal, info, context);
        } else {
            let handler: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            handler(signal);
        }
    }
}
