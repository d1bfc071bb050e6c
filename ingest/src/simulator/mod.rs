//! The embedded market simulator: a synthetic but internally consistent options market, so that
//! a newcomer without a vendor subscription gets meaningful numbers from every endpoint.
//!
//! Everything here is deterministic from its inputs (a seed, a trade date, the universe, the
//! NYSE calendar): no global state, no I/O; only [`live`] looks at a clock, and only through
//! the [`Clock`](optics_compute::time::Clock) it is given.
//!
//! - [`universe`]: the coverage universe, static configuration of approximate parameters per
//!   underlying (price level, vol, beta, dividend, earnings cadence, listed expiration families)
//!   and the `--universe N` scale knob that appends synthetic underlyings for benchmarks.
//! - [`listing`]: the listing structure of a trade date, as listed US options markets have it:
//!   which expirations exist (daily, weekly, monthly, quarterly, LEAPS; holiday moves; AM/PM
//!   settlement) and which strikes each one lists.
//! - [`rng`]: the small seeded generator (SplitMix64) the simulator draws from.
//! - [`market`]: the daily paths (stochastic vol, jumps, a market factor, earnings gaps) and
//!   the [`MarketTape`](market::MarketTape) every date's prices come from.
//! - [`intraday`]: the paths within a session (Brownian bridges between the day's open and
//!   close, correlated through the market, with the market's variance moving intraday).
//! - [`surface`]: the arbitrage-free (SSVI) implied-vol surface of an underlying.
//! - [`quotes`]: chain snapshots — the session's [`ChainBook`](quotes::ChainBook) of listed
//!   contracts, bid/ask around model value with sizes, open interest carried between sessions,
//!   session volume with bursts and block prints.
//! - [`reference`](mod@reference): the company map, earnings, dividends, borrow fees, economic calendar.
//! - [`history`]: years of daily bars, IV and reference data, generated in seconds.
//! - [`session`]: one session of the universe as a [`QuoteSource`](crate::source::QuoteSource).
//! - [`live`]: sessions on a clock (wall clock, accelerated, past date).

mod error;
pub mod history;
pub mod intraday;
pub mod listing;
pub mod live;
pub mod market;
pub mod quotes;
pub mod reference;
pub mod rng;
pub mod session;
pub mod surface;
pub mod universe;

pub use error::SimulatorError;
