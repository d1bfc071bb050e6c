//! optics-ingest: quote sources (the market simulator, vendor-file importers), the bus
//! implementations (embedded and Kafka) and the Parquet quote archive that replay reads.
//!
//! The sources arrive with the market-data issue; until then this crate is empty on purpose.
