//! Shared by the vendor import tests: the sample files, dates, and importing a whole sample
//! or a bad text into a [`MemorySink`].

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use optics_ingest::vendor::{
    ImportError, ImportKind, ImportOptions, ImportSummary, MemorySink, import_file, import_reader,
};

/// `tests/data/vendor/<name>`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/vendor")
        .join(name)
}

pub fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// The sample `name` imported as `kind`, with the sink that took it.
pub fn import_sample(name: &str, kind: &ImportKind) -> (ImportSummary, MemorySink) {
    let mut sink = MemorySink::new();
    let summary = import_file(&data(name), kind, &mut sink).unwrap();
    (summary, sink)
}

/// Imports `text` as `bad.csv` in batches of `batch_rows` (so earlier lines are staged
/// before the bad one) and checks that the import failed, was aborted and committed nothing.
pub fn rejected_in_batches(text: &str, kind: &ImportKind, batch_rows: usize) -> ImportError {
    let mut sink = MemorySink::new();
    let err = import_reader(
        text.as_bytes(),
        "bad.csv",
        None,
        kind,
        &mut sink,
        ImportOptions {
            batch_rows,
            progress: None,
        },
    )
    .unwrap_err();
    assert_eq!(sink.commits(), 0, "{err}");
    assert_eq!(sink.aborts(), 1, "{err}");
    assert!(sink.committed().is_empty() && sink.staged().is_empty());
    err
}
