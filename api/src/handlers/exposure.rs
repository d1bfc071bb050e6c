//! The dealer-exposure family: `/gex/{ticker}` (and later its relatives).
//!
//! The worker has already run the exposure math (`optics_compute::exposure`) and published
//! per-strike rows and per-expiration summaries ([`ExposureView`]); these handlers select and
//! shape them. The only on-demand computation is the per-contract `detailed[]` list of each
//! expiration, re-derived from the chain with `optics_compute::exposure::contract_exposure`
//! (the worker's own function, so the numbers agree with the published rows).
//!
//! Units: every GEX figure is dollars of dealer delta per 1 % move of the underlying
//! (γ·OI·100·S²·0.01, calls positive and puts negative under the dealer convention); strikes
//! and levels are dollars.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::{
    ContractExposure, ExposureKind, ExposureVector, GammaLevels, GreekLevels, KeyLevels,
    OpenInterestAtStrike, PriceLevel, StrikeExposure, StrikeLevel, contract_exposure,
    contracts_from_chain, cumulative_net, max_pain,
};
use optics_compute::pricing::OptionType;
use optics_schemas::{
    ChainRow, DirectionalBiasCode, ExposureRow, ExposureSummaryRow, FlipDegeneracyCode,
    PositioningCode, StrikeKey, VolatilityRegimeCode,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, latest_chain, no_chain};
use crate::freshness::Freshness;
use crate::market::{ChainView, ExposureView};
use crate::openapi::{
    DataSchema, DirectionalBiasSchema, FlipDegeneracySchema, IsoDate, PositioningSchema, Timestamp,
    VolatilityRegimeSchema,
};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{self, Detail, Window, WindowRequest};

/// Dollars per billion, for `total_gex_billions`.
const USD_PER_BILLION: f64 = 1e9;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<GexPayload>("gex"),
        DataSchema::named::<BatchPayload<GexPayload>>("gex-batch", "GexBatchPayload"),
        DataSchema::of::<GreeksExposurePayload>("greeks-exposure"),
        DataSchema::of::<CharmPayload>("charm"),
        DataSchema::of::<CrossIndexPayload>("cross-index-gex"),
        DataSchema::of::<ZeroDtePayload>("zero-dte"),
        DataSchema::of::<MaxPainPayload>("max-pain"),
        DataSchema::of::<ExpectedMovePayload>("expected-move"),
        DataSchema::named::<BatchPayload<ExpectedMovePayload>>(
            "expected-move-batch",
            "ExpectedMoveBatchPayload",
        ),
    ]
}

/// Which expirations a GEX (or Greek-exposure) request covers: the top-level figures and the
/// per-expiration breakdown (`by_expiration[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GexSelection {
    /// Every expiration summed (the summary's aggregate row); every expiration broken out.
    Aggregate,
    /// `expiration` given: that expiration alone, at the top level and in the breakdown.
    One(NaiveDate),
    /// `aggregate=false` without `expiration`: the nearest expiration that has not expired at
    /// the top level (one expiration only, not a sum), and every expiration broken out.
    EachNearestFirst(NaiveDate),
}

impl GexSelection {
    /// `expiration` wins when given (one expiration instead of the aggregate); otherwise
    /// `aggregate=false` picks the nearest expiration that has not expired for the top level.
    pub(crate) fn from_params(
        expiration: Option<NaiveDate>,
        aggregate: bool,
        exposures: &ExposureView,
    ) -> Result<Self, ApiError> {
        if let Some(expiration) = expiration {
            return Ok(Self::One(expiration));
        }
        if aggregate {
            return Ok(Self::Aggregate);
        }
        exposures
            .summary
            .iter()
            .filter(|s| s.dte.is_some_and(|d| d >= 0))
            .filter_map(|s| s.expiration)
            .min()
            .map(Self::EachNearestFirst)
            .ok_or_else(|| ApiError::upstream("No expiration with dealer exposures yet"))
    }

    /// The expiration of the top-level figures; `None` for the aggregate.
    pub(crate) fn top_expiration(self) -> Option<NaiveDate> {
        match self {
            Self::Aggregate => None,
            Self::One(expiration) | Self::EachNearestFirst(expiration) => Some(expiration),
        }
    }

    /// The summary row of the top-level figures and the per-expiration summaries broken out
    /// (ascending); 400 when a requested expiration is not listed.
    pub(crate) fn resolve<'a>(
        self,
        ticker: &Ticker,
        exposures: &'a ExposureView,
    ) -> Result<(&'a ExposureSummaryRow, Vec<&'a ExposureSummaryRow>), ApiError> {
        let mut listed: Vec<&ExposureSummaryRow> = exposures
            .summary
            .iter()
            .filter(|s| s.expiration.is_some())
            .collect();
        listed.sort_by_key(|s| s.expiration);
        let one = |expiration: NaiveDate| {
            listed
                .iter()
                .find(|s| s.expiration == Some(expiration))
                .copied()
                .ok_or_else(|| not_listed(ticker, expiration, &listed))
        };
        match self {
            Self::Aggregate => {
                let aggregate = exposures
                    .summary
                    .iter()
                    .find(|s| s.expiration.is_none())
                    .ok_or_else(|| no_exposures(ticker))?;
                Ok((aggregate, listed))
            }
            Self::One(expiration) => {
                let top = one(expiration)?;
                Ok((top, vec![top]))
            }
            Self::EachNearestFirst(expiration) => {
                let top = one(expiration)?;
                Ok((top, listed))
            }
        }
    }

    /// Whether `row` enters the top-level figures.
    fn includes(self, row: &ExposureRow) -> bool {
        self.top_expiration().is_none_or(|e| row.expiration == e)
    }
}

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

