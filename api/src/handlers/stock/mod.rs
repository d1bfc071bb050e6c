//! The stock-analytics family, one file per endpoint: [`correlation`], [`correlation_compare`],
//! [`dividend`] and [`relative_value`].

pub mod correlation;
pub mod correlation_compare;
pub mod dividend;
pub mod relative_value;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<correlation::CorrelationPayload>(Endpoint::Correlation),
        DataSchema::of::<dividend::DividendPayload>(Endpoint::Dividend),
        DataSchema::of::<correlation_compare::CorrelationComparePayload>(
            Endpoint::CorrelationCompare,
        ),
        DataSchema::of::<relative_value::RelativeValuePayload>(Endpoint::RelativeValue),
    ]
}
