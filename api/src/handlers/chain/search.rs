//! `GET /search`: covered symbols by ticker or company name.

use std::sync::Arc;

use axum::extract::State;
use optics_schemas::{AssetClass, Company};
use serde::Serialize;
use utoipa::ToSchema;

use super::Answer;
use crate::envelope::ok;
use crate::error::ApiError;
use crate::openapi::AssetClassCode;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;

/// Longest `q` accepted by `/search`, characters.
pub const MAX_SEARCH_QUERY_CHARS: usize = 64;

/// One match of `/search`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SearchResult {
    /// The symbol.
    pub symbol: String,
    /// Company, fund or index name.
    pub name: String,
    /// GICS sector; `null` for indices and broad ETFs.
    pub sector: Option<String>,
    /// `mega` (≥ $200B), `large` (≥ $10B), `mid` (≥ $2B), `small` (≥ $300M), `micro`; `null`
    /// for funds and indices (no market cap).
    pub market_cap_tier: Option<&'static str>,
    /// `INDEX`, `ETF` or `STOCK`.
    #[schema(value_type = AssetClassCode)]
    pub asset_class: AssetClass,
    /// How it matched: `symbol`, `symbol_prefix`, `name_prefix`, `name`, `symbol_contains`.
    pub matched_on: &'static str,
}

/// `GET /search`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchPayload {
    /// The query as given (trimmed).
    pub query: String,
    /// Matches, best first.
    pub results: Vec<SearchResult>,
    /// How many results.
    pub count: usize,
    /// True when the query is exactly a covered symbol (options data is served for it).
    pub supported: bool,
    /// True when the query is exactly a symbol of the coverage universe.
    pub exact_match: bool,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// The market-cap tier of a capitalisation in dollars.
pub fn market_cap_tier(market_cap_usd: f64) -> &'static str {
    if market_cap_usd >= 200e9 {
        "mega"
    } else if market_cap_usd >= 10e9 {
        "large"
    } else if market_cap_usd >= 2e9 {
        "mid"
    } else if market_cap_usd >= 300e6 {
        "small"
    } else {
        "micro"
    }
}

/// How well `company` matches the upper-case query: lower rank is better; `None` = no match.
fn match_rank(company: &Company, query_upper: &str) -> Option<(u8, &'static str)> {
    let symbol = company.symbol.as_str();
    let name = company.name.to_uppercase();
    if symbol == query_upper {
        Some((0, "symbol"))
    } else if symbol.starts_with(query_upper) {
        Some((1, "symbol_prefix"))
    } else if name.starts_with(query_upper)
        || name
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| word.starts_with(query_upper))
    {
        Some((2, "name_prefix"))
    } else if name.contains(query_upper) {
        Some((3, "name"))
    } else if symbol.contains(query_upper) {
        Some((4, "symbol_contains"))
    } else {
        None
    }
}

/// Covered symbols by symbol or name: exact symbol first, then symbol prefixes, names whose
/// word starts with the query, names containing it; larger market caps first within a rank.
pub async fn search(State(state): State<AppState>, params: QueryParams) -> Answer<SearchPayload> {
    let limit = usize::try_from(params.int("limit")?.value).unwrap_or(1);
    let query = params.text("q")?.unwrap_or_default().to_owned();
    if query.chars().count() > MAX_SEARCH_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "q is at most {MAX_SEARCH_QUERY_CHARS} characters"
        )));
    }
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    if coverage.companies.is_empty() {
        return Err(ApiError::upstream(
            "The coverage universe is not loaded yet; retry in a few seconds",
        ));
    }
    let query_upper = query.to_uppercase();
    let mut matches: Vec<(u8, &'static str, &Arc<Company>)> = coverage
        .companies
        .iter()
        .filter_map(|c| match_rank(c, &query_upper).map(|(rank, how)| (rank, how, c)))
        .collect();
    matches.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(
                b.2.market_cap
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&a.2.market_cap.unwrap_or(f64::INFINITY)),
            )
            .then(a.2.symbol.cmp(&b.2.symbol))
    });
    let results: Vec<SearchResult> = matches
        .into_iter()
        .take(limit)
        .map(|(_, matched_on, c)| SearchResult {
            symbol: c.symbol.clone(),
            name: c.name.clone(),
            sector: c.sector.clone(),
            market_cap_tier: c.market_cap.map(market_cap_tier),
            asset_class: c.asset_class,
            matched_on,
        })
        .collect();
    let exact_match = coverage.get(&query_upper).is_some();
    let supported =
        exact_match && Ticker::parse(&query_upper).is_ok_and(|ticker| reader.covers(&ticker));
    Ok(ok(SearchPayload {
        count: results.len(),
        results,
        supported,
        exact_match,
        query,
        clamped: params.clamp_notices(),
    }))
}