fn no_exposures(ticker: &Ticker) -> ApiError {
    ApiError::upstream(format!(
        "No dealer exposures for {ticker} yet (no priced chain); retry in a few seconds"
    ))
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

fn not_listed(ticker: &Ticker, expiration: NaiveDate, listed: &[&ExposureSummaryRow]) -> ApiError {
    let listed: Vec<String> = listed
        .iter()
        .filter_map(|s| s.expiration)
        .map(|e| e.to_string())
        .collect();
    ApiError::bad_request(format!(
        "expiration {expiration} is not a listed expiration of {ticker}; listed: {}",
        listed.join(", ")
    ))
}

/// One strike summed over the selected rows.
#[derive(Debug, Clone, Copy)]
struct StrikeSum {
    point: GexProfilePoint,
    oi: u64,
}

/// Call, put and net GEX per strike over `rows` (any expirations), ascending by strike.
fn strike_profile(rows: &[&ExposureRow]) -> Vec<StrikeSum> {
    let mut sorted: Vec<&ExposureRow> = rows.to_vec();
    sorted.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let mut out: Vec<StrikeSum> = Vec::new();
    for row in sorted {
        let oi = row.call_open_interest.saturating_add(row.put_open_interest);
        match out.last_mut() {
            Some(last) if last.point.strike == row.strike => {
                last.point.call_gex += row.call.gamma;
                last.point.put_gex += row.put.gamma;
                last.point.net_gex += row.net.gamma;
                last.oi = last.oi.saturating_add(oi);
            }
            _ => out.push(StrikeSum {
                point: GexProfilePoint {
                    strike: row.strike,
                    call_gex: row.call.gamma,
                    put_gex: row.put.gamma,
                    net_gex: row.net.gamma,
                },
                oi,
            }),
        }
    }
    out
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

/// The dealer exposures of every contract of one expiration of the chain that has Greeks (an
/// IV) and open interest, computed with the worker's function.
fn contract_exposures(chain: &ChainView, expiration: NaiveDate) -> Vec<ContractExposure> {
    let rows = chain.rows_of(expiration);
    let Ok((contracts, context)) = contracts_from_chain(rows) else {
        return Vec::new();
    };
    contracts
        .iter()
        .filter(|c| c.open_interest > 0)
        .filter_map(|c| contract_exposure(c, &context))
        .collect()
}

/// `C` or `P`.
pub(crate) fn type_code(option_type: OptionType) -> &'static str {
    match option_type {
        OptionType::Call => "C",
        OptionType::Put => "P",
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

/// The `/expected-move/{ticker}` payload (also each `results` entry of `/batch/expected-move`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpectedMovePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration priced.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i64,
    /// Spot, dollars.
    pub stock_price: f64,
    /// The at-the-money straddle mid, dollars: one expected absolute move.
    pub expected_move_dollars: f64,
    /// The move as a fraction of spot (0.0191 = 1.91 %), as the interface specifies (spec 2.7).
    pub expected_move_percent: f64,
    /// The same move in percentage points of spot (1.91 = 1.91 %), for convenience.
    pub expected_move_pct: f64,
    /// Spot + the move, dollars.
    pub upper_bound: f64,
    /// Spot − the move, dollars.
    pub lower_bound: f64,
    /// Straddle price (call mid + put mid) at the forward, dollars per share.
    pub straddle_price: f64,
    /// Call mid at the forward, dollars per share.
    pub call_price: f64,
    /// Put mid at the forward, dollars per share.
    pub put_price: f64,
    /// The expiration's forward the straddle is centred on, dollars.
    pub forward: f64,
    /// The listed strikes the straddle is read from (interpolated between them when they
    /// differ), dollars.
    pub atm_strikes: [f64; 2],
    /// The unit of each move figure.
    pub units: ExpectedMoveUnits,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// Unit strings of the expected-move figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct ExpectedMoveUnits {
    /// Unit of `expected_move_dollars`, the bounds and the prices.
    pub expected_move_dollars: &'static str,
    /// Unit of `expected_move_percent`.
    pub expected_move_percent: &'static str,
    /// Unit of `expected_move_pct`.
    pub expected_move_pct: &'static str,
}

const EXPECTED_MOVE_UNITS: ExpectedMoveUnits = ExpectedMoveUnits {
    expected_move_dollars: "dollars",
    expected_move_percent: "fraction of spot (0.0191 = 1.91%)",
    expected_move_pct: "percent of spot (1.91 = 1.91%)",
};

/// `GET /expected-move/{ticker}`: the ATM straddle of the requested expiration, or of the
/// nearest one after today (a same-day expiry is skipped unless asked for by date).
pub async fn expected_move(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<ExpectedMovePayload>>, ApiError> {
    let expiration = params.date("expiration")?;
    let chain = state
        .market_data()?
        .chain(&ticker)
        .ok_or_else(|| no_chain(&ticker))?;
    Ok(ok(expected_move_payload(
        &ticker,
        &chain,
        expiration,
        state.freshness_of(chain.trade_date),
    )?))
}

/// The expected move of `chain` (see [`expected_move`]).
pub(crate) fn expected_move_payload(
    ticker: &Ticker,
    chain: &ChainView,
    expiration: Option<NaiveDate>,
    freshness: Freshness,
) -> Result<ExpectedMovePayload, ApiError> {
    use optics_compute::expected_move::ExpectedMoveRequest;
    if let Some(expiration) = expiration
        && !chain.expirations.contains(&expiration)
    {
        let listed: Vec<String> = chain.expirations.iter().map(|e| e.to_string()).collect();
        return Err(ApiError::bad_request(format!(
            "expiration {expiration} is not a listed expiration of {ticker}; listed: {}",
            listed.join(", ")
        )));
    }
    let (contracts, context) = contracts_from_chain(&chain.rows)?;
    let request = ExpectedMoveRequest {
        expiration,
        include_same_day: false,
    };
    let moved = optics_compute::expected_move::expected_move(&contracts, &context, &request)?;
    Ok(ExpectedMovePayload {
        ticker: ticker.to_string(),
        expiration: moved.expiration,
        dte: moved.dte,
        stock_price: moved.spot,
        expected_move_dollars: moved.expected_move_dollars,
        expected_move_percent: moved.expected_move_fraction,
        expected_move_pct: 100.0 * moved.expected_move_fraction,
        upper_bound: moved.upper_bound,
        lower_bound: moved.lower_bound,
        straddle_price: moved.call_mid + moved.put_mid,
        call_price: moved.call_mid,
        put_price: moved.put_mid,
        forward: moved.forward,
        atm_strikes: [moved.lower_strike, moved.upper_strike],
        units: EXPECTED_MOVE_UNITS,
        as_of: chain.as_of,
        freshness,
    })
}

/// `requested` when the chain lists it (400 otherwise), else the nearest expiration on or
/// after the chain's trade date.
fn listed_or_nearest(
    ticker: &Ticker,
    chain: &ChainView,
    requested: Option<NaiveDate>,
) -> Result<NaiveDate, ApiError> {
    crate::handlers::flow::listed_or_nearest(ticker, chain, requested)
}

/// Max pain is "strong" within this distance of spot, percent.
const MAGNET_STRONG_WITHIN_PCT: f64 = 1.0;
/// … and "moderate" within this one; "weak" beyond.
const MAGNET_MODERATE_WITHIN_PCT: f64 = 3.0;

/// One strike of `all_strikes[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct PainAtStrike {
    /// Candidate settlement price (a listed strike), dollars.
    pub strike: f64,
    /// Σ call OI × max(strike − K, 0) × 100, dollars.
    pub call_pain: f64,
    /// Σ put OI × max(K − strike, 0) × 100, dollars.
    pub put_pain: f64,
    /// Both, dollars.
    pub total_pain: f64,
}

/// The `/max-pain/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MaxPainPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// The strike where option holders would be paid least at settlement, dollars.
    pub max_pain_strike: f64,
    /// What they would be paid there, dollars.
    pub max_pain_value: f64,
    /// max_pain_strike − stock_price, dollars.
    pub distance_from_spot: f64,
    /// The same as percent of stock_price.
    pub distance_pct: f64,
    /// `STRONG` (|distance_pct| ≤ 1), `MODERATE` (≤ 3) or `WEAK`.
    pub magnet_strength: &'static str,
    /// `UP` when max pain is above spot, `DOWN` below, `AT_SPOT` on it.
    pub likely_direction: &'static str,
    /// The rule behind `magnet_strength`.
    pub magnet_rule: &'static str,
    /// Σ call open interest of the expiration, contracts.
    pub total_call_oi: u64,
    /// Σ put open interest, contracts.
    pub total_put_oi: u64,
    /// Pain at every listed strike, ascending.
    pub all_strikes: Vec<PainAtStrike>,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /max-pain/{ticker}`: one expiration (default the nearest that has not expired).
pub async fn max_pain_of(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<MaxPainPayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let chain = latest_chain(&state, &ticker)?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let rows = chain.rows_of(expiration);
    let open_interest = open_interest_by_strike(rows);
    let spot = chain.stock_price();
    let pain = max_pain(&open_interest, spot).ok_or_else(|| {
        ApiError::upstream(format!(
            "No open interest on the {expiration} expiration of {ticker} to compute max pain"
        ))
    })?;
    let magnet_strength = match pain.distance_pct.abs() {
        d if d <= MAGNET_STRONG_WITHIN_PCT => "STRONG",
        d if d <= MAGNET_MODERATE_WITHIN_PCT => "MODERATE",
        _ => "WEAK",
    };
    let likely_direction = match pain.distance_from_spot {
        d if d > 0.0 => "UP",
        d if d < 0.0 => "DOWN",
        _ => "AT_SPOT",
    };
    Ok(ok(MaxPainPayload {
        ticker: ticker.to_string(),
        expiration,
        dte: rows.first().map_or(0, |r| r.dte),
        stock_price: spot,
        max_pain_strike: pain.strike,
        max_pain_value: pain.total_pain_usd,
        distance_from_spot: pain.distance_from_spot,
        distance_pct: pain.distance_pct,
        magnet_strength,
        likely_direction,
        magnet_rule: "STRONG within 1% of spot, MODERATE within 3%, WEAK beyond; a pull toward \
                      max pain into expiration is a tendency, not a forecast",
        total_call_oi: open_interest.iter().map(|o| o.call).sum(),
        total_put_oi: open_interest.iter().map(|o| o.put).sum(),
        all_strikes: pain
            .pain_by_strike
            .iter()
            .map(|p| PainAtStrike {
                strike: p.strike,
                call_pain: p.call_pain_usd,
                put_pain: p.put_pain_usd,
                total_pain: p.total_pain_usd,
            })
            .collect(),
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
    }))
}

/// One strike of `charm_by_strike[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct CharmAtStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Net dealer charm exposure, delta shares per day.
    pub charm_exposure: f64,
    /// Call + put open interest, contracts.
    pub oi: u64,
}

/// One contract of the charm `detailed[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct CharmContract {
    /// Strike, dollars.
    pub strike: f64,
    /// `C` or `P`.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// Per-share charm, delta per calendar day.
    pub charm: f64,
    /// Dealer-signed charm exposure of the open interest, delta shares per day.
    pub charm_exposure: f64,
    /// Implied volatility, percentage points.
    pub iv: Option<f64>,
    /// Open interest, contracts.
    pub oi: u64,
}

/// The `/charm/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CharmPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The spot the exposures were scaled with, dollars.
    pub stock_price: f64,
    /// Call charm exposure, delta shares per day.
    pub call_charm: f64,
    /// Put charm exposure (dealer-signed), delta shares per day.
    pub put_charm: f64,
    /// call + put: the shares of delta dealers gain (+) or lose per day passing.
    pub total_charm: f64,
    /// Per strike, ascending.
    pub charm_by_strike: Vec<CharmAtStrike>,
    /// Per contract with an IV and open interest.
    pub detailed: Vec<CharmContract>,
    /// `LIVE` while the exposures' session is open, `EOD` otherwise (an earlier session's too).
    pub data_status: crate::freshness::DataFreshness,
    /// Unit of the charm figures.
    pub units: &'static str,
    /// Units of `iv`.
    pub iv_units: &'static str,
    /// The instant the exposures were priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
}

