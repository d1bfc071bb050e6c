//! optics-compute: the pure quantitative core of optics.
//!
//! Plain functions over plain data and slices: no I/O, no async runtime, no logging; tests and
//! benchmarks call them directly. The snapshot store and the compute worker that run this math
//! on live quotes and publish its results are in `optics-pipeline` (`compute/pipeline/`), the
//! crate that brings tokio, object_store and Parquet in; a test (`tests/crate_deps/`) keeps
//! them out of this one.
//!
//! - [`pricing`]: Black–Scholes–Merton and Black-76 prices, the full closed-form Greek set,
//!   implied volatility (after Jäckel's "Let's Be Rational") and batch kernels over slices and
//!   Arrow arrays.
//! - [`calendars`]: the events calendars' rules — the implied and historical earnings moves
//!   of the earnings calendar, its day grid, and published economic values read as numbers.
//! - [`chain`]: chain snapshots from quotes — the per-expiration forward (put–call parity or
//!   carry), and every contract's mid, implied volatility and Greeks, call and put per strike.
//! - [`earnings`]: the drift after an earnings gap, the event-only move a straddle prices, the
//!   IV around a report, the straddle's historical returns and the verdict's rules.
//! - [`expected_move`]: the expected move to an expiration from its at-the-money straddle.
//! - [`exposure`]: dealer exposures (GEX, delta, vanna, charm, vega, theta and higher orders)
//!   per contract, strike and expiration; the re-priced gamma flip level, walls, key levels,
//!   max pain and the regime read.
//! - [`flow`]: session volume and premium per contract, unusual activity, flow aggregates,
//!   volume profile and smart-money filters.
//! - [`market_overview`]: the market overview's regime read, sector heatmap, volatility
//!   breadth, put skew and ranked lists over the universe table.
//! - [`mispricing`]: the composite premium read — IV rank, VRP and priced-against-typical move
//!   terms, their renormalised weights, the signal and its confidence.
//! - [`moves`]: historical move distributions over rolling horizons of a close series, and a
//!   priced move against their average.
//! - [`probability`]: lognormal probabilities at expiration (probability of profit).
//! - [`risk`]: portfolio risk — Greeks totals in share-equivalents and dollars, the risk
//!   level, first-order scenario and stress estimates, and delta hedges.
//! - [`screen`]: the market screens' presets (filter, order and printed rule of each) and
//!   the same-sector pairs check.
//! - [`strategy`]: option strategies — exact expiration payoffs, probability of profit,
//!   builders by delta and width, the credit-spread / iron-condor optimizer, simulate-chain.
//! - [`vol_arb`]: static-arbitrage and skew checks over one chain at its executable quotes.
//! - [`vol`]: volatility statistics once per session close — close-to-close HV at 5–252
//!   sessions (and ex-earnings), ATM IV, 25-delta skew and constant-maturity IV from a chain,
//!   IV rank and percentile, VRP, correlation and beta, earnings-move statistics.
//! - [`time`]: year fractions to the expiration day's close (16:00 New York, 13:00 on early-close days) and the NYSE calendar.
//! - [`zero_dte`]: the scored read of `/zero-dte` — the expected-move hit rate and edge score
//!   over stored sessions, and the IV forecast blending ATM IV with HAR realized volatility.

#![forbid(unsafe_code)]

pub mod borrow;
pub mod calendars;
pub mod chain;
pub mod cores;
pub mod correlation;
pub mod dividend;
pub mod earnings;
pub mod expected_move;
pub mod exposure;
pub mod flow;
pub mod market_overview;
pub mod mispricing;
pub mod moves;
pub mod price_context;
pub mod pricing;
pub mod probability;
pub mod relative_value;
pub mod risk;
mod run_cache;
pub mod same_day;
pub mod screen;
pub mod seasonality;
pub mod strategy;
pub mod time;
pub mod vol;
pub mod vol_arb;
pub mod zero_dte;
