//! `GET /greeks-heatmap/{ticker}`: per-contract Greeks across strikes and expirations.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::{OpenInterestAtStrike, max_pain};
use optics_schemas::{ChainRow, ChainSide, StrikeKey};
use serde::Serialize;
use utoipa::ToSchema;

use super::{one_row_per_strike, underlying_basis};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::extract::no_chain;
use crate::freshness::Freshness;
use crate::handlers::exposure::open_interest_by_strike;
use crate::market::ChainView;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// Open expirations in the heatmap grid, nearest first.
pub const HEATMAP_EXPIRATIONS: usize = 12;
/// Strikes in the grid lie within this fraction of the stock price on either side.
pub const HEATMAP_STRIKE_RANGE: f64 = 0.15;

/// How the grid is chosen, from the constants that choose it.
fn grid_rule() -> String {
    format!(
        "the nearest {HEATMAP_EXPIRATIONS} open expirations; the strikes they list within {}% of \
         stock_price",
        (100.0 * HEATMAP_STRIKE_RANGE).round()
    )
}

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
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
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
    pub rule: String,
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
            rule: grid_rule(),
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_grid_rule_quotes_the_grid_constants() {
        assert_eq!(
            super::grid_rule(),
            "the nearest 12 open expirations; the strikes they list within 15% of stock_price"
        );
    }
}