/// `GET /charm/{ticker}`: one expiration (default the nearest that has not expired).
pub async fn charm(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<CharmPayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let reader = state.market_data()?;
    let chain = reader.chain(&ticker).ok_or_else(|| no_chain(&ticker))?;
    let exposures = reader
        .exposures(&ticker)
        .ok_or_else(|| no_exposures(&ticker))?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let summary = exposures
        .summary
        .iter()
        .find(|s| s.expiration == Some(expiration))
        .ok_or_else(|| {
            ApiError::upstream(format!(
                "No dealer exposures for the {expiration} expiration of {ticker} yet"
            ))
        })?;
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    let mut by_strike: Vec<CharmAtStrike> = Vec::with_capacity(rows.len());
    for row in &rows {
        let oi = row.call_open_interest.saturating_add(row.put_open_interest);
        match by_strike.last_mut() {
            Some(last) if last.strike == row.strike => {
                last.charm_exposure += row.net.charm;
                last.oi = last.oi.saturating_add(oi);
            }
            _ => by_strike.push(CharmAtStrike {
                strike: row.strike,
                charm_exposure: row.net.charm,
                oi,
            }),
        }
    }
    let mut detailed: Vec<CharmContract> = contract_exposures(&chain, expiration)
        .iter()
        .map(|e| CharmContract {
            strike: e.strike,
            option_type: type_code(e.option_type),
            charm: e.greeks.charm,
            charm_exposure: e.exposure.get(ExposureKind::Charm),
            iv: e.iv.map(|iv| 100.0 * iv),
            oi: e.open_interest,
        })
        .collect();
    detailed.sort_by(|a, b| {
        a.strike
            .total_cmp(&b.strike)
            .then(a.option_type.cmp(b.option_type))
    });
    Ok(ok(CharmPayload {
        ticker: ticker.to_string(),
        expiration,
        dte: summary.dte.unwrap_or(0),
        stock_price: summary.spot,
        call_charm: summary.call.charm,
        put_charm: summary.put.charm,
        total_charm: summary.net.charm,
        charm_by_strike: by_strike,
        detailed,
        data_status: state.freshness_of(summary.trade_date).data_freshness,
        units: "delta shares per day",
        iv_units: "percent",
        as_of: summary.as_of,
    }))
}

/// The `/batch/gex` and `/batch/expected-move` payload: one result or one error per symbol.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BatchPayload<T> {
    /// The symbols asked for (upper case, duplicates dropped), in request order.
    pub tickers: Vec<String>,
    /// How many symbols were asked for.
    pub requested: usize,
    /// How many answered.
    pub succeeded: usize,
    /// How many did not.
    pub failed: usize,
    /// The payload of each symbol that answered, by symbol.
    pub results: BTreeMap<String, T>,
    /// Why each other symbol is missing, by symbol.
    pub errors: BTreeMap<String, String>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
}

/// Runs `one` for every symbol of `tickers`: a symbol outside the coverage universe fails the
/// whole call (404 naming it); a symbol the data cannot answer lands in `errors`; 424 when none
/// answers.
fn batch<T>(
    state: &AppState,
    tickers: &[Ticker],
    mut one: impl FnMut(&Ticker) -> Result<T, ApiError>,
) -> Result<BatchPayload<T>, ApiError> {
    let covered: Vec<Ticker> = tickers
        .iter()
        .map(|t| state.covered_ticker(t.as_str()))
        .collect::<Result<_, _>>()?;
    let mut results = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for ticker in &covered {
        match one(ticker) {
            Ok(payload) => {
                results.insert(ticker.to_string(), payload);
            }
            Err(error) => {
                errors.insert(ticker.to_string(), error.body().error);
            }
        }
    }
    if results.is_empty() {
        let reasons: Vec<String> = errors.iter().map(|(t, e)| format!("{t}: {e}")).collect();
        return Err(ApiError::upstream(format!(
            "No symbol in the batch returned data ({})",
            reasons.join("; ")
        )));
    }
    Ok(BatchPayload {
        tickers: covered.iter().map(ToString::to_string).collect(),
        requested: covered.len(),
        succeeded: results.len(),
        failed: errors.len(),
        results,
        errors,
        clamped: Vec::new(),
    })
}

/// `/batch/gex` under compact detail: strikes kept each side of spot unless `strikes_around`
/// says otherwise.
const BATCH_GEX_STRIKES_PER_SIDE: usize = 10;

/// `GET /batch/gex?tickers=…`: the `/gex` payload per symbol.
pub async fn batch_gex(
    State(state): State<AppState>,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<BatchPayload<GexPayload>>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let expiration = params.date("expiration")?;
    let aggregate = params.bool("aggregate")?;
    let per_side = window_request.strikes_per_side(BATCH_GEX_STRIKES_PER_SIDE);
    let reader = state.market_data()?.clone();
    let payload = batch(&state, &tickers, |ticker| {
        let exposures = reader
            .exposures(ticker)
            .ok_or_else(|| no_exposures(ticker))?;
        let chain = reader.chain(ticker);
        let selection = GexSelection::from_params(expiration, aggregate, &exposures)?;
        gex_payload(
            &state,
            ticker,
            &exposures,
            chain.as_deref(),
            selection,
            per_side,
            window_request.detail,
        )
    })?;
    Ok(ok(BatchPayload {
        clamped: params.clamp_notices(),
        ..payload
    }))
}

