//! optics-schemas: the one place that defines data — Arrow schemas of every dataset, the bus
//! message types and the serde types of every JSON payload. No logic lives here.
//!
//! The datasets arrive with the market-data issue; until then this crate is empty on purpose.
