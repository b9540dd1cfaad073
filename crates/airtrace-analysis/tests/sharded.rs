//! The summary path on several threads (`analyze_file_sharded`) gives the report of the
//! single-threaded pass, byte for byte: on the bundled captures and, when it is there,
//! every file of the real-capture corpus (`shared/corpus/real` beside the repository),
//! cut short and whole.

use std::path::{Path, PathBuf};

use airtrace_analysis::{analyze_file, analyze_file_sharded};

fn captures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        root.join("testdata/pcaps"),
        root.join("../shared/corpus/real"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            if std::env::var("CI").as_deref() == Ok("true") && dir.ends_with("real") {
                panic!("corpus directory {} is missing (CI=true)", dir.display());
            }
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_file() && !name.ends_with(".md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn json(path: &Path, threads: Option<usize>) -> String {
    let name = path.display().to_string();
    let report = match threads {
        None => analyze_file(path, &mut (), &mut |_, _| {}),
        Some(n) => analyze_file_sharded(path, &name, n, &mut |_, _| {}),
    };
    match report {
        Ok(r) => serde_json::to_string(&r).expect("JSON"),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn every_capture_gives_the_same_report_on_any_number_of_threads() {
    let files = captures();
    assert!(!files.is_empty());
    for path in &files {
        let one = json(path, None);
        for threads in [2, 3] {
            assert_eq!(
                json(path, Some(threads)),
                one,
                "{} on {threads} threads",
                path.display()
            );
        }
    }
}

#[test]
fn a_capture_cut_short_gives_the_same_report_on_two_threads() {
    let dir = std::env::temp_dir().join(format!("airtrace-sharded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for path in captures()
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e != "gz"))
        .take(12)
    {
        let data = std::fs::read(path).unwrap();
        for cut in [data.len() / 3, data.len() - 7] {
            let cut_path = dir.join(format!(
                "cut-{cut}-{}",
                path.file_name().unwrap().to_string_lossy()
            ));
            std::fs::write(&cut_path, &data[..cut]).unwrap();
            let one = json(&cut_path, None).replace(&cut_path.display().to_string(), "FILE");
            let two = json(&cut_path, Some(2)).replace(&cut_path.display().to_string(), "FILE");
            assert_eq!(two, one, "{} cut at {cut}", path.display());
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
