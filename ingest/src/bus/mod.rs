//! The bus implementations behind [`optics_schemas::Bus`]: the embedded in-process bus (the
//! default of `optics run` and of replay) and Kafka.
//!
//! - [`EmbeddedBus`]: a bounded in-process log per topic with partitions by key, consumer
//!   groups, commits and back-pressure, mirroring Kafka's semantics so that code tested on it
//!   behaves the same against a cluster.
//! - [`kafka::KafkaBus`]: Kafka through librdkafka (`--bus kafka://host:9092`).

mod embedded;
#[cfg(feature = "kafka")]
pub mod kafka;

pub use embedded::{EmbeddedBus, EmbeddedBusConfig};
