//! The real pipeline in one process: simulator quotes → embedded bus → compute worker →
//! snapshot store, read back and checked against the quantitative core called directly.

mod cycle_commit;
mod freshness;
mod hand_built;
#[cfg(feature = "kafka")]
mod kafka_workers;
mod live_memory;
mod live_reference;
mod replay;
mod session_close;
mod support;
mod worker_to_store;
