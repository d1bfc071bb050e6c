//! optics-ingest: quote sources (the market simulator, vendor-file importers), the bus
//! implementations (embedded and Kafka) and the Parquet quote archive that replay reads.
//!
//! - [`simulator`]: the embedded market simulator. So far its static configuration and listing
//!   rules: the coverage [`Universe`](simulator::universe::Universe) (indices, ETFs, single
//!   stocks, and synthetic names for benchmarks) and the real listing structure
//!   ([`expirations`](simulator::listing::expirations) and
//!   [`strike_grid`](simulator::listing::strike_grid)). Price paths and quotes build on them.
//! - [`source`]: the [`QuoteSource`] trait the ingest loop pulls from (the simulator's session
//!   and live modes implement it; a vendor's live adapter would too).
//! - [`pump`]: the ingest loop itself: a source onto the bus, its quotes into the
//!   [`archive`] (every batch, or a sample for the simulator), archive failures counted.
//! - [`vendor`]: vendor-file importers (ORATS strikes, Cboe EOD summary, daily bars): streaming,
//!   validated, all-or-nothing into an import sink.
//! - [`IngestError`]: the crate's one error type.

#![forbid(unsafe_code)]

pub mod archive;
pub mod bus;
pub mod error;
pub mod pump;
pub mod replay;
pub mod simulator;
pub mod source;
pub mod vendor;

pub use error::IngestError;
pub use source::{ArchivePolicy, QuoteSource, SourceError, SourceEvent};
