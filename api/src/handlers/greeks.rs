//! Per-contract Greeks read straight from the chain (not dealer exposure):
//! `/third-order-greeks/{ticker}` — the higher-order sensitivities of one expiration by strike
//! and by contract — and `/greeks-heatmap/{ticker}` — expiration × strike matrices of the
//! first-order Greeks and IV for one side, with sums along each axis and the open-interest
//! levels.
//!
//! Every number is the chain's own Greek at the contract's implied volatility (the worker's
//! closed forms), so the same strike's gamma here, in `/chain` and in the `/gex` contract list
//! is one value.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::{OpenInterestAtStrike, max_pain};
use optics_compute::pricing::OptionType;
use optics_schemas::{ChainGreeks, ChainRow, ChainSide, SettlementStyle, StrikeKey};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::extract::{latest_chain, no_chain};
use crate::freshness::Freshness;
use crate::handlers::exposure::{open_interest_by_strike, type_code};
use crate::handlers::flow::listed_or_nearest;
use crate::market::ChainView;
use crate::openapi::{DataSchema, IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<ThirdOrderPayload>("third-order-greeks"),
        DataSchema::of::<HeatmapPayload>("greeks-heatmap"),
    ]
}

/// The rows of one expiration with one row per strike: where an expiration lists both an AM-
/// and a PM-settled series (SPX monthlies beside the SPXW weeklies), the PM series, which is
/// the one that trades every day; otherwise whichever is listed.
fn one_row_per_strike(rows: &[ChainRow]) -> Vec<&ChainRow> {
    let mut by_strike: BTreeMap<StrikeKey, &ChainRow> = BTreeMap::new();
    for row in rows {
        by_strike
            .entry(StrikeKey::from_dollars(row.strike))
            .and_modify(|kept| {
                if row.settlement == SettlementStyle::Pm && kept.settlement != SettlementStyle::Pm {
                    *kept = row;
                }
            })
            .or_insert(row);
    }
    by_strike.into_values().collect()
}

/// What the Greeks are taken with respect to: the spot for stocks and ETFs, the forward for
/// cash indices priced with Black-76.
fn underlying_basis(chain: &ChainView) -> &'static str {
    if chain.priced_on_forward() {
        "forward"
    } else {
        "spot"
    }
}

/// `C` or `P`.
fn side_code(is_call: bool) -> &'static str {
    type_code(if is_call {
        OptionType::Call
    } else {
        OptionType::Put
    })
}

// ---------------------------------------------------------------------------------------------
// /third-order-greeks
// ---------------------------------------------------------------------------------------------

/// The higher-order set of one contract, per share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HigherOrderGreeks {
    /// ∂Γ/∂S: gamma per $1 of the underlying.
    pub speed: f64,
    /// ∂Γ/∂σ: gamma per vol point.
    pub zomma: f64,
    /// −∂Γ/∂t: gamma per calendar day of time passing.
    pub color: f64,
    /// ∂vega/∂σ: vega per vol point.
    pub vomma: f64,
    /// ∂vomma/∂σ: vomma per vol point.
    pub ultima: f64,
    /// ∂Δ/∂σ: delta per vol point.
    pub vanna: f64,
    /// −∂Δ/∂t: delta per calendar day of time passing.
    pub charm: f64,
}

impl HigherOrderGreeks {
    /// The set of a chain side; `None` when the side has no IV (and so no Greeks).
    fn of(greeks: &ChainGreeks) -> Option<Self> {
        Some(Self {
            speed: greeks.speed?,
            zomma: greeks.zomma?,
            color: greeks.color?,
            vomma: greeks.vomma?,
            ultima: greeks.ultima?,
            vanna: greeks.vanna?,
            charm: greeks.charm?,
        })
    }
}

/// One strike of `greeks_by_strike[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HigherOrderAtStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// The contract the values are taken from: `C` at or above the forward, `P` below (the
    /// out-of-the-money side, whose quote sets the smile); the other side when that one has
    /// no IV.
    pub side: &'static str,
    /// That contract's implied volatility, percentage points.
    pub iv: f64,
    /// Its Greeks.
    #[serde(flatten)]
    pub greeks: HigherOrderGreeks,
}

/// One contract of `detailed[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HigherOrderContract {
    /// Strike, dollars.
    pub strike: f64,
    /// `C` or `P`.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// `AM` or `PM` settlement.
    pub settlement: &'static str,
    /// OCC symbol.
    pub option_symbol: Option<String>,
    /// Implied volatility of the mid, percentage points.
    pub iv: f64,
    /// Open interest, contracts.
    pub open_interest: Option<u64>,
    /// Per-share Greeks at `iv`.
    #[serde(flatten)]
    pub greeks: HigherOrderGreeks,
}

