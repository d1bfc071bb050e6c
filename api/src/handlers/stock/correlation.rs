//! `GET /correlation/{ticker}`: correlation and beta of daily log returns to SPY and to the
//! best-fitting ETF, with the ticker's IV relative to SPY's.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::correlation::{
    WINDOW_1M, WINDOW_1Y, align, beta, correlation, last_n, log_returns,
};
use optics_compute::time::new_york_date;
use optics_schemas::AssetClass;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::market::Coverage;
use crate::openapi::IsoDate;
use crate::state::AppState;
use crate::ticker::Ticker;

/// One joined return: the session, the ticker's log return, the benchmark's.
type DatedPair = (NaiveDate, f64, f64);

/// The market benchmark.
pub const MARKET: &str = "SPY";

/// `beta`: the ticker's beta to SPY.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Betas {
    /// cov(ticker, SPY) / var(SPY) over the last 21 shared daily log returns; unitless.
    pub beta_1m: Option<f64>,
    /// The same over the last 252 shared returns; unitless.
    pub beta_1y: Option<f64>,
}

/// `correlations`: Pearson correlations of daily log returns, -1 to 1.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Correlations {
    /// To SPY over the last 21 shared returns.
    pub spy_1m: Option<f64>,
    /// To SPY over the last 252 shared returns.
    pub spy_1y: Option<f64>,
    /// To `best_etf` over the last 21 shared returns.
    pub etf_1m: Option<f64>,
    /// To `best_etf` over the last 252 shared returns.
    pub etf_1y: Option<f64>,
}

/// `sample_sizes`: shared daily returns held with each benchmark (a window needs 21 or 252).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SampleSizes {
    /// Returns shared with SPY.
    pub spy: usize,
    /// Returns shared with `best_etf`; 0 when there is none.
    pub etf: usize,
}

/// The `/correlation/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CorrelationPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Last stored daily close on or before today (New York), dollars.
    pub price: Option<f64>,
    /// GICS sector; null for indices and broad ETFs.
    pub sector: Option<String>,
    /// The company's sector SPDR ETF; null for indices and broad ETFs.
    pub sector_etf: Option<String>,
    /// The covered ETF (sector ETF or any covered ETF other than the ticker) with the highest
    /// one-year correlation; null when none has 252 shared returns.
    pub best_etf: Option<String>,
    /// How `best_etf` was chosen and among which candidates.
    pub best_etf_basis: String,
    /// Betas to SPY.
    pub beta: Betas,
    /// Correlations to SPY and to `best_etf`.
    pub correlations: Correlations,
    /// Shared returns behind each figure.
    pub sample_sizes: SampleSizes,
    /// The ticker's 30-day constant-maturity IV over SPY's; unitless.
    pub iv_spy_ratio: Option<f64>,
    /// Where each IV of `iv_spy_ratio` came from (live chain or stored vol_daily row).
    pub iv_basis: String,
    /// How the returns are measured and windowed.
    pub basis: &'static str,
    /// Units of the figures.
    pub units: &'static str,
    /// The last daily bar of the ticker used.
    #[schema(value_type = Option<IsoDate>)]
    pub last_bar: Option<NaiveDate>,
    /// Why any figure is null.
    pub reason: Option<String>,
    /// The freshness of the bars' session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `basis` of the payload.
pub const BASIS: &str = "daily log returns ln(close_t / close_t-1) of the stored daily bars up \
                         to today (New York), joined on the sessions both symbols share; 1m = \
                         last 21 shared returns, 1y = last 252; Pearson correlation; beta = \
                         sample cov(ticker, benchmark) / sample var(benchmark)";

/// Dated log returns of `symbol`'s stored closes on or before `today`.
pub fn returns_of(coverage: &Coverage, symbol: &str, today: NaiveDate) -> Vec<(NaiveDate, f64)> {
    let closes: Vec<(NaiveDate, f64)> = coverage
        .bars_of(symbol)
        .iter()
        .take_while(|b| b.date <= today)
        .map(|b| (b.date, b.close))
        .collect();
    log_returns(&closes)
}

/// `ticker`'s 30-day constant-maturity IV, percent: the live chain's, else the last stored
/// vol_daily row's; with where it came from.
pub async fn iv30d_of(state: &AppState, ticker: &Ticker) -> (Option<f64>, String) {
    let Ok(reader) = state.market_data() else {
        return (None, format!("{ticker}: no market data"));
    };
    if let Some(iv) = reader
        .chain(ticker)
        .and_then(|c| c.implied().constant_maturity.iv30d_pct)
    {
        return (Some(iv), format!("{ticker}: live chain iv30d"));
    }
    let stored = reader.vol_history(ticker).await.ok().and_then(|s| {
        s.iter()
            .rev()
            .find_map(|r| r.iv30d_pct.map(|iv| (r.trade_date, iv)))
    });
    match stored {
        Some((date, iv)) => (
            Some(iv),
            format!("{ticker}: no live iv30d, stored vol_daily iv30d of {date}"),
        ),
        None => (None, format!("{ticker}: no live or stored iv30d")),
    }
}

