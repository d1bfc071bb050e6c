//! A small hand-built market for the chain-family tests: SPY with three expirations of 81
//! strikes each (500 to 700 by 2.5), priced with a Black-76 formula written here (not the
//! pricing core's), a cash index (SPX) priced on the forward with a forward per expiration
//! well away from its spot, a covered ticker without a chain, a coverage universe of a few
//! companies with their daily share volumes, and end-of-day history for one past session.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use optics_api::market::{ChainView, Coverage, ExposureView, FlowView, SessionBar};
use optics_api::{ApiError, MarketDataReader, ReadFuture, Ticker};
use optics_schemas::{
    AssetClass, ChainGreeks, ChainRow, ChainSide, Company, ForwardSource, NoIvReason,
    PricingModelCode, SettlementStyle,
};

/// The session of the live chain (Friday 2026-11-20).
pub fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

/// A past session carried in history (Thursday 2026-11-19).
pub fn past_session() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 19).unwrap()
}

/// When the live chain was priced: 14:59 UTC on the trade date.
pub fn as_of() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 14, 59, 0).unwrap()
}

/// SPY's spot.
pub const SPOT: f64 = 600.4;

/// SPX's spot: below every forward of the fixture, so a payload quoting the spot instead of
/// the forward is caught.
pub const SPX_SPOT: f64 = 6010.0;

/// SPX's expirations (the dates of [`expirations`]) with their forward and ATM vol.
pub fn spx_expirations() -> Vec<(NaiveDate, f64, f64)> {
    expirations()
        .into_iter()
        .zip([(6012.5, 0.15), (6019.0, 0.17), (6036.0, 0.19)])
        .map(|((date, _, _), (forward, vol))| (date, forward, vol))
        .collect()
}

/// SPX's forward for 2026-12-18 at the close of [`past_session`].
pub const SPX_PAST_FORWARD: f64 = 6027.5;

/// Strikes of SPX: 5500 to 6500 by 12.5.
pub fn spx_strikes() -> Vec<f64> {
    (0..=80).map(|i| 5500.0 + 12.5 * f64::from(i)).collect()
}
/// The three listed expirations, with their forward and ATM vol.
pub fn expirations() -> Vec<(NaiveDate, f64, f64)> {
    vec![
        (NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(), 600.45, 0.14),
        (NaiveDate::from_ymd_opt(2026, 11, 27).unwrap(), 600.9, 0.16),
        (NaiveDate::from_ymd_opt(2026, 12, 18).unwrap(), 602.3, 0.18),
    ]
}

/// Strikes of every expiration.
pub fn strikes() -> Vec<f64> {
    (0..=80).map(|i| 500.0 + 2.5 * f64::from(i)).collect()
}

/// Strike whose call has no two-sided quote (no IV, no Greeks).
pub const ONE_SIDED_CALL_STRIKE: f64 = 690.0;
/// Strike whose put is not listed.
pub const UNLISTED_PUT_STRIKE: f64 = 700.0;

/// Standard normal CDF (Abramowitz and Stegun 7.1.26 erf, |error| < 1.5e-7).
pub fn norm_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Black-76 call and put values and deltas (undiscounted: rate 0 in the fixture).
fn black76(forward: f64, strike: f64, vol: f64, years: f64) -> (f64, f64, f64, f64) {
    let sd = vol * years.sqrt();
    let d1 = (forward / strike).ln() / sd + 0.5 * sd;
    let d2 = d1 - sd;
    let call = forward * norm_cdf(d1) - strike * norm_cdf(d2);
    let put = call - forward + strike;
    (call, put, norm_cdf(d1), norm_cdf(d1) - 1.0)
}

fn occ(underlying: &str, expiration: NaiveDate, right: char, strike: f64) -> String {
    // Whole thousandths of a dollar; strikes here are multiples of 2.5.
    let thousandths = (strike * 1000.0).round() as u64;
    format!(
        "{underlying}{}{right}{thousandths:08}",
        expiration.format("%y%m%d")
    )
}

