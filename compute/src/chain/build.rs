//! Building a chain snapshot from quotes: select one quote per contract, pair calls and puts
//! by strike, then per expiration (in parallel) find the forward and solve every mid's IV and
//! Greeks in one batch; finally write the `chain` columns from the quotes and the kernel's
//! output (the row-level ones a column at a time, both sides' quote columns in one pass over
//! the rows, each side's Greek column the concatenation of the expirations' kernel output), and
//! the exposure inputs beside them.

use std::sync::Arc;

use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Float64Type, Int32Type, TimestampMicrosecondType, UInt32Type,
    UInt64Type,
};
use arrow_array::{ArrayRef, Float64Array, PrimitiveArray, RecordBatch, StringArray};
use arrow_buffer::{NullBuffer, NullBufferBuilder};
use chrono::{Datelike, NaiveDate};
use optics_schemas::{
    ChainArrays, ChainGreekArrays, ChainGreeks, ChainRow, ChainSideArrays, NoIvReason, OccSymbol,
    OptionQuote, PricingModelCode, Record, SettlementStyle, StrikeKey, calendar_dte, date_to_days,
    text_runs,
};
use rayon::prelude::*;

use super::forward::{ForwardMarket, ParityPair, estimate_forward};
use super::{
    ChainBuildStats, ChainError, ChainMarket, ChainSnapshot, ExpirationForward, SolvedSide,
};
use crate::exposure::{
    ContractAnalytics, UnderlyingContext, forwards_by_date, priced_as_solved, with_greeks,
};
use crate::pricing::{
    ChainColumns, GreekColumns, Greeks, IvStatus, OptionInputs, OptionType, PricingModel,
    implied_vol_and_greeks_batch,
};
use crate::run_cache::RunCache;
use crate::time::years_to_expiry;

/// A chain as an Arrow batch of the `chain` dataset, with what [`build_chain`] reports beside
/// the rows and the exposure inputs of its contracts.
#[derive(Debug, Clone)]
pub struct ChainBatch {
    /// The rows, in the schema of [`optics_schemas::chain_schema`], sorted by expiration,
    /// settlement, strike.
    pub batch: RecordBatch,
    /// Underlying price used, dollars.
    pub spot: f64,
    /// Every expiration (with settlement) of the snapshot in row order, with its forward.
    pub expirations: Vec<ExpirationForward>,
    /// What happened to the quotes.
    pub stats: ChainBuildStats,
    /// Every listed side as the exposure, flow and expected-move functions take it, with the
    /// underlying's market for them: exactly [`crate::exposure::contracts_from_chain`] of the
    /// batch's rows (tested), with the kernel's Greeks reused where it solved them on the
    /// inputs recomputing them would use. `None` when the build was not asked for them (a
    /// chain-only cycle publishes the chain alone).
    pub exposure_inputs: Option<(Vec<ContractAnalytics>, UnderlyingContext)>,
}

/// [`build_chain`] over an `option_quotes` batch (validated on the way in, see
/// [`OptionQuote::from_batch`]), returning the rows as a `chain` batch whose every value rule
/// is checked ([`optics_schemas::chain_snapshot::validate_chain_batch`]).
pub fn build_chain_batch(
    quotes: &RecordBatch,
    market: &ChainMarket,
) -> Result<ChainBatch, ChainError> {
    let quotes = OptionQuote::from_batch(quotes)?;
    let mut built = build(&quotes, None, market, true)?;
    built.batch = optics_schemas::chain_snapshot::validate_chain_batch(&built.batch)?;
    Ok(built)
}

/// The parts of an OCC option symbol a chain build checks a quote against: parsed once per
/// contract by a caller that keeps its quotes (the worker's book), see
/// [`build_chain_with_symbols`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContractSymbol {
    /// The symbol's expiration.
    pub expiration: NaiveDate,
    /// The symbol's strike, thousandths of a dollar.
    pub strike_thousandths: u32,
    /// The symbol's type letter.
    pub option_type: optics_schemas::OptionType,
}

impl ContractSymbol {
    /// The parts of `symbol`, or `None` when it is not an OCC symbol.
    pub fn parse(symbol: &str) -> Option<Self> {
        let occ = OccSymbol::parse(symbol).ok()?;
        Some(Self {
            expiration: occ.expiration,
            strike_thousandths: occ.strike_thousandths,
            option_type: occ.option_type,
        })
    }
}

/// Builds the chain snapshot of `market.underlying` from its quotes (see the
/// [module documentation](super) for every rule), as rows: the batch of [`build_chain_batch`]
/// read back ([`ChainRow::from_batch`], every rule checked on the way).
///
/// Errors: an unusable market field, a quote of another underlying, or no spot at all.
/// Malformed and expired quotes are not errors: they are left out and counted.
pub fn build_chain(
    quotes: &[OptionQuote],
    market: &ChainMarket,
) -> Result<ChainSnapshot, ChainError> {
    let built = build(quotes, None, market, false)?;
    Ok(ChainSnapshot {
        underlying: market.underlying.clone(),
        trade_date: market.trade_date,
        as_of: market.as_of,
        spot: built.spot,
        model: market.model,
        rows: ChainRow::from_batch(&built.batch)?,
        expirations: built.expirations,
        stats: built.stats,
    })
}

