//! Bad vendor files: each fails with its file, line and reason, and nothing of it is committed.

mod vendor_support;

use std::path::Path;

use optics_ingest::vendor::{
    ImportBatch, ImportError, ImportKind, ImportOptions, ImportSink, MemorySink, Reason, SinkError,
    import_file, import_reader,
};
use vendor_support::{data, rejected_in_batches};

fn sample(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// `text` with the cell of `column` on 1-based `line` replaced by `value`.
fn set_cell(text: &str, line: usize, column: &str, value: &str) -> String {
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let index = header.iter().position(|h| *h == column).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                let mut cells: Vec<&str> = l.split(',').collect();
                cells[index] = value;
                cells.join(",") + "\n"
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// `text` without `column`.
fn drop_column(text: &str, column: &str) -> String {
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let index = header.iter().position(|h| *h == column).unwrap();
    text.lines()
        .map(|l| {
            let mut cells: Vec<&str> = l.split(',').collect();
            cells.remove(index);
            cells.join(",") + "\n"
        })
        .collect()
}

/// Imports `text` in batches of 2 rows (so earlier batches are staged before the bad line)
/// and checks that the import failed, was aborted and committed nothing.
fn rejected(text: &str, kind: &ImportKind) -> ImportError {
    let err = rejected_in_batches(text, kind, 2);
    assert_eq!(err.file, "bad.csv");
    err
}

fn orats() -> ImportKind {
    ImportKind::OratsStrikes
}

fn bars() -> ImportKind {
    ImportKind::Bars {
        symbol: "SPY".into(),
    }
}

#[test]
fn bad_number_names_line_column_and_value() {
    let text = set_cell(
        &sample("orats_strikes_sample.csv"),
        4,
        "callBidPrice",
        "abc",
    );
    let err = rejected(&text, &orats());
    assert_eq!(err.line, 4);
    assert_eq!(
        err.reason,
        Reason::BadNumber {
            column: "callBidPrice",
            value: "abc".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "bad.csv:4: bad number \"abc\" in column `callBidPrice`"
    );
    for nonsense in ["NaN", "inf", "1.2.3", ""] {
        let text = set_cell(
            &sample("orats_strikes_sample.csv"),
            3,
            "putAskPrice",
            nonsense,
        );
        let err = rejected(&text, &orats());
        assert_eq!(err.line, 3, "{nonsense}: {err}");
    }
    // Counts are non-negative integers.
    let text = set_cell(&sample("orats_strikes_sample.csv"), 6, "callVolume", "12.5");
    assert_eq!(rejected(&text, &orats()).line, 6);
    let text = set_cell(
        &sample("orats_strikes_sample.csv"),
        6,
        "putOpenInterest",
        "-3",
    );
    assert_eq!(rejected(&text, &orats()).line, 6);
}

#[test]
fn bid_above_ask() {
    let text = set_cell(
        &sample("orats_strikes_sample.csv"),
        4,
        "putBidPrice",
        "1.70",
    );
    let err = rejected(&text, &orats());
    assert_eq!(err.line, 4);
    assert_eq!(
        err.reason,
        Reason::BidAboveAsk {
            bid_column: "putBidPrice",
            bid: 1.70,
            ask_column: "putAskPrice",
            ask: 1.65
        }
    );
    let text = set_cell(&sample("cboe_eod_sample.csv"), 7, "bid_eod", "27.50");
    let err = rejected(&text, &ImportKind::CboeEod);
    assert_eq!(err.line, 7);
    assert!(matches!(
        err.reason,
        Reason::BidAboveAsk {
            bid_column: "bid_eod",
            ..
        }
    ));
}

#[test]
fn missing_column_is_named_at_the_header() {
    let text = drop_column(&sample("orats_strikes_sample.csv"), "callAskPrice");
    let err = rejected(&text, &orats());
    assert_eq!(err.line, 1);
    assert_eq!(err.reason, Reason::MissingColumn("callAskPrice"));
    let text = drop_column(&sample("cboe_eod_sample.csv"), "bid_eod");
    let err = rejected(&text, &ImportKind::CboeEod);
    assert_eq!(
        (err.line, err.reason),
        (1, Reason::MissingColumn("bid_eod"))
    );
    let text = drop_column(&sample("spy_bars_sample.csv"), "volume");
    let err = rejected(&text, &bars());
    assert_eq!((err.line, err.reason), (1, Reason::MissingColumn("volume")));
    // An empty file has no header at all.
    let err = rejected("", &bars());
    assert_eq!((err.line, err.reason), (1, Reason::MissingColumn("date")));
}

#[test]
fn unparseable_dates() {
    for (value, line) in [("2024-02-30", 3), ("14.03.2024", 6), ("2024-3-1x", 7)] {
        let text = set_cell(
            &sample("orats_strikes_sample.csv"),
            line,
            "expirDate",
            value,
        );
        let err = rejected(&text, &orats());
        assert_eq!(err.line, line as u64);
        assert_eq!(
            err.reason,
            Reason::BadDate {
                column: "expirDate",
                value: value.into()
            }
        );
    }
    let text = set_cell(&sample("spy_bars_sample.csv"), 4, "date", "2024-13-01");
    let err = rejected(&text, &bars());
    assert_eq!(err.line, 4);
    assert!(matches!(err.reason, Reason::BadDate { column: "date", .. }));
    // An expiration before the trade date.
    let text = set_cell(
        &sample("orats_strikes_sample.csv"),
        2,
        "expirDate",
        "2024-03-13",
    );
    let err = rejected(&text, &orats());
    assert_eq!(err.line, 2);
    assert!(matches!(
        err.reason,
        Reason::Invalid {
            column: "expirDate",
            ..
        }
    ));
}

#[test]
fn truncated_line() {
    let text = sample("orats_strikes_sample.csv");
    let cut = &text[..text.len() - 60]; // the last line loses its tail (and its newline)
    let err = rejected(cut, &orats());
    assert_eq!(err.line, 7);
    assert!(
        matches!(err.reason, Reason::FieldCount { expected: 40, found } if found < 40),
        "{err}"
    );
    let text = sample("spy_bars_sample.csv");
    let cut = text.replacen(
        "2024-03-13,517.11,517.29,514.49,515.97,513.42,55104100",
        "2024-03-13,517.11",
        1,
    );
    let err = rejected(&cut, &bars());
    assert_eq!(err.line, 4);
    assert!(matches!(
        err.reason,
        Reason::FieldCount {
            expected: 7,
            found: 2
        }
    ));
}

#[test]
fn empty_ticker_and_unknown_option_type() {
    let text = set_cell(&sample("orats_strikes_sample.csv"), 6, "ticker", "");
    let err = rejected(&text, &orats());
    assert_eq!((err.line, err.reason), (6, Reason::Empty("ticker")));
    let text = set_cell(&sample("cboe_eod_sample.csv"), 3, "option_type", "X");
    let err = rejected(&text, &ImportKind::CboeEod);
    assert_eq!(err.line, 3);
    assert_eq!(
        err.reason,
        Reason::UnknownOptionType {
            column: "option_type",
            value: "X".into()
        }
    );
    let text = set_cell(
        &sample("orats_strikes_sample.csv"),
        7,
        "strike",
        "5200.0001",
    );
    let err = rejected(&text, &orats());
    assert_eq!(err.line, 7);
    assert!(matches!(
        err.reason,
        Reason::Invalid {
            column: "strike",
            ..
        }
    ));
}

#[test]
fn schema_rules_point_at_the_right_line() {
    // low above open: a rule of the daily_bars schema, checked per batch; the batch of 2 rows
    // holding data lines 3 and 4 (file lines 4 and 5) must report file line 5.
    let text = set_cell(&sample("spy_bars_sample.csv"), 5, "low", "517.00");
    let err = rejected(&text, &bars());
    assert_eq!(err.line, 5, "{err}");
    match &err.reason {
        Reason::Invalid { column, reason } => {
            assert_eq!(*column, "low");
            assert!(reason.contains("above open"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_file_is_an_io_error_without_a_line() {
    let mut sink = MemorySink::new();
    let err = import_file(Path::new("/nonexistent/x.csv"), &orats(), &mut sink).unwrap_err();
    assert_eq!(err.line, 0);
    assert!(matches!(err.reason, Reason::Io(_)));
    assert!(err.to_string().starts_with("/nonexistent/x.csv: I/O error"));
    assert_eq!(sink.commits(), 0);
}

/// A sink that refuses its third batch.
#[derive(Default)]
struct Refusing {
    inner: MemorySink,
    staged: usize,
}

impl ImportSink for Refusing {
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError> {
        self.staged += 1;
        if self.staged == 3 {
            return Err("disk full".into());
        }
        self.inner.stage(batch)
    }
    fn commit(&mut self) -> Result<(), SinkError> {
        self.inner.commit()
    }
    fn abort(&mut self) {
        self.inner.abort();
    }
}

#[test]
fn a_failing_sink_aborts_the_import() {
    let mut sink = Refusing::default();
    let err = import_reader(
        sample("spy_bars_sample.csv").as_bytes(),
        "spy.csv",
        None,
        &bars(),
        &mut sink,
        ImportOptions {
            batch_rows: 1,
            progress: None,
        },
    )
    .unwrap_err();
    assert_eq!(err.reason, Reason::Sink("disk full".into()));
    assert_eq!((sink.inner.commits(), sink.inner.aborts()), (0, 1));
    assert!(sink.inner.committed().is_empty() && sink.inner.staged().is_empty());
}
