//! The events-calendar family, one file per endpoint: [`seasonality`].

pub mod seasonality;

use self::seasonality::SeasonalityPayload;
use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![DataSchema::of::<SeasonalityPayload>(Endpoint::Seasonality)]
}