#[allow(clippy::too_many_arguments)]
fn side(
    symbol: String,
    mid: f64,
    delta: f64,
    vol: f64,
    forward: f64,
    strike: f64,
    call: bool,
    volume: u64,
    oi: u64,
) -> ChainSide {
    let half_spread = (0.01 * mid).max(0.01);
    let intrinsic = if call {
        (forward - strike).max(0.0)
    } else {
        (strike - forward).max(0.0)
    };
    ChainSide {
        option_symbol: Some(symbol),
        quote_time: Some(as_of()),
        bid: Some(mid - half_spread),
        ask: Some(mid + half_spread),
        mid: Some(mid),
        last: Some(mid + 0.01),
        bid_size: Some(10),
        ask_size: Some(12),
        volume: Some(volume),
        open_interest: Some(oi),
        oi_date: Some(past_session()),
        iv: Some(vol),
        iv_status: None,
        greeks: ChainGreeks {
            delta: Some(delta),
            gamma: Some(0.001 * (1.0 + (strike - forward).abs() / 100.0).recip()),
            theta: Some(-0.05 - mid / 100.0),
            vega: Some(0.2 + mid / 50.0),
            rho: Some(if call { 0.03 } else { -0.03 }),
            epsilon: Some(if call { -0.031 } else { 0.031 }),
            ..ChainGreeks::default()
        },
        extrinsic: Some((mid - intrinsic).max(0.0)),
    }
}

/// The rows of `underlying` for one expiration priced on `trade_date` at `as_of`.
pub fn rows_for(
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    expiration: NaiveDate,
    forward: f64,
    atm_vol: f64,
) -> Vec<ChainRow> {
    let quote = Quoting {
        spot: SPOT,
        model: PricingModelCode::Bsm,
        strikes: strikes(),
    };
    priced_rows(
        underlying, &quote, trade_date, as_of, expiration, forward, atm_vol,
    )
}

/// What an underlying's rows are quoted against.
pub struct Quoting {
    /// Spot, dollars.
    pub spot: f64,
    /// `Bsm` for stocks and ETFs, `Black76` for cash indices (priced on the forward).
    pub model: PricingModelCode,
    /// Listed strikes, ascending.
    pub strikes: Vec<f64>,
}

/// SPX's quoting.
pub fn spx_quoting() -> Quoting {
    Quoting {
        spot: SPX_SPOT,
        model: PricingModelCode::Black76,
        strikes: spx_strikes(),
    }
}

/// The rows of `underlying` quoted as `quote` says for one expiration.
pub fn priced_rows(
    underlying: &str,
    quote: &Quoting,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    expiration: NaiveDate,
    forward: f64,
    atm_vol: f64,
) -> Vec<ChainRow> {
    let dte = i32::try_from((expiration - trade_date).num_days()).unwrap();
    // 16:00 New York is 21:00 UTC in November; at least a quarter of a day for the 0DTE.
    let years = (f64::from(dte) + 0.25) / 365.0;
    quote
        .strikes
        .iter()
        .copied()
        .enumerate()
        .map(|(i, strike)| {
            let vol = atm_vol + 0.0004 * (strike - forward).abs();
            let (call_value, put_value, call_delta, put_delta) =
                black76(forward, strike, vol, years);
            let i = u64::try_from(i).unwrap();
            let mut call = side(
                occ(underlying, expiration, 'C', strike),
                call_value.max(0.01),
                call_delta,
                vol,
                forward,
                strike,
                true,
                100 + 7 * i,
                1000 + 13 * i,
            );
            let mut put = side(
                occ(underlying, expiration, 'P', strike),
                put_value.max(0.01),
                put_delta,
                vol,
                forward,
                strike,
                false,
                200 + 3 * i,
                2000 + 11 * i,
            );
            if strike == ONE_SIDED_CALL_STRIKE {
                call.bid = Some(0.0);
                call.mid = None;
                call.iv = None;
                call.iv_status = Some(NoIvReason::NoTwoSidedQuote);
                call.greeks = ChainGreeks::default();
                call.extrinsic = None;
            }
            if strike == UNLISTED_PUT_STRIKE {
                put = ChainSide::default();
            }
            ChainRow {
                underlying: underlying.to_owned(),
                trade_date,
                as_of,
                expiration,
                settlement: SettlementStyle::Pm,
                dte,
                years_to_expiry: years,
                strike,
                spot: quote.spot,
                forward,
                forward_source: ForwardSource::Parity,
                forward_strike_count: 6,
                rate: 0.043,
                carry_yield: 0.012,
                model: quote.model,
                call,
                put,
            }
        })
        .collect()
}

