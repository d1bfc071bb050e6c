//! POST /portfolio-greeks: the book's net Greeks, exposures and risk level.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use optics_compute::risk;
use serde::Serialize;
use serde_json::Value;

use crate::body;
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::{PositionBody, PositionsBody, PricesBody, book, book_request};

/// `portfolio_summary` of `/portfolio-greeks`.
#[derive(Debug, Clone, Serialize)]
pub struct PortfolioSummary {
    /// Net delta, share-equivalents.
    pub total_delta: f64,
    /// Net gamma, share-equivalents per $1 (null when an option position lacks gamma).
    pub total_gamma: Option<f64>,
    /// Net theta, dollars per calendar day.
    pub total_theta: f64,
    /// Net vega, dollars per vol point.
    pub total_vega: f64,
    /// LOW, MODERATE, HIGH or EXTREME: the higher of the levels of |delta_exposure_pct| and
    /// |daily_decay_pct| on the limits in `risk_level_scale` (the constants of
    /// [`optics_compute::risk::portfolio`]; the reference's "Strategies and portfolio risk"
    /// section prints the same table).
    pub risk_level: &'static str,
    /// The scale behind risk_level.
    pub risk_level_scale: RiskLevelScale,
    /// Dollar delta as a percent of gross market value (null for a book of zero value).
    pub delta_exposure_pct: Option<f64>,
    /// Total theta as a percent of gross market value per day (null for zero value).
    pub daily_decay_pct: Option<f64>,
    /// Σ delta × underlying price, dollars.
    pub dollar_delta: f64,
    /// Σ value (short positions negative), dollars.
    pub net_value: f64,
    /// Σ |value|, dollars.
    pub gross_value: f64,
    /// Σ (current − entry) × shares over positions with an entry price, dollars.
    pub unrealized_pnl: f64,
    /// Indices of positions without entry_price (left out of unrealized_pnl).
    pub positions_without_entry_price: Vec<usize>,
    /// Positions read.
    pub positions_count: usize,
}

/// The risk_level scale: a reading up to `limits[0]` is LOW, up to `limits[1]` MODERATE, up
/// to `limits[2]` HIGH, above EXTREME; the higher of the two readings' levels is reported.
#[derive(Debug, Clone, Serialize)]
pub struct RiskLevelScale {
    /// LOW, MODERATE, HIGH, EXTREME.
    pub levels: [&'static str; 4],
    /// Upper limits of |delta_exposure_pct| for LOW, MODERATE, HIGH.
    pub delta_exposure_pct_limits: [f64; 3],
    /// Upper limits of |daily_decay_pct| for LOW, MODERATE, HIGH.
    pub daily_decay_pct_limits: [f64; 3],
}

impl RiskLevelScale {
    fn current() -> Self {
        use risk::RiskLevel::{Extreme, High, Low, Moderate};
        Self {
            levels: [Low, Moderate, High, Extreme].map(risk::RiskLevel::as_str),
            delta_exposure_pct_limits: risk::portfolio::DELTA_EXPOSURE_LIMITS_PCT,
            daily_decay_pct_limits: risk::portfolio::DAILY_DECAY_LIMITS_PCT,
        }
    }
}

/// One ticker of `positions_by_ticker`.
#[derive(Debug, Clone, Serialize)]
pub struct TickerSummary {
    /// Share-equivalents.
    pub delta: f64,
    /// Share-equivalents per $1, when known.
    pub gamma: Option<f64>,
    /// Dollars per calendar day.
    pub theta: f64,
    /// Dollars per vol point.
    pub vega: f64,
    /// Market value, dollars.
    pub value: f64,
    /// delta × underlying price, dollars.
    pub dollar_delta: f64,
    /// The underlying price used, dollars.
    pub underlying_price: f64,
    /// Positions in the ticker.
    pub positions: usize,
}

book_request! {
    /// The body of `/portfolio-greeks`.
    PortfolioRequest {
    }
}

/// `data` of `/portfolio-greeks`.
#[derive(Debug, Clone, Serialize)]
pub struct PortfolioPayload {
    /// The totals and the risk read.
    pub portfolio_summary: PortfolioSummary,
    /// Per-ticker totals.
    pub positions_by_ticker: BTreeMap<String, TickerSummary>,
}

/// POST /portfolio-greeks.
pub async fn portfolio_greeks(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<PortfolioPayload>>, ApiError> {
    let request: PortfolioRequest = body::parse(body)?;
    let (positions, prices) = book(&state, request.positions, request.underlying_prices)?;
    let book = risk::portfolio_greeks(&positions, &prices)?;
    Ok(ok(PortfolioPayload {
        portfolio_summary: PortfolioSummary {
            total_delta: book.total_delta_shares,
            total_gamma: book.total_gamma_shares_per_dollar,
            total_theta: book.total_theta_usd_per_day,
            total_vega: book.total_vega_usd_per_vol_point,
            risk_level: book.risk_level.as_str(),
            risk_level_scale: RiskLevelScale::current(),
            delta_exposure_pct: book.delta_exposure_pct,
            daily_decay_pct: book.daily_decay_pct,
            dollar_delta: book.dollar_delta_usd,
            net_value: book.net_value_usd,
            gross_value: book.gross_value_usd,
            unrealized_pnl: book.unrealized_pnl_usd,
            positions_without_entry_price: book.positions_without_entry_price,
            positions_count: positions.len(),
        },
        positions_by_ticker: book
            .by_ticker
            .into_iter()
            .map(|(ticker, t)| {
                (
                    ticker,
                    TickerSummary {
                        delta: t.delta_shares,
                        gamma: t.gamma_shares_per_dollar,
                        theta: t.theta_usd_per_day,
                        vega: t.vega_usd_per_vol_point,
                        value: t.value_usd,
                        dollar_delta: t.dollar_delta_usd,
                        underlying_price: t.underlying_price,
                        positions: t.positions,
                    },
                )
            })
            .collect(),
    }))
}
