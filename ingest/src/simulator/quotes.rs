//! Chain snapshots: every listed contract of one underlying at one instant, quoted bid/ask
//! around its model value on the underlying's [`Surface`], with the session's volume and the
//! open interest of the previous session.
//!
//! A [`ChainBook`] holds what is fixed for a session — the listed contracts with their OCC
//! symbols, open interest and the day's trading activity — so that each snapshot only prices
//! and quotes (the live session builds one book per underlying per session and prices it every
//! interval; [`chain_snapshot`] builds a book for a single snapshot).
//!
//! # Listed contracts
//! Every expiration of [`listing::expirations`] on the trade date, with the strikes of
//! [`listing::strike_grid`] around the previous close; when the previous session's open
//! interest is carried in ([`OpenInterestBook`]), every strike that holds open interest stays
//! listed too (exchanges do not delist strikes with open positions).
//!
//! # Model value
//! For each contract, with `T` = [`years_to_expiry`] (calendar time to the 16:00 New York
//! close / 365):
//! - forward `F = S·e^{(r−q)T}` (q = the underlying's dividend yield), `k = ln(K/F)`;
//! - model IV = the surface's smile at `T` ([`Surface::slice`]) at `k`;
//! - model price: Black-76 on F for underlyings `priced_on_forward` (cash indices), BSM on S
//!   with yield q otherwise. American-style equity options are valued as European (the
//!   early-exercise premium of calls on low-yield stocks and of near-money puts at these rates
//!   is small; a known simplification), so put–call parity holds exactly on the model values.
//!
//! # Bid and ask
//! - Tick: equities and ETFs $0.01 below $3 and $0.05 from $3 (index ETFs SPY, QQQ, IWM, DIA:
//!   $0.01 throughout, as in the penny program); cash indices $0.05 below $3 and $0.10 from $3.
//! - Full width `max(tick, L · (0.004 · value + 0.02 · vega))`, `vega` per vol point, `L` a
//!   liquidity factor (index ETFs 0.5, cash indices 1, sector ETFs 1.5, stocks 1.5–4 by market
//!   cap, synthetic names 3). The bid is `value − width/2` rounded down to a tick, the ask
//!   `value + width/2` rounded up, so `bid ≤ value ≤ ask` always.
//! - No-bid wings: when the value is below one tick, or the rounded bid is not positive, the
//!   bid is 0 with size 0 (the ask stays at least one tick).
//! - Sizes: seeded per contract and instant, log-uniform up to a class maximum, larger near the
//!   money.
//!
//! # Open interest (at the close of `oi_date`, the previous trading day)
//! - **Carried over** when the previous session's closing [`OpenInterestBook`] is given: each
//!   contract's open interest is the one that session closed with (0 for a new listing).
//! - **Seeded** otherwise (the first session of a run): a class base level × a bell in
//!   standardised moneyness (`ln(K / previous close) / (base_iv·√(days/365))`; the
//!   out-of-the-money side weighted up, the in-the-money side down) × a round-strike factor
//!   (×2.5 on multiples of a tenth of spot's order of magnitude, ×1.5 on half-units) × an
//!   expiration-family factor (monthlies and LEAPS ×2, quarterlies ×1.2, weeklies and dailies
//!   ×0.6) × a persistent log-normal contract factor × a day factor seeded by `oi_date`.
//! - **Rolled forward** at the close ([`ChainBook::closing_open_interest`]): of the session's
//!   volume `V`, a share φ opens positions and the rest closes them, so
//!   `OI_next = OI + round(φ·V_open_part) − min(closing, OI)`, never negative. φ is drawn per
//!   contract and session: uniform in [0.35, 0.65] for regular trading more than 5 days from
//!   expiry, [0.2, 0.5] in the last 5 days (positions are being closed), and 0.8 for bursts
//!   and block prints (new positions).
//!
//! # Session volume ([`ContractActivity`])
//! - Regular trading: `(OI + floor) × turnover` contracts over the session, turnover 1–25 %
//!   (higher near the money and for short expirations), `floor` = 15 % of the class base level
//!   × the moneyness bell (so new listings trade too). By session fraction `p` the traded part
//!   is the U-shaped profile [`intraday_profile`]`(p) = p + 0.3·sin(2πp)/(2π)` of it.
//! - Unusual bursts: with probability [`BURST_PROBABILITY`] per contract and session, one print
//!   of 3–12 × max(OI, 100) contracts at a seeded time of the session (volume far above open
//!   interest).
//! - Institutional prints: with probability [`BLOCK_PROBABILITY`] × the moneyness bell, one
//!   block of 250–2,500 contracts (index products ×2), a multiple of 50, at a seeded time.
//! - Volume is cumulative: it only grows during a session and starts from 0 at the next open.
//! - `last` is the model value rounded to a tick and kept within the quote, once volume > 0.
//!
//! Deterministic: everything depends only on the inputs (seed, trade date, instant, prices,
//! the carried book); strings are hashed with FNV-1a, whose output is fixed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Date32Array, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    UInt32Array, UInt64Array,
};
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, price};
use optics_compute::time::{NyseCalendar, Session, years_to_expiry};
use optics_schemas::{AssetClass, OptionQuote, SchemaError, date_to_days, option_quotes_schema};

