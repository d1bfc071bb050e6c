//! `GET /gex/{ticker}`: dealer gamma exposure, walls, flip and the per-strike profile.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{
    DirectionalBiasCode, ExposureRow, ExposureSummaryRow, FlipDegeneracyCode, PositioningCode,
    VolatilityRegimeCode,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    GexSelection, USD_PER_BILLION, contract_exposures, no_exposures, strike_profile, type_code,
};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::market::{ChainView, ExposureView};
use crate::openapi::{
    DirectionalBiasSchema, FlipDegeneracySchema, IsoDate, PositioningSchema, Timestamp,
    VolatilityRegimeSchema,
};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{self, Detail, Window, WindowRequest};

/// One strike of `gex_by_strike[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Net dealer GEX at the strike, dollars per 1 % move.
    pub gex: f64,
    /// Call + put open interest, contracts.
    pub oi: u64,
}

/// One strike of `gex_profile[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexProfilePoint {
    /// Strike, dollars.
    pub strike: f64,
    /// Call GEX, dollars per 1 % move (≥ 0).
    pub call_gex: f64,
    /// Put GEX, dollars per 1 % move (≤ 0, dealer-signed).
    pub put_gex: f64,
    /// call + put.
    pub net_gex: f64,
}

/// One strike of an expiration's `gex_by_strike[]`, with the running sum from the lowest
/// strike.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct CumulativeGexStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Net GEX at the strike, dollars per 1 % move.
    pub gex: f64,
    /// Σ net GEX of this and every lower strike, dollars per 1 % move.
    pub cumulative_gex: f64,
    /// Call + put open interest, contracts.
    pub oi: u64,
}

/// One contract of an expiration's `detailed[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexContract {
    /// Strike, dollars.
    pub strike: f64,
    /// `C` or `P`.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// Per-share gamma (per $1 of the model's underlying).
    pub gamma: f64,
    /// Dealer-signed GEX of the contract's open interest, dollars per 1 % move.
    pub gex: f64,
    /// Open interest, contracts.
    pub oi: u64,
}

/// One entry of `by_expiration[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GexExpiration {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: Option<i32>,
    /// Call GEX, dollars per 1 % move.
    pub call_gex: f64,
    /// Put GEX (dealer-signed, ≤ 0), dollars per 1 % move.
    pub put_gex: f64,
    /// call + put.
    pub total_gex: f64,
    /// Re-priced flip level of this expiration, dollars; null when degenerate.
    pub flip_level: Option<f64>,
    /// Strike of the most positive net GEX.
    pub max_gamma_strike: Option<f64>,
    /// Strike of the most negative net GEX.
    pub min_gamma_strike: Option<f64>,
    /// Per contract, at the strikes kept in `gex_by_strike` (all of them under full detail).
    pub detailed: Vec<GexContract>,
    /// Per strike with the cumulative sum from the lowest listed strike (inside the strike
    /// window under compact detail; the running sum still counts the strikes left out).
    pub gex_by_strike: Vec<CumulativeGexStrike>,
    /// What compact detail trimmed of this entry's `gex_by_strike` (and so of `detailed`,
    /// which lists the contracts of the strikes kept); present when compact.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Window)]
    pub window: Option<Window>,
}

/// The levels traders watch; strikes and spot in dollars.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexKeyLevels {
    /// Strike of the largest call GEX.
    pub call_wall: Option<f64>,
    /// Call GEX there, dollars per 1 % move.
    pub call_wall_gex: Option<f64>,
    /// Strike of the largest |put GEX|.
    pub put_wall: Option<f64>,
    /// Put GEX there (≤ 0), dollars per 1 % move.
    pub put_wall_gex: Option<f64>,
    /// Strike of the largest |net GEX|.
    pub key_strike: Option<f64>,
    /// Net GEX there, dollars per 1 % move.
    pub key_strike_gex: Option<f64>,
    /// Max-pain strike.
    pub max_pain: Option<f64>,
    /// The spot the exposures were scaled with.
    pub spot: f64,
}

/// The regime in words.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexImplications {
    /// `SUPPRESSED` (net GEX > 0), `AMPLIFIED` (< 0) or `NEUTRAL`.
    #[schema(value_type = VolatilityRegimeSchema)]
    pub volatility_regime: VolatilityRegimeCode,
    /// `CALL_DOMINATED`, `PUT_DOMINATED` or `BALANCED` (from `gex_ratio`).
    #[schema(value_type = PositioningSchema)]
    pub positioning: PositioningCode,
    /// `BULLISH`, `BEARISH` or `NEUTRAL`.
    #[schema(value_type = DirectionalBiasSchema)]
    pub directional_bias: DirectionalBiasCode,
}

/// Unit strings of the payload's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct GexUnits {
    /// Unit of every GEX figure.
    pub gex: &'static str,
    /// Unit of `total_gex_billions`.
    pub total_gex_billions: &'static str,
    /// Unit of strikes and levels.
    pub levels: &'static str,
}