/// `GET /correlation/{ticker}`.
pub async fn correlation_of(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<CorrelationPayload>>, ApiError> {
    let today = new_york_date(state.now());
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    let company = coverage.get(ticker.as_str()).cloned();
    let own = returns_of(&coverage, ticker.as_str(), today);
    let last_bar_of = |s: &str| {
        coverage
            .bars_of(s)
            .iter()
            .take_while(|b| b.date <= today)
            .last()
            .copied()
    };
    let last = last_bar_of(ticker.as_str());
    let mut reasons = Vec::new();

    let spy = align(&own, &returns_of(&coverage, MARKET, today));
    let window = |pairs: &[DatedPair], n: usize, f: fn(&[DatedPair]) -> Option<f64>| {
        last_n(pairs, n).and_then(f)
    };

    let sector_etf = company.as_ref().and_then(|c| c.sector_etf.clone());
    let mut candidates: Vec<String> = sector_etf.iter().cloned().collect();
    for c in &coverage.companies {
        let covered = Ticker::parse(&c.symbol).is_ok_and(|t| reader.covers(&t));
        if c.asset_class == AssetClass::Etf && covered && !candidates.contains(&c.symbol) {
            candidates.push(c.symbol.clone());
        }
    }
    candidates.retain(|s| s != ticker.as_str());
    let best = candidates
        .iter()
        .filter_map(|s| {
            let pairs = align(&own, &returns_of(&coverage, s, today));
            window(&pairs, WINDOW_1Y, correlation).map(|c| (s.clone(), c, pairs))
        })
        .reduce(|a, b| if b.1 > a.1 { b } else { a });
    let (best_etf, etf) = match best {
        Some((s, _, pairs)) => (Some(s), pairs),
        None => (None, Vec::new()),
    };

    if last.is_none() {
        reasons.push(format!("no daily bars are stored for {ticker}"));
    }
    if spy.len() < WINDOW_1Y {
        reasons.push(format!(
            "{} daily returns shared with {MARKET}: 1m needs {WINDOW_1M}, 1y needs {WINDOW_1Y}",
            spy.len()
        ));
    }
    if best_etf.is_none() {
        reasons.push(format!(
            "no candidate ETF shares {WINDOW_1Y} daily returns with {ticker}"
        ));
    }
    let (own_iv, own_basis) = iv30d_of(&state, &ticker).await;
    let spy_ticker = Ticker::parse(MARKET)?;
    let (spy_iv, spy_basis) = iv30d_of(&state, &spy_ticker).await;
    let iv_spy_ratio = match (own_iv, spy_iv) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => {
            reasons.push("iv_spy_ratio needs both iv30d figures".to_owned());
            None
        }
    };
    Ok(ok(CorrelationPayload {
        ticker: ticker.to_string(),
        price: last.map(|b| b.close),
        sector: company.as_ref().and_then(|c| c.sector.clone()),
        best_etf_basis: format!(
            "highest 1y correlation of daily log returns among {}",
            if candidates.is_empty() {
                "no covered ETF".to_owned()
            } else {
                candidates.join(", ")
            }
        ),
        sector_etf,
        best_etf,
        beta: Betas {
            beta_1m: window(&spy, WINDOW_1M, beta),
            beta_1y: window(&spy, WINDOW_1Y, beta),
        },
        correlations: Correlations {
            spy_1m: window(&spy, WINDOW_1M, correlation),
            spy_1y: window(&spy, WINDOW_1Y, correlation),
            etf_1m: window(&etf, WINDOW_1M, correlation),
            etf_1y: window(&etf, WINDOW_1Y, correlation),
        },
        sample_sizes: SampleSizes {
            spy: spy.len(),
            etf: etf.len(),
        },
        iv_spy_ratio,
        iv_basis: format!("{own_basis}; {spy_basis}"),
        basis: BASIS,
        units: "correlations -1 to 1; beta and iv_spy_ratio unitless; price in dollars",
        last_bar: last.map(|b| b.date),
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        freshness: state.freshness_of(last.map(|b| b.date).unwrap_or_default()),
    }))
}
