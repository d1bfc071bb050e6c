//! The crate's one error type.

use arrow_schema::{ArrowError, DataType};

use crate::bus::MessageKind;
use crate::snapshot::DatasetId;
use crate::table::Dataset;

/// Everything that can go wrong while building, validating, encoding or decoding data.
///
/// Batch problems, of inbound datasets and of the snapshots compute publishes alike, name the
/// dataset ([`DatasetId`]), the column (one of the constants of [`crate::columns`]) and, for
/// row-level ones, the zero-based row index, so an importer can point at the offending
/// line and a consumer can log exactly what it dropped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A value breaks a rule of its column (NaN or negative price, bid above ask, empty symbol,
    /// unknown enum code, date out of range, option symbol inconsistent with its columns …).
    #[error("{dataset}: row {row}, column `{column}`: {reason}")]
    InvalidValue {
        dataset: DatasetId,
        column: &'static str,
        row: usize,
        reason: String,
    },
    /// A null in a column the schema declares non-nullable.
    #[error("{dataset}: row {row}, column `{column}` is null but the column is not nullable")]
    UnexpectedNull {
        dataset: DatasetId,
        column: &'static str,
        row: usize,
    },
    /// A required (non-nullable) column is absent from the batch.
    #[error("{dataset}: required column `{column}` is missing")]
    MissingColumn {
        dataset: DatasetId,
        column: &'static str,
    },
    /// A column is present with another Arrow type than the schema's.
    #[error("{dataset}: column `{column}` has type {found}, expected {expected}")]
    ColumnType {
        dataset: DatasetId,
        column: &'static str,
        expected: DataType,
        found: DataType,
    },
    /// A bus message key that does not fit its dataset, or a row whose symbol is not the key.
    #[error("{dataset}: message key `{key}`: {reason}")]
    InvalidKey {
        dataset: Dataset,
        key: String,
        reason: String,
    },
    /// Rows of one dataset were asked for from a batch of another.
    #[error("expected a {expected} batch, found {found}")]
    DatasetMismatch { expected: Dataset, found: Dataset },
    /// A string that is not an OCC option symbol, or parts that cannot form one.
    #[error("invalid OCC option symbol `{symbol}`: {reason}")]
    InvalidOccSymbol { symbol: String, reason: String },
    /// A string that is none of the codes of a small enum (`what` names the enum).
    #[error("unknown {what} `{value}`")]
    UnknownEnumValue { what: &'static str, value: String },
    /// A snapshot event field that breaks its rule.
    #[error("snapshot event: field `{field}`: {reason}")]
    InvalidSnapshotEvent { field: &'static str, reason: String },
    /// The bytes do not start with the bus magic: not an optics message.
    #[error("not an optics bus message (bad magic)")]
    BadMagic,
    /// A message of a format version this build does not read (a newer producer).
    #[error(
        "bus message format version {found} is not supported: this build reads version {supported}; upgrade the consumer"
    )]
    UnsupportedVersion { found: u16, supported: u16 },
    /// A message kind code this build does not know.
    #[error("unknown bus message kind code {0}")]
    UnknownKind(u8),
    /// Header flags this build does not understand (all flags are zero in version 1).
    #[error("unsupported bus header flags {0:#04x}")]
    UnsupportedFlags(u8),
    /// The message ends before a field it announces.
    #[error("truncated bus message: {field} needs {needed} bytes, {available} left")]
    Truncated {
        field: &'static str,
        needed: usize,
        available: usize,
    },
    /// Bytes after the announced end of the message.
    #[error("{0} unexpected bytes after the end of the bus message")]
    TrailingBytes(usize),
    /// The body of a message could not be read (bad Arrow IPC, bad JSON, non-UTF-8 key …).
    #[error("invalid {kind} message body: {reason}")]
    InvalidPayload { kind: MessageKind, reason: String },
    /// An Arrow error while assembling or writing a batch.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
}
