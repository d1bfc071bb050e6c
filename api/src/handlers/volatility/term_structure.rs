//! `GET /term-structure/{ticker}`: per expiration, the at-the-money strike, IV, straddle and the
//! move it prices.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Served, VOL_UNITS};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredChain;
use crate::market::ChainView;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// One expiration of `term_structure[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TermPoint {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// Years to its close (ACT/365).
    pub years_to_expiry: f64,
    /// The listed strike nearest spot with a two-sided call and put, dollars.
    pub atm_strike: f64,
    /// Mean of the call and put IV at `atm_strike` (the one present when only one is),
    /// percentage points.
    pub atm_iv: Option<f64>,
    /// Call mid at `atm_strike`, dollars.
    pub straddle_call: f64,
    /// Put mid at `atm_strike`, dollars.
    pub straddle_put: f64,
    /// straddle_call + straddle_put: the market's price of the move to the expiration, dollars.
    pub straddle_price: f64,
    /// The straddle-priced move: straddle_price, dollars.
    pub expected_move_dollar: f64,
    /// The same as percent of spot.
    pub expected_move_pct: f64,
    /// spot + straddle_price, dollars.
    pub upper_1sigma: f64,
    /// spot − straddle_price, dollars.
    pub lower_1sigma: f64,
    /// spot + 2 × straddle_price, dollars.
    pub upper_2sigma: f64,
    /// spot − 2 × straddle_price, dollars.
    pub lower_2sigma: f64,
    /// The σ√T move: spot × atm_iv/100 × √years_to_expiry, dollars (a straddle prices about
    /// 0.8 of it under a lognormal law).
    pub iv_expected_move: Option<f64>,
    /// The same as percent of spot.
    pub iv_expected_move_pct: Option<f64>,
}

/// The `/term-structure/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TermStructurePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Spot, dollars.
    pub stock_price: f64,
    /// The open expirations, nearest first (at most `num_expirations`); an expiration without a
    /// two-sided call and put at any strike is left out and counted in `expirations_skipped`.
    pub term_structure: Vec<TermPoint>,
    /// Open expirations looked at.
    pub expirations_considered: usize,
    /// Of those, how many had no two-sided straddle.
    pub expirations_skipped: usize,
    /// Unit of `atm_iv`.
    pub iv_units: &'static str,
    /// How the figures are defined.
    pub basis: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `basis` of the payload.
const TERM_BASIS: &str = "ATM = the listed strike nearest spot with both a call and a put mid; \
                          expected_move_* from the straddle mid; iv_expected_move from atm_iv \
                          and the years to the expiration's close";

/// `GET /term-structure/{ticker}?num_expirations=8`.
pub async fn term_structure(
    State(state): State<AppState>,
    CoveredChain { ticker, chain }: CoveredChain,
    params: QueryParams,
) -> Result<Json<Envelope<TermStructurePayload>>, ApiError> {
    let wanted = usize::try_from(params.int("num_expirations")?.value).unwrap_or(1);
    let spot = chain.stock_price();
    let open = chain.open_expirations();
    let considered = &open[..open.len().min(wanted)];
    let term_structure: Vec<TermPoint> = considered
        .iter()
        .filter_map(|e| term_point(&chain, *e, spot))
        .collect();
    Ok(ok(TermStructurePayload {
        ticker: ticker.to_string(),
        stock_price: spot,
        expirations_skipped: considered.len() - term_structure.len(),
        expirations_considered: considered.len(),
        term_structure,
        iv_units: VOL_UNITS,
        basis: TERM_BASIS,
        served: Served::of(&state, &chain, None, params.clamp_notices()),
    }))
}

/// The point of one expiration; `None` without a two-sided straddle.
fn term_point(chain: &ChainView, expiration: NaiveDate, spot: f64) -> Option<TermPoint> {
    let rows = chain.rows_of(expiration);
    let atm = rows
        .iter()
        .filter(|r| r.call.mid.is_some() && r.put.mid.is_some())
        .min_by(|a, b| (a.strike - spot).abs().total_cmp(&(b.strike - spot).abs()))?;
    let (call, put) = (atm.call.mid?, atm.put.mid?);
    let straddle = call + put;
    let ivs: Vec<f64> = [atm.call.iv, atm.put.iv]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let atm_iv = (!ivs.is_empty()).then(|| ivs.iter().sum::<f64>() / ivs.len() as f64 * 100.0);
    let years = atm.years_to_expiry.max(0.0);
    let iv_move = atm_iv.map(|iv| spot * iv / 100.0 * years.sqrt());
    Some(TermPoint {
        expiration,
        dte: atm.dte,
        years_to_expiry: years,
        atm_strike: atm.strike,
        atm_iv,
        straddle_call: call,
        straddle_put: put,
        straddle_price: straddle,
        expected_move_dollar: straddle,
        expected_move_pct: straddle / spot * 100.0,
        upper_1sigma: spot + straddle,
        lower_1sigma: spot - straddle,
        upper_2sigma: spot + 2.0 * straddle,
        lower_2sigma: spot - 2.0 * straddle,
        iv_expected_move: iv_move,
        iv_expected_move_pct: iv_move.map(|m| m / spot * 100.0),
    })
}
