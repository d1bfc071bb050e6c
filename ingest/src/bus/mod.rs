//! The bus implementations behind [`optics_schemas::Bus`]: the embedded in-process bus (the
//! default of `optics run` and of replay) and, later, Kafka.
//!
//! - [`EmbeddedBus`]: a bounded in-process log per topic with partitions by key, consumer
//!   groups, commits and back-pressure, mirroring Kafka's semantics so that code tested on it
//!   behaves the same against a cluster.

mod embedded;

pub use embedded::{EmbeddedBus, EmbeddedBusConfig};
