//! The events-calendar family, one file per endpoint: [`seasonality`], [`earnings_calendar`]
//! and [`economic_calendar`].

pub mod earnings_calendar;
pub mod economic_calendar;
pub mod seasonality;

use self::earnings_calendar::EarningsCalendarPayload;
use self::economic_calendar::EconomicCalendarPayload;
use self::seasonality::SeasonalityPayload;
use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<SeasonalityPayload>(Endpoint::Seasonality),
        DataSchema::of::<EarningsCalendarPayload>(Endpoint::EarningsCalendar),
        DataSchema::of::<EconomicCalendarPayload>(Endpoint::EconomicCalendar),
    ]
}
