//! What can go wrong in the snapshot store.

/// A snapshot store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The object store failed (I/O, permissions, network).
    #[error("object store: {0}")]
    ObjectStore(#[from] object_store::Error),
    /// A Parquet file could not be written or read.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// A local directory could not be prepared.
    #[error("store directory: {0}")]
    Io(String),
    /// A key part cannot form a path.
    #[error("invalid snapshot key {field}: {reason}")]
    InvalidKey {
        /// `dataset` or `underlying`.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// A declared sort column is not in the batch.
    #[error("sort column {0:?} is not in the batch")]
    UnknownSortColumn(String),
    /// A partition ran out of version numbers (2⁶⁴ publications).
    #[error("snapshot versions exhausted")]
    VersionsExhausted,
    /// A store URL that cannot be opened.
    #[error("store URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },
}
