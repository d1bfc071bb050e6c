//! One cycle's CPU work: every dirty underlying's books turned into the batches of the
//! datasets the API serves, in parallel across underlyings (rayon; the chain build is itself
//! parallel across contracts). Pure: no I/O, so replay and tests call it directly.

use std::sync::Arc;

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::ExposureSummaryRow;
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::chain as chain_col;
use optics_schemas::columns::exposures as exposure_col;
use optics_schemas::columns::flow as flow_col;
use optics_schemas::columns::flow_aggregates as flow_aggregates_col;
use rayon::prelude::*;

use super::{UnderlyingBook, WorkerError};
use optics_compute::chain::{ChainBatch, ChainMarket, build_chain_with_symbols};
use optics_compute::exposure::{
    ExposureConfig, compute_exposures, exposure_batch, exposure_summary_rows,
};
use optics_compute::flow::{FlowConfig, flow_aggregates_batch, flow_batch, flow_rows_of_accepted};
use optics_compute::pricing::PricingModel;

/// What a cycle prices with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CycleContext {
    /// The instant priced (time to expiry runs from it).
    pub as_of: DateTime<Utc>,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// Build the chain only (see [`super::WorkerConfig::chain_only`]).
    pub chain_only: bool,
}

/// One dataset's snapshot of one underlying, ready to publish.
#[derive(Debug, Clone)]
pub struct DatasetSnapshot {
    /// Dataset name ([`snapshot_datasets`]).
    pub dataset: &'static str,
    /// The session it belongs to.
    pub trade_date: NaiveDate,
    /// The rows, sorted by `sort_columns`.
    pub batch: RecordBatch,
    /// The row order, declared in the file.
    pub sort_columns: &'static [&'static str],
}

/// The `chain` dataset's row order.
pub const CHAIN_SORT: &[&str] = &[
    chain_col::EXPIRATION,
    chain_col::SETTLEMENT,
    chain_col::STRIKE,
];

/// The `exposures` dataset's row order (strikes ascend within an expiration).
pub const EXPOSURES_SORT: &[&str] = &[exposure_col::EXPIRATION];
/// The `exposure_summary` dataset: the aggregate row first, then expirations in order (a
/// handful of rows; no declared order, nothing to prune).
pub const EXPOSURE_SUMMARY_SORT: &[&str] = &[];
/// The `flow` dataset's row order.
pub const FLOW_SORT: &[&str] = &[
    flow_col::EXPIRATION,
    flow_col::STRIKE,
    flow_col::OPTION_TYPE,
];
/// The `flow_aggregates` dataset's row order: the expiration rows (strike null) by expiration,
/// then the strike rows (expiration null) by strike.
pub const FLOW_AGGREGATES_SORT: &[&str] = &[
    flow_aggregates_col::GROUPING,
    flow_aggregates_col::EXPIRATION,
    flow_aggregates_col::STRIKE,
];

/// Builds every underlying's snapshots; the result keeps the input order. An underlying whose
/// build fails carries its error and does not stop the others.
///
/// The underlyings are taken largest book first, one per task: an index's chain is tens of
/// times a small stock's, and started last it would leave the other threads idle at the end of
/// the cycle. (One per task leaves no exposure-input vector to lend from one underlying to the
/// next; lending it through a thread-local made no measurable difference under mimalloc.)
pub fn build_all(
    books: &[(String, Arc<UnderlyingBook>)],
    ctx: &CycleContext,
) -> Vec<(String, Result<Vec<DatasetSnapshot>, WorkerError>)> {
    build_all_then(books, ctx, &|_, _, _| {})
}

/// What [`build_all_then`] calls with each underlying as soon as it is built, on the thread
/// that built it: the underlying, its book, its snapshots or why they could not be built.
pub type AfterBuild<'a> =
    dyn Fn(&str, &UnderlyingBook, &Result<Vec<DatasetSnapshot>, WorkerError>) + Sync + 'a;

/// [`build_all`], calling `after` with each underlying the moment it is built (the worker
/// hands it to the API there, so a small underlying is served without waiting for the index
/// chains of its wave).
pub fn build_all_then(
    books: &[(String, Arc<UnderlyingBook>)],
    ctx: &CycleContext,
    after: &AfterBuild<'_>,
) -> Vec<(String, Result<Vec<DatasetSnapshot>, WorkerError>)> {
    let largest_first = largest_first(books);
    let mut built: Vec<(usize, Result<Vec<DatasetSnapshot>, WorkerError>)> = largest_first
        .par_iter()
        .with_max_len(1)
        .map(|&i| {
            let (underlying, book) = &books[i];
            let snapshots = build_underlying(underlying, book, ctx);
            after(underlying, book, &snapshots);
            (i, snapshots)
        })
        .collect();
    built.sort_unstable_by_key(|&(i, _)| i);
    built
        .into_iter()
        .map(|(i, snapshots)| (books[i].0.clone(), snapshots))
        .collect()
}

