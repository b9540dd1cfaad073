//! Where a bundle goes (issue 19): what may be replaced there, the lock that
//! serialises the writers into one place, unique temporary names, and what killed
//! runs left behind. The simulator and the emulator both write through here (by way of
//! [`crate::bundle::BundleWriter`]).
//!
//! ```text
//! PARENT/
//!   NAME/                    the bundle
//!   .NAME.partial-PID-N/     a bundle being written by process PID (N: its run
//!                            number in that process), held under a shared flock
//!   .NAME.old-PID-N/         the previous bundle while it is being replaced
//!   .NAME.lock               held (flock) while a writer checks NAME, starts a
//!                            temporary directory or moves one into place; removed after
//! ```
//!
//! A directory at NAME is replaced only when it is provably a bundle this tool wrote:
//! its meta.json is a bundle's (`"format": "airtrace-bundle/…"`) and every entry is a
//! file a bundle writer writes. Nothing is ever added to a bundle to mark it.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// The files a bundle writer writes besides its captures (whose names meta.json's
/// `vantage_points` lists).
const BUNDLE_FILES: [&str; 7] = [
    "meta.json",
    "scenario.toml",
    "summary.json",
    "link.jsonl",
    "tcpstate.jsonl",
    "routes.jsonl",
    "mobility.jsonl",
];

/// How meta.json's `format` starts in every bundle this tool writes.
const FORMAT_PREFIX: &str = "airtrace-bundle/";

/// Runs of this process so far: N in the temporary names.
static RUNS: AtomicU64 = AtomicU64::new(0);

fn io_error(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The error refusing to write over `shown` because of `why`, saying what to do.
fn refusal(shown: &Path, why: &str, remedy: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} {why}; not replacing it; {remedy}", shown.display()),
    )
}

/// What to do about a destination that is in the way.
const MOVE_OR_REMOVE: &str = "choose another --out or remove it";
/// What to do about a destination that cannot be replaced at all.
const MOVE: &str = "choose another --out";

/// Where a bundle goes: a directory named `name` in `parent`.
#[derive(Debug)]
pub(crate) struct Dest {
    /// The bundle's path.
    pub(crate) path: PathBuf,
    /// The path as the caller gave it, for messages.
    shown: PathBuf,
    parent: PathBuf,
    name: OsString,
}

impl Dest {
    /// The destination `path`. Refused when it is the current directory or one of its
    /// ancestors (`.`, `..`, `/`, the working directory by name), which cannot be
    /// replaced; nothing is created.
    pub(crate) fn new(path: &Path) -> io::Result<Dest> {
        let (parent, name) = match path.components().next_back() {
            Some(Component::Normal(name)) => (
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf(),
                name.to_os_string(),
            ),
            // `.`, `..`, `/`: what they stand for.
            _ => {
                let full = fs::canonicalize(path).map_err(|e| io_error(path, e))?;
                match (full.parent(), full.file_name()) {
                    (Some(p), Some(n)) => (p.to_path_buf(), n.to_os_string()),
                    _ => return Err(refusal(path, "is the root directory", MOVE)),
                }
            }
        };
        let dest = Dest {
            path: parent.join(&name),
            shown: path.to_path_buf(),
            parent,
            name,
        };
        if dest.holds_working_dir() {
            return Err(refusal(path, "is the current directory or holds it", MOVE));
        }
        Ok(dest)
    }

    /// The destination `name` in directory `parent`.
    fn in_dir(parent: &Path, name: &str) -> Dest {
        let path = parent.join(name);
        Dest {
            shown: path.clone(),
            path,
            parent: parent.to_path_buf(),
            name: name.into(),
        }
    }

    /// True when the current directory is the destination or lies inside it.
    fn holds_working_dir(&self) -> bool {
        let here = std::env::current_dir().and_then(fs::canonicalize);
        match (here, fs::canonicalize(&self.path)) {
            (Ok(here), Ok(dest)) => here.starts_with(dest),
            _ => false,
        }
    }

    /// `.NAME.SUFFIX` beside the destination.
    fn beside(&self, suffix: &str) -> PathBuf {
        let mut name = OsString::from(".");
        name.push(&self.name);
        name.push(format!(".{suffix}"));
        self.parent.join(name)
    }

    /// A name beside the destination no other run uses: `.NAME.KIND-PID-N`.
    fn unique(&self, kind: &str) -> PathBuf {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        self.beside(&format!("{kind}-{}-{n}", std::process::id()))
    }

    /// Takes the destination's lock, waiting for another writer to release it; creates
    /// the parent directory if need be.
    pub(crate) fn lock(&self) -> io::Result<DestLock> {
        fs::create_dir_all(&self.parent).map_err(|e| io_error(&self.parent, e))?;
        DestLock::acquire(self.beside("lock"))
    }

