//! POST /hedge-recommendations: a share hedge and an option alternative towards a target delta.

use axum::Json;
use axum::extract::State;
use optics_compute::risk::{self, HedgePlan, RiskError};
use serde::Serialize;
use serde_json::Value;

use crate::body;
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::handlers::strategy::market::{first_series_per_strike, open_expirations, side_quote};
use crate::market::ChainView;
use crate::state::AppState;

use super::{
    DEFAULT_HEDGE_TICKER, PositionBody, PositionsBody, PricesBody, book_request, live_price,
    positions, underlying_prices,
};

book_request! {
    /// The body of `/hedge-recommendations`.
    HedgeRequest {
        /// Where to land, share-equivalents (default 0).
        #[serde(default, deserialize_with = "body::number")]
        target_delta: Option<f64>,
        /// The ticker to hedge with (default SPY).
        #[serde(default, deserialize_with = "body::text")]
        hedge_ticker: Option<String>,
    }
}

/// One hedge (`hedges[]`): `type` is `stock` or `option`; the option fields are absent for
/// the stock hedge.
#[derive(Debug, Clone, Serialize)]
pub struct Hedge {
    /// `stock` or `option`.
    #[serde(rename = "type")]
    pub hedge_type: &'static str,
    /// BUY, SELL or SELL SHORT.
    pub action: &'static str,
    /// The hedge ticker.
    pub ticker: String,
    /// Shares (stock hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<f64>,
    /// CALL or PUT (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_type: Option<&'static str>,
    /// Strike, dollars (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strike: Option<f64>,
    /// Expiration (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration: Option<chrono::NaiveDate>,
    /// Whole contracts (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contracts: Option<f64>,
    /// Share-equivalents per contract, 100 × per-share delta (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_per_contract: Option<f64>,
    /// Stock: notional traded, shares × price. Option: premium, contracts × mid × 100 (paid
    /// when buying, received when selling). Dollars.
    pub est_cost: f64,
    /// One sentence.
    pub description: String,
    /// The figures behind it.
    pub details: HedgeDetails,
}

/// The figures behind a hedge.
#[derive(Debug, Clone, Serialize)]
pub struct HedgeDetails {
    /// The hedge ticker's price used, dollars.
    pub hedge_price: f64,
    /// Mid quote per share, dollars (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid: Option<f64>,
    /// Per-share delta, theta ($/day), vega ($/vol point) of the contract (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Per-share theta, dollars per day (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vega: Option<f64>,
    /// Calendar days to the contract's expiry (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days_to_expiry: Option<f64>,
    /// The liquidity figures the contract passed (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<HedgeLiquidity>,
    /// The book's delta after this hedge, share-equivalents.
    pub delta_after: f64,
}

/// Why the option hedge's contract counts as liquid: its figures and the rule they meet
/// ([`risk::liquidity_rule`]).
#[derive(Debug, Clone, Serialize)]
pub struct HedgeLiquidity {
    /// Bid, dollars per share.
    pub bid: f64,
    /// Ask, dollars per share.
    pub ask: f64,
    /// (ask − bid) / mid, percent.
    pub spread_pct_of_mid: f64,
    /// Open interest, contracts (null when the chain does not carry it).
    pub open_interest: Option<u64>,
    /// The session's volume, contracts (null when unknown).
    pub volume: Option<u64>,
    /// The rule in words.
    pub rule: String,
}

/// Net Greeks of the book.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BookGreeks {
    /// Share-equivalents.
    pub total_delta: f64,
    /// Dollars per calendar day.
    pub total_theta: f64,
    /// Dollars per vol point.
    pub total_vega: f64,
}

impl From<risk::HedgeGreeks> for BookGreeks {
    fn from(g: risk::HedgeGreeks) -> Self {
        Self {
            total_delta: g.delta_shares,
            total_theta: g.theta_usd_per_day,
            total_vega: g.vega_usd_per_vol_point,
        }
    }
}

