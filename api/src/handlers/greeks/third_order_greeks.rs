//! `GET /third-order-greeks/{ticker}`: speed, color, ultima and zomma by strike.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::ChainGreeks;
use serde::Serialize;
use utoipa::ToSchema;

use super::{one_row_per_strike, side_code, underlying_basis};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::extract::latest_chain;
use crate::freshness::Freshness;
use crate::handlers::flow::listed_or_nearest;
use crate::market::ChainView;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

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