const GEX_UNITS: GexUnits = GexUnits {
    gex: "dollars per 1% move",
    total_gex_billions: "billions of dollars per 1% move",
    levels: "dollars",
};

/// The `/gex/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GexPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The spot the exposures were scaled with, dollars.
    pub stock_price: f64,
    /// True when summed across expirations; false when the top-level figures are one
    /// expiration's (`expiration`, or with `aggregate=false` the nearest one).
    pub aggregate: bool,
    /// The expiration of the top-level figures; null for the aggregate.
    #[schema(value_type = Option<IsoDate>)]
    pub expiration: Option<NaiveDate>,
    /// Call GEX, dollars per 1 % move.
    pub call_gex: f64,
    /// Put GEX (dealer-signed, ≤ 0), dollars per 1 % move.
    pub put_gex: f64,
    /// call + put, dollars per 1 % move.
    pub total_gex: f64,
    /// `total_gex` in billions.
    pub total_gex_billions: f64,
    /// Spot at which re-priced net GEX changes sign, dollars; null when it does not.
    pub flip_level: Option<f64>,
    /// Strike where cumulative net GEX (by strike) changes sign, dollars.
    pub gamma_flip: Option<f64>,
    /// True when there is no flip level.
    pub flip_degenerate: bool,
    /// Why there is no flip level (`no_exposure`, `always_positive`, `always_negative`).
    #[schema(value_type = Option<FlipDegeneracySchema>)]
    pub flip_degeneracy: Option<FlipDegeneracyCode>,
    /// Call GEX / |put GEX|.
    pub gex_ratio: Option<f64>,
    /// Strike of the most positive net GEX.
    pub max_gex_strike: Option<f64>,
    /// Strike of the most negative net GEX.
    pub min_gex_strike: Option<f64>,
    /// Expirations in the top-level figures.
    pub expirations_included: usize,
    /// Expirations with exposures in the snapshot.
    pub expirations_total: usize,
    /// The expirations in the top-level figures, ascending.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations_selected: Vec<NaiveDate>,
    /// The last of them (YYYY-MM-DD): the aggregate runs through this expiration.
    #[schema(value_type = Option<IsoDate>)]
    pub expirations_through: Option<NaiveDate>,
    /// Net GEX per strike.
    pub gex_by_strike: Vec<GexStrike>,
    /// Call, put and net GEX per strike.
    pub gex_profile: Vec<GexProfilePoint>,
    /// One entry per expiration broken out: every expiration for the aggregate and for
    /// `aggregate=false`, the requested one when `expiration` is given.
    pub by_expiration: Vec<GexExpiration>,
    /// Walls, key strike, max pain and spot.
    pub key_levels: GexKeyLevels,
    /// The regime read.
    pub implications: GexImplications,
    /// Unit strings.
    pub units: GexUnits,
    /// The instant the exposures were priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// What compact detail trimmed of the top-level `gex_by_strike` and `gex_profile` (the same
    /// strikes); each `by_expiration` entry carries the window of its own lists. Present when
    /// compact.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Window)]
    pub window: Option<Window>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
}

/// `GET /gex/{ticker}`.
pub async fn gex(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<GexPayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let expiration = params.date("expiration")?;
    let aggregate = params.bool("aggregate")?;
    let reader = state.market_data()?;
    let exposures = reader
        .exposures(&ticker)
        .ok_or_else(|| no_exposures(&ticker))?;
    let chain = reader.chain(&ticker);
    let selection = GexSelection::from_params(expiration, aggregate, &exposures)?;
    let per_side = window_request.strikes_per_side(window::GEX_STRIKES_PER_SIDE);
    let mut payload = gex_payload(
        &state,
        &ticker,
        &exposures,
        chain.as_deref(),
        selection,
        per_side,
        window_request.detail,
    )?;
    payload.clamped = params.clamp_notices();
    Ok(ok(payload))
}

