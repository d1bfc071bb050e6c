//! `GET /vol-arb-scan?ticker=SPY`: one chain checked for static arbitrage at its executable
//! quotes (butterflies, calendars, put–call parity) and for wings far from their ATM IV.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::pricing::OptionType;
use optics_compute::vol_arb::{
    ButterflyArb, CalendarArb, MIN_EDGE_DOLLARS, ParityViolation, SkewTrade, butterfly_arbs,
    calendar_arbs, parity_violations, skew_rule, skew_trades,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::latest_chain;
use crate::handlers::volatility::Served;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// `basis` of the payload.
pub const ARB_BASIS: &str = "executable quotes: what is bought at its ask, what is sold at its \
     bid, so every arbitrage row is an opportunity at the quotes and needs no model. butterfly: \
     lambda*ask(K1) + (1-lambda)*ask(K3) - bid(K2) over three consecutive two-sided strikes, \
     lambda = (K3-K2)/(K3-K1), below zero; calendar: the ATM total variance iv^2*T of the next \
     expiration below the nearer one's (negative forward variance); parity: call ask - put bid \
     below e^(-rT)(F-K), or call bid - put ask above it, against the expiration's forward and \
     rate; skew: 25-delta wing IV against the ATM IV of its expiration";

/// One butterfly row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ButterflyRow {
    /// Expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// `call` or `put` (the cheaper of the two flies of these strikes).
    pub option_type: &'static str,
    /// Lower wing, dollars.
    pub lower_strike: f64,
    /// Body.
    pub middle_strike: f64,
    /// Upper wing.
    pub upper_strike: f64,
    /// Weight of the lower wing per body sold (the upper's is 1 − it).
    pub lower_weight: f64,
    /// Cost to buy at the quotes, dollars per share (negative: paid to hold it).
    pub butterfly_cost: f64,
    /// The same at the mids.
    pub mid_cost: f64,
    /// −butterfly_cost, dollars per share.
    pub edge: f64,
    /// edge over the body's bid, percent.
    pub edge_pct: f64,
    /// The trade.
    pub strategy: String,
}

impl From<&ButterflyArb> for ButterflyRow {
    fn from(b: &ButterflyArb) -> Self {
        let kind = match b.option_type {
            OptionType::Call => "call",
            OptionType::Put => "put",
        };
        Self {
            expiration: b.expiration,
            option_type: kind,
            lower_strike: b.lower_strike,
            middle_strike: b.middle_strike,
            upper_strike: b.upper_strike,
            lower_weight: b.lower_weight,
            butterfly_cost: b.butterfly_cost,
            mid_cost: b.mid_cost,
            edge: b.edge,
            edge_pct: b.edge_pct,
            strategy: format!(
                "buy {:.4} {kind} at {} and {:.4} at {}, sell one at {}",
                b.lower_weight,
                b.lower_strike,
                1.0 - b.lower_weight,
                b.upper_strike,
                b.middle_strike
            ),
        }
    }
}

/// One calendar row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CalendarRow {
    /// The nearer expiration.
    #[schema(value_type = IsoDate)]
    pub near_expiration: NaiveDate,
    /// The farther one.
    #[schema(value_type = IsoDate)]
    pub far_expiration: NaiveDate,
    /// ATM IV of the nearer, percentage points.
    pub near_atm_iv: f64,
    /// ATM IV of the farther.
    pub far_atm_iv: f64,
    /// Years to the nearer.
    pub near_years: f64,
    /// Years to the farther.
    pub far_years: f64,
    /// (σ₂²T₂ − σ₁²T₁)/(T₂ − T₁), decimal² per year: negative.
    pub forward_variance: f64,
    /// How far the farther ATM IV sits below the least that is no arbitrage, points.
    pub edge_vol_points: f64,
    /// The trade.
    pub strategy: String,
}

impl From<&CalendarArb> for CalendarRow {
    fn from(c: &CalendarArb) -> Self {
        Self {
            near_expiration: c.near_expiration,
            far_expiration: c.far_expiration,
            near_atm_iv: c.near_atm_iv,
            far_atm_iv: c.far_atm_iv,
            near_years: c.near_years,
            far_years: c.far_years,
            forward_variance: c.forward_variance,
            edge_vol_points: c.edge_vol_points,
            strategy: format!(
                "sell the {} ATM straddle, buy the {} ATM straddle (long calendar)",
                c.near_expiration, c.far_expiration
            ),
        }
    }
}