use super::listing::{self, Expiration, ExpirationFamily, StrikeStyle};
use super::market::{fnv1a, normal};
use super::rng::{SplitMix64, derive_seed};
use super::surface::{SmileSlice, Surface};
use super::universe::Underlying;

/// Probability that a contract has an unusual burst in a session.
pub const BURST_PROBABILITY: f64 = 0.004;
/// Probability, at the money, that a contract has an institutional-size block print in a
/// session (scaled down by the moneyness bell away from the money).
pub const BLOCK_PROBABILITY: f64 = 0.01;
/// A burst is at least this many times max(open interest, 100) contracts.
pub const BURST_MIN_MULTIPLE: f64 = 3.0;

/// Everything one chain snapshot depends on.
#[derive(Debug, Clone, Copy)]
pub struct ChainSpec<'a> {
    /// The underlying.
    pub underlying: &'a Underlying,
    /// The trade date (New York) of the session.
    pub trade_date: NaiveDate,
    /// The instant of the snapshot; every quote's `quote_time`.
    pub instant: DateTime<Utc>,
    /// Underlying price (cash level for indices), dollars.
    pub spot: f64,
    /// The previous session's close, dollars: it anchors what does not move intraday, the
    /// listed strikes (exchanges list strikes around the prior close) and the open-interest
    /// and day-volume profiles. Not a positive finite number → `spot` is used.
    pub previous_close: f64,
    /// The underlying's implied-vol surface at `instant`.
    pub surface: &'a Surface,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// The simulator seed.
    pub seed: u64,
}

/// One simulated quote with the model values it was built from.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedQuote {
    /// The quote.
    pub quote: OptionQuote,
    /// The pricing inputs of the contract (spot or forward, strike, time, rate, yield).
    pub inputs: OptionInputs,
    /// The surface's implied vol at the contract's forward moneyness, decimal.
    pub model_iv: f64,
    /// The model value at `model_iv`, dollars per share.
    pub model_price: f64,
    /// The forward F of the expiration.
    pub forward: f64,
}

/// The chain snapshot as schema rows, ordered by expiration, strike, call before put.
pub fn chain_snapshot(spec: &ChainSpec<'_>, calendar: &NyseCalendar) -> Vec<OptionQuote> {
    simulate_chain(spec, calendar)
        .into_iter()
        .map(|q| q.quote)
        .collect()
}

/// The chain snapshot with each quote's model values (see the module documentation), with
/// seeded open interest (no carried book). Expirations whose close is not after `instant` are
/// left out; so is everything when `spot` is not a positive finite number.
pub fn simulate_chain(spec: &ChainSpec<'_>, calendar: &NyseCalendar) -> Vec<SimulatedQuote> {
    if !(spec.spot.is_finite() && spec.spot > 0.0) {
        return Vec::new();
    }
    let anchor = if spec.previous_close.is_finite() && spec.previous_close > 0.0 {
        spec.previous_close
    } else {
        spec.spot
    };
    ChainBook::new(
        spec.underlying,
        spec.trade_date,
        anchor,
        spec.seed,
        None,
        calendar,
    )
    .simulate(spec.instant, spec.spot, spec.surface, spec.rate)
}

/// The minimum price increment of `underlying`'s options at a premium of `value` dollars.
pub fn tick_size(underlying: &Underlying, value: f64) -> f64 {
    let penny_everywhere = matches!(underlying.symbol.as_str(), "SPY" | "QQQ" | "IWM" | "DIA");
    match underlying.asset_class {
        AssetClass::Index if underlying.strike_style != StrikeStyle::Volatility => {
            if value < 3.0 {
                0.05
            } else {
                0.10
            }
        }
        _ if penny_everywhere => 0.01,
        _ => {
            if value < 3.0 {
                0.01
            } else {
                0.05
            }
        }
    }
}

/// The liquidity factor `L` of the quoted width (see the module documentation).
pub fn liquidity_factor(underlying: &Underlying) -> f64 {
    if underlying.synthetic {
        return 3.0;
    }
    match underlying.asset_class {
        AssetClass::Index => 1.0,
        AssetClass::Etf if underlying.sector.is_none() => 0.5,
        AssetClass::Etf => 1.5,
        AssetClass::Stock => {
            let cap = underlying.market_cap_usd_bn.unwrap_or(50.0);
            (2.0 * (500.0 / cap).powf(0.2)).clamp(1.5, 4.0)
        }
    }
}

/// The U-shaped cumulative intraday profile `f(p) = p + 0.3·sin(2πp)/(2π)` of the session
/// fraction `p` (clamped to [0, 1]): the share of the day's regular volume traded by then,
/// and the share of the day's intraday variance accrued by then. Its rate `1 + 0.3·cos(2πp)`
/// is 1.3 at the open and the close and 0.7 at midday.
pub fn intraday_profile(session_fraction: f64) -> f64 {
    let p = if session_fraction.is_finite() {
        session_fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let tau = std::f64::consts::TAU;
    (p + 0.3 * (tau * p).sin() / tau).clamp(0.0, 1.0)
}

/// The fraction of `session` elapsed at `instant`, in [0, 1].
pub fn session_fraction(session: &Session, instant: DateTime<Utc>) -> f64 {
    let total = session.duration().num_microseconds().unwrap_or(1).max(1) as f64;
    let elapsed = instant
        .signed_duration_since(session.open)
        .num_microseconds()
        .unwrap_or(0) as f64;
    (elapsed / total).clamp(0.0, 1.0)
}

// ---------------------------------------------------------------------------------------------
// Open interest carried between sessions
// ---------------------------------------------------------------------------------------------

/// A contract of one underlying: expiration, strike in thousandths of a dollar, call or put.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContractId {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Strike, thousandths of a dollar (the OCC strike field).
    pub strike_thousandths: u64,
    /// Call or put.
    pub option_type: optics_schemas::OptionType,
}

