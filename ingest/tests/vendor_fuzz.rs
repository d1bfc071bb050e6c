//! Every importer under arbitrary input: random bytes, and the committed sample files with
//! random edits (bytes replaced, inserted, removed; lines cut or repeated). Whatever the
//! input, an import either succeeds and commits, or fails with its file and a line no later
//! than the input's last, having committed nothing — never a panic.

use optics_ingest::vendor::{ImportKind, ImportOptions, MemorySink, import_reader};
use proptest::prelude::*;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/vendor")
            .join(name),
    )
    .unwrap()
}

/// The five layouts with their sample file, read once for every case.
fn layouts() -> &'static [(ImportKind, Vec<u8>)] {
    static LAYOUTS: std::sync::OnceLock<Vec<(ImportKind, Vec<u8>)>> = std::sync::OnceLock::new();
    LAYOUTS.get_or_init(read_layouts)
}

fn read_layouts() -> Vec<(ImportKind, Vec<u8>)> {
    vec![
        (ImportKind::OratsStrikes, sample("orats_strikes_sample.csv")),
        (ImportKind::CboeEod, sample("cboe_eod_sample.csv")),
        (
            ImportKind::Bars {
                symbol: "SPY".into(),
            },
            sample("spy_bars_sample.csv"),
        ),
        (ImportKind::Earnings, sample("earnings_sample.csv")),
        (ImportKind::EconomicCalendar, sample("economic_sample.csv")),
    ]
}

/// One edit of a file's bytes, at a position given as a fraction of its length.
#[derive(Debug, Clone)]
enum Edit {
    Replace(f64, u8),
    Insert(f64, Vec<u8>),
    Remove(f64, usize),
    RepeatLine(f64),
    CutAt(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to a CSV reader, and any byte.
    let byte = prop_oneof![
        Just(b','),
        Just(b'\n'),
        Just(b'\r'),
        Just(b'"'),
        Just(b'-'),
        Just(b'.'),
        Just(b'e'),
        Just(b'0'),
        Just(b'9'),
        any::<u8>(),
    ];
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), byte).prop_map(|(a, b)| Edit::Replace(a, b)),
        (at.clone(), prop::collection::vec(any::<u8>(), 1..12))
            .prop_map(|(a, b)| Edit::Insert(a, b)),
        (at.clone(), 1..40usize).prop_map(|(a, n)| Edit::Remove(a, n)),
        at.clone().prop_map(Edit::RepeatLine),
        at.prop_map(Edit::CutAt),
    ]
}

fn apply(mut bytes: Vec<u8>, edit: &Edit) -> Vec<u8> {
    let at = |fraction: f64, len: usize| ((fraction * len as f64) as usize).min(len);
    match edit {
        Edit::Replace(f, b) if !bytes.is_empty() => {
            let i = at(*f, bytes.len() - 1);
            bytes[i] = *b;
        }
        Edit::Replace(..) => {}
        Edit::Insert(f, new) => {
            let i = at(*f, bytes.len());
            bytes.splice(i..i, new.iter().copied());
        }
        Edit::Remove(f, n) => {
            let i = at(*f, bytes.len());
            let end = (i + n).min(bytes.len());
            bytes.drain(i..end);
        }
        Edit::RepeatLine(f) => {
            let i = at(*f, bytes.len());
            let start = bytes[..i]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            let end = bytes[i..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |p| i + p + 1);
            let line = bytes[start..end].to_vec();
            bytes.splice(end..end, line);
        }
        Edit::CutAt(f) => {
            let i = at(*f, bytes.len());
            bytes.truncate(i);
        }
    }
    bytes
}

/// Imports `bytes` as `kind` and checks the all-or-nothing rule.
fn check_import(kind: &ImportKind, bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut sink = MemorySink::new();
    let options = ImportOptions {
        batch_rows: 3,
        ..ImportOptions::default()
    };
    let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    match import_reader(bytes, "fuzz.csv", None, kind, &mut sink, options) {
        Ok(summary) => {
            prop_assert_eq!(sink.commits(), 1);
            prop_assert_eq!(sink.aborts(), 0);
            let committed: usize = sink.committed().iter().map(|b| b.len()).sum();
            prop_assert_eq!(committed as u64, summary.rows);
        }
        Err(error) => {
            prop_assert_eq!(error.file.as_str(), "fuzz.csv");
            prop_assert!(
                error.line <= lines,
                "line {} of a {lines}-line input: {error}",
                error.line
            );
            prop_assert!(!error.to_string().is_empty());
            prop_assert_eq!(sink.commits(), 0, "a failed import committed");
            prop_assert!(sink.committed().is_empty());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn edited_sample_files_import_whole_or_not_at_all(
        layout in 0..5usize,
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let (kind, bytes) = &layouts()[layout];
        let bytes = edits.iter().fold(bytes.clone(), apply);
        check_import(kind, &bytes)?;
    }

    #[test]
    fn random_bytes_fail_cleanly(
        layout in 0..5usize,
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        let (kind, sample) = &layouts()[layout];
        // Half the cases keep the sample's header line, so the rows themselves are read.
        let header_end = sample.iter().position(|b| *b == b'\n').map_or(0, |p| p + 1);
        let mut with_header = sample[..header_end].to_vec();
        with_header.extend_from_slice(&bytes);
        check_import(kind, &bytes)?;
        check_import(kind, &with_header)?;
    }
}

#[test]
fn the_samples_themselves_import() {
    for (kind, bytes) in layouts() {
        let mut sink = MemorySink::new();
        let summary = import_reader(
            bytes.as_slice(),
            "sample.csv",
            None,
            kind,
            &mut sink,
            ImportOptions::default(),
        )
        .unwrap();
        assert!(summary.rows > 0, "{}", kind.name());
    }
}
