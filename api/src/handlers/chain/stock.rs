//! `GET /stock/{ticker}`: the underlying price and company profile.

use std::sync::Arc;

use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{AssetClass, Company};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Answer, SessionState};
use crate::envelope::ok;
use crate::error::ApiError;
use crate::extract::CoveredChain;
use crate::freshness::{DataFreshness, Freshness};
use crate::openapi::{AssetClassCode, IsoDate, Timestamp};
use crate::state::AppState;
use crate::ticker::Ticker;

/// `GET /stock/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StockPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// Dollars: the spot the chain is priced on; for cash indices the forward of the nearest
    /// expiration (`priced_on_forward`).
    pub price: f64,
    /// Whether `price` is a forward (cash indices, priced with Black-76).
    pub priced_on_forward: bool,
    /// Company, fund or index name.
    pub company_name: Option<String>,
    /// `INDEX`, `ETF` or `STOCK`.
    #[schema(value_type = Option<AssetClassCode>)]
    pub asset_class: Option<AssetClass>,
    /// GICS sector; `null` for indices and broad ETFs.
    pub sector: Option<String>,
    /// GICS industry within the sector (`Semiconductors & Semiconductor Equipment`); `null`
    /// for indices and funds.
    pub industry: Option<String>,
    /// Market capitalisation, formatted (`$3.45T`); `null` for funds and indices.
    pub market_cap: Option<String>,
    /// Shares traded in the last session of the daily bars on or before `trade_date`,
    /// formatted (`52.31M`); `null` for cash indices (not traded) and without bars.
    pub volume: Option<String>,
    /// The same volume, shares.
    pub volume_shares: Option<u64>,
    /// The session `volume` is from.
    #[schema(value_type = Option<IsoDate>)]
    pub volume_date: Option<NaiveDate>,
    /// Option contracts traded this session across the chain, formatted (`1.25M`).
    pub options_volume: String,
    /// Beta to SPY, formatted to two decimals.
    pub beta: Option<String>,
    /// Next earnings report on or after the chain's session, from the reference data; `null`
    /// when none is scheduled.
    #[schema(value_type = Option<IsoDate>)]
    pub earnings_date: Option<NaiveDate>,
    /// The session the price belongs to.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// When it was priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` when the price belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// The same with the data's session date (the block this payload carried first).
    pub freshness: Freshness,
}

/// Dollars with a magnitude suffix: `$3.45T`, `$512.30B`, `$850.00M`, `$12,345`.
pub fn format_dollars(value: f64) -> String {
    format!("${}", format_magnitude(value))
}

/// A count or amount with a magnitude suffix (`T`, `B`, `M`, `K`), two decimals.
pub fn format_magnitude(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e12 {
        (value / 1e12, "T")
    } else if magnitude >= 1e9 {
        (value / 1e9, "B")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e3 {
        (value / 1e3, "K")
    } else {
        return format!("{value:.0}");
    };
    format!("{scaled:.2}{suffix}")
}

/// Underlying price and company profile.
pub async fn stock(
    State(state): State<AppState>,
    CoveredChain {
        ticker,
        chain: view,
    }: CoveredChain,
) -> Answer<StockPayload> {
    let price = view.stock_price();
    if !price.is_finite() {
        return Err(ApiError::upstream(format!(
            "No usable price for {ticker} in its chain"
        )));
    }
    let coverage = state.market_data()?.coverage();
    let company: Option<&Arc<Company>> = coverage.get(ticker.as_str());
    let options_volume: u64 = view
        .rows
        .iter()
        .map(|r| {
            r.call
                .volume
                .unwrap_or(0)
                .saturating_add(r.put.volume.unwrap_or(0))
        })
        .fold(0, u64::saturating_add);
    // Exact below 2^53 contracts, far beyond any session.
    #[allow(clippy::cast_precision_loss)]
    let options_volume = format_magnitude(options_volume as f64);
    // A cash index's bars carry no shares: it is not traded.
    let is_index = company.is_some_and(|c| c.asset_class == AssetClass::Index);
    let share_volume = coverage
        .share_volume(ticker.as_str(), view.trade_date)
        .filter(|_| !is_index);
    // Exact below 2^53 shares.
    #[allow(clippy::cast_precision_loss)]
    let volume = share_volume.map(|(_, shares)| format_magnitude(shares as f64));
    let freshness = state.freshness_of(view.trade_date);
    Ok(ok(StockPayload {
        price,
        priced_on_forward: view.priced_on_forward(),
        company_name: company.map(|c| c.name.clone()),
        asset_class: company.map(|c| c.asset_class),
        sector: company.and_then(|c| c.sector.clone()),
        industry: company.and_then(|c| c.industry.clone()),
        market_cap: company.and_then(|c| c.market_cap).map(format_dollars),
        volume,
        volume_shares: share_volume.map(|(_, shares)| shares),
        volume_date: share_volume.map(|(date, _)| date),
        options_volume,
        beta: company.map(|c| format!("{:.2}", c.beta_spy)),
        earnings_date: coverage.next_earnings(ticker.as_str(), view.trade_date),
        trade_date: view.trade_date,
        as_of: view.as_of,
        data_type: freshness.data_freshness,
        session: SessionState::from(&freshness),
        freshness,
        ticker,
    }))
}