impl ContractId {
    /// The strike, dollars.
    pub fn strike(&self) -> f64 {
        self.strike_thousandths as f64 / 1000.0
    }
}

/// The open interest of one underlying's contracts at a session's close.
pub type UnderlyingOpenInterest = BTreeMap<ContractId, u64>;

/// The open interest of every contract at the close of one session (`as_of`): what the next
/// session's quotes carry as their open interest, labelled with `oi_date = as_of`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenInterestBook {
    /// The session whose close the open interest is as of.
    pub as_of: Option<NaiveDate>,
    /// Per underlying symbol.
    pub by_underlying: HashMap<String, UnderlyingOpenInterest>,
}

impl OpenInterestBook {
    /// Contracts whose open interest the book holds, and an estimate of its bytes (B-tree
    /// entries at about their size plus a node's share).
    pub fn held(&self) -> (usize, usize) {
        let contracts: usize = self.by_underlying.values().map(BTreeMap::len).sum();
        let entry = std::mem::size_of::<(ContractId, u64)>() * 3 / 2;
        let bytes = contracts * entry
            + self
                .by_underlying
                .keys()
                .map(|symbol| symbol.capacity() + std::mem::size_of::<(String, usize)>())
                .sum::<usize>();
        (contracts, bytes)
    }

    /// The open interest of `symbol`'s contracts, if the book has it.
    pub fn underlying(&self, symbol: &str) -> Option<&UnderlyingOpenInterest> {
        self.by_underlying.get(symbol)
    }

    /// The open interest of one contract (`None` when not in the book).
    pub fn get(&self, symbol: &str, contract: &ContractId) -> Option<u64> {
        self.by_underlying.get(symbol)?.get(contract).copied()
    }
}

// ---------------------------------------------------------------------------------------------
// The session's book of contracts
// ---------------------------------------------------------------------------------------------

/// One print at a time of the session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Print {
    /// Contracts.
    pub size: u64,
    /// When it trades, as a fraction of the session (0 = open, 1 = close).
    pub session_fraction: f64,
}

/// What a contract trades in a session (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContractActivity {
    /// Regular volume over the whole session, contracts, spread along [`intraday_profile`].
    pub regular: u64,
    /// An unusual burst, if any.
    pub burst: Option<Print>,
    /// An institutional-size block print, if any.
    pub block: Option<Print>,
    /// The share of regular volume that opens positions.
    pub regular_opening_share: f64,
}

/// The share of burst and block volume that opens positions.
pub const PRINT_OPENING_SHARE: f64 = 0.8;

impl ContractActivity {
    /// Cumulative volume at session fraction `p`, given `profile = intraday_profile(p)`.
    pub fn volume_at(&self, session_fraction: f64, profile: f64) -> u64 {
        let prints = [self.burst, self.block]
            .into_iter()
            .flatten()
            .filter(|print| session_fraction >= print.session_fraction)
            .map(|print| print.size)
            .sum::<u64>();
        (self.regular as f64 * profile).floor() as u64 + prints
    }

    /// The session's total volume.
    pub fn day_volume(&self) -> u64 {
        self.regular + self.burst.map_or(0, |p| p.size) + self.block.map_or(0, |p| p.size)
    }

    /// Open interest after the session, starting from `open_interest` (see the module
    /// documentation): never negative.
    pub fn roll_open_interest(&self, open_interest: u64) -> u64 {
        let prints = self.burst.map_or(0, |p| p.size) + self.block.map_or(0, |p| p.size);
        let volume = self.regular + prints;
        let opening = (self.regular as f64 * self.regular_opening_share
            + prints as f64 * PRINT_OPENING_SHARE)
            .round()
            .clamp(0.0, volume as f64) as u64;
        let closing = volume - opening;
        open_interest + opening - closing.min(open_interest)
    }
}

/// One listed contract of a [`ChainBook`].
#[derive(Debug, Clone, PartialEq)]
pub struct BookContract {
    /// Expiration, strike and type.
    pub id: ContractId,
    /// Compact OCC symbol.
    pub option_symbol: String,
    /// Open interest at the close of the book's `oi_date`.
    pub open_interest: u64,
    /// What it trades this session.
    pub activity: ContractActivity,
    /// The contract's seed (sizes are drawn from it and the instant).
    seed: u64,
    /// ln(K / previous close) / (base_iv · √(days/365)): fixed for the session.
    static_m: f64,
    /// Strike, dollars.
    strike: f64,
    /// Call or put, the pricing crate's type.
    option_type: OptionType,
}

#[derive(Debug, Clone, PartialEq)]
struct BookExpiration {
    expiration: Expiration,
    /// Contracts `first..end` of the book.
    first: usize,
    end: usize,
}

