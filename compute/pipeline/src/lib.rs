//! optics-pipeline: the I/O around the quantitative core — where [`optics_compute`]'s math meets
//! storage and the bus.
//!
//! - [`store`]: the snapshot store — every precomputed dataset as Parquet over object_store (a
//!   local directory, S3, or in memory); compute workers publish, the API and replay read.
//! - [`worker`]: the compute worker (bus in, snapshots out) on tokio, its pure per-cycle build
//!   ([`worker::cycle`]) over `optics-compute`, and the session close.
//!
//! `optics-compute` itself has no async runtime and no storage; this crate is the one that
//! brings tokio, object_store and Parquet in.

#![forbid(unsafe_code)]

pub mod store;
pub mod worker;