/// The worker's build: the `chain` batch and exposure inputs of [`build_chain`]'s rows,
/// columns written straight from the quotes and the kernel's output (no rows in between), with
/// every quote's symbol already parsed: `symbols[i]` is [`ContractSymbol::parse`] of
/// `quotes[i].option_symbol` (the same snapshot; checked in debug builds). Quotes already in
/// row order (expiration, settlement, strike, call before put) are not sorted again. A
/// `symbols` of another length than `quotes` is ignored. Value rules are checked in debug
/// builds only ([`ChainArrays::into_batch_trusted`]). The exposure inputs are derived only when
/// `with_exposure_inputs`.
pub fn build_chain_with_symbols(
    quotes: &[OptionQuote],
    symbols: &[Option<ContractSymbol>],
    market: &ChainMarket,
    with_exposure_inputs: bool,
) -> Result<ChainBatch, ChainError> {
    let symbols = (symbols.len() == quotes.len()).then_some(symbols);
    if cfg!(debug_assertions)
        && let Some(symbols) = symbols
    {
        for (quote, symbol) in quotes.iter().zip(symbols) {
            debug_assert_eq!(
                *symbol,
                ContractSymbol::parse(&quote.option_symbol),
                "{}",
                quote.option_symbol
            );
        }
    }
    build(quotes, symbols, market, with_exposure_inputs)
}

/// The order [`build_chain`] selects quotes in: contract (the row order), then quote time,
/// then symbol (the last of a contract wins).
fn selection_order(
    (key_a, a): &(ContractKey, &OptionQuote),
    (key_b, b): &(ContractKey, &OptionQuote),
) -> std::cmp::Ordering {
    key_a
        .cmp(key_b)
        .then(a.quote_time.cmp(&b.quote_time))
        .then(a.option_symbol.cmp(&b.option_symbol))
}

fn build(
    quotes: &[OptionQuote],
    symbols: Option<&[Option<ContractSymbol>]>,
    market: &ChainMarket,
    with_exposure_inputs: bool,
) -> Result<ChainBatch, ChainError> {
    validate_market(market)?;
    let mut stats = ChainBuildStats {
        quotes: quotes.len(),
        ..ChainBuildStats::default()
    };

    // Symbol parsing dominates the checks: classify in parallel, count in order.
    let classes: Vec<QuoteClass> = quotes
        .par_iter()
        .enumerate()
        .map(|(i, quote)| {
            if quote.underlying != market.underlying {
                QuoteClass::OtherUnderlying
            } else if quote.expiration < market.trade_date {
                QuoteClass::Expired
            } else {
                let symbol = match symbols {
                    Some(symbols) => symbols[i],
                    None => ContractSymbol::parse(&quote.option_symbol),
                };
                contract_key(quote, symbol).map_or(QuoteClass::Malformed, QuoteClass::Usable)
            }
        })
        .collect();
    let mut usable: Vec<(ContractKey, &OptionQuote)> = Vec::with_capacity(quotes.len());
    for (row, (quote, class)) in quotes.iter().zip(classes).enumerate() {
        match class {
            QuoteClass::OtherUnderlying => {
                return Err(ChainError::UnderlyingMismatch {
                    expected: market.underlying.clone(),
                    found: quote.underlying.clone(),
                    row,
                });
            }
            QuoteClass::Expired => stats.expired += 1,
            QuoteClass::Malformed => stats.invalid += 1,
            QuoteClass::Usable(key) => usable.push((key, quote)),
        }
    }
    // Stable: equal keys, times and symbols keep input order, so the later input wins below.
    // Input already in that order (a worker's book) is left as it is: the same result.
    if !usable.is_sorted_by(|a, b| selection_order(a, b).is_le()) {
        usable.par_sort_by(selection_order);
    }
    let mut latest: Vec<(ContractKey, &OptionQuote)> = Vec::with_capacity(usable.len());
    for (key, quote) in usable {
        match latest.last_mut() {
            Some(last) if last.0 == key => {
                *last = (key, quote);
                stats.superseded += 1;
            }
            _ => latest.push((key, quote)),
        }
    }
    stats.contracts = latest.len();

    let spot = match market.spot {
        Some(spot) => spot,
        None => latest
            .iter()
            .max_by_key(|(_, q)| q.quote_time)
            .map(|(_, q)| q.underlying_price)
            .ok_or_else(|| ChainError::NoSpot {
                underlying: market.underlying.clone(),
            })?,
    };

    // Expirations are independent: build them in parallel (each solves its own batch), then
    // write the columns in order.
    let built: Vec<ExpirationBuild<'_>> = latest
        .chunk_by(|(a, _), (b, _)| a.expiration == b.expiration && a.settlement == b.settlement)
        .collect::<Vec<_>>()
        .into_par_iter()
        .filter_map(|contracts| {
            // `chunk_by` yields no empty slice.
            let &(key, _) = contracts.first()?;
            let mut expiration =
                ExpirationBuild::new(market, spot, key.expiration, key.settlement, contracts);
            expiration.solve_all(market);
            Some(expiration)
        })
        .collect();
    for expiration in &built {
        stats.open_interest_after_trade_date += expiration.stats.open_interest_after_trade_date;
        stats.priced += expiration.stats.priced;
        stats.solved += expiration.stats.solved;
    }
    let exposure_inputs = with_exposure_inputs.then(|| exposure_inputs_of(&built, market, spot));
    let batch = chain_arrays(&built, market, spot).into_batch_trusted()?;
    Ok(ChainBatch {
        batch,
        spot,
        expirations: built.into_iter().map(|e| e.series).collect(),
        stats,
        exposure_inputs,
    })
}

