//! The quote archive's error type.

/// Everything that can go wrong in the quote archive.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The object store failed.
    #[error("object store: {0}")]
    Store(#[from] object_store::Error),
    /// Parquet encoding or decoding failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Rows did not pass the `option_quotes` schema (on write or on read).
    #[error("schema: {0}")]
    Schema(#[from] optics_schemas::SchemaError),
    /// An archive location (`--archive`) that cannot be opened.
    #[error("{0}")]
    Location(String),
    /// A local I/O failure (creating the archive directory, starting the sink's runtime).
    #[error("i/o: {0}")]
    Io(String),
    /// An import id that is not one plain path segment.
    #[error("invalid import id {0:?}: use 1–64 characters of [A-Za-z0-9._-]")]
    InvalidImportId(String),
    /// The import id names objects already (an earlier import, committed or not).
    #[error("import id {0:?} is already in use in the archive")]
    ImportIdInUse(String),
    /// A committed import's manifest cannot be read.
    #[error("manifest {path}: {reason}")]
    BadManifest {
        /// The manifest's path.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The archive holds option quotes only; bars belong to the daily-bars dataset.
    #[error("the quote archive takes option quotes only, not {0}")]
    NotQuotes(&'static str),
    /// A session already has part number `u32::MAX`.
    #[error("a session's part sequence numbers are exhausted")]
    SequenceExhausted,
}