/// Builds the GEX payload of `selection`; `per_side` strikes each side of spot are kept in
/// the strike lists (`None` keeps all). `chain` supplies the per-contract `detailed[]` lists
/// (empty without it). Freshness is that of the exposures' session ([`AppState::freshness_of`]).
pub(crate) fn gex_payload(
    state: &AppState,
    ticker: &Ticker,
    exposures: &ExposureView,
    chain: Option<&ChainView>,
    selection: GexSelection,
    per_side: Option<usize>,
    detail: Detail,
) -> Result<GexPayload, ApiError> {
    let (summary, broken_out) = selection.resolve(ticker, exposures)?;
    let expirations_total = exposures
        .summary
        .iter()
        .filter(|s| s.expiration.is_some())
        .count();
    let included: Vec<NaiveDate> = match selection.top_expiration() {
        Some(expiration) => vec![expiration],
        None => broken_out.iter().filter_map(|s| s.expiration).collect(),
    };
    let spot = summary.spot;
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| selection.includes(r))
        .collect();
    let profile = strike_profile(&rows);
    let (range, strike_window) =
        window::window_around_strike(&profile, |p| p.point.strike, spot, per_side, detail);
    let kept = &profile[range];
    let by_expiration = broken_out
        .iter()
        .map(|s| expiration_entry(s, exposures, chain, per_side, detail))
        .collect();
    let total_gex = summary.net.gamma;
    Ok(GexPayload {
        ticker: ticker.to_string(),
        stock_price: spot,
        aggregate: selection == GexSelection::Aggregate,
        expiration: selection.top_expiration(),
        call_gex: summary.call.gamma,
        put_gex: summary.put.gamma,
        total_gex,
        total_gex_billions: total_gex / USD_PER_BILLION,
        flip_level: summary.flip_level,
        gamma_flip: summary.gamma_flip,
        flip_degenerate: summary.flip_degenerate(),
        flip_degeneracy: summary.flip_degeneracy,
        gex_ratio: summary.gex_ratio,
        max_gex_strike: summary.max_gamma_strike,
        min_gex_strike: summary.min_gamma_strike,
        expirations_included: included.len(),
        expirations_total,
        expirations_through: included.last().copied(),
        expirations_selected: included,
        gex_by_strike: kept
            .iter()
            .map(|p| GexStrike {
                strike: p.point.strike,
                gex: p.point.net_gex,
                oi: p.oi,
            })
            .collect(),
        gex_profile: kept.iter().map(|p| p.point).collect(),
        by_expiration,
        key_levels: GexKeyLevels {
            call_wall: summary.call_wall,
            call_wall_gex: summary.call_wall_gex,
            put_wall: summary.put_wall,
            put_wall_gex: summary.put_wall_gex,
            key_strike: summary.key_gamma_strike,
            key_strike_gex: summary.key_gamma_gex,
            max_pain: summary.max_pain_strike,
            spot,
        },
        implications: GexImplications {
            volatility_regime: summary.volatility_regime,
            positioning: summary.positioning,
            directional_bias: summary.directional_bias,
        },
        units: GEX_UNITS,
        as_of: summary.as_of,
        freshness: state.freshness_of(summary.trade_date),
        window: (detail == Detail::Compact).then_some(strike_window),
        clamped: Vec::new(),
    })
}

fn expiration_entry(
    summary: &ExposureSummaryRow,
    exposures: &ExposureView,
    chain: Option<&ChainView>,
    per_side: Option<usize>,
    detail: Detail,
) -> GexExpiration {
    let expiration = summary.expiration.unwrap_or_default();
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    let profile = strike_profile(&rows);
    let mut cumulative = 0.0;
    let by_strike: Vec<CumulativeGexStrike> = profile
        .iter()
        .map(|p| {
            cumulative += p.point.net_gex;
            CumulativeGexStrike {
                strike: p.point.strike,
                gex: p.point.net_gex,
                cumulative_gex: cumulative,
                oi: p.oi,
            }
        })
        .collect();
    let (range, strike_window) =
        window::window_around_strike(&by_strike, |s| s.strike, summary.spot, per_side, detail);
    let kept = by_strike[range].to_vec();
    let strike_range = match (kept.first(), kept.last()) {
        (Some(first), Some(last)) => Some((first.strike, last.strike)),
        _ => None,
    };
    let detailed = chain
        .map(|c| contracts_of(c, expiration))
        .unwrap_or_default()
        .into_iter()
        .filter(|c| strike_range.is_some_and(|(lo, hi)| c.strike >= lo && c.strike <= hi))
        .collect();
    GexExpiration {
        expiration,
        dte: summary.dte,
        call_gex: summary.call.gamma,
        put_gex: summary.put.gamma,
        total_gex: summary.net.gamma,
        flip_level: summary.flip_level,
        max_gamma_strike: summary.max_gamma_strike,
        min_gamma_strike: summary.min_gamma_strike,
        detailed,
        gex_by_strike: kept,
        window: (detail == Detail::Compact).then_some(strike_window),
    }
}

/// The per-contract gamma and GEX of one expiration of the chain, by strike then type, for
/// contracts with Greeks (an IV) and open interest.
fn contracts_of(chain: &ChainView, expiration: NaiveDate) -> Vec<GexContract> {
    let mut out: Vec<GexContract> = contract_exposures(chain, expiration)
        .iter()
        .map(|e| GexContract {
            strike: e.strike,
            option_type: type_code(e.option_type),
            gamma: e.greeks.gamma,
            gex: e
                .exposure
                .get(optics_compute::exposure::ExposureKind::Gamma),
            oi: e.open_interest,
        })
        .collect();
    out.sort_by(|a, b| {
        a.strike
            .total_cmp(&b.strike)
            .then(a.option_type.cmp(b.option_type))
    });
    out
}
