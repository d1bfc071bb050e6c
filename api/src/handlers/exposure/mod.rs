//! The dealer-exposure family, one file per endpoint: [`gex`], [`gex_batch`],
//! [`cross_index_gex`], [`greeks_exposure`], [`charm`], [`zero_dte`], [`max_pain`],
//! [`expected_move`] and [`expected_move_batch`]. What several of them use (the expiration
//! selection, the per-strike profile, the batch runner) is here.
//!
//! The worker has already run the exposure math (`optics_compute::exposure`) and published
//! per-strike rows and per-expiration summaries ([`ExposureView`]); these handlers select and
//! shape them. The only on-demand computation is the per-contract `detailed[]` list of each
//! expiration, re-derived from the chain with `optics_compute::exposure::contract_exposure`
//! (the worker's own function, so the numbers agree with the published rows).
//!
//! Units: every GEX figure is dollars of dealer delta per 1 % move of the underlying
//! (γ·OI·100·S²·0.01, calls positive and puts negative under the dealer convention); strikes
//! and levels are dollars.

pub mod charm;
pub mod cross_index_gex;
pub mod expected_move;
pub mod expected_move_batch;
pub mod gex;
pub mod gex_batch;
pub mod greeks_exposure;
pub mod max_pain;
pub mod zero_dte;

pub(crate) use super::batch::{BatchPayload, batch};

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::NaiveDate;
use optics_compute::exposure::{
    ContractExposure, OpenInterestAtStrike, contract_exposure, contracts_from_chain,
};
use optics_compute::pricing::OptionType;
use optics_schemas::{ChainRow, ExposureRow, ExposureSummaryRow, StrikeKey};

use self::charm::CharmPayload;
use self::cross_index_gex::CrossIndexPayload;
use self::expected_move::ExpectedMovePayload;
use self::gex::{GexPayload, GexProfilePoint};
use self::greeks_exposure::GreeksExposurePayload;
use self::max_pain::MaxPainPayload;
use self::zero_dte::ZeroDtePayload;
use crate::error::ApiError;
use crate::extract::no_chain;
use crate::market::{ChainView, ExposureView};
use crate::openapi::DataSchema;
use crate::registry::Endpoint;
use crate::state::MarketDataReader;
use crate::ticker::Ticker;

/// Dollars per billion, for `total_gex_billions`.
const USD_PER_BILLION: f64 = 1e9;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<GexPayload>(Endpoint::Gex),
        DataSchema::named::<BatchPayload<GexPayload>>(Endpoint::GexBatch, "GexBatchPayload"),
        DataSchema::of::<GreeksExposurePayload>(Endpoint::GreeksExposure),
        DataSchema::of::<CharmPayload>(Endpoint::Charm),
        DataSchema::of::<CrossIndexPayload>(Endpoint::CrossIndexGex),
        DataSchema::of::<ZeroDtePayload>(Endpoint::ZeroDte),
        DataSchema::of::<MaxPainPayload>(Endpoint::MaxPain),
        DataSchema::of::<ExpectedMovePayload>(Endpoint::ExpectedMove),
        DataSchema::named::<BatchPayload<ExpectedMovePayload>>(
            Endpoint::ExpectedMoveBatch,
            "ExpectedMoveBatchPayload",
        ),
    ]
}

/// Which expirations a GEX (or Greek-exposure) request covers: the top-level figures and the
/// per-expiration breakdown (`by_expiration[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GexSelection {
    /// Every expiration summed (the summary's aggregate row); every expiration broken out.
    Aggregate,
    /// `expiration` given: that expiration alone, at the top level and in the breakdown.
    One(NaiveDate),
    /// `aggregate=false` without `expiration`: the nearest expiration that has not expired at
    /// the top level (one expiration only, not a sum), and every expiration broken out.
    EachNearestFirst(NaiveDate),
}

impl GexSelection {
    /// `expiration` wins when given (one expiration instead of the aggregate); otherwise
    /// `aggregate=false` picks the nearest expiration that has not expired for the top level.
    pub(crate) fn from_params(
        expiration: Option<NaiveDate>,
        aggregate: bool,
        exposures: &ExposureView,
    ) -> Result<Self, ApiError> {
        if let Some(expiration) = expiration {
            return Ok(Self::One(expiration));
        }
        if aggregate {
            return Ok(Self::Aggregate);
        }
        exposures
            .summary
            .iter()
            .filter(|s| s.dte.is_some_and(|d| d >= 0))
            .filter_map(|s| s.expiration)
            .min()
            .map(Self::EachNearestFirst)
            .ok_or_else(|| ApiError::upstream("No expiration with dealer exposures yet"))
    }

    /// The expiration of the top-level figures; `None` for the aggregate.
    pub(crate) fn top_expiration(self) -> Option<NaiveDate> {
        match self {
            Self::Aggregate => None,
            Self::One(expiration) | Self::EachNearestFirst(expiration) => Some(expiration),
        }
    }

