//! Vendor files: option end-of-day chains, daily bars, earnings reports and the economic
//! calendar from CSV, validated into the `optics-schemas` rows
//! ([`OptionQuote`](optics_schemas::OptionQuote), [`DailyBar`](optics_schemas::DailyBar),
//! [`EarningsEvent`](optics_schemas::EarningsEvent),
//! [`EconomicEvent`](optics_schemas::EconomicEvent)).
//!
//! Five layouts ([`ImportKind`]): `orats-strikes` ([ORATS strikes](orats)), `cboe-eod`
//! ([Cboe DataShop Option EOD Summary](cboe)), `bars` ([daily bars](bars)), `earnings`
//! ([earnings reports](earnings)) and `economic-calendar` ([macro releases](economic));
//! contract terms the files lack (root, settlement, exercise) follow [`contracts`].
//!
//! - **Header-driven.** Columns are found by name in any order (names compared without case,
//!   `_`, `-` or spaces); extra columns are ignored; a missing required column fails the file
//!   at line 1, naming the column.
//! - **Streaming.** [`QuoteReader`], [`BarReader`], [`EarningsReader`] and [`EconomicReader`]
//!   read any [`std::io::Read`] and yield batches of at most `batch_rows` validated rows;
//!   memory does not grow with the file.
//! - **Validation.** Every value is parsed strictly (numbers finite, counts non-negative
//!   integers, dates `YYYY-MM-DD` or `MM/DD/YYYY`, `C`/`P`), bid ≤ ask is checked with the
//!   vendor's column names, and every batch then passes the schema's own rules
//!   ([`Record::to_batch`](optics_schemas::Record::to_batch)). The first bad line fails the
//!   file with an [`ImportError`]: file, 1-based line, [`Reason`].
//! - **All or nothing.** [`import_file`] streams a file into an [`ImportSink`] (`stage` each
//!   batch, then `commit`, or `abort` on any error), so nothing of a bad file is committed.
//!   [`MemorySink`] is the in-memory sink.
//! - **Progress.** [`ImportOptions::progress`] receives [`Progress`] (bytes read / total) after
//!   every batch; the binary attaches its progress bar there.
//! - **Quote time.** End-of-day files are stamped 16:00 America/New_York of their trade date.
//!
//! ```
//! use optics_ingest::vendor::{ImportKind, MemorySink, ImportOptions, import_reader};
//! let csv = "date,open,high,low,close,volume\n2024-03-15,510.0,512.5,508.25,511.1,81000000\n";
//! let mut sink = MemorySink::new();
//! let summary = import_reader(
//!     csv.as_bytes(), "spy.csv", None,
//!     &ImportKind::Bars { symbol: "SPY".into() }, &mut sink, ImportOptions::default(),
//! )?;
//! assert_eq!(summary.rows, 1);
//! assert_eq!(sink.bars().next().unwrap().close, 511.1);
//! # Ok::<(), optics_ingest::vendor::ImportError>(())
//! ```

pub mod bars;
pub mod cboe;
pub mod contracts;
pub mod earnings;
pub mod economic;
mod error;
mod fields;
mod import;
pub mod orats;
mod reader;

pub use error::{ImportError, Reason};
pub use import::{
    CountingReader, ImportBatch, ImportKind, ImportOptions, ImportSink, ImportSummary, MemorySink,
    Progress, SinkError, import_file, import_file_with, import_reader, symbol_from_file_name,
};
pub use reader::{BarReader, DEFAULT_BATCH_ROWS, EarningsReader, EconomicReader, QuoteReader};
