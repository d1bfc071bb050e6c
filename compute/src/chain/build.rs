//! Building a chain snapshot from quotes: select one quote per contract, pair calls and puts
//! by strike, then per expiration (in parallel) find the forward and solve every mid's IV and
//! Greeks in one batch.

use arrow_array::RecordBatch;
use chrono::{Datelike, NaiveDate};
use optics_schemas::{
    ChainGreeks, ChainRow, ChainSide, NoIvReason, OccSymbol, OptionQuote, PricingModelCode, Record,
    SettlementStyle,
};
use rayon::prelude::*;

use super::forward::{ForwardMarket, ParityPair, estimate_forward};
use super::{
    ChainBuildStats, ChainError, ChainMarket, ChainSnapshot, ExpirationForward, SolvedSide,
};
use crate::pricing::{
    ChainColumns, GreekColumns, Greeks, IvStatus, OptionInputs, OptionType, PricingModel,
    implied_vol_and_greeks_batch,
};
use crate::time::years_to_expiry;

/// A chain as an Arrow batch of the `chain` dataset, with what [`build_chain`] reports beside
/// the rows.
#[derive(Debug, Clone)]
pub struct ChainBatch {
    /// The rows, in the schema of [`optics_schemas::chain_schema`].
    pub batch: RecordBatch,
    /// Underlying price used, dollars.
    pub spot: f64,
    /// Every expiration with its forward.
    pub expirations: Vec<ExpirationForward>,
    /// What happened to the quotes.
    pub stats: ChainBuildStats,
}

/// [`build_chain`] over an `option_quotes` batch (validated on the way in, see
/// [`OptionQuote::from_batch`]), returning the rows as a `chain` batch.
pub fn build_chain_batch(
    quotes: &RecordBatch,
    market: &ChainMarket,
) -> Result<ChainBatch, ChainError> {
    let quotes = OptionQuote::from_batch(quotes)?;
    let snapshot = build_chain(&quotes, market)?;
    Ok(ChainBatch {
        batch: ChainRow::to_batch(&snapshot.rows)?,
        spot: snapshot.spot,
        expirations: snapshot.expirations,
        stats: snapshot.stats,
    })
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
/// [module documentation](super) for every rule).
///
/// Errors: an unusable market field, a quote of another underlying, or no spot at all.
/// Malformed and expired quotes are not errors: they are left out and counted.
pub fn build_chain(
    quotes: &[OptionQuote],
    market: &ChainMarket,
) -> Result<ChainSnapshot, ChainError> {
    build(quotes, None, market)
}

/// [`build_chain`] with every quote's symbol already parsed: `symbols[i]` is
/// [`ContractSymbol::parse`] of `quotes[i].option_symbol` (the same snapshot; checked in debug
/// builds). Quotes already in row order (expiration, settlement, strike, call before put)
/// are not sorted again. A `symbols` of another length than `quotes` is ignored.
pub fn build_chain_with_symbols(
    quotes: &[OptionQuote],
    symbols: &[Option<ContractSymbol>],
    market: &ChainMarket,
) -> Result<ChainSnapshot, ChainError> {
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
    build(quotes, symbols, market)
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
) -> Result<ChainSnapshot, ChainError> {
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
    // concatenate in order.
    let built: Vec<Builder<'_>> = latest
        .chunk_by(|(a, _), (b, _)| a.expiration == b.expiration && a.settlement == b.settlement)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|contracts| {
            let mut builder = Builder {
                market,
                spot,
                rows: Vec::with_capacity(contracts.len() / 2 + 1),
                solved: Vec::with_capacity(contracts.len() / 2 + 1),
                expirations: Vec::with_capacity(1),
                solve: SolveQueue::with_capacity(contracts.len()),
                stats: ChainBuildStats::default(),
            };
            // `chunk_by` yields no empty slice.
            if let Some(&(key, _)) = contracts.first() {
                builder.add_expiration(key.expiration, key.settlement, contracts);
                builder.solve_all();
            }
            builder
        })
        .collect();
    let row_count = built.iter().map(|b| b.rows.len()).sum();
    let mut rows = Vec::with_capacity(row_count);
    let mut solved = Vec::with_capacity(row_count);
    let mut expirations = Vec::with_capacity(built.len());
    for builder in built {
        stats.open_interest_after_trade_date += builder.stats.open_interest_after_trade_date;
        stats.priced += builder.stats.priced;
        stats.solved += builder.stats.solved;
        rows.extend(builder.rows);
        solved.extend(builder.solved);
        expirations.extend(builder.expirations);
    }
    Ok(ChainSnapshot {
        underlying: market.underlying.clone(),
        trade_date: market.trade_date,
        as_of: market.as_of,
        spot,
        model: market.model,
        expirations,
        rows,
        solved,
        stats,
    })
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
    strike_thousandths: u32,
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
        strike_thousandths: occ.strike_thousandths,
        option_type: quote.option_type,
    })
}