/// The positions of `books`, largest book first (ties in their order).
fn largest_first(books: &[(String, Arc<UnderlyingBook>)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..books.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(books[i].1.len()));
    order
}

/// Splits a cycle's `books` into the waves it builds one after the other: largest book first,
/// each wave closed once it holds at least `contracts_per_wave` contracts (so a book larger
/// than that is a wave of its own, and the last wave may be smaller). Every book is in exactly
/// one wave.
pub fn waves(
    books: Vec<(String, Arc<UnderlyingBook>)>,
    contracts_per_wave: usize,
) -> Vec<Vec<(String, Arc<UnderlyingBook>)>> {
    let order = largest_first(&books);
    let mut books: Vec<Option<(String, Arc<UnderlyingBook>)>> =
        books.into_iter().map(Some).collect();
    let mut waves = Vec::new();
    let (mut wave, mut contracts) = (Vec::new(), 0);
    for i in order {
        let Some(book) = books[i].take() else {
            continue;
        };
        contracts += book.1.len();
        wave.push(book);
        if contracts >= contracts_per_wave {
            waves.push(std::mem::take(&mut wave));
            contracts = 0;
        }
    }
    if !wave.is_empty() {
        waves.push(wave);
    }
    waves
}

/// The chain of one underlying as its book stands at `ctx.as_of`: its batch and, unless the
/// cycle is chain-only, the exposure inputs of its contracts.
pub fn chain_of(
    underlying: &str,
    book: &UnderlyingBook,
    ctx: &CycleContext,
) -> Result<Option<ChainBatch>, WorkerError> {
    let Some(trade_date) = book.trade_date() else {
        return Ok(None);
    };
    let spot = book.latest_underlying_price();
    let market = ChainMarket {
        underlying: underlying.to_owned(),
        trade_date,
        as_of: ctx.as_of,
        spot,
        rate: ctx.rate,
        dividend_yield: book.dividend_yield(spot.unwrap_or(0.0)),
        model: if book.priced_on_forward() {
            PricingModel::Black76
        } else {
            PricingModel::BlackScholesMerton
        },
    };
    build_chain_with_symbols(book.quotes(), book.symbols(), &market, !ctx.chain_only)
        .map(Some)
        .map_err(|e| WorkerError::Build {
            underlying: underlying.to_owned(),
            reason: e.to_string(),
        })
}

/// Every dataset of one underlying: its chain, the dealer exposures and their summary (flip
/// levels, walls, key levels, max pain) computed from that chain, and the session flow with
/// its sums by strike and by expiration (one trade date and `as_of` for all).
pub fn build_underlying(
    underlying: &str,
    book: &UnderlyingBook,
    ctx: &CycleContext,
) -> Result<Vec<DatasetSnapshot>, WorkerError> {
    let chain = chain_of(underlying, book, ctx)?;
    let (Some(chain), Some(trade_date)) = (chain, book.trade_date()) else {
        return Ok(Vec::new());
    };
    if chain.batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let build_error = |reason: String| WorkerError::Build {
        underlying: underlying.to_owned(),
        reason,
    };
    let schema_error = |e: optics_schemas::SchemaError| build_error(e.to_string());
    let snapshot = |dataset, batch, sort_columns| DatasetSnapshot {
        dataset,
        trade_date,
        batch,
        sort_columns,
    };
    let ChainBatch {
        batch,
        exposure_inputs,
        ..
    } = chain;
    let chain_snapshot = snapshot(snapshot_datasets::CHAIN, batch, CHAIN_SORT);
    // Absent exactly when the cycle is chain-only (`chain_of` asks for them otherwise).
    let Some((contracts, context)) = exposure_inputs else {
        return Ok(vec![chain_snapshot]);
    };
    let report = compute_exposures(&contracts, &context, &ExposureConfig::default())
        .map_err(|e| build_error(e.to_string()))?;
    let flow = flow_rows_of_accepted(&contracts, context.spot, &FlowConfig::default())
        .map_err(|e| build_error(e.to_string()))?;
    let aggregates = flow_aggregates_batch(&flow, underlying, trade_date, context.as_of)
        .map_err(schema_error)?;
    let flow = flow_batch(&flow, underlying, trade_date, context.as_of).map_err(schema_error)?;

    Ok(vec![
        chain_snapshot,
        snapshot(
            snapshot_datasets::EXPOSURES,
            exposure_batch(&report, trade_date).map_err(schema_error)?,
            EXPOSURES_SORT,
        ),
        snapshot(
            snapshot_datasets::EXPOSURE_SUMMARY,
            ExposureSummaryRow::to_batch_trusted(&exposure_summary_rows(&report, trade_date))
                .map_err(schema_error)?,
            EXPOSURE_SUMMARY_SORT,
        ),
        snapshot(snapshot_datasets::FLOW, flow, FLOW_SORT),
        snapshot(
            snapshot_datasets::FLOW_AGGREGATES,
            aggregates,
            FLOW_AGGREGATES_SORT,
        ),
    ])
}