/// The book now and after each hedge.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectedGreeks {
    /// Before hedging.
    pub current: BookGreeks,
    /// After the stock hedge.
    pub after_stock_hedge: BookGreeks,
    /// After the option hedge (null when there is none).
    pub after_option_hedge: Option<BookGreeks>,
}

/// `data` of `/hedge-recommendations`.
#[derive(Debug, Clone, Serialize)]
pub struct HedgePayload {
    /// The book's delta, share-equivalents.
    pub current_delta: f64,
    /// Where to land, share-equivalents.
    pub target_delta: f64,
    /// target − current, share-equivalents.
    pub delta_gap: f64,
    /// The ticker hedged with.
    pub hedge_ticker: String,
    /// Its price used, dollars.
    pub hedge_price: f64,
    /// Share-equivalent, not beta-weighted.
    pub note: &'static str,
    /// The stock hedge, then the option alternative (empty when there is no gap).
    pub hedges: Vec<Hedge>,
    /// Why there is no option alternative, when there is none and a gap.
    pub option_hedge_unavailable: Option<String>,
    /// The book's net Greeks.
    pub portfolio_greeks: BookGreeks,
    /// The book now and after each hedge.
    pub projected_greeks: ProjectedGreeks,
}

fn hedges_of(plan: &HedgePlan, hedge_price: f64) -> Vec<Hedge> {
    let ticker = &plan.hedge_ticker;
    let mut hedges = Vec::new();
    if let Some(stock) = &plan.stock {
        hedges.push(Hedge {
            hedge_type: "stock",
            action: stock.action.as_str(),
            ticker: ticker.clone(),
            quantity: Some(stock.shares),
            option_type: None,
            strike: None,
            expiration: None,
            contracts: None,
            delta_per_contract: None,
            est_cost: stock.est_cost_usd,
            description: format!(
                "{} {} shares of {ticker} to move delta from {:.0} to {:.0}",
                stock.action.as_str(),
                stock.shares,
                plan.current_delta,
                plan.after_stock.delta_shares
            ),
            details: HedgeDetails {
                hedge_price,
                mid: None,
                delta: None,
                theta: None,
                vega: None,
                days_to_expiry: None,
                liquidity: None,
                delta_after: plan.after_stock.delta_shares,
            },
        });
    }
    if let (Some(option), Some(after)) = (&plan.option, &plan.after_option) {
        let c = &option.contract;
        let label = match c.option_type {
            optics_compute::pricing::OptionType::Call => "CALL",
            optics_compute::pricing::OptionType::Put => "PUT",
        };
        let expiration = c.expiration.map(|e| e.to_string()).unwrap_or_default();
        hedges.push(Hedge {
            hedge_type: "option",
            action: option.action.as_str(),
            ticker: ticker.clone(),
            quantity: None,
            option_type: Some(label),
            strike: Some(c.strike),
            expiration: c.expiration,
            contracts: Some(option.contracts),
            delta_per_contract: Some(option.delta_per_contract),
            est_cost: option.est_cost_usd,
            description: format!(
                "{} {} {ticker} {expiration} {} {label} contracts to move delta from {:.0} to {:.0}",
                option.action.as_str(),
                option.contracts,
                c.strike,
                plan.current_delta,
                after.delta_shares
            ),
            details: HedgeDetails {
                hedge_price,
                mid: Some(c.mid),
                delta: Some(c.delta),
                theta: Some(c.theta),
                vega: Some(c.vega),
                days_to_expiry: Some(c.years_to_expiry * optics_compute::time::DAYS_PER_YEAR),
                liquidity: Some(HedgeLiquidity {
                    bid: c.bid,
                    ask: c.ask,
                    spread_pct_of_mid: 100.0 * c.spread_fraction_of_mid(),
                    open_interest: c.open_interest,
                    volume: c.volume,
                    rule: risk::liquidity_rule(),
                }),
                delta_after: after.delta_shares,
            },
        });
    }
    hedges
}

