//! The earnings and expected-move family, one file per endpoint: [`historical_moves`],
//! [`expected_vs_actual`] and [`mispricing_assessment`].

pub mod expected_vs_actual;
pub mod historical_moves;
pub mod mispricing_assessment;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<historical_moves::HistoricalMovesPayload>(Endpoint::HistoricalMoves),
        DataSchema::of::<expected_vs_actual::ExpectedVsActualPayload>(Endpoint::ExpectedVsActual),
        DataSchema::of::<mispricing_assessment::MispricingAssessmentPayload>(
            Endpoint::MispricingAssessment,
        ),
    ]
}
