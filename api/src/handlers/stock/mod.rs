//! The stock-analytics family, one file per endpoint: [`borrow_rate`], [`cores`],
//! [`correlation`], [`dividend`] and [`price_context`].

pub mod borrow_rate;
pub mod cores;
pub mod correlation;
pub mod dividend;
pub mod price_context;

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
    ]
}