    /// Ok when nothing is at the destination, or a bundle this tool wrote; otherwise
    /// the refusal, saying what is there. Call with the lock held.
    pub(crate) fn check_replaceable(&self) -> io::Result<()> {
        let meta = match fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(&self.path, e)),
            Ok(meta) => meta,
        };
        let why = if meta.is_symlink() {
            Some("it is a symbolic link".to_string())
        } else if !meta.is_dir() {
            Some("it is a file".to_string())
        } else {
            why_not_a_bundle(&self.path)?
        };
        match why {
            Some(why) => Err(refusal(
                &self.shown,
                &format!("exists and is not a bundle airtrace wrote ({why})"),
                MOVE_OR_REMOVE,
            )),
            None => Ok(()),
        }
    }

    /// Creates a new temporary directory for the bundle, `.NAME.partial-PID-N`, and
    /// holds it until the [`Partial`] is dropped.
    pub(crate) fn start_partial(&self) -> io::Result<Partial> {
        let path = self.unique("partial");
        fs::create_dir(&path).map_err(|e| io_error(&path, e))?;
        // From here on, an error removes the directory (drop).
        let mut partial = Partial {
            path: path.clone(),
            held: None,
        };
        let dir = File::open(&path).map_err(|e| io_error(&path, e))?;
        partial.held = lock(dir, FlockArg::LockSharedNonblock).map_err(|e| io_error(&path, e))?;
        Ok(partial)
    }

    /// Moves `partial` into place, replacing the bundle there (already checked).
    /// Returns where the previous bundle went, to be removed once the lock is released.
    /// Call with the lock held.
    pub(crate) fn put(&self, partial: &Partial) -> io::Result<Option<PathBuf>> {
        if fs::symlink_metadata(&self.path).is_err() {
            fs::rename(&partial.path, &self.path).map_err(|e| io_error(&self.path, e))?;
            return Ok(None);
        }
        let old = self.unique("old");
        fs::rename(&self.path, &old).map_err(|e| io_error(&self.path, e))?;
        if let Err(e) = fs::rename(&partial.path, &self.path) {
            let _ = fs::rename(&old, &self.path);
            return Err(io_error(&self.path, e));
        }
        Ok(Some(old))
    }

    /// Removes what killed runs left beside the destination: its temporary
    /// directories whose process is gone and that no one holds. Call with the lock
    /// held. Returns what it removed.
    pub(crate) fn sweep(&self) -> io::Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        for (path, leftover) in leftovers(&self.parent)? {
            if OsStr::new(&leftover.name) == self.name && !in_use(&path, leftover.pid) {
                fs::remove_dir_all(&path).map_err(|e| io_error(&path, e))?;
                removed.push(path);
            }
        }
        Ok(removed)
    }
}

/// Why directory `dir` is not a bundle this tool wrote (None: it is one), as
/// "it holds thesis.txt": an entry a bundle writer does not write, or a meta.json
/// missing or not a bundle's.
fn why_not_a_bundle(dir: &Path) -> io::Result<Option<String>> {
    let meta: Option<serde_json::Value> = fs::read(dir.join("meta.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let captures: Vec<&str> = meta
        .as_ref()
        .and_then(|m| m.get("vantage_points")?.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("file")?.as_str())
        .filter(|f| f.ends_with(".pcap") && !f.contains('/'))
        .collect();
    let mut foreign = Vec::new();
    let mut entries = 0;
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        entries += 1;
        let name = entry.file_name();
        let known = name
            .to_str()
            .is_some_and(|n| BUNDLE_FILES.contains(&n) || captures.contains(&n));
        if !known || !entry.file_type()?.is_file() {
            foreign.push(name.to_string_lossy().into_owned());
        }
    }
    let is_bundle = meta
        .as_ref()
        .and_then(|m| m.get("format")?.as_str())
        .is_some_and(|f| f.starts_with(FORMAT_PREFIX));
    Ok(if !foreign.is_empty() {
        foreign.sort();
        Some(format!("it holds {}", list(&foreign)))
    } else if entries == 0 {
        Some("it is empty".into())
    } else if !is_bundle {
        Some("its meta.json is not an airtrace bundle's".into())
    } else {
        None
    })
}

/// `a, b, c and 4 more`.
fn list(names: &[String]) -> String {
    const SHOWN: usize = 3;
    match names.len() {
        n if n <= SHOWN => names.join(", "),
        n => format!("{} and {} more", names[..SHOWN].join(", "), n - SHOWN),
    }
}

/// Takes `arg`'s flock on `file`. `Ok(None)` when the file system has no locks (the
/// writer then goes on without); `WouldBlock` when a non-blocking lock is taken.
fn lock(file: File, arg: FlockArg) -> io::Result<Option<Flock<File>>> {
    let mut file = file;
    loop {
        match Flock::lock(file, arg) {
            Ok(held) => return Ok(Some(held)),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, Errno::ENOLCK | Errno::EOPNOTSUPP)) => return Ok(None),
            Err((_, e)) => return Err(e.into()),
        }
    }
}

/// The exclusive lock on a destination's `.NAME.lock`; the file is removed, then
/// the lock released, when this is dropped.
#[derive(Debug)]
pub(crate) struct DestLock {
    path: PathBuf,
    _held: Option<Flock<File>>,
}