/// One line per Greek of the payload, with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct HigherOrderDefinitions {
    /// Speed.
    pub speed: &'static str,
    /// Zomma.
    pub zomma: &'static str,
    /// Color.
    pub color: &'static str,
    /// Vomma.
    pub vomma: &'static str,
    /// Ultima.
    pub ultima: &'static str,
    /// Vanna.
    pub vanna: &'static str,
    /// Charm.
    pub charm: &'static str,
}

const DEFINITIONS: HigherOrderDefinitions = HigherOrderDefinitions {
    speed: "Rate of change of gamma with the underlying (∂Γ/∂S): gamma per $1.",
    zomma: "Rate of change of gamma with volatility (∂Γ/∂σ): gamma per vol point.",
    color: "Change of gamma as one calendar day passes (−∂Γ/∂t): gamma per day.",
    vomma: "Rate of change of vega with volatility (∂vega/∂σ): vega per vol point.",
    ultima: "Rate of change of vomma with volatility (∂vomma/∂σ): vomma per vol point.",
    vanna: "Rate of change of delta with volatility (∂Δ/∂σ): delta per vol point.",
    charm: "Change of delta as one calendar day passes (−∂Δ/∂t): delta per day.",
};

/// The `/third-order-greeks/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ThirdOrderPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The chain's price (the forward of the nearest expiration for a cash index), dollars.
    pub stock_price: f64,
    /// The forward of this expiration the contracts were priced on, dollars.
    pub forward: f64,
    /// `bsm` or `black76`.
    pub model: &'static str,
    /// `spot` or `forward`: what speed, gamma and delta are taken with respect to.
    pub greeks_with_respect_to: &'static str,
    /// Per strike, ascending; strikes where neither side has an IV are left out.
    pub greeks_by_strike: Vec<HigherOrderAtStrike>,
    /// Every contract of the expiration with an IV, by strike then type.
    pub detailed: Vec<HigherOrderContract>,
    /// Listed contracts of the expiration without an IV (no two-sided quote, no time value…),
    /// hence without Greeks.
    pub contracts_without_iv: usize,
    /// One line per Greek.
    pub definitions: HigherOrderDefinitions,
    /// Units of `iv`.
    pub iv_units: &'static str,
    /// What the values are.
    pub basis: &'static str,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /third-order-greeks/{ticker}`: one expiration (default the nearest open one).
pub async fn third_order_greeks(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<ThirdOrderPayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let chain = latest_chain(&state, &ticker)?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let payload = third_order_payload(&chain, expiration, state.freshness_of(chain.trade_date))?;
    Ok(ok(payload))
}

/// The payload of one expiration of `chain`.
pub(crate) fn third_order_payload(
    chain: &ChainView,
    expiration: NaiveDate,
    freshness: Freshness,
) -> Result<ThirdOrderPayload, ApiError> {
    let rows = chain.rows_of(expiration);
    let first = rows.first().ok_or_else(|| {
        ApiError::upstream(format!(
            "The chain of {} has no rows for {expiration}",
            chain.underlying
        ))
    })?;

    let mut detailed = Vec::new();
    let mut contracts_without_iv = 0;
    for row in rows {
        for (is_call, side) in [(true, &row.call), (false, &row.put)] {
            if !side.is_listed() {
                continue;
            }
            match (side.iv, HigherOrderGreeks::of(&side.greeks)) {
                (Some(iv), Some(greeks)) => detailed.push(HigherOrderContract {
                    strike: row.strike,
                    option_type: side_code(is_call),
                    settlement: row.settlement.as_str(),
                    option_symbol: side.option_symbol.clone(),
                    iv: 100.0 * iv,
                    open_interest: side.open_interest,
                    greeks,
                }),
                _ => contracts_without_iv += 1,
            }
        }
    }
    detailed.sort_by(|a, b| {
        a.strike
            .total_cmp(&b.strike)
            .then(a.option_type.cmp(b.option_type))
            .then(a.settlement.cmp(b.settlement))
    });

    let greeks_by_strike = one_row_per_strike(rows)
        .into_iter()
        .filter_map(|row| {
            let call_first = row.strike >= row.forward;
            let (preferred, other) = if call_first {
                ((true, &row.call), (false, &row.put))
            } else {
                ((false, &row.put), (true, &row.call))
            };
            [preferred, other].into_iter().find_map(|(is_call, side)| {
                let iv = side.iv?;
                let greeks = HigherOrderGreeks::of(&side.greeks)?;
                Some(HigherOrderAtStrike {
                    strike: row.strike,
                    side: side_code(is_call),
                    iv: 100.0 * iv,
                    greeks,
                })
            })
        })
        .collect();

    Ok(ThirdOrderPayload {
        ticker: chain.underlying.clone(),
        expiration,
        dte: first.dte,
        stock_price: chain.stock_price(),
        forward: first.forward,
        model: first.model.as_str(),
        greeks_with_respect_to: underlying_basis(chain),
        greeks_by_strike,
        detailed,
        contracts_without_iv,
        definitions: DEFINITIONS,
        iv_units: "percent",
        basis: "Analytic Black-Scholes-Merton (Black-76 on the forward for cash indices) \
                derivatives at each contract's implied volatility from its mid quote; per \
                share. greeks_by_strike takes the out-of-the-money contract of each strike.",
        as_of: chain.as_of,
        freshness,
    })
}