/// `GET /batch/expected-move?tickers=…`: the `/expected-move` payload per symbol.
pub async fn batch_expected_move(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<BatchPayload<ExpectedMovePayload>>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let expiration = params.date("expiration")?;
    let reader = state.market_data()?.clone();
    let payload = batch(&state, &tickers, |ticker| {
        let chain = reader.chain(ticker).ok_or_else(|| no_chain(ticker))?;
        expected_move_payload(
            ticker,
            &chain,
            expiration,
            state.freshness_of(chain.trade_date),
        )
    })?;
    Ok(ok(payload))
}

/// One row of the cross-index `comparison` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct IndexComparison {
    /// Net dealer GEX, dollars per 1 % move.
    pub total_gex: f64,
    /// total_gex / (Σ open interest × 100 × spot): GEX per dollar of option notional, so
    /// indices of different size compare.
    pub normalized_gex: Option<f64>,
    /// Re-priced flip level, dollars.
    pub flip_level: Option<f64>,
    /// Spot, dollars.
    pub stock_price: f64,
}

/// The `/cross-index-gex` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CrossIndexPayload {
    /// The side-by-side table, by symbol.
    pub comparison: BTreeMap<String, IndexComparison>,
    /// The `/gex` payload (aggregate) of each symbol.
    pub indices: BTreeMap<String, GexPayload>,
    /// Symbols that could not be answered, with the reason.
    pub errors: BTreeMap<String, String>,
    /// What `normalized_gex` divides by.
    pub normalization: &'static str,
}

/// `GET /cross-index-gex`: aggregate GEX of each index ETF side by side.
pub async fn cross_index_gex(
    State(state): State<AppState>,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<CrossIndexPayload>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let per_side = window_request.strikes_per_side(window::GEX_STRIKES_PER_SIDE);
    let reader = state.market_data()?.clone();
    let mut comparison = BTreeMap::new();
    let batch = batch(&state, &tickers, |ticker| {
        let exposures = reader
            .exposures(ticker)
            .ok_or_else(|| no_exposures(ticker))?;
        let chain = reader.chain(ticker);
        let payload = gex_payload(
            &state,
            ticker,
            &exposures,
            chain.as_deref(),
            GexSelection::Aggregate,
            per_side,
            window_request.detail,
        )?;
        let open_interest: u64 = exposures
            .summary
            .iter()
            .find(|s| s.expiration.is_none())
            .map_or(0, |s| {
                s.call_open_interest.saturating_add(s.put_open_interest)
            });
        let notional = open_interest as f64
            * optics_compute::exposure::CONTRACT_MULTIPLIER
            * payload.stock_price;
        comparison.insert(
            ticker.to_string(),
            IndexComparison {
                total_gex: payload.total_gex,
                normalized_gex: (notional > 0.0).then(|| payload.total_gex / notional),
                flip_level: payload.flip_level,
                stock_price: payload.stock_price,
            },
        );
        Ok(payload)
    })?;
    Ok(ok(CrossIndexPayload {
        comparison,
        indices: batch.results,
        errors: batch.errors,
        normalization: "total_gex / (open interest x 100 x spot): dollars of GEX per 1% move \
                        per dollar of option notional",
    }))
}

/// One strike of a Greek's `profile[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GreekProfilePoint {
    /// Strike, dollars.
    pub strike: f64,
    /// Call exposure (the Greek's unit).
    pub call: f64,
    /// Put exposure, dealer-signed.
    pub put: f64,
    /// call + put.
    pub net: f64,
}

/// The gamma-only fields of `exposures.gamma`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GammaExtras {
    /// Re-priced flip level, dollars; null when degenerate.
    pub flip_level: Option<f64>,
    /// total in billions.
    pub gex_billions: f64,
    /// Call GEX weighted by |delta|, dollars per 1 % move.
    pub delta_adj_call_total: f64,
    /// Put GEX weighted by |delta|.
    pub delta_adj_put_total: f64,
    /// call + put.
    pub delta_adj_total: f64,
    /// Re-priced flip level of delta-adjusted GEX, dollars.
    pub delta_adj_flip_level: Option<f64>,
    /// Delta-adjusted GEX per strike.
    pub delta_adj_profile: Vec<GreekProfilePoint>,
}

/// `exposures.<greek>`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreekExposure {
    /// Σ call exposure.
    pub call_total: f64,
    /// Σ put exposure (dealer-signed).
    pub put_total: f64,
    /// call + put.
    pub total: f64,
    /// The unit of every figure of this Greek.
    pub unit: &'static str,
    /// Per strike, ascending.
    pub profile: Vec<GreekProfilePoint>,
    /// Gamma only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub gamma: Option<GammaExtras>,
}

/// A strike and the exposure there, with its distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ExposureLevel {
    /// Strike, dollars.
    pub strike: f64,
    /// Dealer-signed exposure there (the Greek's unit).
    pub exposure: f64,
    /// (strike − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<StrikeLevel> for ExposureLevel {
    fn from(level: StrikeLevel) -> Self {
        Self {
            strike: level.strike,
            exposure: level.exposure,
            distance_pct: level.distance_pct,
        }
    }
}

/// A gamma level: strike, GEX there, distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexLevel {
    /// Strike, dollars.
    pub strike: f64,
    /// GEX there, dollars per 1 % move.
    pub gex: f64,
    /// (strike − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<StrikeLevel> for GexLevel {
    fn from(level: StrikeLevel) -> Self {
        Self {
            strike: level.strike,
            gex: level.exposure,
            distance_pct: level.distance_pct,
        }
    }
}

/// A price level with its distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct PricePoint {
    /// Price, dollars.
    pub strike: f64,
    /// (price − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<PriceLevel> for PricePoint {
    fn from(level: PriceLevel) -> Self {
        Self {
            strike: level.price,
            distance_pct: level.distance_pct,
        }
    }
}

/// `greek_levels.<greek>`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GreekLevelsPayload {
    /// Largest |net exposure|.
    pub key_strike: Option<ExposureLevel>,
    /// Largest |call exposure|.
    pub max_call: Option<ExposureLevel>,
    /// Largest |put exposure|.
    pub max_put: Option<ExposureLevel>,
    /// |call total| / |put total|.
    pub ratio: Option<f64>,
    /// Where cumulative net exposure by strike changes sign (nearest spot).
    pub flip_level: Option<PricePoint>,
}

/// `key_levels` of `/greeks-exposure`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct NamedLevels {
    /// Largest call GEX.
    pub call_wall: Option<GexLevel>,
    /// Largest |put GEX|.
    pub put_wall: Option<GexLevel>,
    /// Largest |net GEX|.
    pub key_gamma_strike: Option<GexLevel>,
    /// Largest |net charm exposure|.
    pub charm_pressure: Option<ExposureLevel>,
    /// At or above spot: largest |net vanna exposure|.
    pub vanna_resistance: Option<ExposureLevel>,
    /// Below spot: largest |net vanna exposure|.
    pub vanna_support: Option<ExposureLevel>,
    /// The listed strike nearest the re-priced flip level.
    pub vol_trigger: Option<PricePoint>,
}

