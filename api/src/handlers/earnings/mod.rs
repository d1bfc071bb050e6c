//! The earnings and expected-move family, one file per endpoint: [`earnings_history`],
//! [`post_earnings_drift`], [`iv_crush`], [`earnings_verdict`], [`historical_moves`],
//! [`expected_vs_actual`] and [`mispricing_assessment`]. The per-report endpoints read one
//! ticker's stored daily bars, reports and 30-day IV as of the clock's New York date
//! ([`read::EarningsRead`]: a past session never sees a later one), and the live chain for the
//! next report's straddle ([`event::EventSetup`]).

pub mod earnings_history;
pub mod earnings_verdict;
pub mod event;
pub mod expected_vs_actual;
pub mod historical_moves;
pub mod iv_crush;
pub mod mispricing_assessment;
pub mod post_earnings_drift;
pub mod read;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<earnings_history::EarningsHistoryPayload>(Endpoint::EarningsHistory),
        DataSchema::of::<post_earnings_drift::PostEarningsDriftPayload>(
            Endpoint::PostEarningsDrift,
        ),
        DataSchema::of::<iv_crush::IvCrushPayload>(Endpoint::IvCrush),
        DataSchema::of::<earnings_verdict::EarningsVerdictPayload>(Endpoint::EarningsVerdict),
        DataSchema::of::<historical_moves::HistoricalMovesPayload>(Endpoint::HistoricalMoves),
        DataSchema::of::<expected_vs_actual::ExpectedVsActualPayload>(Endpoint::ExpectedVsActual),
        DataSchema::of::<mispricing_assessment::MispricingAssessmentPayload>(
            Endpoint::MispricingAssessment,
        ),
    ]
}