// ---------------------------------------------------------------------------------------------
// /greeks-heatmap
// ---------------------------------------------------------------------------------------------

/// Open expirations in the heatmap grid, nearest first.
pub const HEATMAP_EXPIRATIONS: usize = 12;
/// Strikes in the grid lie within this fraction of the stock price on either side.
pub const HEATMAP_STRIKE_RANGE: f64 = 0.15;

/// One matrix: rows are the `expirations`, columns the `strikes`; `null` where the strike is
/// not listed for that expiration or the contract has no IV.
pub type Matrix = Vec<Vec<Option<f64>>>;

/// `greek_matrices`: one matrix per Greek plus IV.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreekMatrices {
    /// Delta per calendar day.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub charm: Matrix,
    /// Delta.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub delta: Matrix,
    /// Gamma per $1.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub gamma: Matrix,
    /// Implied volatility, decimal.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub iv: Matrix,
    /// Dollars per point of rate.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub rho: Matrix,
    /// Dollars per calendar day.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub theta: Matrix,
    /// Delta per vol point.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub vanna: Matrix,
    /// Dollars per vol point.
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub vega: Matrix,
}

impl GreekMatrices {
    fn get(&self, greek: &str) -> Option<&Matrix> {
        Some(match greek {
            "charm" => &self.charm,
            "delta" => &self.delta,
            "gamma" => &self.gamma,
            "iv" => &self.iv,
            "rho" => &self.rho,
            "theta" => &self.theta,
            "vanna" => &self.vanna,
            "vega" => &self.vega,
            _ => return None,
        })
    }
}

/// One expiration's sum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ExpirationSum {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Σ over the grid's strikes of the contracts with Greeks.
    pub value: f64,
}

/// One strike's sum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct StrikeSum {
    /// Strike, dollars.
    pub strike: f64,
    /// Σ over the grid's expirations of the contracts with Greeks.
    pub value: f64,
}

/// Sums of one Greek along each axis of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AxisSums {
    /// One per expiration, in `expirations` order.
    pub by_expiration: Vec<ExpirationSum>,
    /// One per strike, in `strikes` order.
    pub by_strike: Vec<StrikeSum>,
}

/// `aggregates`: the axis sums of each Greek (IV, not additive, has none).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreekAggregates {
    /// Charm.
    pub charm: AxisSums,
    /// Delta.
    pub delta: AxisSums,
    /// Gamma.
    pub gamma: AxisSums,
    /// Rho.
    pub rho: AxisSums,
    /// Theta.
    pub theta: AxisSums,
    /// Vanna.
    pub vanna: AxisSums,
    /// Vega.
    pub vega: AxisSums,
}

/// `levels`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HeatmapLevels {
    /// The strike with the most call open interest over the grid's expirations (every listed
    /// strike of them, not only the grid's columns), dollars.
    pub oi_call_wall: Option<f64>,
    /// The strike with the most put open interest, likewise.
    pub oi_put_wall: Option<f64>,
    /// Max pain of the nearest open expiration (as `/max-pain` answers by default), dollars.
    pub max_pain: Option<f64>,
    /// The expiration `max_pain` belongs to.
    #[schema(value_type = Option<IsoDate>)]
    pub max_pain_expiration: Option<NaiveDate>,
}

/// How the grid was chosen from the chain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HeatmapGrid {
    /// Open expirations the chain lists.
    pub expirations_listed: usize,
    /// Rows of every matrix.
    pub expirations_shown: usize,
    /// Distinct strikes the shown expirations list.
    pub strikes_listed: usize,
    /// Columns of every matrix.
    pub strikes_shown: usize,
    /// The rule.
    pub rule: &'static str,
}