/// The exposure inputs of a build: the context [`crate::exposure::contracts_from_chain`] reads
/// from the rows, and every listed side.
fn exposure_inputs_of(
    built: &[ExpirationBuild<'_>],
    market: &ChainMarket,
    spot: f64,
) -> (Vec<ContractAnalytics>, UnderlyingContext) {
    let context = UnderlyingContext {
        underlying: market.underlying.clone(),
        spot,
        rate: market.rate,
        // The first row's carry, as `contracts_from_chain` reads it (used for no expiration:
        // every one has a forward).
        dividend_yield: built.first().map_or(0.0, |e| e.series.forward.carry_yield),
        model: market.model,
        forwards: forwards_by_date(
            built
                .iter()
                .map(|e| (e.series.expiration, e.series.forward.forward)),
        ),
        as_of: market.as_of,
    };
    // Written once into a vector of the final size: at scale these are hundreds of bytes per
    // contract, and a concatenation of per-expiration vectors would copy them all again.
    let listed = built
        .iter()
        .flat_map(|e| &e.sides)
        .map(|sides| sides.iter().flatten().count())
        .sum();
    let mut contracts = Vec::with_capacity(listed);
    for expiration in built {
        expiration.push_contracts(&context, &mut contracts);
    }
    (contracts, context)
}

const MIN_YEAR: i32 = 1900;
const MAX_YEAR: i32 = 2199;

fn validate_market(market: &ChainMarket) -> Result<(), ChainError> {
    let invalid = |field, reason| Err(ChainError::InvalidMarket { field, reason });
    if market.underlying.is_empty() {
        return invalid("underlying", "must not be empty");
    }
    let years = MIN_YEAR..=MAX_YEAR;
    if !years.contains(&market.trade_date.year()) {
        return invalid("trade_date", "must lie in 1900–2199");
    }
    if !years.contains(&market.as_of.year()) {
        return invalid("as_of", "must lie in 1900–2199");
    }
    if let Some(spot) = market.spot
        && !(spot > 0.0 && spot.is_finite())
    {
        return invalid("spot", "must be a finite number > 0");
    }
    if !market.rate.is_finite() {
        return invalid("rate", "must be a finite number");
    }
    if !market.dividend_yield.is_finite() {
        return invalid("dividend_yield", "must be a finite number");
    }
    Ok(())
}

/// What [`build_chain`] makes of one quote.
#[derive(Debug, Clone, Copy)]
enum QuoteClass {
    OtherUnderlying,
    Expired,
    Malformed,
    Usable(ContractKey),
}

/// What identifies a contract in a chain; the order is the row order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ContractKey {
    expiration: NaiveDate,
    settlement: SettlementStyle,
    strike: StrikeKey,
    option_type: optics_schemas::OptionType,
}

/// The key of a well-formed quote, or `None` for a malformed one: a non-finite or negative
/// price, a non-positive strike or underlying price, a date out of range, or an OCC symbol that
/// does not parse (`symbol` is its parts) or disagrees with the expiration, type or strike.
fn contract_key(quote: &OptionQuote, symbol: Option<ContractSymbol>) -> Option<ContractKey> {
    let price = |v: f64| v.is_finite() && v >= 0.0;
    let year = |y: i32| (MIN_YEAR..=MAX_YEAR).contains(&y);
    let well_formed = quote.strike.is_finite()
        && quote.strike > 0.0
        && price(quote.bid)
        && price(quote.ask)
        && quote.last.is_none_or(price)
        && quote.underlying_price.is_finite()
        && quote.underlying_price > 0.0
        && year(quote.oi_date.year())
        && year(quote.quote_time.year());
    if !well_formed {
        return None;
    }
    let occ = symbol?;
    let agrees = occ.expiration == quote.expiration
        && occ.option_type == quote.option_type
        && (quote.strike * 1000.0 - f64::from(occ.strike_thousandths)).abs() <= 1e-6;
    agrees.then_some(ContractKey {
        expiration: quote.expiration,
        settlement: quote.settlement,
        strike: StrikeKey::from_thousandths(i64::from(occ.strike_thousandths)),
        option_type: quote.option_type,
    })
}

fn is_two_sided(quote: &OptionQuote) -> bool {
    quote.bid > 0.0 && quote.ask >= quote.bid
}

/// One expiration's input to the batch kernel: a row per strike and side, the calls' rows in
/// strike order and then the puts' (so each side's output is one contiguous block, which the
/// chain's Greek columns copy whole). A side with nothing to solve (not listed, no two-sided
/// quote, no time left) keeps a NaN price, which the kernel answers as invalid input without
/// solving; a side to solve keeps its row ([`BuiltSide::solve`]).
#[derive(Debug)]
struct SolveQueue {
    option_type: Vec<OptionType>,
    underlying: Vec<f64>,
    strike: Vec<f64>,
    years: Vec<f64>,
    rate: Vec<f64>,
    dividend_yield: Vec<f64>,
    price: Vec<f64>,
}

