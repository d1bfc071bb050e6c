//! `GET /dividend/{ticker}`: the stored dividend history and declared yield, next to the
//! dividend the live chain's forwards imply through put–call parity.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_compute::dividend::{
    ImpliedDividend, Payment, TRAILING_DAYS, annual_totals, cagr_pct, declared_yield_pct,
    growth_pct, implied_dividend, pick_annual, trailing_annual,
};
use optics_compute::time::new_york_date;
use optics_schemas::Dividend;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, no_chain};
use crate::freshness::Freshness;
use crate::openapi::{IsoDate, Timestamp};
use crate::state::AppState;

/// One stored payment, newest first in `history`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DividendPaid {
    /// Ex-dividend date.
    #[schema(value_type = IsoDate)]
    pub ex_date: NaiveDate,
    /// Payment date.
    #[schema(value_type = IsoDate)]
    pub pay_date: NaiveDate,
    /// Dollars per share.
    pub amount: f64,
    /// Schedule label: `MONTHLY`, `QUARTERLY`, `SEMIANNUAL`, `ANNUAL`, `IRREGULAR`, `SPECIAL`.
    pub frequency: &'static str,
}

/// The dividend now (`current`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DividendCurrent {
    /// Latest paid amount (ex-date on or before today), dollars per share.
    pub div_amount: Option<f64>,
    /// The latest payment's schedule label (see `history[].frequency`).
    pub div_freq: Option<&'static str>,
    /// Declared yield: div_amount × payments per year ÷ price × 100, percent.
    pub div_yield: Option<f64>,
    /// Actual annual dividend, dollars per share; how it is measured is in
    /// `annual_actual_basis`.
    pub annual_actual: Option<f64>,
    /// `trailing_12m` (sum of the amounts with an ex-date in the last 365 days, when the
    /// record covers that year) or `latest_x_frequency` (div_amount × payments per year).
    pub annual_actual_basis: Option<&'static str>,
    /// Options-implied annual dividend, dollars per share per year: S − F·e^(−rT), ÷ T, of the
    /// expiration nearest one year (see `implied[]`).
    pub annual_implied: Option<f64>,
    /// annual_implied ÷ annual_actual − 1, percent (negative: the options price less than is
    /// being paid).
    pub implied_vs_actual: Option<f64>,
    /// Ex-date of the next declared dividend (after today), if one is declared.
    #[schema(value_type = Option<IsoDate>)]
    pub next_div_date: Option<NaiveDate>,
    /// Amount of that declared dividend, dollars per share.
    pub next_div_amount: Option<f64>,
    /// One payment's worth of the implied annual dividend: annual_implied ÷ payments per year,
    /// dollars per share.
    pub next_div_implied: Option<f64>,
    /// Latest annualised amount over the annualised amount of the payment nearest one year
    /// earlier (within 45 days), − 1, percent.
    pub div_growth: Option<f64>,
    /// The live chain's stock price the yield is measured on, dollars.
    pub price: f64,
}

/// A complete calendar year's total.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AnnualTotal {
    /// Calendar year.
    pub year: i32,
    /// Sum of the amounts with an ex-date in it, dollars per share.
    pub total: f64,
}

/// The dividend one expiration's forward implies.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ImpliedAtExpiration {
    /// Expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Years to expiry (ACT/365 to its close).
    pub years_to_expiry: f64,
    /// Spot, dollars.
    pub spot: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// How the chain obtained the forward (`PARITY` from quotes, else a carry assumption).
    pub forward_source: &'static str,
    /// Continuous risk-free rate, decimal per year.
    pub rate: f64,
    /// Present value of the dividends before expiry, S − F·e^(−rT), dollars per share.
    pub pv_dividends: f64,
    /// pv_dividends ÷ years_to_expiry, dollars per share per year.
    pub annualised: f64,
}

/// The `/dividend/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DividendPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Whether it pays: a payment in the last 365 days or a declared one ahead.
    pub pays_dividends: bool,
    /// The dividend now.
    pub current: DividendCurrent,
    /// Payments with an ex-date on or before today (New York), newest first.
    pub history: Vec<DividendPaid>,
    /// Compound annual growth of the complete calendar years' totals, percent; null below
    /// two complete years.
    pub cagr: Option<f64>,
    /// The complete calendar years on record (after the first ex-date's year, before this
    /// year), oldest first.
    pub annual_totals: Vec<AnnualTotal>,
    /// Implied dividend per open expiration, nearest first.
    pub implied: Vec<ImpliedAtExpiration>,
    /// GICS sector; null for indices and broad ETFs.
    pub sector: Option<String>,
    /// How the figures are measured.
    pub basis: &'static str,
    /// Units of the figures.
    pub units: &'static str,
    /// Why figures are null, when some are.
    pub reason: Option<String>,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The freshness of the chain's session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

const BASIS: &str = "history and declared amounts from the stored dividends table; yield on the \
                     live chain's price; implied dividend per expiration S - F*exp(-rT) from the \
                     chain's forward and rate, annualised over T, the annual figure from the \
                     expiration nearest one year of at least a week (7/365 years)";

