//! optics-compute: the pure quantitative core of optics.
//!
//! Everything here is plain functions over plain data and slices: no I/O, no async runtime,
//! no logging. Tests and benchmarks call it directly.
//!
//! - [`pricing`]: Black–Scholes–Merton and Black-76 prices, the full closed-form Greek set,
//!   implied volatility (after Jäckel's "Let's Be Rational") and batch kernels over slices and
//!   Arrow arrays.
//! - [`probability`]: lognormal probabilities at expiration (probability of profit).
//! - [`time`]: year fractions to the 16:00 America/New_York close and the NYSE calendar.

pub mod pricing;
pub mod probability;
pub mod time;