fn is_two_sided(quote: &OptionQuote) -> bool {
    quote.bid > 0.0 && quote.ask >= quote.bid
}

/// The contracts whose IV is still to solve, as the batch kernel's columns, and where each
/// result goes.
#[derive(Debug, Default)]
struct SolveQueue {
    option_type: Vec<OptionType>,
    underlying: Vec<f64>,
    strike: Vec<f64>,
    years: Vec<f64>,
    rate: Vec<f64>,
    dividend_yield: Vec<f64>,
    price: Vec<f64>,
    /// (row index, true for the put side).
    target: Vec<(usize, bool)>,
}

impl SolveQueue {
    fn with_capacity(n: usize) -> Self {
        Self {
            option_type: Vec::with_capacity(n),
            underlying: Vec::with_capacity(n),
            strike: Vec::with_capacity(n),
            years: Vec::with_capacity(n),
            rate: Vec::with_capacity(n),
            dividend_yield: Vec::with_capacity(n),
            price: Vec::with_capacity(n),
            target: Vec::with_capacity(n),
        }
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
}

struct Builder<'m> {
    market: &'m ChainMarket,
    spot: f64,
    rows: Vec<ChainRow>,
    /// Per row, the call's and the put's solve.
    solved: Vec<[Option<SolvedSide>; 2]>,
    expirations: Vec<ExpirationForward>,
    solve: SolveQueue,
    stats: ChainBuildStats,
}

impl Builder<'_> {
    /// Adds the rows of one expiration (`contracts` sorted by strike, then call before put).
    fn add_expiration(
        &mut self,
        expiration: NaiveDate,
        settlement: SettlementStyle,
        contracts: &[(ContractKey, &OptionQuote)],
    ) {
        let market = self.market;
        let years = years_to_expiry(market.as_of, expiration);
        // Both dates lie in 1900–2199, so the day count fits an i32.
        let dte = i32::try_from(
            expiration
                .signed_duration_since(market.trade_date)
                .num_days(),
        )
        .unwrap_or(i32::MAX);

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
                spot: self.spot,
                rate: market.rate,
                years,
                dividend_yield: market.dividend_yield,
            },
        );
        let pricing = ExpirationPricing {
            years,
            forward: forward.forward,
            underlying: match market.model {
                PricingModel::BlackScholesMerton => self.spot,
                PricingModel::Black76 => forward.forward,
            },
            dividend_yield: match market.model {
                PricingModel::BlackScholesMerton => forward.carry_yield,
                PricingModel::Black76 => 0.0,
            },
        };
        let model = match market.model {
            PricingModel::BlackScholesMerton => PricingModelCode::Bsm,
            PricingModel::Black76 => PricingModelCode::Black76,
        };
        // At most MAX_PARITY_STRIKES strikes.
        let forward_strike_count = u32::try_from(forward.strikes_used.len()).unwrap_or(u32::MAX);

        for (strike, call, put) in strikes {
            let row = self.rows.len();
            let call =
                call.map_or_else(ChainSide::default, |q| self.side(q, row, strike, &pricing));
            let put = put.map_or_else(ChainSide::default, |q| self.side(q, row, strike, &pricing));
            self.rows.push(ChainRow {
                underlying: market.underlying.clone(),
                trade_date: market.trade_date,
                as_of: market.as_of,
                expiration,
                settlement,
                dte,
                years_to_expiry: years,
                strike,
                spot: self.spot,
                forward: forward.forward,
                forward_source: forward.source,
                forward_strike_count,
                rate: market.rate,
                carry_yield: forward.carry_yield,
                model,
                call,
                put,
            });
            self.solved.push([None, None]);
        }
        self.expirations.push(ExpirationForward {
            expiration,
            settlement,
            dte,
            years_to_expiry: years,
            forward,
        });
    }

    /// The side of `quote` in row `row`; queues its IV solve when it has a mid and time left.
    /// `strike` is the row's (the symbol's strike, in dollars).
    fn side(
        &mut self,
        quote: &OptionQuote,
        row: usize,
        strike: f64,
        pricing: &ExpirationPricing,
    ) -> ChainSide {
        let trade_date = self.market.trade_date;
        let oi_attached = quote.oi_date <= trade_date;
        if !oi_attached {
            self.stats.open_interest_after_trade_date += 1;
        }
        let option_type = match quote.option_type {
            optics_schemas::OptionType::Call => OptionType::Call,
            optics_schemas::OptionType::Put => OptionType::Put,
        };
        let two_sided = is_two_sided(quote);
        let mid = two_sided.then(|| quote.mid());
        let iv_status = if !two_sided {
            Some(NoIvReason::NoTwoSidedQuote)
        } else if !(pricing.years > 0.0) {
            Some(NoIvReason::Expired)
        } else {
            let queue = &mut self.solve;
            queue.option_type.push(option_type);
            queue.underlying.push(pricing.underlying);
            queue.strike.push(strike);
            queue.years.push(pricing.years);
            queue.rate.push(self.market.rate);
            queue.dividend_yield.push(pricing.dividend_yield);
            queue.price.push(quote.mid());
            queue
                .target
                .push((row, quote.option_type == optics_schemas::OptionType::Put));
            None
        };
        let extrinsic = mid.and_then(|mid| {
            let discount = (-self.market.rate * pricing.years.max(0.0)).exp();
            let payoff = option_type.sign() * (pricing.forward - strike);
            extrinsic_value(
                mid,
                0.5 * (quote.ask - quote.bid),
                discount * payoff.max(0.0),
            )
        });
        ChainSide {
            option_symbol: Some(quote.option_symbol.clone()),
            quote_time: Some(quote.quote_time),
            bid: Some(quote.bid),
            ask: Some(quote.ask),
            mid,
            last: quote.last,
            bid_size: Some(quote.bid_size),
            ask_size: Some(quote.ask_size),
            volume: Some(quote.volume),
            open_interest: oi_attached.then_some(quote.open_interest),
            oi_date: oi_attached.then_some(quote.oi_date),
            iv: None,
            iv_status,
            greeks: ChainGreeks::default(),
            extrinsic,
        }
    }

    /// Solves every queued mid in one batch and writes IV, Greeks or the reason into its row.
    fn solve_all(&mut self) {
        let queue = &self.solve;
        self.stats.priced = queue.price.len();
        let result = implied_vol_and_greeks_batch(
            &ChainColumns {
                model: self.market.model,
                option_type: &queue.option_type,
                underlying: &queue.underlying,
                strike: &queue.strike,
                years: &queue.years,
                rate: &queue.rate,
                dividend_yield: &queue.dividend_yield,
            },
            &queue.price,
        );
        for (i, &(row, is_put)) in queue.target.iter().enumerate() {
            let Some(chain_row) = self.rows.get_mut(row) else {
                continue;
            };
            let side = if is_put {
                &mut chain_row.put
            } else {
                &mut chain_row.call
            };
            let iv = result.iv[i];
            match no_iv_reason(result.iv_status[i]) {
                None if iv > 0.0 && iv.is_finite() => {
                    side.iv = Some(iv);
                    side.greeks = chain_greeks(&result, i);
                    if let Some(solved) = self.solved.get_mut(row) {
                        solved[usize::from(is_put)] = Some(SolvedSide {
                            inputs: OptionInputs {
                                option_type: queue.option_type[i],
                                model: self.market.model,
                                underlying: queue.underlying[i],
                                strike: queue.strike[i],
                                years: queue.years[i],
                                rate: queue.rate[i],
                                dividend_yield: queue.dividend_yield[i],
                            },
                            greeks: full_greeks(&result, i),
                        });
                    }
                    self.stats.solved += 1;
                }
                None => side.iv_status = Some(NoIvReason::InvalidInput),
                reason => side.iv_status = reason,
            }
        }
    }
}