/// Prebuilt Arrow columns of the contracts that do not change during the session.
#[derive(Debug, Clone)]
struct StaticColumns {
    underlying: ArrayRef,
    option_symbol: ArrayRef,
    expiration: ArrayRef,
    strike: ArrayRef,
    option_type: ArrayRef,
    settlement: ArrayRef,
    exercise_style: ArrayRef,
    open_interest: ArrayRef,
    oi_date: ArrayRef,
}

/// The listed contracts of one underlying for one session, with their open interest and the
/// day's activity (see the module documentation). Build it once per session; price it at each
/// instant with [`quote_batch`](Self::quote_batch) or [`simulate`](Self::simulate).
#[derive(Debug, Clone)]
pub struct ChainBook {
    underlying: Underlying,
    trade_date: NaiveDate,
    oi_date: NaiveDate,
    session: Option<Session>,
    seed: u64,
    expirations: Vec<BookExpiration>,
    contracts: Vec<BookContract>,
    columns: StaticColumns,
}

impl optics_schemas::memory::HeapBytes for ChainBook {
    fn heap_bytes(&self) -> usize {
        let columns = &self.columns;
        self.expirations.capacity() * std::mem::size_of::<BookExpiration>()
            + self.contracts.capacity() * std::mem::size_of::<BookContract>()
            + self
                .contracts
                .iter()
                .map(|c| c.option_symbol.capacity())
                .sum::<usize>()
            + [
                &columns.underlying,
                &columns.option_symbol,
                &columns.expiration,
                &columns.strike,
                &columns.option_type,
                &columns.settlement,
                &columns.exercise_style,
                &columns.open_interest,
                &columns.oi_date,
            ]
            .iter()
            .map(|column| column.get_array_memory_size())
            .sum::<usize>()
    }
}

impl ChainBook {
    /// The book of `underlying` on `trade_date`, with strikes listed around `previous_close`.
    /// `carried` is the previous session's closing open interest of this underlying: `None`
    /// seeds open interest from the model instead.
    pub fn new(
        underlying: &Underlying,
        trade_date: NaiveDate,
        previous_close: f64,
        seed: u64,
        carried: Option<&UnderlyingOpenInterest>,
        calendar: &NyseCalendar,
    ) -> Self {
        let u = underlying;
        let oi_date = calendar.previous_trading_day(trade_date);
        let symbol_seed = derive_seed(seed, fnv1a(u.symbol.as_bytes()));
        let day_seed = fnv1a(trade_date.to_string().as_bytes());
        // Round strikes (multiples of a tenth of the price's order of magnitude) hold more
        // open interest.
        let round_unit = if previous_close.is_finite() && previous_close > 0.0 {
            10f64.powf(previous_close.log10().floor()) / 10.0
        } else {
            0.0
        };
        let mut expirations = Vec::new();
        let mut contracts = Vec::new();
        let anchor_ok = previous_close.is_finite() && previous_close > 0.0;
        for expiration in listing::expirations(u, trade_date, calendar) {
            let mut strikes: BTreeSet<u64> = if anchor_ok {
                listing::strike_grid(u, previous_close, trade_date, &expiration)
                    .into_iter()
                    .map(|k| (k * 1000.0).round() as u64)
                    .collect()
            } else {
                BTreeSet::new()
            };
            if let Some(book) = carried {
                let from = ContractId {
                    expiration: expiration.date,
                    strike_thousandths: 0,
                    option_type: optics_schemas::OptionType::Call,
                };
                strikes.extend(
                    book.range(from..)
                        .take_while(|(id, _)| id.expiration == expiration.date)
                        .filter(|(_, oi)| **oi > 0)
                        .map(|(id, _)| id.strike_thousandths),
                );
            }
            let days = (expiration.date - trade_date).num_days().max(1) as f64;
            let listing_sd = u.base_iv * (days / 365.0).sqrt();
            // The OCC root and date part, checked once per expiration through the schemas'
            // formatter; each contract then appends its type and strike digits.
            let root = u.option_root(expiration.family);
            let Ok(prefix) = occ_prefix(root, expiration.date) else {
                continue;
            };
            let first = contracts.len();
            for strike_thousandths in strikes {
                if !(1..=MAX_STRIKE_THOUSANDTHS).contains(&strike_thousandths) {
                    continue;
                }
                let strike = strike_thousandths as f64 / 1000.0;
                for option_type in [OptionType::Call, OptionType::Put] {
                    let id = ContractId {
                        expiration: expiration.date,
                        strike_thousandths,
                        option_type: schema_type(option_type),
                    };
                    let option_symbol =
                        occ_with_prefix(&prefix, id.option_type, strike_thousandths);
                    let static_m = if anchor_ok {
                        (strike / previous_close).ln() / listing_sd.max(1e-4)
                    } else {
                        0.0
                    };
                    let contract_seed = derive_seed(symbol_seed, contract_key(&id));
                    let shape = ContractShape {
                        round_unit,
                        expiration: &expiration,
                        strike,
                        option_type,
                        static_m,
                        days,
                    };
                    let open_interest = match carried {
                        Some(book) => book.get(&id).copied().unwrap_or(0),
                        None => seeded_open_interest(u, &shape, contract_seed, oi_date),
                    };
                    let activity = activity(
                        u,
                        open_interest,
                        &shape,
                        derive_seed(contract_seed, day_seed),
                    );
                    contracts.push(BookContract {
                        id,
                        option_symbol,
                        open_interest,
                        activity,
                        seed: contract_seed,
                        static_m,
                        strike,
                        option_type,
                    });
                }
            }
            if contracts.len() > first {
                expirations.push(BookExpiration {
                    expiration,
                    first,
                    end: contracts.len(),
                });
            }
        }
        let columns = static_columns(u, &expirations, &contracts, oi_date);
        Self {
            underlying: u.clone(),
            trade_date,
            oi_date,
            session: calendar.session(trade_date),
            seed,
            expirations,
            contracts,
            columns,
        }
    }

