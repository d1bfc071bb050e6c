//! Each crate holds what its description says (issue 34): checked on the resolved dependency
//! graph, so a dependency that slips in through another crate is caught too.
//!
//! `optics-compute`, the pure quantitative core, builds without an async runtime or object
//! storage: the snapshot store and the worker that need them live in `optics-pipeline`.
//!
//! `optics-api` and `optics-accounts` are libraries without a command line: clap and the
//! argument structs live in the binary (`optics`).

use std::path::Path;
use std::process::Command;

/// The crates (one per line of `cargo tree --prefix none`) that `package`'s normal and build
/// dependencies resolve to, for the host.
fn dependency_tree(package: &str) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(cargo)
        .current_dir(workspace)
        .args([
            "tree",
            "-p",
            package,
            "-e",
            "normal,build",
            "--prefix",
            "none",
        ])
        .arg("--offline")
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).expect("cargo tree prints UTF-8");
    assert!(
        tree.lines()
            .any(|line| line.starts_with(&format!("{package} "))),
        "cargo tree -p {package} printed no line for the package itself:\n{tree}"
    );
    tree.lines().map(str::to_owned).collect()
}

/// The lines of `tree` naming any of `crates`.
fn naming<'a>(tree: &'a [String], crates: &[&str]) -> Vec<&'a str> {
    tree.iter()
        .map(String::as_str)
        .filter(|line| crates.iter().any(|c| line.starts_with(&format!("{c} "))))
        .collect()
}

#[test]
fn the_pure_math_crate_pulls_no_tokio_or_object_store() {
    let tree = dependency_tree("optics-compute");
    let found = naming(&tree, &["tokio", "object_store"]);
    assert!(
        found.is_empty(),
        "optics-compute must build without tokio and object_store (they belong in \
         optics-pipeline), but its tree has: {found:?}"
    );
}

#[test]
fn the_pipeline_crate_is_where_they_are() {
    // The check above passes vacuously if the names it looks for are wrong: the crate that
    // does need them must show them under the same spelling.
    let tree = dependency_tree("optics-pipeline");
    assert!(!naming(&tree, &["tokio"]).is_empty(), "{tree:?}");
    assert!(!naming(&tree, &["object_store"]).is_empty(), "{tree:?}");
}

#[test]
fn the_api_and_accounts_crates_pull_no_clap() {
    for package in ["optics-api", "optics-accounts"] {
        let tree = dependency_tree(package);
        let found = naming(&tree, &["clap"]);
        assert!(
            found.is_empty(),
            "{package} must build without clap (the command line belongs in the binary), \
             but its tree has: {found:?}"
        );
    }
}

#[test]
fn the_binary_is_where_clap_is() {
    // As above: the check of the libraries is only as good as the name it looks for.
    let tree = dependency_tree("optics");
    assert!(!naming(&tree, &["clap"]).is_empty(), "{tree:?}");
}