impl SolveQueue {
    /// The rows of `strikes` on `pricing`, every price still NaN.
    fn unpriced(strikes: &[f64], pricing: &ExpirationPricing, rate: f64) -> Self {
        let rows = 2 * strikes.len();
        let mut option_type = vec![OptionType::Call; strikes.len()];
        option_type.resize(rows, OptionType::Put);
        let mut strike = strikes.to_vec();
        strike.extend_from_slice(strikes);
        Self {
            option_type,
            underlying: vec![pricing.underlying; rows],
            strike,
            years: vec![pricing.years; rows],
            rate: vec![rate; rows],
            dividend_yield: vec![pricing.dividend_yield; rows],
            price: vec![f64::NAN; rows],
        }
    }

    /// The row of side `side` (0 call, 1 put) of strike `i` of `strikes` strikes.
    fn row(strikes: usize, side: usize, i: usize) -> usize {
        side * strikes + i
    }
}

/// How one expiration's contracts are valued.
#[derive(Debug, Clone, Copy)]
struct ExpirationPricing {
    years: f64,
    forward: f64,
    /// Spot (BSM) or forward (Black-76): what the pricer takes as its underlying.
    underlying: f64,
    /// The implied carry (BSM) or 0 (Black-76, whose forward already carries it).
    dividend_yield: f64,
    /// e^{−r·max(T, 0)}, the discount of a side's intrinsic value.
    discount: f64,
}

/// One listed side of a row as the build keeps it until the batch is written: the quote it
/// came from (borrowed, not copied) and what was derived from it.
#[derive(Debug, Clone, Copy)]
struct BuiltSide<'q> {
    quote: &'q OptionQuote,
    option_type: OptionType,
    /// (bid + ask)/2 of a two-sided quote.
    mid: Option<f64>,
    extrinsic: Option<f64>,
    /// Whether the open interest is dated on or before the trade date (else not attached).
    oi_attached: bool,
    /// The solved IV.
    iv: Option<f64>,
    /// Why there is no IV (`None` when solved).
    iv_status: Option<NoIvReason>,
    /// Row of the expiration's solve queue and kernel result ([`SolveQueue::row`]): set when
    /// the side is queued, kept only when solved (the Greeks are read from there).
    solve: Option<usize>,
}

impl<'q> BuiltSide<'q> {
    /// The quote, when its open interest (and that interest's date) is attached to the session.
    fn attached_quote(&self) -> Option<&'q OptionQuote> {
        self.oi_attached.then_some(self.quote)
    }
}

/// One expiration (with settlement) of a build: its forward, its strikes with both sides, and
/// the kernel's solve of every side with a mid.
struct ExpirationBuild<'q> {
    /// The expiration and its forward, as the chain reports it.
    series: ExpirationForward,
    pricing: ExpirationPricing,
    strikes: Vec<f64>,
    /// Per strike, the call and the put (in that order) when listed.
    sides: Vec<[Option<BuiltSide<'q>>; 2]>,
    solve: SolveQueue,
    solved: GreekColumns,
    stats: ChainBuildStats,
}

