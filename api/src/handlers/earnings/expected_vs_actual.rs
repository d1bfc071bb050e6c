//! `GET /expected-vs-actual/{ticker}`: the move the nearest expiration's straddle prices against
//! the stock's average move over the same number of trading sessions.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::moves::{MoveComparison, compare_moves, move_assessment_rule};
use serde::Serialize;
use utoipa::ToSchema;

use super::historical_moves::{CloseSeries, MOVES_BASIS, MoveAnalysis};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, latest_chain};
use crate::freshness::Freshness;
use crate::handlers::exposure::expected_move::{ExpectedMovePayload, expected_move_payload};
use crate::handlers::volatility::sessions_between;
use crate::market::ChainView;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;
use crate::ticker::Ticker;

/// `basis` of the comparison.
pub const EXPECTED_VS_ACTUAL_BASIS: &str = "expected_move_pct: the at-the-money straddle mid \
     (call + put, centred on the forward) of the nearest expiration after today, / spot x 100; \
     historical_avg_move_pct: the mean absolute close-to-close move over days_to_expiration \
     trading sessions, every overlapping window of the stored daily bars (historical-moves' \
     avg_abs_move_pct for that horizon); days_to_expiration: NYSE sessions after the chain's \
     session up to and including the expiration, at least 1";

/// `units` of the comparison.
pub const EXPECTED_VS_ACTUAL_UNITS: &str = "moves and difference_pct in percent of spot \
     (2.5 = 2.5 %); straddle_price, expected_move_dollars and stock_price in dollars; ratio \
     unitless; days_to_expiration in trading sessions, dte in calendar days";

/// The priced move of the nearest expiration beside the historical moves of its horizon.
#[derive(Debug, Clone)]
pub(crate) struct PricedAgainstTypical {
    /// The straddle of the nearest expiration after today.
    pub expected: ExpectedMovePayload,
    /// Trading sessions to it (≥ 1).
    pub days_to_expiration: usize,
    /// The historical moves over that many sessions.
    pub moves: MoveAnalysis,
    /// Priced against typical; `None` without a historical average.
    pub comparison: Option<MoveComparison>,
    /// Why there is no comparison, as a sentence.
    pub error: Option<String>,
}

impl PricedAgainstTypical {
    /// Prices the nearest expiration of `chain` (an error when it has no straddle) and compares
    /// it with the moves of `series` over the sessions left to it.
    pub(crate) fn of(
        state: &AppState,
        ticker: &Ticker,
        chain: &ChainView,
        series: &CloseSeries,
    ) -> Result<Self, ApiError> {
        let expected =
            expected_move_payload(ticker, chain, None, state.freshness_of(chain.trade_date))?;
        let days = sessions_between(chain.trade_date, expected.expiration).max(1);
        let moves = MoveAnalysis::of(series, days, ticker);
        let comparison = moves
            .avg_abs_move_pct
            .map(|historical| compare_moves(expected.expected_move_pct, historical));
        let error = match (&moves.reason, comparison) {
            (Some(reason), _) => Some(format!(
                "No historical average move to compare with: {reason} (the expiration is \
                 {days} trading sessions away)"
            )),
            (None, Some(c)) if c.ratio.is_none() => Some(format!(
                "Every stored {days}-session move of {ticker} is zero: no ratio to assess"
            )),
            _ => None,
        };
        Ok(Self {
            expected,
            days_to_expiration: days,
            moves,
            comparison,
            error,
        })
    }
}

/// The `/expected-vs-actual/{ticker}` payload. With too little history the answer is still a
/// 200: the historical figures are null and `error` says why.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpectedVsActualPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The move the straddle prices to the expiration, percent of spot.
    pub expected_move_pct: f64,
    /// The same move in dollars (the straddle mid).
    pub expected_move_dollars: f64,
    /// Mean absolute move over `days_to_expiration` sessions in the stored history, percent.
    pub historical_avg_move_pct: Option<f64>,
    /// expected_move_pct − historical_avg_move_pct, percentage points.
    pub difference_pct: Option<f64>,
    /// expected_move_pct / historical_avg_move_pct.
    pub ratio: Option<f64>,
    /// `OVERPRICED`, `UNDERPRICED` or `FAIRLY_PRICED` (`assessment_rule`).
    pub assessment: Option<&'static str>,
    /// The thresholds behind `assessment`.
    pub assessment_rule: String,
    /// The expiration priced: the nearest one after today.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Trading sessions from the chain's session (exclusive) to the expiration (inclusive), at
    /// least 1: the horizon of the historical moves.
    pub days_to_expiration: usize,
    /// Calendar days to the expiration.
    pub dte: i64,
    /// The at-the-money straddle (call mid + put mid) at the forward, dollars per share.
    pub straddle_price: f64,
    /// Spot, dollars.
    pub stock_price: f64,
    /// Historical moves the average is taken over.
    pub sample_size: usize,
    /// The first session of the historical windows.
    #[schema(value_type = Option<IsoDate>)]
    pub history_first_session: Option<NaiveDate>,
    /// The last session of the historical windows.
    #[schema(value_type = Option<IsoDate>)]
    pub history_last_session: Option<NaiveDate>,
    /// How each side is measured.
    pub basis: &'static str,
    /// How the historical moves are measured.
    pub history_basis: &'static str,
    /// Unit of every figure.
    pub units: &'static str,
    /// Why the historical figures are null, when they are (a sentence).
    pub error: Option<String>,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The freshness of the chain's session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /expected-vs-actual/{ticker}`.
pub async fn expected_vs_actual(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    _params: QueryParams,
) -> Result<Json<Envelope<ExpectedVsActualPayload>>, ApiError> {
    let chain = latest_chain(&state, &ticker)?;
    let series = CloseSeries::of(&state, &ticker)?;
    let priced = PricedAgainstTypical::of(&state, &ticker, &chain, &series)?;
    let PricedAgainstTypical {
        expected,
        days_to_expiration,
        moves,
        comparison,
        error,
    } = priced;
    Ok(ok(ExpectedVsActualPayload {
        ticker: ticker.to_string(),
        expected_move_pct: expected.expected_move_pct,
        expected_move_dollars: expected.expected_move_dollars,
        historical_avg_move_pct: moves.avg_abs_move_pct,
        difference_pct: comparison.map(|c| c.difference_pct),
        ratio: comparison.and_then(|c| c.ratio),
        assessment: comparison.and_then(|c| c.assessment),
        assessment_rule: move_assessment_rule(),
        expiration: expected.expiration,
        days_to_expiration,
        dte: expected.dte,
        straddle_price: expected.straddle_price,
        stock_price: expected.stock_price,
        sample_size: moves.sample_size,
        history_first_session: moves.first_session,
        history_last_session: moves.last_session,
        basis: EXPECTED_VS_ACTUAL_BASIS,
        history_basis: MOVES_BASIS,
        units: EXPECTED_VS_ACTUAL_UNITS,
        error,
        as_of: chain.as_of,
        freshness: expected.freshness,
    }))
}