/// The strikes of one expiration with their call and put (`contracts` sorted by strike, call
/// first).
fn pair_by_strike<'q>(
    contracts: &[(ContractKey, &'q OptionQuote)],
) -> Vec<(f64, Option<&'q OptionQuote>, Option<&'q OptionQuote>)> {
    let mut strikes: Vec<(u32, f64, Option<&OptionQuote>, Option<&OptionQuote>)> =
        Vec::with_capacity(contracts.len() / 2 + 1);
    for &(key, quote) in contracts {
        if strikes.last().is_none_or(|s| s.0 != key.strike_thousandths) {
            // The symbol's strike: exact thousandths, the same for both sides.
            let strike = f64::from(key.strike_thousandths) / 1000.0;
            strikes.push((key.strike_thousandths, strike, None, None));
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

/// Row `i` of the kernel's Greek columns; a non-finite value (which the closed forms do not
/// produce for solved rows) would be absent rather than NaN.
fn chain_greeks(result: &GreekColumns, i: usize) -> ChainGreeks {
    let value = |column: &[f64]| Some(column[i]).filter(|v| v.is_finite());
    ChainGreeks {
        delta: value(&result.delta),
        gamma: value(&result.gamma),
        theta: value(&result.theta),
        vega: value(&result.vega),
        rho: value(&result.rho),
        epsilon: value(&result.epsilon),
        vanna: value(&result.vanna),
        charm: value(&result.charm),
        vomma: value(&result.vomma),
        veta: value(&result.veta),
        speed: value(&result.speed),
        zomma: value(&result.zomma),
        color: value(&result.color),
        ultima: value(&result.ultima),
    }
}
