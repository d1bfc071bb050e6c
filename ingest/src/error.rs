//! The one error type of optics-ingest.

/// Everything that can go wrong in optics-ingest.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IngestError {
    /// Two underlyings of a universe share a symbol.
    #[error("duplicate underlying symbol `{symbol}` in the universe")]
    DuplicateSymbol {
        /// The repeated symbol.
        symbol: String,
    },
    /// An underlying's parameters are out of range (non-positive price or vol, a correlation
    /// outside [-1, 1], …).
    #[error("invalid parameters for underlying `{symbol}`: {reason}")]
    InvalidUnderlying {
        /// The underlying's symbol.
        symbol: String,
        /// What is wrong.
        reason: String,
    },
}