impl<'q> ExpirationBuild<'q> {
    /// The strikes of one expiration (`contracts` sorted by strike, then call before put), with
    /// its forward; every side with a mid and time left queued for the kernel.
    fn new(
        market: &ChainMarket,
        spot: f64,
        expiration: NaiveDate,
        settlement: SettlementStyle,
        contracts: &[(ContractKey, &'q OptionQuote)],
    ) -> Self {
        let years = years_to_expiry(market.as_of, expiration);
        let dte = calendar_dte(market.trade_date, expiration);

        let strikes = pair_by_strike(contracts);
        let pairs: Vec<ParityPair> = strikes
            .iter()
            .filter_map(|&(strike, call, put)| {
                let (call, put) = (call?, put?);
                (is_two_sided(call) && is_two_sided(put)).then_some(ParityPair {
                    strike,
                    call_bid: call.bid,
                    call_ask: call.ask,
                    put_bid: put.bid,
                    put_ask: put.ask,
                })
            })
            .collect();
        let forward = estimate_forward(
            &pairs,
            &ForwardMarket {
                spot,
                rate: market.rate,
                years,
                dividend_yield: market.dividend_yield,
            },
        );
        let pricing = ExpirationPricing {
            years,
            forward: forward.forward,
            underlying: match market.model {
                PricingModel::BlackScholesMerton => spot,
                PricingModel::Black76 => forward.forward,
            },
            dividend_yield: match market.model {
                PricingModel::BlackScholesMerton => forward.carry_yield,
                PricingModel::Black76 => 0.0,
            },
            discount: (-market.rate * years.max(0.0)).exp(),
        };
        // The strikes once: the build's rows and, twice over, the solve queue's.
        let strike_values: Vec<f64> = strikes.iter().map(|&(strike, _, _)| strike).collect();
        let solve = SolveQueue::unpriced(&strike_values, &pricing, market.rate);
        let mut build = Self {
            series: ExpirationForward {
                expiration,
                settlement,
                dte,
                years_to_expiry: years,
                forward,
            },
            pricing,
            strikes: strike_values,
            sides: Vec::with_capacity(strikes.len()),
            solve,
            solved: GreekColumns::default(),
            stats: ChainBuildStats::default(),
        };
        let count = strikes.len();
        for (i, (strike, call, put)) in strikes.into_iter().enumerate() {
            let call = call.map(|q| build.side(market, q, strike, SolveQueue::row(count, 0, i)));
            let put = put.map(|q| build.side(market, q, strike, SolveQueue::row(count, 1, i)));
            build.sides.push([call, put]);
        }
        build
    }

    /// The side of `quote` at `strike` (the symbol's strike, in dollars) and solve-queue row
    /// `row`; prices that row (queues its IV solve) when it has a mid and time left.
    fn side(
        &mut self,
        market: &ChainMarket,
        quote: &'q OptionQuote,
        strike: f64,
        row: usize,
    ) -> BuiltSide<'q> {
        let pricing = self.pricing;
        let oi_attached = quote.oi_date <= market.trade_date;
        if !oi_attached {
            self.stats.open_interest_after_trade_date += 1;
        }
        let option_type = match quote.option_type {
            optics_schemas::OptionType::Call => OptionType::Call,
            optics_schemas::OptionType::Put => OptionType::Put,
        };
        let two_sided = is_two_sided(quote);
        let mid = two_sided.then(|| quote.mid());
        let mut solve = None;
        let iv_status = if !two_sided {
            Some(NoIvReason::NoTwoSidedQuote)
        } else if !(pricing.years > 0.0) {
            Some(NoIvReason::Expired)
        } else {
            // The row's other inputs are already this side's (`SolveQueue::unpriced`).
            self.solve.price[row] = quote.mid();
            self.stats.priced += 1;
            solve = Some(row);
            None
        };
        let extrinsic = mid.and_then(|mid| {
            let payoff = option_type.sign() * (pricing.forward - strike);
            extrinsic_value(
                mid,
                0.5 * (quote.ask - quote.bid),
                pricing.discount * payoff.max(0.0),
            )
        });
        BuiltSide {
            quote,
            option_type,
            mid,
            extrinsic,
            oi_attached,
            iv: None,
            iv_status,
            solve,
        }
    }

    /// Solves every queued mid in one batch; each queued side gets its IV or the reason.
    fn solve_all(&mut self, market: &ChainMarket) {
        let queue = &self.solve;
        self.solved = implied_vol_and_greeks_batch(
            &ChainColumns {
                model: market.model,
                option_type: &queue.option_type,
                underlying: &queue.underlying,
                strike: &queue.strike,
                years: &queue.years,
                rate: &queue.rate,
                dividend_yield: &queue.dividend_yield,
            },
            &queue.price,
        );
        for side in self.sides.iter_mut().flatten().flatten() {
            let Some(i) = side.solve else {
                continue;
            };
            let iv = self.solved.iv[i];
            match no_iv_reason(self.solved.iv_status[i]) {
                None if iv > 0.0 && iv.is_finite() => {
                    side.iv = Some(iv);
                    self.stats.solved += 1;
                }
                None => {
                    side.iv_status = Some(NoIvReason::InvalidInput);
                    side.solve = None;
                }
                reason => {
                    side.iv_status = reason;
                    side.solve = None;
                }
            }
        }
    }

    /// The kernel's inputs and Greeks of queue row `i`.
    fn solved_side(&self, model: PricingModel, i: usize) -> SolvedSide {
        let queue = &self.solve;
        SolvedSide {
            inputs: OptionInputs {
                option_type: queue.option_type[i],
                model,
                underlying: queue.underlying[i],
                strike: queue.strike[i],
                years: queue.years[i],
                rate: queue.rate[i],
                dividend_yield: queue.dividend_yield[i],
            },
            greeks: full_greeks(&self.solved, i),
        }
    }

    /// Appends every listed side as an exposure input (the mapping of
    /// [`crate::exposure::contracts_from_chain`]: a side's open interest only when attached,
    /// missing values as 0), with the kernel's Greeks where they fit `context`.
    fn push_contracts(&self, context: &UnderlyingContext, contracts: &mut Vec<ContractAnalytics>) {
        let contract_of = |strike: f64, side: &BuiltSide<'_>| {
            let quote = side.quote;
            ContractAnalytics {
                expiration: self.series.expiration,
                strike,
                option_type: side.option_type,
                open_interest: if side.oi_attached {
                    quote.open_interest
                } else {
                    0
                },
                volume: quote.volume,
                bid: Some(quote.bid),
                ask: Some(quote.ask),
                mid: side.mid,
                iv: side.iv,
                greeks: None,
                years_to_expiry: self.series.years_to_expiry,
                dte: i64::from(self.series.dte),
            }
        };
        let listed = || {
            self.strikes
                .iter()
                .zip(&self.sides)
                .flat_map(|(&strike, sides)| sides.iter().flatten().map(move |s| (strike, s)))
        };
        // A side has an IV exactly when the kernel solved it, on this expiration's spot or
        // forward, time and carry and its own type and strike. When `context` prices the first
        // solved side on the same inputs bit for bit, it prices every side of the expiration on
        // the kernel's (the rest of the inputs are the side's own), so each solved side takes
        // the kernel's Greeks as they are; otherwise (two settlements sharing one date, whose
        // forward the context keeps once) each side is checked on its own.
        let kernel_inputs_hold = listed()
            .find_map(|(strike, side)| Some((strike, side, side.solve?)))
            .is_none_or(|(strike, side, i)| {
                priced_as_solved(
                    &contract_of(strike, side),
                    context,
                    &self.solved_side(context.model, i),
                )
            });
        for (strike, side) in listed() {
            let contract = contract_of(strike, side);
            contracts.push(if kernel_inputs_hold {
                ContractAnalytics {
                    greeks: side.solve.map(|i| full_greeks(&self.solved, i)),
                    ..contract
                }
            } else {
                let solved = side.solve.map(|i| self.solved_side(context.model, i));
                with_greeks(contract, context, solved)
            });
        }
    }
}