/// The `/greeks-exposure/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreeksExposurePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The spot the exposures were scaled with, dollars.
    pub stock_price: f64,
    /// True when summed across expirations; false when the top-level figures are one
    /// expiration's (`expiration`, or with `aggregate=false` the nearest one).
    pub aggregate: bool,
    /// The expirations in the top-level figures.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations: Vec<NaiveDate>,
    /// How many.
    pub expirations_included: usize,
    /// The strikes of the profiles, ascending.
    pub strikes: Vec<f64>,
    /// Totals and profiles per Greek.
    pub exposures: BTreeMap<&'static str, GreekExposure>,
    /// Key strikes per Greek (gamma's are in `key_levels`).
    pub greek_levels: BTreeMap<&'static str, GreekLevelsPayload>,
    /// Named levels with distance from spot.
    pub key_levels: NamedLevels,
    /// With `aggregate=false`: one block per expiration selected (every listed one, or the
    /// one `expiration` names), each with every Greek's totals and profile. Absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_expiration: Vec<GreeksExpiration>,
    /// Unit string per Greek.
    pub units: BTreeMap<&'static str, &'static str>,
    /// The instant the exposures were priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// One expiration of the `/greeks-exposure` `by_expiration[]` breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreeksExpiration {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: Option<i32>,
    /// The strikes of its profiles, ascending.
    pub strikes: Vec<f64>,
    /// Totals and profiles per Greek, as the top-level `exposures` (gamma with its flip
    /// levels and delta-adjusted figures).
    pub exposures: BTreeMap<&'static str, GreekExposure>,
}

/// The strike profile of `rows` (any expirations) in the compute crate's type, ascending.
fn strike_exposures(rows: &[&ExposureRow]) -> Vec<StrikeExposure> {
    let mut sorted: Vec<&ExposureRow> = rows.to_vec();
    sorted.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let mut out: Vec<StrikeExposure> = Vec::new();
    for row in sorted {
        let (call, put) = (
            ExposureVector(row.call.to_array()),
            ExposureVector(row.put.to_array()),
        );
        match out.last_mut() {
            Some(last) if last.strike == row.strike => {
                last.call += call;
                last.put += put;
                last.call_open_interest = last
                    .call_open_interest
                    .saturating_add(row.call_open_interest);
                last.put_open_interest =
                    last.put_open_interest.saturating_add(row.put_open_interest);
            }
            _ => out.push(StrikeExposure {
                strike: row.strike,
                call_open_interest: row.call_open_interest,
                put_open_interest: row.put_open_interest,
                call,
                put,
            }),
        }
    }
    out
}

/// Every Greek's totals and strike profile (`exposures.<greek>`) over `strikes`, with the totals
/// and flip levels of `summary`.
fn greek_exposures(
    strikes: &[StrikeExposure],
    summary: &ExposureSummaryRow,
) -> BTreeMap<&'static str, GreekExposure> {
    let call_totals = ExposureVector(summary.call.to_array());
    let put_totals = ExposureVector(summary.put.to_array());
    let profile_of = |kind: ExposureKind| -> Vec<GreekProfilePoint> {
        strikes
            .iter()
            .map(|s| GreekProfilePoint {
                strike: s.strike,
                call: s.call[kind],
                put: s.put[kind],
                net: s.call[kind] + s.put[kind],
            })
            .collect()
    };
    let mut by_greek = BTreeMap::new();
    for kind in ExposureKind::ALL {
        if kind == ExposureKind::DeltaAdjustedGamma {
            continue; // reported inside `gamma`
        }
        let total = call_totals[kind] + put_totals[kind];
        let gamma = (kind == ExposureKind::Gamma).then(|| {
            let adjusted = ExposureKind::DeltaAdjustedGamma;
            GammaExtras {
                flip_level: summary.flip_level,
                gex_billions: total / USD_PER_BILLION,
                delta_adj_call_total: call_totals[adjusted],
                delta_adj_put_total: put_totals[adjusted],
                delta_adj_total: call_totals[adjusted] + put_totals[adjusted],
                delta_adj_flip_level: summary.delta_adjusted_flip_level,
                delta_adj_profile: profile_of(adjusted),
            }
        });
        by_greek.insert(
            kind.name(),
            GreekExposure {
                call_total: call_totals[kind],
                put_total: put_totals[kind],
                total,
                unit: kind.unit(),
                profile: profile_of(kind),
                gamma,
            },
        );
    }
    by_greek
}

/// `GET /greeks-exposure/{ticker}`: every Greek's dealer exposure, aggregate or one expiration;
/// with `aggregate=false` also broken out per expiration.
pub async fn greeks_exposure(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<GreeksExposurePayload>>, ApiError> {
    let expiration = params.date("expiration")?;
    let aggregate = params.bool("aggregate")?;
    let exposures = state
        .market_data()?
        .exposures(&ticker)
        .ok_or_else(|| no_exposures(&ticker))?;
    let selection = GexSelection::from_params(expiration, aggregate, &exposures)?;
    let (summary, broken_out) = selection.resolve(&ticker, &exposures)?;
    let included: Vec<NaiveDate> = match selection.top_expiration() {
        Some(expiration) => vec![expiration],
        None => broken_out.iter().filter_map(|s| s.expiration).collect(),
    };
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| selection.includes(r))
        .collect();
    let spot = summary.spot;
    let strikes = strike_exposures(&rows);
    let cumulative = cumulative_net(&strikes);
    let call_totals = ExposureVector(summary.call.to_array());
    let put_totals = ExposureVector(summary.put.to_array());
    let mut greek_levels = BTreeMap::new();
    let mut units = BTreeMap::new();
    for kind in ExposureKind::ALL {
        if kind == ExposureKind::DeltaAdjustedGamma {
            continue; // reported inside `gamma`
        }
        units.insert(kind.name(), kind.unit());
        if kind != ExposureKind::Gamma {
            let levels = GreekLevels::from_profile(
                kind,
                &strikes,
                &cumulative,
                call_totals[kind],
                put_totals[kind],
                spot,
            );
            greek_levels.insert(
                kind.name(),
                GreekLevelsPayload {
                    key_strike: levels.key_strike.map(Into::into),
                    max_call: levels.max_call.map(Into::into),
                    max_put: levels.max_put.map(Into::into),
                    ratio: levels.ratio,
                    flip_level: levels.flip_level.map(Into::into),
                },
            );
        }
    }
    // The breakdown is asked for with aggregate=false only: it repeats every profile per
    // expiration, which the aggregate read does not need.
    let by_expiration = if aggregate {
        Vec::new()
    } else {
        broken_out
            .iter()
            .map(|s| {
                let rows: Vec<&ExposureRow> = exposures
                    .rows
                    .iter()
                    .filter(|r| Some(r.expiration) == s.expiration)
                    .collect();
                let strikes = strike_exposures(&rows);
                GreeksExpiration {
                    expiration: s.expiration.unwrap_or_default(),
                    dte: s.dte,
                    strikes: strikes.iter().map(|k| k.strike).collect(),
                    exposures: greek_exposures(&strikes, s),
                }
            })
            .collect()
    };
    let gamma_levels = GammaLevels::from_profile(&strikes, spot);
    let key = KeyLevels::from_profile(&strikes, &gamma_levels, summary.flip_level, spot);
    Ok(ok(GreeksExposurePayload {
        ticker: ticker.to_string(),
        stock_price: spot,
        aggregate: selection == GexSelection::Aggregate,
        expirations_included: included.len(),
        expirations: included,
        strikes: strikes.iter().map(|s| s.strike).collect(),
        exposures: greek_exposures(&strikes, summary),
        greek_levels,
        key_levels: NamedLevels {
            call_wall: key.call_wall.map(Into::into),
            put_wall: key.put_wall.map(Into::into),
            key_gamma_strike: key.key_gamma_strike.map(Into::into),
            charm_pressure: key.charm_pressure.map(Into::into),
            vanna_resistance: key.vanna_resistance.map(Into::into),
            vanna_support: key.vanna_support.map(Into::into),
            vol_trigger: key.vol_trigger.map(Into::into),
        },
        by_expiration,
        units,
        as_of: summary.as_of,
        freshness: state.freshness_of(summary.trade_date),
    }))
}