/// SPY's live chain.
pub fn spy_rows() -> Vec<ChainRow> {
    expirations()
        .into_iter()
        .flat_map(|(expiration, forward, vol)| {
            rows_for("SPY", trade_date(), as_of(), expiration, forward, vol)
        })
        .collect()
}

/// SPX's live chain, priced on the forward.
pub fn spx_rows() -> Vec<ChainRow> {
    let quote = spx_quoting();
    spx_expirations()
        .into_iter()
        .flat_map(|(expiration, forward, vol)| {
            priced_rows(
                "SPX",
                &quote,
                trade_date(),
                as_of(),
                expiration,
                forward,
                vol,
            )
        })
        .collect()
}

/// SPX's end of day on [`past_session`] for 2026-12-18 (forward [`SPX_PAST_FORWARD`]).
pub fn spx_history_rows() -> Vec<ChainRow> {
    let close = Utc.with_ymd_and_hms(2026, 11, 19, 21, 0, 0).unwrap();
    priced_rows(
        "SPX",
        &spx_quoting(),
        past_session(),
        close,
        NaiveDate::from_ymd_opt(2026, 12, 18).unwrap(),
        SPX_PAST_FORWARD,
        0.2,
    )
}

/// AAPL's live chain: the nearest expiration only (spot [`SPOT`] too; only the profile
/// differs).
pub fn aapl_rows() -> Vec<ChainRow> {
    let (expiration, forward, vol) = expirations()[0];
    rows_for("AAPL", trade_date(), as_of(), expiration, forward, vol)
}

/// SPY's end of day on [`past_session`] for 2026-12-18 (forward 598.0).
pub fn spy_history_rows() -> Vec<ChainRow> {
    let close = Utc.with_ymd_and_hms(2026, 11, 19, 21, 0, 0).unwrap();
    rows_for(
        "SPY",
        past_session(),
        close,
        NaiveDate::from_ymd_opt(2026, 12, 18).unwrap(),
        598.0,
        0.19,
    )
}

fn company(
    symbol: &str,
    name: &str,
    asset_class: AssetClass,
    (sector, industry): (Option<&str>, Option<&str>),
    market_cap: Option<f64>,
    beta: f64,
) -> Arc<Company> {
    Arc::new(Company {
        symbol: symbol.to_owned(),
        name: name.to_owned(),
        asset_class,
        sector: sector.map(str::to_owned),
        sector_etf: None,
        market_cap,
        beta_spy: beta,
        corr_spy: 0.8,
        priced_on_forward: asset_class == AssetClass::Index,
        industry: industry.map(str::to_owned),
    })
}

/// The coverage universe, sorted by symbol.
pub fn companies() -> Vec<Arc<Company>> {
    let tech = Some("Information Technology");
    let mut companies = vec![
        company(
            "SPY",
            "SPDR S&P 500 ETF Trust",
            AssetClass::Etf,
            (None, None),
            None,
            1.0,
        ),
        company(
            "AAPL",
            "Apple Inc.",
            AssetClass::Stock,
            (tech, Some("Technology Hardware, Storage & Peripherals")),
            Some(3.45e12),
            1.21,
        ),
        company(
            "APLD",
            "Applied Digital Corporation",
            AssetClass::Stock,
            (tech, Some("IT Services")),
            Some(1.5e9),
            2.4,
        ),
        company(
            "AMAT",
            "Applied Materials, Inc.",
            AssetClass::Stock,
            (tech, Some("Semiconductors & Semiconductor Equipment")),
            Some(140e9),
            1.6,
        ),
        company(
            "PAPL",
            "Pineapple Holdings",
            AssetClass::Stock,
            (Some("Consumer Staples"), Some("Food Products")),
            Some(150e6),
            0.7,
        ),
        company(
            "SPX",
            "S&P 500 Index",
            AssetClass::Index,
            (None, None),
            None,
            1.0,
        ),
        company(
            "NOCH",
            "No Chain Yet Corp.",
            AssetClass::Stock,
            (tech, Some("Software")),
            Some(5e9),
            1.1,
        ),
    ];
    companies.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    companies
}

