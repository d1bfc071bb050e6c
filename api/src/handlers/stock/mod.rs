//! The stock-analytics family, one file per endpoint: [`dividend`].

pub mod dividend;

use self::dividend::DividendPayload;
use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![DataSchema::of::<DividendPayload>(Endpoint::Dividend)]
}