/// One strike of the zero-dte `by_strike[]`: dealer gamma and the per-share Greeks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Call GEX, dollars per 1 % move.
    pub call_gex: f64,
    /// Put GEX (dealer-signed), dollars per 1 % move.
    pub put_gex: f64,
    /// call + put.
    pub net_gex: f64,
    /// Call open interest, contracts.
    pub call_oi: u64,
    /// Put open interest, contracts.
    pub put_oi: u64,
    /// Per-share call gamma (per $1).
    pub call_gamma: Option<f64>,
    /// Per-share put gamma (per $1).
    pub put_gamma: Option<f64>,
    /// Call delta.
    pub call_delta: Option<f64>,
    /// Put delta.
    pub put_delta: Option<f64>,
}

/// One strike of the zero-dte `chain_table[]`: quotes, IVs and volume.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteQuote {
    /// Strike, dollars.
    pub strike: f64,
    /// Call bid, dollars per share.
    pub call_bid: Option<f64>,
    /// Call ask.
    pub call_ask: Option<f64>,
    /// Call mid.
    pub call_mid: Option<f64>,
    /// Call IV, percentage points.
    pub call_iv: Option<f64>,
    /// Call volume, contracts.
    pub call_volume: Option<u64>,
    /// Put bid, dollars per share.
    pub put_bid: Option<f64>,
    /// Put ask.
    pub put_ask: Option<f64>,
    /// Put mid.
    pub put_mid: Option<f64>,
    /// Put IV, percentage points.
    pub put_iv: Option<f64>,
    /// Put volume, contracts.
    pub put_volume: Option<u64>,
    /// Call theta, dollars per share per calendar day.
    pub call_theta: Option<f64>,
    /// Put theta.
    pub put_theta: Option<f64>,
}

/// The priced move of the session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteMetrics {
    /// The ATM straddle in percentage points of spot (1.91 = 1.91 %).
    pub expected_move: f64,
    /// The ATM straddle, dollars.
    pub expected_move_dollars: f64,
    /// Mean of the call and put IV at the listed strike nearest the forward, percentage points.
    pub atm_iv: Option<f64>,
    /// That strike, dollars.
    pub atm_strike: Option<f64>,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// Hours (calendar) to the expiration day's close (16:00 New York, 13:00 on early-close days).
    pub hours_to_expiry: f64,
}

/// The dealer-gamma read of the expiration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteGammaRegime {
    /// `POSITIVE_GAMMA` (net GEX > 0: hedging dampens moves), `NEGATIVE_GAMMA` or `NEUTRAL`.
    pub regime: &'static str,
    /// Net GEX of the expiration, dollars per 1 % move.
    pub total_net_gex: f64,
    /// Re-priced flip level, dollars.
    pub flip_level: Option<f64>,
    /// `SUPPRESSED`, `AMPLIFIED` or `NEUTRAL`.
    #[schema(value_type = VolatilityRegimeSchema)]
    pub volatility_regime: VolatilityRegimeCode,
}

/// Levels for the session, dollars.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteLevels {
    /// Largest call GEX.
    pub call_wall: Option<f64>,
    /// Largest |put GEX|.
    pub put_wall: Option<f64>,
    /// Max-pain strike.
    pub max_pain: Option<f64>,
    /// Spot + the expected move.
    pub em_upper: f64,
    /// Spot − the expected move.
    pub em_lower: f64,
}

/// One hour of `theta_burn.hourly_decay[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HourlyDecay {
    /// The end of the hour.
    #[schema(value_type = Timestamp)]
    pub hour_ending: DateTime<Utc>,
    /// Hours left to expiry at its end.
    pub hours_to_expiry: f64,
    /// Model value of the ATM straddle then, dollars per share.
    pub straddle_value: f64,
    /// Value lost during the hour, dollars per share.
    pub decay: f64,
    /// Value lost so far as percent of the value now.
    pub cumulative_decay_pct: f64,
}

/// How the ATM straddle decays to expiry with spot, forward and IV held.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ThetaBurn {
    /// Model value of the ATM straddle now (Black-76 on the forward at the ATM IV), dollars per
    /// share.
    pub straddle_value_now: f64,
    /// One entry per remaining hour (the last may be partial).
    pub hourly_decay: Vec<HourlyDecay>,
    /// What is held fixed.
    pub basis: &'static str,
}

/// The skew read: 25-delta risk reversal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct SkewSignal {
    /// IV of the put nearest −0.25 delta minus IV of the call nearest +0.25 delta,
    /// percentage points.
    pub risk_reversal_25d: f64,
    /// `PUTS_RICH` above +1 point, `CALLS_RICH` below −1, `FLAT` in between.
    pub signal: &'static str,
}

/// How the scored read of `/zero-dte` was computed (`optics_compute::zero_dte`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScoredRead {
    /// Stored `vol_daily` sessions read (the most recent on or before the chain's session).
    pub sessions_read: usize,
    /// Sessions scored: a session after a stored one with a front ATM IV, at most
    /// `window_sessions` of the most recent.
    pub sessions_scored: usize,
    /// The most scored sessions used.
    pub window_sessions: usize,
    /// Fewer scored sessions give no `em_hit_rate` or `edge_score`.
    pub min_sessions: usize,
    /// Scored sessions whose move stayed within the expected move.
    pub hits: Option<usize>,
    /// The first scored session.
    #[schema(value_type = Option<IsoDate>)]
    pub first_session: Option<NaiveDate>,
    /// The last scored session.
    #[schema(value_type = Option<IsoDate>)]
    pub last_session: Option<NaiveDate>,
    /// Root mean square of the expected moves, percent of the previous close.
    pub implied_rms_move_pct: Option<f64>,
    /// Root mean square of the realized moves, percent of the previous close.
    pub realized_rms_move_pct: Option<f64>,
    /// implied / realized root-mean-square move (1 = priced fairly).
    pub implied_realized_ratio: Option<f64>,
    /// HAR realized volatility of the stored closes, percentage points.
    pub har_realized_vol_pct: Option<f64>,
    /// The ATM IV blended into `iv_forecast` (`metrics.atm_iv`), percentage points.
    pub atm_iv_pct: Option<f64>,
    /// Why `em_hit_rate` is null.
    pub em_hit_rate_reason: Option<String>,
    /// Why `edge_score` is null.
    pub edge_score_reason: Option<String>,
    /// Why `iv_forecast` is null.
    pub iv_forecast_reason: Option<String>,
    /// How `em_hit_rate` is computed.
    pub em_hit_rate_rule: &'static str,
    /// How `edge_score` is computed.
    pub edge_score_rule: &'static str,
    /// How `iv_forecast` is computed.
    pub iv_forecast_rule: &'static str,
}

const EM_HIT_RATE_RULE: &str = "percent of the last 60 scored sessions (at least 10) whose \
    previous-close-to-close move stayed within the expected move close x front ATM IV x \
    sqrt(calendar days / 365) priced at the previous close; a session is scored when the stored \
    session before it, at most 5 calendar days earlier, has a front ATM IV";
const EDGE_SCORE_RULE: &str = "100 x I / (I + R) over the scored sessions, I the mean squared \
    expected move and R the mean squared realized move, each as a fraction of the previous \
    close: 50 = priced fairly, above 50 options priced more movement than followed, below 50 \
    less";
const IV_FORECAST_RULE: &str = "0.5 x ATM IV + 0.5 x HAR realized vol, percentage points; HAR \
    = 100 x sqrt(252 x (0.2 RV1 + 0.3 RV5 + 0.5 RV22)), RVn the mean squared daily log return \
    of the last n stored closes (fixed weights, not fitted)";

