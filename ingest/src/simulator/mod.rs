//! The embedded market simulator: a synthetic but internally consistent options market, so that
//! a newcomer without a vendor subscription gets meaningful numbers from every endpoint.
//!
//! Everything here is deterministic from its inputs (a seed, a trade date, the NYSE calendar):
//! no wall clock, no global state, no I/O.
//!
//! - [`universe`]: the coverage universe, static configuration of approximate parameters per
//!   underlying (price level, vol, beta, dividend, earnings cadence, listed expiration families)
//!   and the `--universe N` scale knob that appends synthetic underlyings for benchmarks.
//! - [`listing`]: the listing structure of a trade date, as listed US options markets have it:
//!   which expirations exist (daily, weekly, monthly, quarterly, LEAPS; holiday moves; AM/PM
//!   settlement) and which strikes each one lists.
//! - [`rng`]: the small seeded generator (SplitMix64) the simulator draws from.
//! - [`market`]: the underlying paths (stochastic vol, jumps, a market factor, earnings gaps).
//! - [`surface`]: the arbitrage-free (SSVI) implied-vol surface of an underlying.
//! - [`quotes`]: a chain snapshot, bid/ask around model value with sizes, open interest and
//!   session volume.

pub mod listing;
pub mod market;
pub mod quotes;
pub mod rng;
pub mod surface;
pub mod universe;
