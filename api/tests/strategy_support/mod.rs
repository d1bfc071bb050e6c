//! Fixtures of the strategy and risk endpoint tests: an in-memory market with a hand-built
//! SPY chain, a DIA chain whose near-the-money contracts are illiquid, an SPX chain priced on
//! the forward (Black-76) with a different forward per expiration, a covered ticker without a
//! chain, and independent closed forms (normal CDF, Black–Scholes–Merton and Black-76 prices
//! and deltas) to check the endpoints' numbers against.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::http::Method;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use optics_api::market::{self, ChainView, ExposureView, FlowView};
use optics_api::{ApiError, AppState, MarketDataReader, ReadFuture, Ticker};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, greeks};
use optics_compute::time::{ManualClock, years_to_expiry};
use optics_schemas::{
    ChainGreeks, ChainRow, ChainSide, ForwardSource, PricingModelCode, SettlementStyle,
};

use crate::common::{Answer, with_body};

/// Friday 2026-11-20 21:00 UTC = 16:00 New York: whole days to every expiration, so a
/// December 18 expiry is exactly 28 / 365 years away.
pub fn friday_close() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 21, 0, 0).unwrap()
}

/// 2026-12-18, 28 days after [`friday_close`].
pub fn december() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, 18).unwrap()
}

/// 2027-01-15, 56 days after [`friday_close`].
pub fn january() -> NaiveDate {
    NaiveDate::from_ymd_opt(2027, 1, 15).unwrap()
}

pub const SPY_SPOT: f64 = 600.0;
pub const SPY_RATE: f64 = 0.045;
pub const SPY_CARRY: f64 = 0.012;

/// The fixture's IV at a strike: a linear skew, 20 % at the money, +0.1 point a dollar lower.
pub fn spy_iv(strike: f64, expiration: NaiveDate) -> f64 {
    let term = if expiration == december() { 0.0 } else { 0.01 };
    0.20 + term + 0.001 * (SPY_SPOT - strike)
}

/// In-memory market data: chains by ticker and a set of covered tickers.
#[derive(Debug, Default)]
pub struct Book {
    pub chains: BTreeMap<String, Arc<ChainView>>,
    pub covered: Vec<String>,
}

impl MarketDataReader for Book {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.covered.iter().any(|t| t == ticker.as_str())
    }

    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>> {
        self.chains.get(ticker.as_str()).cloned()
    }

    fn exposures(&self, _: &Ticker) -> Option<Arc<ExposureView>> {
        None
    }

    fn flow(&self, _: &Ticker) -> Option<Arc<FlowView>> {
        None
    }

    fn coverage(&self) -> Arc<market::Coverage> {
        Arc::default()
    }

    fn chain_at_time<'a>(
        &'a self,
        _: &'a Ticker,
        _: NaiveDate,
        _: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }
}

fn side(
    underlying: &str,
    option_type: OptionType,
    strike: f64,
    expiration: NaiveDate,
    years: f64,
) -> ChainSide {
    let iv = spy_iv(strike, expiration);
    let inputs = OptionInputs {
        option_type,
        model: PricingModel::BlackScholesMerton,
        underlying: SPY_SPOT,
        strike,
        years,
        rate: SPY_RATE,
        dividend_yield: SPY_CARRY,
    };
    quoted_side(underlying, option_type, strike, expiration, &inputs, iv)
}

/// A side priced by `inputs` at `iv` with a 10-cent market (no bid below 5 cents), open
/// interest 1,000 and volume 100.
fn quoted_side(
    underlying: &str,
    option_type: OptionType,
    strike: f64,
    expiration: NaiveDate,
    inputs: &OptionInputs,
    iv: f64,
) -> ChainSide {
    let g = greeks(inputs, iv).unwrap();
    // A 10-cent market around the model price; no bid below 5 cents.
    let bid = (g.price - 0.05).max(0.0);
    let ask = g.price + 0.05;
    ChainSide {
        option_symbol: Some(format!(
            "{underlying}{}{}{strike}",
            expiration.format("%y%m%d"),
            if option_type == OptionType::Call {
                "C"
            } else {
                "P"
            }
        )),
        quote_time: Some(friday_close()),
        bid: Some(bid),
        ask: Some(ask),
        mid: Some(0.5 * (bid + ask)),
        last: None,
        bid_size: Some(10),
        ask_size: Some(10),
        volume: Some(100),
        open_interest: Some(1_000),
        oi_date: None,
        iv: Some(iv),
        iv_status: None,
        greeks: ChainGreeks {
            delta: Some(g.delta),
            gamma: Some(g.gamma),
            theta: Some(g.theta),
            vega: Some(g.vega),
            ..ChainGreeks::default()
        },
        extrinsic: None,
    }
}

/// SPY at $600, r = 4.5 %, q = 1.2 %, December and January expirations, strikes 550 to 650
/// every $5, sides priced by Black–Scholes–Merton at [`spy_iv`] with a 10-cent market.
pub fn spy_chain() -> ChainView {
    spy_like_chain("SPY", |_| {})
}

