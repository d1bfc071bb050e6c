//! Fixtures of the strategy and risk endpoint tests: an in-memory market with a hand-built
//! SPY chain, a covered ticker without a chain, and independent closed forms (normal CDF,
//! Black–Scholes–Merton delta) to check the endpoints' numbers against.

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
    let g = greeks(&inputs, iv).unwrap();
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
    let now = friday_close();
    let mut rows = Vec::new();
    for expiration in [december(), january()] {
        let years = years_to_expiry(now, expiration);
        for i in 0..=20 {
            let strike = 550.0 + 5.0 * f64::from(i);
            rows.push(ChainRow {
                underlying: "SPY".into(),
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
                call: side("SPY", OptionType::Call, strike, expiration, years),
                put: side("SPY", OptionType::Put, strike, expiration, years),
            });
        }
    }
    ChainView::new(rows).unwrap()
}

/// A router over SPY (with [`spy_chain`]) and IWM (covered, no chain yet).
pub fn app() -> Router {
    let mut book = Book {
        covered: vec!["SPY".into(), "IWM".into(), "QQQ".into()],
        ..Book::default()
    };
    book.chains.insert("SPY".into(), Arc::new(spy_chain()));
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
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
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