    /// The underlying.
    pub fn underlying(&self) -> &Underlying {
        &self.underlying
    }

    /// The trade date.
    pub fn trade_date(&self) -> NaiveDate {
        self.trade_date
    }

    /// The date the open interest is as of: the previous trading day.
    pub fn oi_date(&self) -> NaiveDate {
        self.oi_date
    }

    /// The simulator seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The listed contracts, by expiration, strike, call before put.
    pub fn contracts(&self) -> &[BookContract] {
        &self.contracts
    }

    /// The listed expirations.
    pub fn expirations(&self) -> impl Iterator<Item = &Expiration> {
        self.expirations.iter().map(|e| &e.expiration)
    }

    /// The open interest after this session's close: every contract rolled forward with its
    /// whole day's volume ([`ContractActivity::roll_open_interest`]); contracts expiring today
    /// are left out.
    pub fn closing_open_interest(&self) -> UnderlyingOpenInterest {
        self.contracts
            .iter()
            .filter(|c| c.id.expiration > self.trade_date)
            .map(|c| (c.id, c.activity.roll_open_interest(c.open_interest)))
            .collect()
    }

    /// The quotes at `instant` with their model values (see the module documentation).
    pub fn simulate(
        &self,
        instant: DateTime<Utc>,
        spot: f64,
        surface: &Surface,
        rate: f64,
    ) -> Vec<SimulatedQuote> {
        let mut out = Vec::with_capacity(self.contracts.len());
        let u = &self.underlying;
        let (exercise_style, symbol) = (u.exercise_style(), &u.symbol);
        self.price_each(instant, spot, surface, rate, |contract, expiration, q| {
            out.push(SimulatedQuote {
                quote: OptionQuote {
                    underlying: symbol.clone(),
                    option_symbol: contract.option_symbol.clone(),
                    expiration: contract.id.expiration,
                    strike: contract.strike,
                    option_type: contract.id.option_type,
                    settlement: expiration.settlement,
                    exercise_style,
                    bid: q.bid,
                    ask: q.ask,
                    bid_size: q.bid_size,
                    ask_size: q.ask_size,
                    last: q.last,
                    volume: q.volume,
                    open_interest: contract.open_interest,
                    oi_date: self.oi_date,
                    quote_time: instant,
                    underlying_price: spot,
                },
                inputs: q.inputs,
                model_iv: q.model_iv,
                model_price: q.model_price,
                forward: q.forward,
            });
        });
        out
    }

    /// The quotes at `instant` as an `option_quotes` record batch (canonical schema, rows in
    /// the book's order; expirations whose close is not after `instant` left out). The columns
    /// fixed for the session are shared, not copied.
    ///
    /// # Errors
    /// A [`SchemaError`] if Arrow rejects the columns (it does not for a well-formed book).
    pub fn quote_batch(
        &self,
        instant: DateTime<Utc>,
        spot: f64,
        surface: &Surface,
        rate: f64,
    ) -> Result<RecordBatch, SchemaError> {
        let first_live = self
            .expirations
            .iter()
            .find(|e| years_to_expiry(instant, e.expiration.date) > 0.0)
            .map_or(self.contracts.len(), |e| e.first);
        let n = self.contracts.len() - first_live;
        let mut bid = Vec::with_capacity(n);
        let mut ask = Vec::with_capacity(n);
        let mut bid_size = Vec::with_capacity(n);
        let mut ask_size = Vec::with_capacity(n);
        let mut last = Vec::with_capacity(n);
        let mut volume = Vec::with_capacity(n);
        let spot_ok = spot.is_finite() && spot > 0.0;
        if spot_ok {
            self.price_each(instant, spot, surface, rate, |_, _, q| {
                bid.push(q.bid);
                ask.push(q.ask);
                bid_size.push(q.bid_size);
                ask_size.push(q.ask_size);
                last.push(q.last);
                volume.push(q.volume);
            });
        }
        let n = if spot_ok { n } else { 0 };
        let c = &self.columns;
        let slice = |array: &ArrayRef| array.slice(first_live, n);
        let micros = instant.timestamp_micros();
        let columns: Vec<ArrayRef> = vec![
            slice(&c.underlying),
            slice(&c.option_symbol),
            slice(&c.expiration),
            slice(&c.strike),
            slice(&c.option_type),
            slice(&c.settlement),
            slice(&c.exercise_style),
            Arc::new(Float64Array::from(bid)),
            Arc::new(Float64Array::from(ask)),
            Arc::new(UInt32Array::from(bid_size)),
            Arc::new(UInt32Array::from(ask_size)),
            Arc::new(Float64Array::from(last)),
            Arc::new(UInt64Array::from(volume)),
            slice(&c.open_interest),
            slice(&c.oi_date),
            Arc::new(TimestampMicrosecondArray::from(vec![micros; n]).with_timezone("UTC")),
            Arc::new(Float64Array::from(vec![spot; n])),
        ];
        Ok(RecordBatch::try_new(option_quotes_schema(), columns)?)
    }

