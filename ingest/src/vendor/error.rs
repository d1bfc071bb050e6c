//! [`ImportError`]: what went wrong, in which file, on which line.

use std::fmt;

/// A vendor file was rejected. Always names the file (the display name the caller passed in),
/// the 1-based line of the file (0 when the problem is not tied to a line, such as a file that
/// cannot be opened) and the [`Reason`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {reason}", LineSuffix(*.line))]
pub struct ImportError {
    /// Display name of the file (usually its path).
    pub file: String,
    /// 1-based line number in the file; 1 is the header. 0: no particular line.
    pub line: u64,
    /// What is wrong.
    pub reason: Reason,
}

impl ImportError {
    /// An error at `line` (1-based; 0 for "the whole file") of `file`.
    pub fn new(file: impl Into<String>, line: u64, reason: Reason) -> Self {
        Self {
            file: file.into(),
            line,
            reason,
        }
    }
}

struct LineSuffix(u64);

impl fmt::Display for LineSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            Ok(())
        } else {
            write!(f, ":{}", self.0)
        }
    }
}

/// Why a vendor file was rejected. Column names are the vendor's header names (`callBidPrice`),
/// except in [`Reason::Invalid`] raised by the schema's own validation, which names the
/// `optics-schemas` column (`bid`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// Reading the file failed.
    #[error("I/O error: {0}")]
    Io(String),
    /// The text is not well-formed CSV (invalid UTF-8, …).
    #[error("malformed CSV: {0}")]
    Csv(String),
    /// A line has another number of fields than the header: usually a truncated line.
    #[error("the line has {found} fields, the header has {expected} (truncated line?)")]
    FieldCount {
        /// Fields on the line.
        found: u64,
        /// Fields in the header.
        expected: u64,
    },
    /// The header lacks a column the format requires (or the file is empty).
    #[error("required column `{0}` is missing from the header")]
    MissingColumn(&'static str),
    /// The header has the same column twice.
    #[error("column `{0}` appears twice in the header")]
    DuplicateColumn(String),
    /// A required value is empty.
    #[error("empty value in column `{0}`")]
    Empty(&'static str),
    /// A value that should be a number is not one (or is NaN, infinite, negative where a count
    /// is expected, or too large).
    #[error("bad number {value:?} in column `{column}`")]
    BadNumber {
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
    },
    /// A value that should be a date (`YYYY-MM-DD` or `MM/DD/YYYY`) is not one.
    #[error(
        "date {value:?} in column `{column}` is not parseable (expected YYYY-MM-DD or MM/DD/YYYY)"
    )]
    BadDate {
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
    },
    /// An option type other than `C` or `P`.
    #[error("unknown option type {value:?} in column `{column}` (expected C or P)")]
    UnknownOptionType {
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
    },
    /// A bid above its ask.
    #[error("bid above ask: {bid_column} {bid} > {ask_column} {ask}")]
    BidAboveAsk {
        /// The bid's column.
        bid_column: &'static str,
        /// The bid.
        bid: f64,
        /// The ask's column.
        ask_column: &'static str,
        /// The ask.
        ask: f64,
    },
    /// Any other rule of a value (negative price, expiration before the trade date, a strike
    /// that cannot form an OCC symbol, low above high, …).
    #[error("column `{column}`: {reason}")]
    Invalid {
        /// The column (vendor name, or the schema's for rules checked by `optics-schemas`).
        column: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The sink refused a batch or the commit.
    #[error("import sink: {0}")]
    Sink(String),
}
