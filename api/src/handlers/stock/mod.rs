//! The stock-analytics family, one file per endpoint: [`borrow_rate`], [`cores`],
//! [`correlation`], [`correlation_compare`], [`dividend`], [`price_context`] and
//! [`relative_value`].

pub mod borrow_rate;
pub mod cores;
pub mod correlation;
pub mod correlation_compare;
pub mod dividend;
pub mod price_context;
pub mod relative_value;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<correlation::CorrelationPayload>(Endpoint::Correlation),
        DataSchema::of::<cores::CoresPayload>(Endpoint::Cores),
        DataSchema::of::<dividend::DividendPayload>(Endpoint::Dividend),
        DataSchema::of::<borrow_rate::BorrowRatePayload>(Endpoint::BorrowRate),
        DataSchema::of::<price_context::PriceContextPayload>(Endpoint::PriceContext),
        DataSchema::of::<correlation_compare::CorrelationComparePayload>(
            Endpoint::CorrelationCompare,
        ),
        DataSchema::of::<relative_value::RelativeValuePayload>(Endpoint::RelativeValue),
    ]
}