/// The `/greeks-heatmap/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HeatmapPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// `calls` or `puts`: the side every matrix shows.
    pub option_type: &'static str,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// `spot` or `forward`: what delta and gamma are taken with respect to.
    pub greeks_with_respect_to: &'static str,
    /// The Greek of `greek_matrix` (the `greek` parameter, default gamma).
    pub greek: &'static str,
    /// That Greek's matrix (the same as its `greek_matrices` entry).
    #[schema(value_type = Vec<Vec<Option<f64>>>)]
    pub greek_matrix: Matrix,
    /// One matrix per Greek plus IV; rows are expirations, columns strikes.
    pub greek_matrices: GreekMatrices,
    /// Sums along each axis.
    pub aggregates: GreekAggregates,
    /// Column axis, dollars, ascending.
    pub strikes: Vec<f64>,
    /// Row axis as display labels: `YYYY-MM-DD (Nd)`.
    pub expirations: Vec<String>,
    /// Row axis as dates.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations_raw: Vec<NaiveDate>,
    /// Contracts in the grid with Greeks (non-null cells of each matrix).
    pub data_points: usize,
    /// Next earnings report on or after the chain's session, when the reference data has one.
    #[schema(value_type = Option<IsoDate>)]
    pub earnings_date: Option<NaiveDate>,
    /// Open-interest levels.
    pub levels: HeatmapLevels,
    /// How the grid was chosen.
    pub grid: HeatmapGrid,
    /// Units of the matrices.
    pub units: &'static str,
    /// What the values are.
    pub basis: &'static str,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /greeks-heatmap/{ticker}`.