/// Every contract of the hedge ticker's live chain still open at `now`, with the quote,
/// Greeks and activity figures the option hedge's selection reads (sides without a quote,
/// Greeks or IV are left out; the first listed series per strike and date, as the builders
/// read the chain: [`first_series_per_strike`]).
fn hedge_candidates(
    chain: &ChainView,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<risk::HedgeCandidate> {
    use optics_compute::pricing::OptionType;
    let mut candidates = Vec::new();
    for open in open_expirations(chain, now) {
        let rows = first_series_per_strike(chain.rows_of(open.expiration));
        // A strike that is not a number names no contract.
        for row in rows.into_iter().filter(|r| !r.strike.is_nan()) {
            for (option_type, side) in [(OptionType::Call, &row.call), (OptionType::Put, &row.put)]
            {
                if let Some(quote) = side_quote(side) {
                    candidates.push(risk::HedgeCandidate {
                        option_type,
                        strike: row.strike,
                        expiration: Some(open.expiration),
                        years_to_expiry: open.years_to_expiry,
                        quote,
                        open_interest: side.open_interest,
                        volume: side.volume,
                    });
                }
            }
        }
    }
    candidates
}

/// POST /hedge-recommendations: a share hedge and an option alternative on `hedge_ticker`
/// (default SPY) towards `target_delta` (default 0). The hedge ticker's price is the book's
/// (supplied or a STOCK position) when it has one, else the live chain's; the option
/// alternative comes from the live chain.
pub async fn hedge_recommendations(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<HedgePayload>>, ApiError> {
    let request: HedgeRequest = body::parse(body)?;
    let positions = positions(&state, request.positions)?;
    let target_delta = request.target_delta.unwrap_or(0.0);
    if !target_delta.is_finite() || target_delta.abs() > risk::MAX_MAGNITUDE {
        return Err(ApiError::bad_request(
            "target_delta: must be a finite number of share-equivalents",
        ));
    }
    let raw_hedge = request
        .hedge_ticker
        .as_deref()
        .unwrap_or(DEFAULT_HEDGE_TICKER);
    let hedge = state.covered_ticker(raw_hedge)?;
    let prices = underlying_prices(&state, request.underlying_prices, &positions)?;
    let chain = state.market_data()?.chain(&hedge);
    let hedge_price = match prices.iter().find(|p| p.ticker == hedge.as_str()) {
        Some(p) => p.price,
        None => live_price(&state, hedge.as_str())?,
    };
    let book = risk::portfolio_greeks(&positions, &prices)?;
    let gap = target_delta - book.total_delta_shares;
    let (contract, unavailable) = if gap.round() == 0.0 {
        (None, None)
    } else {
        match chain.as_deref() {
            None => (None, Some(format!("no live chain for {hedge}"))),
            Some(chain) => {
                match risk::select_hedge_contract(&hedge_candidates(chain, state.now()), gap) {
                    Ok(contract) => (Some(contract), None),
                    Err(RiskError::NoHedgeContract(reason)) => (None, Some(reason)),
                    Err(other) => return Err(other.into()),
                }
            }
        }
    };
    let plan = risk::hedge_plan(
        &positions,
        &prices,
        hedge.as_str(),
        hedge_price,
        target_delta,
        contract.as_ref(),
    )?;
    Ok(ok(HedgePayload {
        current_delta: plan.current_delta,
        target_delta: plan.target_delta,
        delta_gap: plan.delta_gap,
        hedge_ticker: plan.hedge_ticker.clone(),
        hedge_price,
        note: plan.note,
        hedges: hedges_of(&plan, hedge_price),
        option_hedge_unavailable: unavailable,
        portfolio_greeks: plan.current.into(),
        projected_greeks: ProjectedGreeks {
            current: plan.current.into(),
            after_stock_hedge: plan.after_stock.into(),
            after_option_hedge: plan.after_option.map(Into::into),
        },
    }))
}
