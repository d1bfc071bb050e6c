//! Chain snapshots: from one underlying's option quotes to the rows of the `chain` dataset
//! ([`optics_schemas::ChainRow`]) — per expiration a forward (put–call parity, or carry), per
//! contract the mid, implied volatility and full Greek set, side by side per strike.
//!
//! # What a snapshot holds
//! - **Contracts.** One quote per contract: when a contract is quoted several times, the
//!   latest `quote_time` wins (ties go to the larger option symbol, then the later input, so
//!   the result does not depend on input order for distinct quotes). Contracts that expired
//!   before the trade date, and quotes that are malformed (non-finite or negative prices, an
//!   OCC symbol that disagrees with its columns …), are left out and counted
//!   ([`ChainBuildStats`]).
//! - **Grain.** One row per expiration × settlement × strike (the settlement separates
//!   SPX's AM monthly from SPXW's PM weekly on the same date), sorted by expiration,
//!   settlement (AM first), strike; call and put side by side, a side not listed all null.
//! - **Mid.** (bid + ask)/2 only for a two-sided quote: bid > 0 and ask ≥ bid. Otherwise no
//!   mid, no IV (`no_two_sided_quote`) and no Greeks.
//! - **Forward** per expiration ([`forward`]): parity-implied from the near-the-money call and
//!   put mids, or spot × e^{(r − q)T} with the caller's dividend yield when no strike has both
//!   sides two-sided. The forward implies the carry yield q = r − ln(F/S)/T.
//! - **IV and Greeks** of every mid through the batch kernel
//!   [`crate::pricing::implied_vol_and_greeks_batch`] (rayon). Stocks and ETFs
//!   ([`PricingModel::BlackScholesMerton`]) are valued on the spot with the implied carry
//!   yield; cash indices ([`PricingModel::Black76`]) on the forward, with Greeks with respect to
//!   the forward. Both give the same price and IV for a contract (Black-76 on F with discount
//!   e^{−rT} is BSM with q the implied carry); delta, gamma and rho differ in what they hold
//!   fixed. IVs are European: on American contracts the early-exercise premium lifts the IV of
//!   deep in-the-money puts (and calls before a dividend); the out-of-the-money side is the
//!   reliable one there.
//! - **Time.** T = calendar time from `as_of` to the expiration day's close (16:00 New York, 13:00 on
//!   early-close days) / 365
//!   ([`crate::time::years_to_expiry`]); DTE = calendar days from the trade date. At T ≤ 0
//!   (an expiration day after the close) there is no IV (`expired`) and the forward is the
//!   spot.
//! - **Extrinsic** = mid − e^{−rT}·max(±(F − K), 0), the time value over the intrinsic value
//!   on the forward (what the model's price splits into; `optics price` reports the same). A
//!   mid below that by no more than half its bid–ask spread is rounding of the quote and reads
//!   as 0; a larger shortfall (the IV is then `below_intrinsic`) reads as null rather than as a
//!   negative time value.
//! - **Open interest** keeps the quote's `oi_date`; open interest dated after the trade date
//!   is never attached (the side's OI and OI date are null and
//!   [`ChainBuildStats::open_interest_after_trade_date`] counts it).
//! - **Spot.** The caller's, or else the underlying price of the latest quote.
//!
//! Everything here is pure: no I/O, no clock (`as_of` is an input).

mod build;
pub mod forward;
#[cfg(test)]
mod tests;

pub use build::{
    ChainBatch, ContractSymbol, build_chain, build_chain_batch, build_chain_with_symbols,
};
pub use forward::{ForwardEstimate, ForwardMarket, ParityPair, carry_forward, estimate_forward};

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{ChainRow, SchemaError, SettlementStyle};

use crate::pricing::{Greeks, OptionInputs, PricingModel};

/// The market a chain is built in.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainMarket {
    /// The underlying every quote must belong to (`SPY`, `SPX`).
    pub underlying: String,
    /// The session the snapshot belongs to; DTE counts from it and open interest dated after
    /// it is not attached.
    pub trade_date: NaiveDate,
    /// The instant priced; time to expiry runs from it.
    pub as_of: DateTime<Utc>,
    /// Underlying price to use, dollars (cash level for indices); `None` takes the
    /// `underlying_price` of the latest quote.
    pub spot: Option<f64>,
    /// Continuous risk-free rate, decimal (one rate for every expiration).
    pub rate: f64,
    /// Continuous dividend yield, decimal: used only for expirations whose forward cannot be
    /// implied from the quotes.
    pub dividend_yield: f64,
    /// BSM on the spot (stocks, ETFs) or Black-76 on the forward (cash indices).
    pub model: PricingModel,
}

/// One expiration of a snapshot and its forward.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpirationForward {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Settlement of the series.
    pub settlement: SettlementStyle,
    /// Calendar days from the trade date.
    pub dte: i32,
    /// Years from `as_of` to the expiration day's close (16:00 New York, 13:00 on early-close
    /// days).
    pub years_to_expiry: f64,
    /// The forward and how it was obtained.
    pub forward: ForwardEstimate,
}

/// What happened to the quotes of a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainBuildStats {
    /// Quotes given.
    pub quotes: usize,
    /// Contracts in the snapshot (one quote each).
    pub contracts: usize,
    /// Older quotes of a contract replaced by its latest one.
    pub superseded: usize,
    /// Quotes of contracts that expired before the trade date (left out).
    pub expired: usize,
    /// Malformed quotes (left out).
    pub invalid: usize,
    /// Contracts whose open interest is dated after the trade date (kept, without the OI).
    pub open_interest_after_trade_date: usize,
    /// Contracts with a two-sided quote and T > 0, whose IV was solved for.
    pub priced: usize,
    /// Of those, the ones that have an IV.
    pub solved: usize,
}

/// A built chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSnapshot {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// The instant priced.
    pub as_of: DateTime<Utc>,
    /// Underlying price used, dollars.
    pub spot: f64,
    /// Pricing model.
    pub model: PricingModel,
    /// Every expiration (with settlement) of the snapshot in row order, with its forward.
    pub expirations: Vec<ExpirationForward>,
    /// The rows, sorted by expiration, settlement, strike.
    pub rows: Vec<ChainRow>,
    /// What happened to the quotes.
    pub stats: ChainBuildStats,
}

/// One side's solve: the kernel's inputs and its Greeks at the side's IV
/// ([`crate::pricing::greeks`] of exactly these inputs and that IV), which a chain build hands
/// to its exposure inputs ([`ChainBatch::exposure_inputs`]) instead of solving them again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SolvedSide {
    /// What the kernel priced: spot and implied carry (BSM) or forward (Black-76).
    pub(crate) inputs: OptionInputs,
    /// Price and every Greek at the IV.
    pub(crate) greeks: Greeks,
}

/// Why a chain could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// A field of [`ChainMarket`] is unusable.
    #[error("invalid market {field}: {reason}")]
    InvalidMarket {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A quote of another underlying than the market's.
    #[error("quote {row} is for {found}, not {expected}")]
    UnderlyingMismatch {
        /// The market's underlying.
        expected: String,
        /// The quote's.
        found: String,
        /// Index of the quote.
        row: usize,
    },
    /// No spot: the market gives none and no usable quote carries one.
    #[error("no spot: the market gives none and there is no usable quote of {underlying}")]
    NoSpot {
        /// The market's underlying.
        underlying: String,
    },
    /// The quote batch or the chain rows break their schema.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}
