//! optics-ingest: quote sources (the market simulator, vendor-file importers), the bus
//! implementations (embedded and Kafka) and the Parquet quote archive that replay reads.
//!
//! - [`simulator`]: the embedded market simulator. So far its static configuration and listing
//!   rules: the coverage [`Universe`](simulator::universe::Universe) (indices, ETFs, single
//!   stocks, and synthetic names for benchmarks) and the real listing structure
//!   ([`expirations`](simulator::listing::expirations) and
//!   [`strike_grid`](simulator::listing::strike_grid)). Price paths and quotes build on them.
//! - [`IngestError`]: the crate's one error type.

pub mod error;
pub mod simulator;

pub use error::IngestError;