    /// Prices every live contract at `instant`, calling `sink` in book order.
    fn price_each(
        &self,
        instant: DateTime<Utc>,
        spot: f64,
        surface: &Surface,
        rate: f64,
        mut sink: impl FnMut(&BookContract, &Expiration, &QuoteValues),
    ) {
        let u = &self.underlying;
        if !(spot.is_finite() && spot > 0.0) {
            return;
        }
        let fraction = self
            .session
            .as_ref()
            .map_or(0.0, |s| session_fraction(s, instant));
        let profile = intraday_profile(fraction);
        let instant_micros = instant.timestamp_micros() as u64;
        let market = MarketParams::new(u);
        for book_expiration in &self.expirations {
            let expiration = &book_expiration.expiration;
            let years = years_to_expiry(instant, expiration.date);
            if !(years > 0.0) {
                continue;
            }
            let forward = spot * ((rate - u.dividend_yield) * years).exp();
            let smile: SmileSlice = surface.slice(years);
            let atm_sd = smile.theta.sqrt().max(1e-4);
            let discount = (-rate * years).exp();
            let sqrt_years = years.sqrt();
            for contract in &self.contracts[book_expiration.first..book_expiration.end] {
                let strike = contract.strike;
                let inputs = if u.priced_on_forward {
                    OptionInputs {
                        option_type: contract.option_type,
                        model: PricingModel::Black76,
                        underlying: forward,
                        strike,
                        years,
                        rate,
                        dividend_yield: 0.0,
                    }
                } else {
                    OptionInputs {
                        option_type: contract.option_type,
                        model: PricingModel::BlackScholesMerton,
                        underlying: spot,
                        strike,
                        years,
                        rate,
                        dividend_yield: u.dividend_yield,
                    }
                };
                let k = (strike / forward).ln();
                let model_iv = smile.iv(k);
                // A valid contract always prices; fall back on the discounted intrinsic value
                // rather than leave a hole in the chain.
                let model_price =
                    price(&inputs, model_iv).unwrap_or_else(|_| inputs.intrinsic_value());
                let vega = vega_per_point(discount, forward, k, model_iv, sqrt_years);
                let quote = market.quote(
                    model_price,
                    vega,
                    k / atm_sd,
                    derive_seed(contract.seed, instant_micros),
                );
                let volume = contract.activity.volume_at(fraction, profile);
                let last = (volume > 0).then(|| {
                    let rounded = round_to_tick(model_price, quote.tick);
                    rounded.max(quote.bid).max(quote.tick).min(quote.ask)
                });
                sink(
                    contract,
                    expiration,
                    &QuoteValues {
                        inputs,
                        model_iv,
                        model_price,
                        forward,
                        bid: quote.bid,
                        ask: quote.ask,
                        bid_size: quote.bid_size,
                        ask_size: quote.ask_size,
                        last,
                        volume,
                    },
                );
            }
        }
    }
}

struct QuoteValues {
    inputs: OptionInputs,
    model_iv: f64,
    model_price: f64,
    forward: f64,
    bid: f64,
    ask: f64,
    bid_size: u32,
    ask_size: u32,
    last: Option<f64>,
    volume: u64,
}

fn static_columns(
    u: &Underlying,
    expirations: &[BookExpiration],
    contracts: &[BookContract],
    oi_date: NaiveDate,
) -> StaticColumns {
    let n = contracts.len();
    let settlement: Vec<&str> = expirations
        .iter()
        .flat_map(|e| std::iter::repeat_n(e.expiration.settlement.as_str(), e.end - e.first))
        .collect();
    StaticColumns {
        underlying: Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            u.symbol.as_str(),
            n,
        ))),
        option_symbol: Arc::new(StringArray::from_iter_values(
            contracts.iter().map(|c| c.option_symbol.as_str()),
        )),
        expiration: Arc::new(Date32Array::from_iter_values(
            contracts.iter().map(|c| date_to_days(c.id.expiration)),
        )),
        strike: Arc::new(Float64Array::from_iter_values(
            contracts.iter().map(|c| c.strike),
        )),
        option_type: Arc::new(StringArray::from_iter_values(
            contracts.iter().map(|c| c.id.option_type.as_str()),
        )),
        settlement: Arc::new(StringArray::from_iter_values(settlement)),
        exercise_style: Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            u.exercise_style().as_str(),
            n,
        ))),
        open_interest: Arc::new(UInt64Array::from_iter_values(
            contracts.iter().map(|c| c.open_interest),
        )),
        oi_date: Arc::new(Date32Array::from_iter_values(std::iter::repeat_n(
            date_to_days(oi_date),
            n,
        ))),
    }
}

/// The fixed facts of a contract the open-interest and activity models use.
struct ContractShape<'a> {
    round_unit: f64,
    expiration: &'a Expiration,
    strike: f64,
    option_type: OptionType,
    static_m: f64,
    days: f64,
}