const UNITS: &str = "amounts in dollars per share; div_yield, div_growth, cagr and \
                     implied_vs_actual in percent; annual figures in dollars per share per year";

/// `GET /dividend/{ticker}`.
pub async fn dividend(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<DividendPayload>>, ApiError> {
    let market = state.market_data()?;
    let chain = market.chain(&ticker).ok_or_else(|| no_chain(&ticker))?;
    let coverage = market.coverage();
    let today = new_york_date(state.now());
    let price = chain.stock_price();
    let stored = coverage.dividends_of(ticker.as_str());
    let (past, ahead): (Vec<&Dividend>, Vec<&Dividend>) =
        stored.iter().partition(|d| d.ex_date <= today);
    let payments: Vec<Payment> = past
        .iter()
        .map(|d| Payment {
            ex_date: d.ex_date,
            amount: d.amount,
            per_year: d.frequency.payments_per_year(),
        })
        .collect();
    let latest = past.last();
    let per_year = latest.and_then(|d| d.frequency.payments_per_year());
    let next = ahead.first();
    let window_start = today - TimeDelta::days(TRAILING_DAYS);
    let pays_dividends = next.is_some() || past.iter().any(|d| d.ex_date > window_start);
    let (annual_actual, annual_actual_basis) = match (latest, per_year) {
        (None, _) => (None, None),
        (Some(_), _) if past[0].ex_date <= window_start => (
            Some(trailing_annual(&payments, today)),
            Some("trailing_12m"),
        ),
        (Some(d), Some(n)) => (Some(d.amount * f64::from(n)), Some("latest_x_frequency")),
        (Some(_), None) => (
            Some(trailing_annual(&payments, today)),
            Some("trailing_12m"),
        ),
    };

    let mut implied: Vec<(NaiveDate, &'static str, ImpliedDividend, f64, f64, f64)> = Vec::new();
    for &expiration in chain.open_expirations() {
        let Some(row) = chain.rows_of(expiration).first() else {
            continue;
        };
        if let Some(found) = implied_dividend(row.spot, row.forward, row.rate, row.years_to_expiry)
        {
            implied.push((
                expiration,
                row.forward_source.as_str(),
                found,
                row.spot,
                row.forward,
                row.rate,
            ));
        }
    }
    let points: Vec<ImpliedDividend> = implied.iter().map(|i| i.2).collect();
    let annual_implied = pick_annual(&points).map(|d| d.annualised);
    let implied_vs_actual = match (annual_implied, annual_actual) {
        (Some(i), Some(a)) if a > 0.0 => Some((i / a - 1.0) * 100.0),
        _ => None,
    };

    let mut reasons = Vec::new();
    if stored.is_empty() {
        reasons.push(format!("no dividend on record for {ticker}"));
    } else if !pays_dividends {
        reasons.push(format!(
            "{ticker} has no ex-date in the last {TRAILING_DAYS} days and none declared"
        ));
    }
    if annual_implied.is_none() {
        reasons.push("no open expiration of at least a week with a usable forward".to_owned());
    }
    let totals = annual_totals(&payments, today);
    let cagr = cagr_pct(&totals);
    if cagr.is_none() && !stored.is_empty() {
        reasons.push(format!(
            "cagr needs two complete calendar years with a positive first total; {} on record",
            totals.len()
        ));
    }

    let payload = DividendPayload {
        ticker: ticker.to_string(),
        pays_dividends,
        current: DividendCurrent {
            div_amount: latest.map(|d| d.amount),
            div_freq: latest.map(|d| d.frequency.as_str()),
            div_yield: latest
                .zip(per_year)
                .and_then(|(d, n)| declared_yield_pct(d.amount, n, price)),
            annual_actual,
            annual_actual_basis,
            annual_implied,
            implied_vs_actual,
            next_div_date: next.map(|d| d.ex_date),
            next_div_amount: next.map(|d| d.amount),
            next_div_implied: annual_implied
                .zip(per_year)
                .filter(|_| pays_dividends)
                .map(|(a, n)| a / f64::from(n)),
            div_growth: growth_pct(&payments),
            price,
        },
        history: past
            .iter()
            .rev()
            .map(|d| DividendPaid {
                ex_date: d.ex_date,
                pay_date: d.pay_date,
                amount: d.amount,
                frequency: d.frequency.as_str(),
            })
            .collect(),
        cagr,
        annual_totals: totals
            .iter()
            .map(|&(year, total)| AnnualTotal { year, total })
            .collect(),
        implied: implied
            .iter()
            .map(
                |&(expiration, source, d, spot, forward, rate)| ImpliedAtExpiration {
                    expiration,
                    years_to_expiry: d.years,
                    spot,
                    forward,
                    forward_source: source,
                    rate,
                    pv_dividends: d.pv,
                    annualised: d.annualised,
                },
            )
            .collect(),
        sector: coverage.get(ticker.as_str()).and_then(|c| c.sector.clone()),
        basis: BASIS,
        units: UNITS,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
    };
    Ok(ok(payload))
}
