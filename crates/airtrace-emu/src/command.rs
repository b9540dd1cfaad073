//! A user's command run inside a namespace (`ip netns exec`), in its own process
//! group so that it and whatever it starts are stopped together at the end: SIGTERM to
//! the group whose id is the pid we started, then SIGKILL after a grace period. It
//! dies with the thread that started it (PR_SET_PDEATHSIG), so a SIGKILLed run takes
//! it along; what leaves its group (`setsid -f`, a daemon) is still in the namespace,
//! and [`crate::contain`] ends it before the namespace goes.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Splits `line` into words as a POSIX shell does, quoting only: whitespace separates
/// words, `'...'` keeps everything literally, `"..."` keeps all but `\\` and `\"`, a
/// backslash outside quotes escapes the next character. No variables, globs or
/// operators (the words go to the program as they are). Errors name an unclosed
/// quote or a trailing backslash.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed ' in {line:?}")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('\\' | '"')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(format!("unclosed \" in {line:?}")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed \" in {line:?}")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(format!("trailing backslash in {line:?}")),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

/// A command running in a namespace; stopped when dropped.
pub struct Running {
    child: Child,
    exit: Option<i32>,
}

/// Starts `argv` in namespace `ns`, from the calling thread (which must outlive it:
/// the command gets SIGKILL when that thread ends).
pub fn spawn(ns: &str, argv: &[String]) -> io::Result<Running> {
    let Some(program) = argv.first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command"));
    };
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", ns, program])
        .args(&argv[1..])
        .process_group(0);
    crate::sys::die_with_parent(&mut command);
    let child = command
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

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_as_a_shell_splits_them() {
        assert_eq!(
            split_words("iperf3 -s  -B 198.18.1.1 -1").unwrap(),
            ["iperf3", "-s", "-B", "198.18.1.1", "-1"]
        );
        assert_eq!(
            split_words(r#"sh -c 'echo "a b"; exit 3'"#).unwrap(),
            ["sh", "-c", r#"echo "a b"; exit 3"#]
        );
        assert_eq!(
            split_words(r#"say "x \"y\" \n" a\ b ''"#).unwrap(),
            ["say", r#"x "y" \n"#, "a b", ""]
        );
    }

    #[test]
    fn bad_quoting_is_an_error_naming_it() {
        assert_eq!(
            split_words("sh -c 'oops").unwrap_err(),
            r#"unclosed ' in "sh -c 'oops""#
        );
        assert!(split_words("a \"b").unwrap_err().starts_with("unclosed \""));
        assert!(split_words("a\\")
            .unwrap_err()
            .starts_with("trailing backslash"));
        assert_eq!(split_words("   ").unwrap_err(), "empty command");
    }
}