impl ContractShape<'_> {
    fn out_of_the_money(&self) -> bool {
        match self.option_type {
            OptionType::Call => self.static_m > 0.0,
            OptionType::Put => self.static_m < 0.0,
        }
    }
}

/// A stable 64-bit key of a contract (expiration, strike in thousandths, type).
fn contract_key(id: &ContractId) -> u64 {
    let days = date_to_days(id.expiration) as i64 as u64;
    let kind = match id.option_type {
        optics_schemas::OptionType::Call => 1,
        optics_schemas::OptionType::Put => 2,
    };
    derive_seed(derive_seed(days, id.strike_thousandths), kind)
}

/// The quoting parameters of an underlying, computed once per snapshot.
struct MarketParams {
    liquidity: f64,
    small_tick: f64,
    large_tick: f64,
    /// The value from which the large tick applies.
    tick_break: f64,
    max_size: f64,
}

struct Market {
    bid: f64,
    ask: f64,
    bid_size: u32,
    ask_size: u32,
    tick: f64,
}

impl MarketParams {
    fn new(u: &Underlying) -> Self {
        Self {
            liquidity: liquidity_factor(u),
            small_tick: tick_size(u, 0.0),
            large_tick: tick_size(u, 3.0),
            tick_break: 3.0,
            max_size: match u.asset_class {
                AssetClass::Index => 150.0,
                AssetClass::Etf => 500.0,
                AssetClass::Stock => 120.0,
            },
        }
    }

    fn tick(&self, value: f64) -> f64 {
        if value < self.tick_break {
            self.small_tick
        } else {
            self.large_tick
        }
    }

    fn quote(&self, value: f64, vega_points: f64, live_m: f64, seed: u64) -> Market {
        let raw_width = self.liquidity * (0.004 * value + 0.02 * vega_points);
        let half = 0.5 * raw_width.max(self.small_tick);
        let tick = self.tick(value + half);
        let width = raw_width.max(tick);
        let half = 0.5 * width;
        let tick_cents = (tick * 100.0).round() as i64;
        let bid_cents = (((value - half) * 100.0) / tick_cents as f64).floor() as i64 * tick_cents;
        let ask_cents = (((value + half) * 100.0) / tick_cents as f64).ceil() as i64 * tick_cents;
        let ask_cents = ask_cents.max(tick_cents);
        let no_bid = value < self.small_tick || bid_cents <= 0;
        let bid = if no_bid {
            0.0
        } else {
            bid_cents as f64 / 100.0
        };
        let ask = ask_cents as f64 / 100.0;
        // Log-uniform sizes in [1, max + 1): exp(U · ln(max + 1)).
        let log_max = (self.max_size * near_money_weight(live_m)).max(2.0).ln_1p();
        let mut rng = SplitMix64::new(seed);
        let mut size = || (rng.next_f64() * log_max).exp().floor() as u32;
        let bid_size = size();
        let ask_size = size();
        Market {
            bid,
            ask,
            bid_size: if no_bid { 0 } else { bid_size.max(1) },
            ask_size: ask_size.max(1),
            tick,
        }
    }
}

/// The class base level of open interest, contracts.
fn base_open_interest(u: &Underlying) -> f64 {
    if u.synthetic {
        return 300.0;
    }
    match u.asset_class {
        AssetClass::Index => 6_000.0,
        AssetClass::Etf if u.sector.is_none() => 8_000.0,
        AssetClass::Etf => 1_500.0,
        AssetClass::Stock => {
            let cap = u.market_cap_usd_bn.unwrap_or(50.0);
            (1_500.0 * (cap / 200.0).powf(0.35)).clamp(200.0, 8_000.0)
        }
    }
}

/// Seeded open interest at the close of `oi_date` (see the module documentation).
fn seeded_open_interest(
    u: &Underlying,
    contract: &ContractShape<'_>,
    contract_seed: u64,
    oi_date: NaiveDate,
) -> u64 {
    let side = if contract.out_of_the_money() {
        if contract.option_type == OptionType::Put {
            1.3
        } else {
            1.0
        }
    } else {
        0.5
    };
    let unit = contract.round_unit;
    let round = if is_multiple(contract.strike, unit) {
        2.5
    } else if is_multiple(contract.strike, unit / 2.0) {
        1.5
    } else {
        1.0
    };
    let family = match contract.expiration.family {
        ExpirationFamily::Monthly | ExpirationFamily::Leaps => 2.0,
        ExpirationFamily::Quarterly => 1.2,
        ExpirationFamily::Weekly | ExpirationFamily::Daily => 0.6,
    };
    let mut persistent = SplitMix64::new(contract_seed);
    let contract_factor = (0.6 * normal(&mut persistent)).exp();
    let mut daily = SplitMix64::new(derive_seed(
        contract_seed,
        date_to_days(oi_date) as i64 as u64,
    ));
    let day_factor = (0.1 * normal(&mut daily)).exp();
    let oi = base_open_interest(u)
        * near_money_weight(contract.static_m)
        * side
        * round
        * family
        * contract_factor
        * day_factor;
    oi.round().max(0.0) as u64
}

