//! The screeners family, one file per endpoint: [`vol_arb_scan`], [`relative_value_scan`].

pub mod relative_value_scan;
pub mod vol_arb_scan;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<vol_arb_scan::VolArbScanPayload>(Endpoint::VolArbScan),
        DataSchema::of::<relative_value_scan::RelativeValueScanPayload>(
            Endpoint::RelativeValueScan,
        ),
    ]
}