pub async fn greeks_heatmap(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<HeatmapPayload>>, ApiError> {
    let calls = params.choice("option_type")?.unwrap_or("calls") == "calls";
    let greek = params.choice("greek")?.unwrap_or("gamma");
    let reader = state.market_data()?;
    let chain = reader.chain(&ticker).ok_or_else(|| no_chain(&ticker))?;
    let earnings_date = reader
        .coverage()
        .next_earnings(ticker.as_str(), chain.trade_date);
    let payload = heatmap_payload(
        &chain,
        calls,
        greek,
        earnings_date,
        state.freshness_of(chain.trade_date),
    )?;
    Ok(ok(payload))
}

/// One side's value of a Greek, by name (`iv` is the side's IV, decimal).
fn side_value(side: &ChainSide, greek: &str) -> Option<f64> {
    let g = &side.greeks;
    match greek {
        "charm" => g.charm,
        "delta" => g.delta,
        "gamma" => g.gamma,
        "iv" => side.iv,
        "rho" => g.rho,
        "theta" => g.theta,
        "vanna" => g.vanna,
        "vega" => g.vega,
        _ => None,
    }
}

/// The heatmap of one side of `chain` over the grid of [`HEATMAP_EXPIRATIONS`] ×
/// [`HEATMAP_STRIKE_RANGE`].
pub(crate) fn heatmap_payload(
    chain: &ChainView,
    calls: bool,
    greek: &'static str,
    earnings_date: Option<NaiveDate>,
    freshness: Freshness,
) -> Result<HeatmapPayload, ApiError> {
    let open: Vec<NaiveDate> = chain.open_expirations().to_vec();
    if open.is_empty() {
        return Err(ApiError::upstream(format!(
            "The chain of {} lists no open expiration",
            chain.underlying
        )));
    }
    let shown: Vec<NaiveDate> = open.iter().copied().take(HEATMAP_EXPIRATIONS).collect();
    let spot = chain.stock_price();
    let (low, high) = (
        spot * (1.0 - HEATMAP_STRIKE_RANGE),
        spot * (1.0 + HEATMAP_STRIKE_RANGE),
    );

    // Per shown expiration: one row per strike.
    let mut grid_rows: Vec<BTreeMap<StrikeKey, &ChainRow>> = Vec::with_capacity(shown.len());
    let mut listed_strikes: BTreeMap<StrikeKey, f64> = BTreeMap::new();
    let mut dtes = Vec::with_capacity(shown.len());
    for &expiration in &shown {
        let rows = one_row_per_strike(chain.rows_of(expiration));
        dtes.push(rows.first().map_or(0, |r| r.dte));
        let mut by_strike = BTreeMap::new();
        for row in rows {
            let key = StrikeKey::from_dollars(row.strike);
            listed_strikes.insert(key, row.strike);
            by_strike.insert(key, row);
        }
        grid_rows.push(by_strike);
    }
    let columns: Vec<(StrikeKey, f64)> = listed_strikes
        .iter()
        .map(|(k, s)| (*k, *s))
        .filter(|(_, s)| (low..=high).contains(s))
        .collect();

    let matrix = |greek: &str| -> Matrix {
        grid_rows
            .iter()
            .map(|by_strike| {
                columns
                    .iter()
                    .map(|(key, _)| {
                        by_strike
                            .get(key)
                            .and_then(|r| side_value(if calls { &r.call } else { &r.put }, greek))
                    })
                    .collect()
            })
            .collect()
    };
    let matrices = GreekMatrices {
        charm: matrix("charm"),
        delta: matrix("delta"),
        gamma: matrix("gamma"),
        iv: matrix("iv"),
        rho: matrix("rho"),
        theta: matrix("theta"),
        vanna: matrix("vanna"),
        vega: matrix("vega"),
    };
    let sums = |m: &Matrix| AxisSums {
        by_expiration: shown
            .iter()
            .zip(m)
            .map(|(expiration, row)| ExpirationSum {
                expiration: *expiration,
                value: row.iter().flatten().sum(),
            })
            .collect(),
        by_strike: columns
            .iter()
            .enumerate()
            .map(|(j, (_, strike))| StrikeSum {
                strike: *strike,
                value: m.iter().filter_map(|row| row[j]).sum(),
            })
            .collect(),
    };
    let aggregates = GreekAggregates {
        charm: sums(&matrices.charm),
        delta: sums(&matrices.delta),
        gamma: sums(&matrices.gamma),
        rho: sums(&matrices.rho),
        theta: sums(&matrices.theta),
        vanna: sums(&matrices.vanna),
        vega: sums(&matrices.vega),
    };
    // A contract has all its Greeks or none (no IV): count one matrix's cells.
    let data_points = matrices.gamma.iter().flatten().flatten().count();

    // Rows are sorted by expiration, so the shown expirations are one contiguous run.
    let last_shown = shown[shown.len() - 1];
    let grid_chain = &chain.rows[chain.rows.partition_point(|r| r.expiration < shown[0])
        ..chain.rows.partition_point(|r| r.expiration <= last_shown)];
    let open_interest = open_interest_by_strike(grid_chain);
    let wall = |pick: fn(&OpenInterestAtStrike) -> u64| {
        open_interest
            .iter()
            .filter(|v| pick(v) > 0)
            // The first of equal maxima: the lowest strike.
            .fold(None::<(f64, u64)>, |best, v| match best {
                Some((_, most)) if most >= pick(v) => best,
                _ => Some((v.strike, pick(v))),
            })
            .map(|(strike, _)| strike)
    };
    let nearest = shown[0];
    let pain = max_pain(&open_interest_by_strike(chain.rows_of(nearest)), spot);
    let levels = HeatmapLevels {
        oi_call_wall: wall(|v| v.call),
        oi_put_wall: wall(|v| v.put),
        max_pain: pain.as_ref().map(|p| p.strike),
        max_pain_expiration: pain.is_some().then_some(nearest),
    };

    let greek_matrix = matrices
        .get(greek)
        .cloned()
        .ok_or_else(|| ApiError::bad_request(format!("Unknown greek {greek}")))?;
    Ok(HeatmapPayload {
        ticker: chain.underlying.clone(),
        option_type: if calls { "calls" } else { "puts" },
        stock_price: spot,
        greeks_with_respect_to: underlying_basis(chain),
        greek,
        greek_matrix,
        greek_matrices: matrices,
        aggregates,
        strikes: columns.iter().map(|(_, s)| *s).collect(),
        expirations: shown
            .iter()
            .zip(&dtes)
            .map(|(e, dte)| format!("{e} ({dte}d)"))
            .collect(),
        expirations_raw: shown.clone(),
        data_points,
        earnings_date,
        levels,
        grid: HeatmapGrid {
            expirations_listed: open.len(),
            expirations_shown: shown.len(),
            strikes_listed: listed_strikes.len(),
            strikes_shown: columns.len(),
            rule: "the nearest 12 open expirations; the strikes they list within 15% of \
                   stock_price",
        },
        units: "per share for one contract: delta; gamma per $1; theta per calendar day; \
                vega per vol point; rho per point of rate; vanna delta per vol point; charm \
                delta per calendar day; iv decimal",
        basis: "Per-contract Greeks from the chain at each contract's implied volatility, not \
                dealer exposure (see /greeks-exposure). Where an expiration lists AM and PM \
                series at a strike, the PM series.",
        as_of: chain.as_of,
        freshness,
    })
}