/// [`spy_chain`] under another symbol, each row passed through `adjust` (to spoil quotes).
pub fn spy_like_chain(underlying: &str, adjust: impl Fn(&mut ChainRow)) -> ChainView {
    let now = friday_close();
    let mut rows = Vec::new();
    for expiration in [december(), january()] {
        let years = years_to_expiry(now, expiration);
        for i in 0..=20 {
            let strike = 550.0 + 5.0 * f64::from(i);
            let mut row = ChainRow {
                underlying: underlying.into(),
                trade_date: now.date_naive(),
                as_of: now,
                expiration,
                settlement: SettlementStyle::Pm,
                dte: i32::try_from((expiration - now.date_naive()).num_days()).unwrap(),
                years_to_expiry: years,
                strike,
                spot: SPY_SPOT,
                forward: SPY_SPOT * ((SPY_RATE - SPY_CARRY) * years).exp(),
                forward_source: ForwardSource::Carry,
                forward_strike_count: 0,
                rate: SPY_RATE,
                carry_yield: SPY_CARRY,
                model: PricingModelCode::Bsm,
                call: side(underlying, OptionType::Call, strike, expiration, years),
                put: side(underlying, OptionType::Put, strike, expiration, years),
            };
            adjust(&mut row);
            rows.push(row);
        }
    }
    ChainView::new(rows).unwrap()
}

/// SPX, a cash index priced on the forward: spot 6,000, r = 4.5 %.
pub const SPX_SPOT: f64 = 6_000.0;
pub const SPX_RATE: f64 = 0.045;

/// The SPX forward of each expiration: 6,012 in December and 6,024 in January (a carry of
/// about 2.6 % a year, below the rate as with a positive dividend yield), so the money lands
/// on different strikes: 6,010 and 6,020.
pub fn spx_forward(expiration: NaiveDate) -> f64 {
    if expiration == december() {
        6_012.0
    } else {
        6_024.0
    }
}

/// The SPX IV at a strike: 15 % at 6,000, a point more in January, +0.05 point per $10 lower.
pub fn spx_iv(strike: f64, expiration: NaiveDate) -> f64 {
    let term = if expiration == december() { 0.0 } else { 0.01 };
    0.15 + term + 0.000_05 * (SPX_SPOT - strike)
}

/// SPX strikes 5,800 to 6,200 every $10 in December and January, each expiration priced by
/// Black-76 on its own forward ([`spx_forward`]) at [`spx_iv`], with a 10-cent market.
pub fn spx_chain() -> ChainView {
    let now = friday_close();
    let mut rows = Vec::new();
    for expiration in [december(), january()] {
        let years = years_to_expiry(now, expiration);
        let forward = spx_forward(expiration);
        for i in 0..=40 {
            let strike = 5_800.0 + 10.0 * f64::from(i);
            let iv = spx_iv(strike, expiration);
            let priced = |option_type| {
                let inputs = OptionInputs {
                    option_type,
                    model: PricingModel::Black76,
                    underlying: forward,
                    strike,
                    years,
                    rate: SPX_RATE,
                    dividend_yield: 0.0,
                };
                quoted_side("SPX", option_type, strike, expiration, &inputs, iv)
            };
            rows.push(ChainRow {
                underlying: "SPX".into(),
                trade_date: now.date_naive(),
                as_of: now,
                expiration,
                settlement: SettlementStyle::Pm,
                dte: i32::try_from((expiration - now.date_naive()).num_days()).unwrap(),
                years_to_expiry: years,
                strike,
                spot: SPX_SPOT,
                forward,
                forward_source: ForwardSource::Parity,
                forward_strike_count: 5,
                rate: SPX_RATE,
                carry_yield: SPX_RATE - (forward / SPX_SPOT).ln() / years,
                model: PricingModelCode::Black76,
                call: priced(OptionType::Call),
                put: priced(OptionType::Put),
            });
        }
    }
    ChainView::new(rows).unwrap()
}

/// The DIA fixture: [`spy_chain`]'s quotes, with the December puts that the hedge selector
/// would otherwise prefer spoiled: `quiet` strikes get open interest 20 and volume 3, `wide`
/// strikes a market 40 % of the mid wide.
pub fn dia_chain(quiet: &[f64], wide: &[f64]) -> ChainView {
    let (quiet, wide) = (quiet.to_vec(), wide.to_vec());
    spy_like_chain("DIA", move |row| {
        if row.expiration != december() {
            return;
        }
        if quiet.contains(&row.strike) {
            row.put.open_interest = Some(20);
            row.put.volume = Some(3);
        }
        if wide.contains(&row.strike) {
            let mid = row.put.mid.unwrap();
            row.put.bid = Some(0.8 * mid);
            row.put.ask = Some(1.2 * mid);
        }
    })
}

/// The DIA strikes [`app`] spoils: the December puts whose |delta| is nearest 0.5 (600, 605
/// and 595 in that order, recomputed by the risk tests).
pub const DIA_QUIET_STRIKES: [f64; 1] = [600.0];
pub const DIA_WIDE_STRIKES: [f64; 1] = [605.0];

