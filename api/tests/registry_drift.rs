//! The committed endpoint table (`api/src/registry/table.rs`) is what its generator writes from
//! the interface's reference records today: regenerate it (`api/scripts/gen_registry.py` on
//! `../shared/spec/reference-records.json`, which every clone has beside the repository, then
//! rustfmt) and compare. A difference means the records or the script changed without
//! `make registry` being run, or the table was edited by hand.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn run(command: &mut Command, input: Option<&[u8]>) -> String {
    let description = format!("{command:?}");
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{description}: {e}"));
    if let Some(input) = input {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{description} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_committed_registry_is_what_the_generator_writes() {
    let api = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let records = api.join("../../shared/spec/reference-records.json");
    assert!(
        records.is_file(),
        "{} is missing: the interface's reference records live beside the repository",
        records.display()
    );
    let generated = run(
        Command::new("python3")
            .arg(api.join("scripts/gen_registry.py"))
            .arg(&records),
        None,
    );
    let formatted = run(
        Command::new("rustfmt").args(["--edition", "2024", "--emit", "stdout"]),
        Some(generated.as_bytes()),
    );
    let committed = std::fs::read_to_string(api.join("src/registry/table.rs")).unwrap();
    if formatted != committed {
        let first = formatted
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| formatted.lines().count().min(committed.lines().count()));
        panic!(
            "api/src/registry/table.rs differs from what `make registry` writes, first at line \
             {}: run `make registry` and commit the result",
            first + 1
        );
    }
}