/// The session's activity of a contract (see the module documentation). Always draws the
/// same numbers in the same order, whichever branches are taken.
fn activity(
    u: &Underlying,
    open_interest: u64,
    contract: &ContractShape<'_>,
    seed: u64,
) -> ContractActivity {
    let mut rng = SplitMix64::new(seed);
    let bell = near_money_weight(contract.static_m);
    let turnover = rng.uniform(0.01, 0.25) * (0.3 + bell) * (1.0 + 2.0 / contract.days) / 1.3;
    let floor = 0.15 * base_open_interest(u) * bell;
    let regular = ((open_interest as f64 + floor) * turnover.min(1.0)).round() as u64;
    let (burst_draw, burst_multiple, burst_time) = (
        rng.next_f64(),
        rng.uniform(3.0, 12.0),
        rng.uniform(0.02, 0.98),
    );
    let (block_draw, block_size, block_time) = (
        rng.next_f64(),
        rng.log_uniform(250.0, 2_500.0),
        rng.uniform(0.02, 0.98),
    );
    let share_draw = rng.next_f64();
    let burst = (burst_draw < BURST_PROBABILITY).then(|| Print {
        size: (open_interest.max(100) as f64 * burst_multiple).round() as u64,
        session_fraction: burst_time,
    });
    let block_scale = if u.asset_class == AssetClass::Index || u.sector.is_none() {
        2.0
    } else {
        1.0
    };
    let block = (block_draw < BLOCK_PROBABILITY * bell).then(|| Print {
        size: ((block_size * block_scale / 50.0).round() as u64).max(1) * 50,
        session_fraction: block_time,
    });
    let regular_opening_share = if contract.days > 5.0 {
        0.35 + 0.3 * share_draw
    } else {
        0.2 + 0.3 * share_draw
    };
    ContractActivity {
        regular,
        burst,
        block,
        regular_opening_share,
    }
}

/// A bell around the money in [0.05, 1.05] of standardised moneyness `m`.
fn near_money_weight(m: f64) -> f64 {
    let x = m / 1.5;
    0.05 + (-0.5 * x * x).exp()
}

/// Vega per vol point: D·F·n(d1)·√T / 100, with `d1 = −k/σ√T + σ√T/2`, `k = ln(K/F)`.
fn vega_per_point(
    discount: f64,
    forward: f64,
    log_moneyness: f64,
    vol: f64,
    sqrt_years: f64,
) -> f64 {
    let sd = vol * sqrt_years;
    if !(sd > 0.0) {
        return 0.0;
    }
    let d1 = -log_moneyness / sd + 0.5 * sd;
    let density = (-0.5 * d1 * d1).exp() * (1.0 / (2.0 * std::f64::consts::PI).sqrt());
    discount * forward * density * sqrt_years / 100.0
}

fn round_to_tick(value: f64, tick: f64) -> f64 {
    let tick_cents = (tick * 100.0).round();
    ((value * 100.0 / tick_cents).round() * tick_cents) / 100.0
}

fn is_multiple(strike: f64, unit: f64) -> bool {
    if !(unit > 0.0) {
        return false;
    }
    let ratio = strike / unit;
    (ratio - ratio.round()).abs() < 1e-9
}

/// The largest strike OCC symbols carry: 99,999.999 dollars.
const MAX_STRIKE_THOUSANDTHS: u64 = 99_999_999;

/// The root and `YYMMDD` part of the OCC symbols of an expiration, validated by the schemas'
/// formatter (root rules, year range).
fn occ_prefix(root: &str, expiration: NaiveDate) -> Result<String, SchemaError> {
    let full = optics_schemas::occ_symbol(root, expiration, optics_schemas::OptionType::Call, 1.0)?;
    // The compact form is root + 6 date digits + type + 8 strike digits.
    Ok(full[..full.len() - 9].to_owned())
}

/// `prefix` + `C`/`P` + the strike in thousandths on 8 digits: the compact OCC symbol, without
/// going through `fmt` for every contract.
fn occ_with_prefix(
    prefix: &str,
    option_type: optics_schemas::OptionType,
    strike_thousandths: u64,
) -> String {
    let mut symbol = String::with_capacity(prefix.len() + 9);
    symbol.push_str(prefix);
    symbol.push(match option_type {
        optics_schemas::OptionType::Call => 'C',
        optics_schemas::OptionType::Put => 'P',
    });
    let mut digits = [b'0'; 8];
    let mut rest = strike_thousandths.min(MAX_STRIKE_THOUSANDTHS);
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    symbol.extend(digits.iter().map(|&d| char::from(d)));
    symbol
}

fn schema_type(option_type: OptionType) -> optics_schemas::OptionType {
    match option_type {
        OptionType::Call => optics_schemas::OptionType::Call,
        OptionType::Put => optics_schemas::OptionType::Put,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_occ_symbols_match_the_schemas_formatter() {
        let expiration = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        for root in ["SPXW", "SPY", "F", "BRKB"] {
            let prefix = occ_prefix(root, expiration).unwrap();
            for thousandths in [1, 500, 12_125, 187_500, 5_000_000, 99_999_999] {
                for option_type in [
                    optics_schemas::OptionType::Call,
                    optics_schemas::OptionType::Put,
                ] {
                    let expected = optics_schemas::occ_symbol(
                        root,
                        expiration,
                        option_type,
                        thousandths as f64 / 1000.0,
                    )
                    .unwrap();
                    assert_eq!(occ_with_prefix(&prefix, option_type, thousandths), expected);
                }
            }
        }
    }
}