impl DestLock {
    /// Locks the file at `path`, creating it, waiting for the holder to release it.
    /// A holder removes the file before releasing it, so the lock taken counts only if
    /// `path` is still that file; otherwise it is tried again.
    fn acquire(path: PathBuf) -> io::Result<DestLock> {
        loop {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| io_error(&path, e))?;
            let held = lock(file, FlockArg::LockExclusive).map_err(|e| io_error(&path, e))?;
            let current = held.as_deref().map(File::metadata).transpose()?;
            let same = match (current, fs::metadata(&path)) {
                (None, _) => true,
                (Some(held), Ok(now)) => (held.dev(), held.ino()) == (now.dev(), now.ino()),
                (Some(_), Err(_)) => false,
            };
            if same {
                return Ok(DestLock { path, _held: held });
            }
        }
    }
}

impl Drop for DestLock {
    fn drop(&mut self) {
        // Before `_held` is dropped, which releases the lock.
        let _ = fs::remove_file(&self.path);
    }
}

/// A bundle's temporary directory, held (a shared flock on it) while its run goes
/// on, so that no other process takes it for a killed run's. Dropping it removes the
/// directory, unless it has been moved into place.
#[derive(Debug)]
pub(crate) struct Partial {
    /// Its path.
    pub(crate) path: PathBuf,
    held: Option<Flock<File>>,
}

impl Drop for Partial {
    fn drop(&mut self) {
        // Gone already if it was moved into place: only this run uses the name.
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// A temporary directory a writer leaves beside a bundle NAME while it works:
/// `.NAME.partial-PID-N` (a bundle being written) or `.NAME.old-PID-N` (the previous
/// bundle, being replaced); without `-N` as the writer named them before issue 19.
#[derive(Debug, PartialEq)]
struct Leftover {
    name: String,
    pid: u32,
}

impl Leftover {
    /// The leftover a directory entry named `entry` is, if it is one.
    fn parse(entry: &str) -> Option<Leftover> {
        let rest = entry.strip_prefix('.')?;
        let (name, tail) = [".partial-", ".old-"]
            .into_iter()
            .find_map(|kind| rest.rsplit_once(kind))?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (pid, n) = tail.split_once('-').unwrap_or((tail, "0"));
        if name.is_empty() || !digits(pid) || !digits(n) {
            return None;
        }
        Some(Leftover {
            name: name.into(),
            pid: pid.parse().ok()?,
        })
    }
}

/// The leftovers of writers in directory `dir`, with their paths.
fn leftovers(dir: &Path) -> io::Result<Vec<(PathBuf, Leftover)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        if let Some(leftover) = entry.file_name().to_str().and_then(Leftover::parse) {
            found.push((entry.path(), leftover));
        }
    }
    Ok(found)
}

/// True unless the temporary directory at `path`, made by process `pid`, is provably
/// a killed run's: `pid` no longer exists and no one holds the directory's lock (a
/// writer in another PID namespace, sharing the file system, would).
fn in_use(path: &Path, pid: u32) -> bool {
    if Path::new(&format!("/proc/{pid}")).exists() {
        return true;
    }
    match File::open(path) {
        Ok(dir) => matches!(
            lock(dir, FlockArg::LockExclusiveNonblock),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        ),
        Err(_) => true,
    }
}

/// Removes, in directory `dir`, what killed runs (of the simulator or the emulator)
/// left beside the bundles there: temporary directories whose process is gone and that
/// no one holds (each under its bundle's lock). Returns the directories removed.
pub fn remove_stale(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let names: BTreeSet<String> = leftovers(dir)?.into_iter().map(|(_, l)| l.name).collect();
    let mut removed = Vec::new();
    for name in names {
        let dest = Dest::in_dir(dir, &name);
        let _lock = dest.lock()?;
        removed.extend(dest.sweep()?);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_told_by_their_names() {
        let left = |name: &str, pid| {
            Some(Leftover {
                name: name.into(),
                pid,
            })
        };
        assert_eq!(Leftover::parse(".run.partial-123-4"), left("run", 123));
        assert_eq!(Leftover::parse(".run.partial-123"), left("run", 123));
        assert_eq!(Leftover::parse(".a.b.partial-7-0"), left("a.b", 7));
        assert_eq!(Leftover::parse(".run.old-5-1"), left("run", 5));
        for not in [
            "run.partial-1-2",
            ".run.partial-",
            ".run.partial-x-1",
            ".run.partial-1-2-3",
            ".partial-1",
            ".run.lock",
            "thesis.txt",
        ] {
            assert_eq!(Leftover::parse(not), None, "{not}");
        }
    }

    #[test]
    fn lists_are_cut_after_three() {
        let names = |n: usize| (0..n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(list(&names(1)), "f0");
        assert_eq!(list(&names(3)), "f0, f1, f2");
        assert_eq!(list(&names(5)), "f0, f1, f2 and 2 more");
    }
}
