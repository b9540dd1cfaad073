//! Where a bundle goes (issue 19): what is refused, writers into one place, a
//! cancelled run, and what killed runs left.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use airtrace_sim::dest::remove_stale;
use airtrace_sim::{run, Options, Scenario, SimError};

/// A short run: 200 kB over a clean 10 Mbit/s link, captured at both hosts.
const SHORT: &str = r#"
name = "short"
[link]
rate = "10 Mbit/s"
delay = "5 ms"
[[flow]]
app = "bulk"
bytes = "200 kB"
"#;

/// A run of minutes, if nothing stops it.
const LONG: &str = r#"
name = "long"
duration = "100000 s"
captures = []
[link]
rate = "100 Mbit/s"
delay = "20 ms"
[[flow]]
app = "bulk"
bytes = "1000 GB"
"#;

/// A fresh empty directory under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dest-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn simulate<'a>(text: &str, out: &'a Path, options: Options<'a>) -> Result<(), SimError> {
    let scenario = Scenario::parse(Path::new("test.toml"), text).unwrap();
    let options = Options {
        out: Some(out),
        ..options
    };
    run(&scenario, text, options).map(drop)
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const BUNDLE: [&str; 7] = [
    "link.jsonl",
    "meta.json",
    "receiver.pcap",
    "scenario.toml",
    "sender.pcap",
    "summary.json",
    "tcpstate.jsonl",
];

#[test]
fn a_directory_with_anything_else_in_it_is_refused_and_kept() {
    let dir = scratch("precious");
    let precious = dir.join("precious");
    fs::create_dir(&precious).unwrap();
    fs::write(precious.join("meta.json"), "{}").unwrap();
    fs::write(precious.join("thesis.txt"), "thesis").unwrap();
    let err = simulate(SHORT, &precious, Options::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} exists and is not a bundle airtrace wrote (it holds thesis.txt); not replacing it; choose another --out or remove it",
            precious.display()
        )
    );
    assert_eq!(names(&precious), ["meta.json", "thesis.txt"]);
    assert_eq!(names(&dir), ["precious"], "nothing left beside it");
}

#[test]
fn a_bundle_with_a_file_added_is_refused() {
    let dir = scratch("added");
    let out = dir.join("run");
    simulate(SHORT, &out, Options::default()).unwrap();
    fs::write(out.join("notes.md"), "mine").unwrap();
    fs::create_dir(out.join("plots")).unwrap();
    let err = simulate(SHORT, &out, Options::default()).unwrap_err();
    assert!(
        err.to_string().contains("(it holds notes.md, plots)"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(out.join("notes.md")).unwrap(), "mine");
}

#[test]
fn an_empty_directory_a_file_and_a_link_are_refused() {
    let dir = scratch("others");
    fs::create_dir(dir.join("empty")).unwrap();
    fs::write(dir.join("file"), "data").unwrap();
    std::os::unix::fs::symlink(dir.join("empty"), dir.join("link")).unwrap();
    for (name, why) in [
        ("empty", "it is empty"),
        ("file", "it is a file"),
        ("link", "it is a symbolic link"),
    ] {
        let err = simulate(SHORT, &dir.join(name), Options::default()).unwrap_err();
        assert!(err.to_string().contains(&format!("({why})")), "{err}");
    }
    assert_eq!(names(&dir), ["empty", "file", "link"]);
    assert_eq!(fs::read_to_string(dir.join("file")).unwrap(), "data");
}

#[test]
fn the_working_directory_and_its_ancestors_are_refused_before_the_run() {
    // cargo runs the tests in the crate's directory.
    for out in [".", "..", "../..", "src/..", "/"] {
        let err = simulate(SHORT, Path::new(out), Options::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("is the current directory or holds it; not replacing it")
                || (out == "/" && err.to_string().contains("is the root directory")),
            "{out}: {err}"
        );
    }
    let here = std::env::current_dir().unwrap();
    assert!(simulate(SHORT, &here, Options::default()).is_err());
    for dir in [here.clone(), here.parent().unwrap().to_path_buf()] {
        let left: Vec<_> = names(&dir)
            .into_iter()
            .filter(|n| n.contains(".partial-") || n.ends_with(".lock"))
            .collect();
        assert!(left.is_empty(), "{left:?} in {}", dir.display());
    }
}

#[test]
fn threads_writing_into_one_place_take_turns_and_the_bundle_is_whole() {
    let dir = scratch("threads");
    let out = dir.join("run");
    for _ in 0..5 {
        let barrier = Arc::new(Barrier::new(2));
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (barrier, out) = (barrier.clone(), out.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    simulate(SHORT, &out, Options::default())
                })
            })
            .collect();
        for r in runs {
            r.join().unwrap().unwrap();
        }
        assert_eq!(names(&out), BUNDLE);
        assert_eq!(names(&dir), ["run"], "nothing left beside it");
    }
}

#[test]
fn a_cancelled_run_stops_and_leaves_nothing() {
    let dir = scratch("cancel");
    let out = dir.join("run");
    let mut asked = 0;
    let mut cancel = || {
        asked += 1;
        asked == 3
    };
    let started = std::time::Instant::now();
    let err = simulate(
        LONG,
        &out,
        Options {
            cancel: Some(&mut cancel),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, SimError::Cancelled), "{err}");
    assert!(started.elapsed().as_secs() < 5);
    assert_eq!(asked, 3);
    assert!(names(&dir).is_empty(), "{:?}", names(&dir));
}

/// A process id no process has now.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    child.id()
}

/// A temporary directory as a run of process `pid` (as the writer named them
/// `with_n` or before) left it, with a capture in it.
fn left(dir: &Path, name: &str, pid: u32, with_n: bool) -> PathBuf {
    let n = if with_n { "-0" } else { "" };
    let path = dir.join(format!(".{name}.partial-{pid}{n}"));
    fs::create_dir(&path).unwrap();
    fs::write(path.join("sender.pcap"), [0u8; 1000]).unwrap();
    path
}

#[test]
fn the_next_run_removes_what_killed_runs_left_beside_it() {
    let dir = scratch("stale");
    let out = dir.join("run");
    let dead = dead_pid();
    left(&dir, "run", dead, true);
    left(&dir, "run", dead, false);
    let live = left(&dir, "run", std::process::id(), true);
    let other = left(&dir, "other", dead, true);
    simulate(SHORT, &out, Options::default()).unwrap();
    let mut expected = vec![name_of(&live), name_of(&other), "run".to_string()];
    expected.sort();
    assert_eq!(names(&dir), expected, "only the dead run's, and only run's");
}

fn name_of(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn remove_stale_removes_dead_runs_leftovers_only() {
    let dir = scratch("cleanup");
    let dead = dead_pid();
    let stale = [left(&dir, "a", dead, true), left(&dir, "b.c", dead, false)];
    let live = left(&dir, "a", std::process::id(), true);
    fs::create_dir(dir.join("a")).unwrap();
    fs::write(dir.join(".a.partial-notes"), "not ours").unwrap();
    let mut removed = remove_stale(&dir).unwrap();
    removed.sort();
    let mut expected = stale.to_vec();
    expected.sort();
    assert_eq!(removed, expected);
    let mut kept = vec![name_of(&live), ".a.partial-notes".into(), "a".into()];
    kept.sort();
    assert_eq!(names(&dir), kept);
    assert!(remove_stale(&dir).unwrap().is_empty());
}
