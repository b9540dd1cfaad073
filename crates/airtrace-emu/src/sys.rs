//! The few system calls no safe wrapper covers: creating a TUN device (`TUNSETIFF`),
//! reading a socket's `TCP_INFO`, signalling a process through a pidfd, and asking for
//! a signal when the parent dies. This is the only module of the crate with `unsafe`;
//! each block says why it is sound.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (a short) at the
/// start of the union; 40 bytes in all on Linux.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Opens `/dev/net/tun` and attaches a new TUN device `name` (IFF_TUN | IFF_NO_PI: each
/// read or write is one bare IP packet) in the calling thread's network namespace.
/// The returned descriptor is non-blocking; the device goes away when it is closed.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    let file: File = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: `file` is an open descriptor of /dev/net/tun; TUNSETIFF reads and writes
    // a `struct ifreq`, and `req` is a live, properly sized (40-byte) and aligned
    // value of that layout for the duration of the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
    }
    Ok(OwnedFd::from(file))
}

/// Bytes of `struct tcp_info` asked for (through `tcpi_total_rto_time`, Linux 6.7 and
/// later; older kernels fill less, and say how much).
pub const TCP_INFO_LEN: usize = 248;

/// Reads `TCP_INFO` of the TCP socket `fd` as raw bytes, with the number of bytes the
/// kernel filled (see [`crate::tcpinfo`] for the fields).
pub fn tcp_info(fd: &impl AsRawFd) -> io::Result<([u8; TCP_INFO_LEN], usize)> {
    let mut buf = [0u8; TCP_INFO_LEN];
    let mut len = TCP_INFO_LEN as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `buf`, which is a live local
    // array of exactly `len` bytes; `len` is a valid pointer to its size, updated by
    // the kernel to the bytes written.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((buf, len as usize))
}

/// Puts the calling thread under SCHED_FIFO at `priority` (1..=99), so that builds
/// and other work on the machine do not delay packets. The kernel's real-time
/// throttling (by default 5 % of each second kept for other tasks) still applies.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a live, initialised sched_param for the duration of the
    // call; pid 0 names the calling thread; the kernel only reads it.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A pidfd for process `pid` (pidfd_open(2), Linux 5.3): a handle on that one process,
/// which a later process given the same pid cannot take over.
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
    // SAFETY: pidfd_open takes a pid and flags (0) and returns a new descriptor or -1;
    // no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor the kernel just opened for us and nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Sends `signal` to the process of `pidfd` (pidfd_send_signal(2)).
pub fn pidfd_send_signal(pidfd: &OwnedFd, signal: libc::c_int) -> io::Result<()> {
    // SAFETY: a live descriptor, a signal number, a null siginfo (the kernel fills in
    // what kill(2) would) and flags 0; the kernel reads no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the process `command` starts receive SIGKILL when the thread that started it
/// ends (PR_SET_PDEATHSIG, prctl(2); kept across execve(2) of a program that is not
/// set-user-ID), so that even a SIGKILLed run takes its commands with it. A parent
/// gone before the prctl took effect fails the spawn.
pub fn die_with_parent(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // prctl(2) and getppid(2), which are async-signal-safe, and builds io::Errors
    // from errno values only (no allocation).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
