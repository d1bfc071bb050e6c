//! The stock-analytics family, one file per endpoint.

pub mod correlation;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![DataSchema::of::<correlation::CorrelationPayload>(
        Endpoint::Correlation,
    )]
}