/// The scored read of `ticker` from its stored sessions through `through`; a history that
/// cannot be read leaves every figure null with the reason (the rest of the payload stands).
async fn scored_read(
    reader: &dyn crate::state::MarketDataReader,
    ticker: &Ticker,
    through: NaiveDate,
    atm_iv_pct: Option<f64>,
) -> (Option<f64>, Option<f64>, Option<f64>, ScoredRead) {
    use optics_compute::zero_dte::{
        HAR_SESSIONS, MIN_SCORED_SESSIONS, SCORED_WINDOW_SESSIONS, SessionClose, har_realized_vol,
        iv_forecast_pct, move_score, scored_moves,
    };
    let sessions_wanted = (SCORED_WINDOW_SESSIONS + 1).max(HAR_SESSIONS[2] + 1);
    let mut read = ScoredRead {
        sessions_read: 0,
        sessions_scored: 0,
        window_sessions: SCORED_WINDOW_SESSIONS,
        min_sessions: MIN_SCORED_SESSIONS,
        hits: None,
        first_session: None,
        last_session: None,
        implied_rms_move_pct: None,
        realized_rms_move_pct: None,
        implied_realized_ratio: None,
        har_realized_vol_pct: None,
        atm_iv_pct,
        em_hit_rate_reason: None,
        edge_score_reason: None,
        iv_forecast_reason: None,
        em_hit_rate_rule: EM_HIT_RATE_RULE,
        edge_score_rule: EDGE_SCORE_RULE,
        iv_forecast_rule: IV_FORECAST_RULE,
    };
    let rows = match reader.vol_history(ticker, through, sessions_wanted).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(%ticker, error = %e, "vol_daily history unreadable for zero-dte");
            let reason = format!("the stored session history of {ticker} could not be read");
            read.em_hit_rate_reason = Some(reason.clone());
            read.edge_score_reason = Some(reason.clone());
            read.iv_forecast_reason = Some(reason);
            return (None, None, None, read);
        }
    };
    read.sessions_read = rows.len();
    let history: Vec<SessionClose> = rows
        .iter()
        .map(|r| SessionClose {
            trade_date: r.trade_date,
            close: r.close,
            front_atm_iv_pct: r.front_atm_iv_pct,
        })
        .collect();
    let score = scored_moves(&history, SCORED_WINDOW_SESSIONS).and_then(|moves| {
        read.sessions_scored = moves.len();
        move_score(&moves, MIN_SCORED_SESSIONS)
    });
    let (em_hit_rate, edge_score) = match score {
        Ok(score) => {
            read.hits = Some(score.hits);
            read.first_session = Some(score.first);
            read.last_session = Some(score.last);
            read.implied_rms_move_pct = Some(score.implied_rms_move_pct);
            read.realized_rms_move_pct = Some(score.realized_rms_move_pct);
            read.implied_realized_ratio = score.implied_realized_ratio;
            (Some(score.hit_rate_pct), Some(score.edge_score))
        }
        Err(e) => {
            read.em_hit_rate_reason = Some(e.to_string());
            read.edge_score_reason = Some(e.to_string());
            (None, None)
        }
    };
    let forecast = har_realized_vol(&history).and_then(|har| {
        read.har_realized_vol_pct = Some(har.har_pct);
        let atm = atm_iv_pct.ok_or(optics_compute::zero_dte::ZeroDteError::Input {
            field: "atm_iv",
            reason: "no ATM IV on the expiration read",
        })?;
        iv_forecast_pct(atm, har.har_pct)
    });
    let iv_forecast = match forecast {
        Ok(value) => Some(value),
        Err(e) => {
            read.iv_forecast_reason = Some(e.to_string());
            None
        }
    };
    (em_hit_rate, edge_score, iv_forecast, read)
}

/// The `/zero-dte/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ZeroDtePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration read: today's, or the next one when none expires today.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it (0 on the day).
    pub dte: i32,
    /// True when it expires today.
    pub is_same_day: bool,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// The priced move.
    pub metrics: ZeroDteMetrics,
    /// Dealer gamma.
    pub gamma_regime: ZeroDteGammaRegime,
    /// Levels for the session.
    pub key_levels: ZeroDteLevels,
    /// Gamma and Greeks per strike (windowed under compact detail).
    pub by_strike: Vec<ZeroDteStrike>,
    /// Quotes per strike (windowed under compact detail).
    pub chain_table: Vec<ZeroDteQuote>,
    /// Hourly decay of the ATM straddle.
    pub theta_burn: ThetaBurn,
    /// The skew read; null without 25-delta IVs on both sides.
    pub skew_signal: Option<SkewSignal>,
    /// Percent of the scored past sessions whose previous-close-to-close move stayed within
    /// the one-session expected move priced at the previous close (`scored_read` says how);
    /// null with `scored_read.em_hit_rate_reason` when the stored history is too short.
    pub em_hit_rate: Option<f64>,
    /// 0–100: 100 × implied variance / (implied + realized variance) over the same sessions;
    /// 50 = moves priced fairly, above 50 options priced more movement than followed. Null
    /// with `scored_read.edge_score_reason` when the history is too short.
    pub edge_score: Option<f64>,
    /// Blend of the ATM IV and the HAR realized volatility of the stored closes, percentage
    /// points; null with `scored_read.iv_forecast_reason` when either is missing.
    pub iv_forecast: Option<f64>,
    /// The inputs, rules and reasons behind `em_hit_rate`, `edge_score` and `iv_forecast`.
    pub scored_read: ScoredRead,
    /// Units of the IV fields.
    pub iv_units: &'static str,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// What compact detail trimmed (by_strike and chain_table, the same strikes; 30 each side
    /// of spot by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Window)]
    pub window: Option<Window>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
}

/// Hours per year on the calendar-day (/365) clock the chain's `years_to_expiry` uses.
const HOURS_PER_YEAR: f64 = 365.0 * 24.0;
/// Risk-reversal band within which skew reads `FLAT`, percentage points.
const SKEW_FLAT_BAND_POINTS: f64 = 1.0;