/// A router over SPY (with [`spy_chain`]), SPX ([`spx_chain`]), DIA ([`dia_chain`]) and IWM
/// and QQQ (covered, no chain yet).
pub fn app() -> Router {
    let mut book = Book {
        covered: vec![
            "SPY".into(),
            "IWM".into(),
            "QQQ".into(),
            "SPX".into(),
            "DIA".into(),
        ],
        ..Book::default()
    };
    book.chains.insert("SPY".into(), Arc::new(spy_chain()));
    book.chains.insert("SPX".into(), Arc::new(spx_chain()));
    book.chains.insert(
        "DIA".into(),
        Arc::new(dia_chain(&DIA_QUIET_STRIKES, &DIA_WIDE_STRIKES)),
    );
    let state =
        AppState::new(Arc::new(ManualClock::new(friday_close()))).with_market_data(Arc::new(book));
    optics_api::router(state)
}

/// POST a JSON body to a data endpoint.
pub async fn post(app: &Router, path: &str, body: &serde_json::Value) -> Answer {
    with_body(
        app,
        Method::POST,
        &format!("{}{path}", optics_api::DATA_PREFIX),
        Some("application/json"),
        &body.to_string(),
    )
    .await
}

/// POST raw text as JSON.
pub async fn post_raw(app: &Router, path: &str, body: &str) -> Answer {
    with_body(
        app,
        Method::POST,
        &format!("{}{path}", optics_api::DATA_PREFIX),
        Some("application/json"),
        body,
    )
    .await
}

/// Standard normal CDF through erfc (W. J. Cody's rational approximations as in Numerical
/// Recipes' `erfcc`, relative error below 1.2e-7): independent of the service's own CDF.
pub fn norm_cdf(x: f64) -> f64 {
    optics_tests::reference::normal_cdf(x)
}

/// P(S_T > level) under the lognormal law with forward `forward`: N(d2).
pub fn prob_above(forward: f64, level: f64, vol: f64, years: f64) -> f64 {
    let d2 = ((forward / level).ln() - 0.5 * vol * vol * years) / (vol * years.sqrt());
    norm_cdf(d2)
}

/// Black–Scholes–Merton delta per share.
pub fn bsm_delta(call: bool, spot: f64, strike: f64, years: f64, r: f64, q: f64, vol: f64) -> f64 {
    let d1 = ((spot / strike).ln() + (r - q + 0.5 * vol * vol) * years) / (vol * years.sqrt());
    if call {
        (-q * years).exp() * norm_cdf(d1)
    } else {
        (-q * years).exp() * (norm_cdf(d1) - 1.0)
    }
}

/// |a − b| ≤ tol, with a message.
pub fn close(actual: f64, expected: f64, tol: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: {actual} vs expected {expected} (tolerance {tol})"
    );
}

/// A JSON field as f64 (panics with the body when it is not a number).
pub fn num(value: &serde_json::Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {value}"))
}

/// Black–Scholes–Merton price per share.
pub fn bsm_price(call: bool, spot: f64, strike: f64, years: f64, r: f64, q: f64, vol: f64) -> f64 {
    let sd = vol * years.sqrt();
    let d1 = ((spot / strike).ln() + (r - q + 0.5 * vol * vol) * years) / sd;
    let d2 = d1 - sd;
    let (df, dq) = ((-r * years).exp(), (-q * years).exp());
    if call {
        spot * dq * norm_cdf(d1) - strike * df * norm_cdf(d2)
    } else {
        strike * df * norm_cdf(-d2) - spot * dq * norm_cdf(-d1)
    }
}

/// Black-76 price per share: e^{−rT}[F·N(d1) − K·N(d2)] for a call, the put by parity.
pub fn b76_price(call: bool, forward: f64, strike: f64, years: f64, r: f64, vol: f64) -> f64 {
    let sd = vol * years.sqrt();
    let d1 = ((forward / strike).ln() + 0.5 * sd * sd) / sd;
    let d2 = d1 - sd;
    let df = (-r * years).exp();
    if call {
        df * (forward * norm_cdf(d1) - strike * norm_cdf(d2))
    } else {
        df * (strike * norm_cdf(-d2) - forward * norm_cdf(-d1))
    }
}

/// Black-76 delta per share, with respect to the forward.
pub fn b76_delta(call: bool, forward: f64, strike: f64, years: f64, r: f64, vol: f64) -> f64 {
    let sd = vol * years.sqrt();
    let d1 = ((forward / strike).ln() + 0.5 * sd * sd) / sd;
    let df = (-r * years).exp();
    if call {
        df * norm_cdf(d1)
    } else {
        df * (norm_cdf(d1) - 1.0)
    }
}

/// GET a path under the data prefix.
pub async fn get(app: &Router, path: &str) -> Answer {
    with_body(
        app,
        Method::GET,
        &format!("{}{path}", optics_api::DATA_PREFIX),
        None,
        "",
    )
    .await
}