/// One parity row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ParityRow {
    /// Expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// e^{−rT}(F − K), dollars per share.
    pub parity_value: f64,
    /// Call mid − put mid.
    pub mid_difference: f64,
    /// `buy_synthetic` or `sell_synthetic`.
    pub direction: &'static str,
    /// The synthetic at its executable side, dollars per share.
    pub executable: f64,
    /// Beyond parity after the spread, dollars per share.
    pub edge: f64,
    /// European exercise (parity an identity); for American-style options a buy_synthetic row
    /// can be early-exercise value.
    pub european: bool,
}

impl From<&ParityViolation> for ParityRow {
    fn from(p: &ParityViolation) -> Self {
        Self {
            expiration: p.expiration,
            strike: p.strike,
            forward: p.forward,
            parity_value: p.parity_value,
            mid_difference: p.mid_difference,
            direction: p.direction,
            executable: p.executable,
            edge: p.edge,
            european: p.european,
        }
    }
}

/// One skew row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewRow {
    /// Expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// `put` or `call` wing.
    pub wing: &'static str,
    /// ATM IV, percentage points.
    pub atm_iv: f64,
    /// The 25-delta wing's IV.
    pub otm_iv: f64,
    /// otm_iv − atm_iv, points.
    pub skew: f64,
    /// The trade.
    pub strategy: &'static str,
}

impl From<&SkewTrade> for SkewRow {
    fn from(s: &SkewTrade) -> Self {
        Self {
            expiration: s.expiration,
            wing: s.wing,
            atm_iv: s.atm_iv,
            otm_iv: s.otm_iv,
            skew: s.skew,
            strategy: s.strategy,
        }
    }
}

/// The `/vol-arb-scan` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VolArbScanPayload {
    /// The chain scanned.
    pub ticker: String,
    /// Spot, dollars.
    pub stock_price: f64,
    /// Expirations scanned (open ones).
    pub expirations_scanned: usize,
    /// Strike rows scanned.
    pub strikes_scanned: usize,
    /// Butterflies that pay to hold.
    pub butterfly_mispricings: Vec<ButterflyRow>,
    /// Calendars with negative forward variance.
    pub calendar_spreads: Vec<CalendarRow>,
    /// Strikes off parity beyond the spread.
    pub put_call_parity_violations: Vec<ParityRow>,
    /// Wings beyond the skew thresholds.
    pub skew_trades: Vec<SkewRow>,
    /// Rows of the three arbitrage lists.
    pub arbitrage_count: usize,
    /// Rows of all four lists.
    pub total_opportunities: usize,
    /// Smallest edge counted, dollars per share.
    pub min_edge_dollars: f64,
    /// The skew thresholds.
    pub skew_rule: String,
    /// How each check is made.
    pub basis: &'static str,
    /// Unit of the IVs.
    pub iv_unit: &'static str,
    /// Session, instant, freshness, reason, clamps.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /vol-arb-scan?ticker=SPY`.
pub async fn vol_arb_scan(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<VolArbScanPayload>>, ApiError> {
    let ticker = state.covered_ticker(params.ticker("ticker")?.as_str())?;
    let chain = latest_chain(&state, &ticker)?;
    let open = chain.open_expirations();
    // Each open expiration's rows as the chain holds them (no copy of the chain).
    let (mut butterflies, mut parity, mut strikes_scanned) = (Vec::new(), Vec::new(), 0);
    for &expiration in open {
        let rows = chain.rows_of(expiration);
        strikes_scanned += rows.len();
        butterflies.extend(butterfly_arbs(rows).iter().map(ButterflyRow::from));
        parity.extend(parity_violations(rows).iter().map(ParityRow::from));
    }
    let vols: Vec<_> = chain
        .implied()
        .expirations
        .iter()
        .filter(|v| open.contains(&v.expiration))
        .cloned()
        .collect();
    let calendars: Vec<CalendarRow> = calendar_arbs(&vols).iter().map(Into::into).collect();
    let skews: Vec<SkewRow> = skew_trades(&vols).iter().map(Into::into).collect();
    let arbitrage_count = butterflies.len() + calendars.len() + parity.len();
    Ok(ok(VolArbScanPayload {
        ticker: ticker.to_string(),
        stock_price: chain.stock_price(),
        expirations_scanned: open.len(),
        strikes_scanned,
        total_opportunities: arbitrage_count + skews.len(),
        arbitrage_count,
        butterfly_mispricings: butterflies,
        calendar_spreads: calendars,
        put_call_parity_violations: parity,
        skew_trades: skews,
        min_edge_dollars: MIN_EDGE_DOLLARS,
        skew_rule: skew_rule(),
        basis: ARB_BASIS,
        iv_unit: "percentage points",
        served: Served::of(&state, &chain, None, params.clamp_notices()),
    }))
}