/// A column of one value per row of `built` (`rows` in all), the same for every row of an
/// expiration: `value(expiration)`.
fn row_column<T: ArrowPrimitiveType>(
    built: &[ExpirationBuild<'_>],
    rows: usize,
    value: impl Fn(&ExpirationBuild<'_>) -> T::Native,
) -> ArrayRef {
    let mut data = Vec::with_capacity(rows);
    for e in built {
        data.extend(std::iter::repeat_n(value(e), e.strikes.len()));
    }
    Arc::new(PrimitiveArray::<T>::new(data.into(), None))
}

/// A text column of one value per row, as [`row_column`].
fn row_text(
    built: &[ExpirationBuild<'_>],
    value: impl Fn(&ExpirationBuild<'_>) -> &'static str,
) -> ArrayRef {
    Arc::new(text_runs(built.iter().map(|e| (value(e), e.strikes.len()))))
}

/// The `chain` columns of `built` (in row order): the row-level ones a column at a time (each
/// the same for every row of an expiration, but the strike), the sides' in [`side_arrays`];
/// every value comes from a quote, the expiration's forward or the kernel's output.
fn chain_arrays(built: &[ExpirationBuild<'_>], market: &ChainMarket, spot: f64) -> ChainArrays {
    let rows: usize = built.iter().map(|e| e.strikes.len()).sum();
    let model = PricingModelCode::from(market.model);
    let as_of = market.as_of.timestamp_micros();
    let trade_date = date_to_days(market.trade_date);
    let (call, put) = side_arrays(built, rows);
    ChainArrays {
        underlying: Arc::new(text_runs([(market.underlying.as_str(), rows)])),
        trade_date: row_column::<Date32Type>(built, rows, |_| trade_date),
        as_of: Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::from_value(as_of, rows)
                .with_timezone("UTC"),
        ),
        expiration: row_column::<Date32Type>(built, rows, |e| date_to_days(e.series.expiration)),
        settlement: row_text(built, |e| e.series.settlement.as_str()),
        dte: row_column::<Int32Type>(built, rows, |e| e.series.dte),
        years_to_expiry: row_column::<Float64Type>(built, rows, |e| e.series.years_to_expiry),
        strike: Arc::new(Float64Array::from_iter_values(
            built.iter().flat_map(|e| e.strikes.iter().copied()),
        )),
        spot: row_column::<Float64Type>(built, rows, |_| spot),
        forward: row_column::<Float64Type>(built, rows, |e| e.series.forward.forward),
        forward_source: row_text(built, |e| e.series.forward.source.as_str()),
        // At most MAX_PARITY_STRIKES strikes.
        forward_strike_count: row_column::<UInt32Type>(built, rows, |e| {
            u32::try_from(e.series.forward.strikes_used.len()).unwrap_or(u32::MAX)
        }),
        rate: row_column::<Float64Type>(built, rows, |_| market.rate),
        carry_yield: row_column::<Float64Type>(built, rows, |e| e.series.forward.carry_yield),
        model: Arc::new(text_runs([(model.as_str(), rows)])),
        call,
        put,
    }
}

/// The kernel's Greek columns in the order of [`ChainGreekArrays`]'s fields.
const GREEK_COLUMNS: [fn(&GreekColumns) -> &[f64]; ChainGreeks::COUNT] = [
    |g| &g.delta,
    |g| &g.gamma,
    |g| &g.theta,
    |g| &g.vega,
    |g| &g.rho,
    |g| &g.epsilon,
    |g| &g.vanna,
    |g| &g.charm,
    |g| &g.vomma,
    |g| &g.veta,
    |g| &g.speed,
    |g| &g.zomma,
    |g| &g.color,
    |g| &g.ultima,
];

/// The validity of `valid`: `None` when every value is present (as a builder leaves it).
fn validity(valid: Vec<bool>) -> Option<NullBuffer> {
    let nulls = NullBuffer::from(valid);
    (nulls.null_count() > 0).then_some(nulls)
}

/// One side (call or put) of every row, `None` where the row's strike does not list it.
type RowSides<'b, 'q> = [Option<&'b BuiltSide<'q>>];

/// A column of a value every listed side has (`value` of it) under the side's validity
/// `listed`, 0 under the null of an unlisted side. Collected from the rows in one pass, with no
/// per-value capacity check.
fn listed_array<T: ArrowPrimitiveType>(
    sides: &RowSides<'_, '_>,
    listed: &Option<NullBuffer>,
    value: impl Fn(&BuiltSide<'_>) -> T::Native,
) -> PrimitiveArray<T> {
    let values: Vec<T::Native> = sides
        .iter()
        .map(|s| s.map_or_else(T::Native::default, &value))
        .collect();
    PrimitiveArray::new(values.into(), listed.clone())
}

/// A nullable column: `value` of each listed side, null where it gives none or the side is not
/// listed.
fn nullable_array<T: ArrowPrimitiveType>(
    sides: &RowSides<'_, '_>,
    mut value: impl FnMut(&BuiltSide<'_>) -> Option<T::Native>,
) -> PrimitiveArray<T> {
    sides.iter().map(|s| s.and_then(&mut value)).collect()
}

/// The quote-derived columns of one side (call or put) of every row, each collected in its own
/// pass over the rows' sides. The quote's own fields are present exactly where the side is
/// listed, so they are plain values under one shared validity; the Greeks are gathered column
/// by column ([`side_greek_arrays`]).
fn side_columns(sides: &RowSides<'_, '_>, greeks: ChainGreekArrays) -> ChainSideArrays {
    let listed = validity(sides.iter().map(Option::is_some).collect());
    // Most quotes of a chain carry the same open-interest date: its day number is computed
    // once per change of date rather than once per side.
    let mut oi_days = RunCache::default();
    let text = |value: for<'a> fn(&'a BuiltSide<'a>) -> Option<&'a str>| {
        Arc::new(
            sides
                .iter()
                .map(|s| s.and_then(value))
                .collect::<StringArray>(),
        ) as ArrayRef
    };
    ChainSideArrays {
        option_symbol: text(|s| Some(s.quote.option_symbol.as_str())),
        quote_time: Arc::new(
            listed_array::<TimestampMicrosecondType>(sides, &listed, |s| {
                s.quote.quote_time.timestamp_micros()
            })
            .with_timezone("UTC"),
        ),
        bid: Arc::new(listed_array::<Float64Type>(sides, &listed, |s| s.quote.bid)),
        ask: Arc::new(listed_array::<Float64Type>(sides, &listed, |s| s.quote.ask)),
        mid: Arc::new(nullable_array::<Float64Type>(sides, |s| s.mid)),
        last: Arc::new(nullable_array::<Float64Type>(sides, |s| s.quote.last)),
        bid_size: Arc::new(listed_array::<UInt32Type>(sides, &listed, |s| {
            s.quote.bid_size
        })),
        ask_size: Arc::new(listed_array::<UInt32Type>(sides, &listed, |s| {
            s.quote.ask_size
        })),
        volume: Arc::new(listed_array::<UInt64Type>(sides, &listed, |s| {
            s.quote.volume
        })),
        open_interest: Arc::new(nullable_array::<UInt64Type>(sides, |s| {
            s.attached_quote().map(|q| q.open_interest)
        })),
        oi_date: Arc::new(nullable_array::<Date32Type>(sides, |s| {
            s.attached_quote()
                .map(|q| oi_days.get(q.oi_date, |&date| date_to_days(date)))
        })),
        iv: Arc::new(nullable_array::<Float64Type>(sides, |s| s.iv)),
        iv_status: text(|s| s.iv_status.map(NoIvReason::as_str)),
        greeks,
        extrinsic: Arc::new(nullable_array::<Float64Type>(sides, |s| s.extrinsic)),
    }
}

/// The Greek columns of side `side` (0 call, 1 put) of every row: each the concatenation of
/// the expirations' kernel output for that side (one block per expiration,
/// [`SolveQueue::row`]), with 0 written where the side was not solved. A Greek is present
/// exactly where the side was solved (one validity for all fourteen); a solved side's Greeks are
/// finite, and a non-finite one would be null rather than NaN.
fn side_greek_arrays(built: &[ExpirationBuild<'_>], rows: usize, side: usize) -> ChainGreekArrays {
    let mut solved = NullBufferBuilder::new(rows);
    let mut unsolved: Vec<usize> = Vec::new();
    let every_row = built.iter().flat_map(|e| &e.sides);
    for (row, sides) in every_row.enumerate() {
        let is_solved = sides[side].as_ref().is_some_and(|s| s.solve.is_some());
        if !is_solved {
            unsolved.push(row);
        }
        solved.append(is_solved);
    }
    let solved = solved.finish();
    ChainGreekArrays::from_columns(GREEK_COLUMNS.map(|greek| {
        let mut values = Vec::with_capacity(rows);
        for e in built {
            let strikes = e.strikes.len();
            let block = SolveQueue::row(strikes, side, 0)..SolveQueue::row(strikes, side + 1, 0);
            match greek(&e.solved).get(block) {
                Some(block) => values.extend_from_slice(block),
                // Not reached: every expiration of a build has been solved, a row per side.
                None => values.extend(std::iter::repeat_n(f64::NAN, strikes)),
            }
        }
        // Unsolved rows hold NaN (the kernel's "absent"): 0 under their null, as a builder
        // leaves it.
        for &row in &unsolved {
            values[row] = 0.0;
        }
        let nulls = greek_nulls(&values, solved.as_ref());
        Arc::new(Float64Array::new(values.into(), nulls)) as ArrayRef
    }))
}

/// The validity of one gathered Greek column: the side's (`solved`; `None` when every row
/// was solved), and null too where a value is not finite (unsolved rows hold 0).
fn greek_nulls(values: &[f64], solved: Option<&NullBuffer>) -> Option<NullBuffer> {
    // Without an early exit, so that the test runs in SIMD lanes (every value is finite but
    // for a broken kernel row).
    if values.iter().fold(true, |finite, v| finite & v.is_finite()) {
        solved.cloned()
    } else {
        let finite = NullBuffer::new(values.iter().map(|v| v.is_finite()).collect());
        NullBuffer::union(solved, Some(&finite))
    }
}

/// The call and put columns of every row: the quote-derived ones, then the Greeks.
fn side_arrays(built: &[ExpirationBuild<'_>], rows: usize) -> (ChainSideArrays, ChainSideArrays) {
    let sides_of = |side: usize| -> Vec<Option<&BuiltSide<'_>>> {
        let mut sides = Vec::with_capacity(rows);
        for e in built {
            sides.extend(e.sides.iter().map(|pair| pair[side].as_ref()));
        }
        sides
    };
    (
        side_columns(&sides_of(0), side_greek_arrays(built, rows, 0)),
        side_columns(&sides_of(1), side_greek_arrays(built, rows, 1)),
    )
}

/// The strikes of one expiration with their call and put (`contracts` sorted by strike, call
/// first).
fn pair_by_strike<'q>(
    contracts: &[(ContractKey, &'q OptionQuote)],
) -> Vec<(f64, Option<&'q OptionQuote>, Option<&'q OptionQuote>)> {
    let mut strikes: Vec<(StrikeKey, f64, Option<&OptionQuote>, Option<&OptionQuote>)> =
        Vec::with_capacity(contracts.len() / 2 + 1);
    for &(key, quote) in contracts {
        if strikes.last().is_none_or(|s| s.0 != key.strike) {
            // The symbol's strike: exact thousandths, the same for both sides.
            strikes.push((key.strike, key.strike.dollars(), None, None));
        }
        if let Some(last) = strikes.last_mut() {
            match key.option_type {
                optics_schemas::OptionType::Call => last.2 = Some(quote),
                optics_schemas::OptionType::Put => last.3 = Some(quote),
            }
        }
    }
    strikes
        .into_iter()
        .map(|(_, strike, call, put)| (strike, call, put))
        .collect()
}

/// mid − intrinsic; a shortfall within `half_spread` (plus float rounding) is quote rounding and
/// gives 0, a larger one gives `None` (no negative time value is reported).
pub(super) fn extrinsic_value(mid: f64, half_spread: f64, intrinsic: f64) -> Option<f64> {
    let time_value = mid - intrinsic;
    if time_value >= 0.0 {
        Some(time_value)
    } else if -time_value <= half_spread + 1e-12 * intrinsic {
        Some(0.0)
    } else {
        None
    }
}

/// The chain's code for a solve outcome; `None` when solved. Exhaustive, so a new outcome of
/// the kernel cannot go unmapped.
fn no_iv_reason(status: IvStatus) -> Option<NoIvReason> {
    match status {
        IvStatus::Solved => None,
        IvStatus::InvalidInput => Some(NoIvReason::InvalidInput),
        IvStatus::BelowIntrinsic => Some(NoIvReason::BelowIntrinsic),
        IvStatus::NoTimeValue => Some(NoIvReason::NoTimeValue),
        IvStatus::AboveMaximum => Some(NoIvReason::AboveMaximum),
    }
}

/// Row `i` of the kernel's Greek columns, whole.
fn full_greeks(result: &GreekColumns, i: usize) -> Greeks {
    Greeks {
        price: result.price[i],
        delta: result.delta[i],
        gamma: result.gamma[i],
        theta: result.theta[i],
        vega: result.vega[i],
        rho: result.rho[i],
        epsilon: result.epsilon[i],
        vanna: result.vanna[i],
        charm: result.charm[i],
        vomma: result.vomma[i],
        veta: result.veta[i],
        speed: result.speed[i],
        zomma: result.zomma[i],
        color: result.color[i],
        ultima: result.ultima[i],
        dual_delta: result.dual_delta[i],
    }
}

#[cfg(test)]
mod greek_null_tests {
    use super::*;

    #[test]
    fn a_greek_is_null_where_unsolved_or_not_finite() {
        let solved = NullBuffer::from(vec![true, false, true, true]);
        let values = [0.5, 0.0, f64::NAN, f64::INFINITY];
        let nulls = greek_nulls(&values, Some(&solved)).expect("nulls");
        assert_eq!(
            nulls.iter().collect::<Vec<_>>(),
            [true, false, false, false]
        );
        // Every row solved and finite: no validity at all; a NaN alone still makes one.
        assert_eq!(greek_nulls(&[0.1, 0.2], None), None);
        let nulls = greek_nulls(&[0.1, f64::NAN], None).expect("nulls");
        assert_eq!(nulls.iter().collect::<Vec<_>>(), [true, false]);
        // Finite values keep the side's validity as it is.
        assert_eq!(
            greek_nulls(&[0.5, 0.0, 0.1, 0.2], Some(&solved)),
            Some(solved)
        );
    }
}