/// Shares traded per session, as the daily bars carry them: AAPL has a bar after the chain's
/// session (a store whose bars run ahead of its chain) and one on it; SPY's bars stop a session
/// before the chain's; SPX, a cash index, has bars of zero shares; the others have none.
pub fn share_volumes() -> BTreeMap<String, Vec<(NaiveDate, u64)>> {
    let day = |d: u32| NaiveDate::from_ymd_opt(2026, 11, d).unwrap();
    BTreeMap::from([
        (
            "AAPL".to_owned(),
            vec![
                (day(18), 41_000_000),
                (day(19), 52_310_000),
                (day(20), 48_126_700),
                (day(23), 60_000_000),
            ],
        ),
        (
            "SPY".to_owned(),
            vec![(day(18), 66_400_000), (day(19), 70_512_300)],
        ),
        ("SPX".to_owned(), vec![(day(19), 0), (day(20), 0)]),
    ])
}

/// Bars carrying `volumes` (prices are not read by the chain family: a flat 100).
pub fn bars_with(
    volumes: BTreeMap<String, Vec<(NaiveDate, u64)>>,
) -> BTreeMap<String, Vec<SessionBar>> {
    volumes
        .into_iter()
        .map(|(symbol, days)| {
            let bars = days
                .into_iter()
                .map(|(date, volume)| SessionBar {
                    date,
                    open: 100.0,
                    high: 100.0,
                    low: 100.0,
                    close: 100.0,
                    volume,
                })
                .collect();
            (symbol, bars)
        })
        .collect()
}

/// An in-memory reader.
#[derive(Debug, Default)]
pub struct MemoryMarket {
    pub chains: BTreeMap<String, Arc<ChainView>>,
    pub covered: BTreeSet<String>,
    pub coverage: Arc<Coverage>,
    pub history: Vec<ChainRow>,
}

impl MemoryMarket {
    /// SPY, AAPL and SPX with their chains, SPY's and SPX's history, NOCH covered without a
    /// chain, the companies and share volumes above.
    pub fn spy() -> Self {
        let companies = companies();
        Self {
            chains: BTreeMap::from([
                (
                    "SPY".to_owned(),
                    Arc::new(ChainView::new(spy_rows()).unwrap()),
                ),
                (
                    "AAPL".to_owned(),
                    Arc::new(ChainView::new(aapl_rows()).unwrap()),
                ),
                (
                    "SPX".to_owned(),
                    Arc::new(ChainView::new(spx_rows()).unwrap()),
                ),
            ]),
            covered: companies.iter().map(|c| c.symbol.clone()).collect(),
            coverage: Arc::new(Coverage {
                companies,
                bars: Arc::new(bars_with(share_volumes())),
                ..Coverage::default()
            }),
            history: spy_history_rows()
                .into_iter()
                .chain(spx_history_rows())
                .collect(),
        }
    }
}

impl MarketDataReader for MemoryMarket {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.covered.contains(ticker.as_str())
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

    fn coverage(&self) -> Arc<Coverage> {
        self.coverage.clone()
    }

    fn chain_at_time<'a>(
        &'a self,
        ticker: &'a Ticker,
        trade_date: NaiveDate,
        expiration: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        let rows: Vec<ChainRow> = self
            .history
            .iter()
            .filter(|r| {
                r.underlying == ticker.as_str()
                    && r.trade_date == trade_date
                    && r.expiration == expiration
            })
            .cloned()
            .collect();
        Box::pin(async move { Ok((!rows.is_empty()).then_some(rows)) })
    }

    fn expirations_at<'a>(
        &'a self,
        ticker: &'a Ticker,
        trade_date: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<NaiveDate>>, ApiError>> {
        let mut listed: Vec<NaiveDate> = self
            .history
            .iter()
            .filter(|r| r.underlying == ticker.as_str() && r.trade_date == trade_date)
            .map(|r| r.expiration)
            .collect();
        listed.sort_unstable();
        listed.dedup();
        Box::pin(async move { Ok((!listed.is_empty()).then_some(listed)) })
    }
}
