//! The screeners family, one file per endpoint: [`screen`], [`market_overview`] (both over
//! the session's universe table), [`relative_value_scan`] and [`vol_arb_scan`].

pub mod market_overview;
pub mod relative_value_scan;
pub mod screen;
pub mod vol_arb_scan;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<screen::ScreenPayload>(Endpoint::Screen),
        DataSchema::of::<market_overview::MarketOverviewPayload>(Endpoint::MarketOverview),
        DataSchema::of::<vol_arb_scan::VolArbScanPayload>(Endpoint::VolArbScan),
        DataSchema::of::<relative_value_scan::RelativeValueScanPayload>(
            Endpoint::RelativeValueScan,
        ),
    ]
}