    /// The summary row of the top-level figures and the per-expiration summaries broken out
    /// (ascending); 400 when a requested expiration is not listed.
    pub(crate) fn resolve<'a>(
        self,
        ticker: &Ticker,
        exposures: &'a ExposureView,
    ) -> Result<(&'a ExposureSummaryRow, Vec<&'a ExposureSummaryRow>), ApiError> {
        let mut listed: Vec<&ExposureSummaryRow> = exposures
            .summary
            .iter()
            .filter(|s| s.expiration.is_some())
            .collect();
        listed.sort_by_key(|s| s.expiration);
        let one = |expiration: NaiveDate| {
            listed
                .iter()
                .find(|s| s.expiration == Some(expiration))
                .copied()
                .ok_or_else(|| not_listed(ticker, expiration, &listed))
        };
        match self {
            Self::Aggregate => {
                let aggregate = exposures
                    .summary
                    .iter()
                    .find(|s| s.expiration.is_none())
                    .ok_or_else(|| no_exposures(ticker))?;
                Ok((aggregate, listed))
            }
            Self::One(expiration) => {
                let top = one(expiration)?;
                Ok((top, vec![top]))
            }
            Self::EachNearestFirst(expiration) => {
                let top = one(expiration)?;
                Ok((top, listed))
            }
        }
    }

    /// Whether `row` enters the top-level figures.
    fn includes(self, row: &ExposureRow) -> bool {
        self.top_expiration().is_none_or(|e| row.expiration == e)
    }
}

/// One strike summed over the selected rows.
#[derive(Debug, Clone, Copy)]
struct StrikeSum {
    point: GexProfilePoint,
    oi: u64,
}

/// Call, put and net GEX per strike over `rows` (any expirations), ascending by strike.
fn strike_profile(rows: &[&ExposureRow]) -> Vec<StrikeSum> {
    let mut sorted: Vec<&ExposureRow> = rows.to_vec();
    sorted.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let mut out: Vec<StrikeSum> = Vec::new();
    for row in sorted {
        let oi = row.call_open_interest.saturating_add(row.put_open_interest);
        match out.last_mut() {
            Some(last) if last.point.strike == row.strike => {
                last.point.call_gex += row.call.gamma;
                last.point.put_gex += row.put.gamma;
                last.point.net_gex += row.net.gamma;
                last.oi = last.oi.saturating_add(oi);
            }
            _ => out.push(StrikeSum {
                point: GexProfilePoint {
                    strike: row.strike,
                    call_gex: row.call.gamma,
                    put_gex: row.put.gamma,
                    net_gex: row.net.gamma,
                },
                oi,
            }),
        }
    }
    out
}

/// The dealer exposures of every contract of one expiration of the chain that has Greeks (an
/// IV) and open interest, computed with the worker's function.
fn contract_exposures(chain: &ChainView, expiration: NaiveDate) -> Vec<ContractExposure> {
    let rows = chain.rows_of(expiration);
    let Ok((contracts, context)) = contracts_from_chain(rows) else {
        return Vec::new();
    };
    contracts
        .iter()
        .filter(|c| c.open_interest > 0)
        .filter_map(|c| contract_exposure(c, &context))
        .collect()
}

fn not_listed(ticker: &Ticker, expiration: NaiveDate, listed: &[&ExposureSummaryRow]) -> ApiError {
    let listed: Vec<String> = listed
        .iter()
        .filter_map(|s| s.expiration)
        .map(|e| e.to_string())
        .collect();
    ApiError::bad_request(format!(
        "expiration {expiration} is not a listed expiration of {ticker}; listed: {}",
        listed.join(", ")
    ))
}

/// The latest chain and exposures of `ticker` (424 while either is missing).
fn chain_and_exposures(
    reader: &dyn MarketDataReader,
    ticker: &Ticker,
) -> Result<(Arc<ChainView>, Arc<ExposureView>), ApiError> {
    let chain = reader.chain(ticker).ok_or_else(|| no_chain(ticker))?;
    let exposures = reader
        .exposures(ticker)
        .ok_or_else(|| no_exposures(ticker))?;
    Ok((chain, exposures))
}

/// The exposure summary of one expiration (424 when the worker has not published it).
fn expiration_summary<'a>(
    ticker: &Ticker,
    exposures: &'a ExposureView,
    expiration: NaiveDate,
) -> Result<&'a ExposureSummaryRow, ApiError> {
    exposures
        .summary
        .iter()
        .find(|s| s.expiration == Some(expiration))
        .ok_or_else(|| {
            ApiError::upstream(format!(
                "No dealer exposures for the {expiration} expiration of {ticker} yet"
            ))
        })
}
fn no_exposures(ticker: &Ticker) -> ApiError {
    ApiError::upstream(format!(
        "No dealer exposures for {ticker} yet (no priced chain); retry in a few seconds"
    ))
}

/// `C` or `P`.
pub(crate) fn type_code(option_type: OptionType) -> &'static str {
    match option_type {
        OptionType::Call => "C",
        OptionType::Put => "P",
    }
}

/// Call and put open interest per listed strike of `rows` (AM and PM series of one
/// expiration summed; several expirations summed too), the input of max pain and of the
/// open-interest walls.
pub(crate) fn open_interest_by_strike(rows: &[ChainRow]) -> Vec<OpenInterestAtStrike> {
    let mut by_strike: BTreeMap<StrikeKey, OpenInterestAtStrike> = BTreeMap::new();
    for row in rows {
        let entry = by_strike
            .entry(StrikeKey::from_dollars(row.strike))
            .or_insert(OpenInterestAtStrike {
                strike: row.strike,
                call: 0,
                put: 0,
            });
        entry.call = entry
            .call
            .saturating_add(row.call.open_interest.unwrap_or(0));
        entry.put = entry.put.saturating_add(row.put.open_interest.unwrap_or(0));
    }
    by_strike.into_values().collect()
}