/// `GET /zero-dte/{ticker}`.
pub async fn zero_dte(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<ZeroDtePayload>>, ApiError> {
    use optics_compute::expected_move::ExpectedMoveRequest;
    use optics_compute::pricing::{OptionInputs, PricingModel, price};

    let window_request = WindowRequest::from_request(&headers, &params)?;
    let reader = state.market_data()?;
    let chain = reader.chain(&ticker).ok_or_else(|| no_chain(&ticker))?;
    let exposures = reader
        .exposures(&ticker)
        .ok_or_else(|| no_exposures(&ticker))?;
    let expiration = listed_or_nearest(&ticker, &chain, None)?;
    let summary = exposures
        .summary
        .iter()
        .find(|s| s.expiration == Some(expiration))
        .ok_or_else(|| {
            ApiError::upstream(format!(
                "No dealer exposures for the {expiration} expiration of {ticker} yet"
            ))
        })?;
    let rows = chain.rows_of(expiration);
    let first = rows.first().ok_or_else(|| no_chain(&ticker))?;
    let (contracts, context) = contracts_from_chain(rows)?;
    let moved = optics_compute::expected_move::expected_move(
        &contracts,
        &context,
        &ExpectedMoveRequest {
            expiration: Some(expiration),
            include_same_day: true,
        },
    )?;
    let forward = first.forward;
    let years = first.years_to_expiry.max(0.0);
    // ATM: the listed strike nearest the forward with both IVs.
    let atm = rows
        .iter()
        .filter_map(|r| Some((r.strike, r.call.iv?, r.put.iv?)))
        .min_by(|a, b| (a.0 - forward).abs().total_cmp(&(b.0 - forward).abs()));
    let atm_iv = atm.map(|(_, c, p)| 0.5 * (c + p));

    // Theta burn: the ATM straddle re-valued hour by hour with everything but time held.
    let straddle_at = |years_left: f64| -> f64 {
        let (Some((strike, _, _)), Some(vol)) = (atm, atm_iv) else {
            return f64::NAN;
        };
        if years_left <= 0.0 {
            return (forward - strike).abs();
        }
        [OptionType::Call, OptionType::Put]
            .into_iter()
            .map(|option_type| {
                price(
                    &OptionInputs {
                        option_type,
                        model: PricingModel::Black76,
                        underlying: forward,
                        strike,
                        years: years_left,
                        rate: first.rate,
                        dividend_yield: 0.0,
                    },
                    vol,
                )
                .unwrap_or(f64::NAN)
            })
            .sum()
    };
    let hours_left = years * HOURS_PER_YEAR;
    let value_now = straddle_at(years);
    let mut hourly_decay = Vec::new();
    let mut previous = value_now;
    let mut hour = 1.0_f64;
    while hour - 1.0 < hours_left && value_now.is_finite() {
        let left = (hours_left - hour).max(0.0);
        let value = straddle_at(left / HOURS_PER_YEAR);
        let elapsed_minutes = ((hours_left - left) * 60.0).round() as i64;
        hourly_decay.push(HourlyDecay {
            hour_ending: chain.as_of + chrono::Duration::minutes(elapsed_minutes),
            hours_to_expiry: left,
            straddle_value: value,
            decay: previous - value,
            cumulative_decay_pct: if value_now > 0.0 {
                100.0 * (value_now - value) / value_now
            } else {
                0.0
            },
        });
        previous = value;
        hour += 1.0;
    }

    // 25-delta risk reversal.
    let nearest_delta = |target: f64, call: bool| -> Option<f64> {
        rows.iter()
            .filter_map(|r| {
                let side = if call { &r.call } else { &r.put };
                Some((side.greeks.delta?, side.iv?))
            })
            .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()))
            .map(|(_, iv)| 100.0 * iv)
    };
    let skew_signal = match (nearest_delta(-0.25, false), nearest_delta(0.25, true)) {
        (Some(put_iv), Some(call_iv)) => {
            let rr = put_iv - call_iv;
            Some(SkewSignal {
                risk_reversal_25d: rr,
                signal: if rr > SKEW_FLAT_BAND_POINTS {
                    "PUTS_RICH"
                } else if rr < -SKEW_FLAT_BAND_POINTS {
                    "CALLS_RICH"
                } else {
                    "FLAT"
                },
            })
        }
        _ => None,
    };

    // Per strike: exposures joined with the chain's quotes (one row per strike; for an
    // expiration with AM and PM series the exposures are summed and the first series quoted).
    let exposure_rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    let profile = strike_profile(&exposure_rows);
    let mut by_strike = Vec::with_capacity(profile.len());
    let mut chain_table = Vec::with_capacity(profile.len());
    for point in &profile {
        let strike = point.point.strike;
        let row = rows.iter().find(|r| r.strike == strike);
        let (call_oi, put_oi) =
            exposure_rows
                .iter()
                .filter(|r| r.strike == strike)
                .fold((0u64, 0u64), |(c, p), r| {
                    (
                        c.saturating_add(r.call_open_interest),
                        p.saturating_add(r.put_open_interest),
                    )
                });
        by_strike.push(ZeroDteStrike {
            strike,
            call_gex: point.point.call_gex,
            put_gex: point.point.put_gex,
            net_gex: point.point.net_gex,
            call_oi,
            put_oi,
            call_gamma: row.and_then(|r| r.call.greeks.gamma),
            put_gamma: row.and_then(|r| r.put.greeks.gamma),
            call_delta: row.and_then(|r| r.call.greeks.delta),
            put_delta: row.and_then(|r| r.put.greeks.delta),
        });
        chain_table.push(ZeroDteQuote {
            strike,
            call_bid: row.and_then(|r| r.call.bid),
            call_ask: row.and_then(|r| r.call.ask),
            call_mid: row.and_then(|r| r.call.mid),
            call_iv: row.and_then(|r| r.call.iv).map(|iv| 100.0 * iv),
            call_volume: row.and_then(|r| r.call.volume),
            put_bid: row.and_then(|r| r.put.bid),
            put_ask: row.and_then(|r| r.put.ask),
            put_mid: row.and_then(|r| r.put.mid),
            put_iv: row.and_then(|r| r.put.iv).map(|iv| 100.0 * iv),
            put_volume: row.and_then(|r| r.put.volume),
            call_theta: row.and_then(|r| r.call.greeks.theta),
            put_theta: row.and_then(|r| r.put.greeks.theta),
        });
    }
    let spot = moved.spot;
    let per_side = window_request.strikes_per_side(window::ZERO_DTE_STRIKES_PER_SIDE);
    let (range, strike_window) = window::window_around_strike(
        &by_strike,
        |s| s.strike,
        spot,
        per_side,
        window_request.detail,
    );
    let by_strike = by_strike[range.clone()].to_vec();
    let chain_table = chain_table[range].to_vec();
    let total_net_gex = summary.net.gamma;
    let atm_iv_pct = atm_iv.map(|iv| 100.0 * iv);
    let (em_hit_rate, edge_score, iv_forecast, scored) =
        scored_read(reader.as_ref(), &ticker, chain.trade_date, atm_iv_pct).await;
    Ok(ok(ZeroDtePayload {
        ticker: ticker.to_string(),
        expiration,
        dte: first.dte,
        is_same_day: first.dte == 0,
        stock_price: spot,
        metrics: ZeroDteMetrics {
            expected_move: 100.0 * moved.expected_move_fraction,
            expected_move_dollars: moved.expected_move_dollars,
            atm_iv: atm_iv_pct,
            atm_strike: atm.map(|a| a.0),
            forward,
            hours_to_expiry: hours_left,
        },
        gamma_regime: ZeroDteGammaRegime {
            regime: if total_net_gex > 0.0 {
                "POSITIVE_GAMMA"
            } else if total_net_gex < 0.0 {
                "NEGATIVE_GAMMA"
            } else {
                "NEUTRAL"
            },
            total_net_gex,
            flip_level: summary.flip_level,
            volatility_regime: summary.volatility_regime,
        },
        key_levels: ZeroDteLevels {
            call_wall: summary.call_wall,
            put_wall: summary.put_wall,
            max_pain: summary.max_pain_strike,
            em_upper: moved.upper_bound,
            em_lower: moved.lower_bound,
        },
        by_strike,
        chain_table,
        theta_burn: ThetaBurn {
            straddle_value_now: value_now,
            hourly_decay,
            basis: "Black-76 on the expiration's forward at the ATM IV, forward and IV held; \
                    calendar hours to the expiration day's close",
        },
        skew_signal,
        em_hit_rate,
        edge_score,
        iv_forecast,
        scored_read: scored,
        iv_units: "percent",
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
        window: (window_request.detail == Detail::Compact).then_some(strike_window),
        clamped: params.clamp_notices(),
    }))
}

/// Call and put open interest per listed strike of `rows` (AM and PM series of one
/// expiration summed; several expirations summed too), the input of max pain and of the
/// open-interest walls.
pub(crate) fn open_interest_by_strike(rows: &[ChainRow]) -> Vec<OpenInterestAtStrike> {
    let mut by_strike: BTreeMap<StrikeKey, OpenInterestAtStrike> = BTreeMap::new();
    for row in rows {
        let entry = by_strike
            .entry(StrikeKey::from_dollars(row.strike))
            .or_insert(OpenInterestAtStrike {
                strike: row.strike,
                call: 0,
                put: 0,
            });
        entry.call = entry
            .call
            .saturating_add(row.call.open_interest.unwrap_or(0));
        entry.put = entry.put.saturating_add(row.put.open_interest.unwrap_or(0));
    }
    by_strike.into_values().collect()
}
