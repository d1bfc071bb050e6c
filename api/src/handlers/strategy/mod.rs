//! The strategies family (POST, JSON bodies): `/pop`, `/analyze-strategy`, `/simulate-chain`,
//! `/build-strategy`, `/optimize-strategy`.
//!
//! Handlers read the body into typed request types ([`crate::body`]), so that every malformed
//! field is a 400 naming it by its path (`legs[1].strike: must be a number, not a boolean`).
//! The math is in [`optics_compute::strategy`]; its module docs are the contract of units and
//! sign conventions (one-lot totals, credit-positive `net_premium`, probability of profit in
//! percent under the lognormal law).
//!
//! # Unbounded amounts
//! `max_profit`, `max_loss` and `risk_reward_ratio` are numbers when finite and the string
//! `"unlimited"` when unbounded (a naked short call's loss, a long call's profit), never a
//! large number standing in for infinity.
//!
//! # Market inputs
//! Expirations are converted to years (calendar days / 365 to the expiration day's close,
//! 16:00 New York or 13:00 on early-close days) with the service clock. The rate and the dividend (carry) yield are those
//! of the live chain's rows at the first expiration the legs use; without a chain, r = 4 % and
//! q = 0 ([`DEFAULT_RATE`]). `/pop` takes the same rate and yield from the chain of an
//! optional `ticker` (its rows at the listed expiration nearest `days_to_exp`), so it answers
//! as analyze-strategy does for the same legs; a `rate` or `dividend_yield` in the body
//! overrides either, and the payload says which were used and where they came from.
//!
//! Cash indices are priced on the forward (Black-76) and every expiration has its own
//! forward: the market handed to the math carries the live forward of each open expiration
//! ([`chain_market`]), so legs, builders and the optimizer price each expiration on its own
//! forward. For them `stock_price` means what `/chain` reports as the index's price, the
//! nearest expiration's forward; a supplied `stock_price` is read on that basis and moves
//! every expiration's forward in proportion (the carry between expirations stays the one the
//! chain implies). The record says so in `stock_price_basis`.
//!
//! # Errors
//! Missing market data (no live chain, no usable quote on a side, no IV for a contract) is a
//! 424 with `upstream: true`. A request whose constraints the quoted chain cannot meet (an
//! unreachable `min_credit`, a `target_delta` at which the shorts cross) is a 400 naming the
//! constraint: the client has to change the request.
//!
//! # Layout
//! One file per endpoint, each with its request and payload types: [`pop`] (`/pop`),
//! [`analyze`] (`/analyze-strategy`), [`simulate`] (`/simulate-chain`), [`build`]
//! (`/build-strategy`), [`optimize`] (`/optimize-strategy`). What they share: [`record`] (the
//! analysis record and leg shapes), [`market`] (the live chain read as the math's market and
//! chains), [`fields`] (body reading).

pub mod analyze;
pub mod build;
pub mod fields;
pub mod market;
pub mod optimize;
pub mod pop;
pub mod record;
pub mod simulate;

pub use analyze::analyze_strategy;
pub use build::{BuiltPayload, build_strategy};
pub use optimize::{ConstraintsEcho, OptimizePayload, optimize_strategy};
pub use pop::{MAX_ABS_RATE, PopPayload, pop};
pub use record::{Amount, AnalysisRecord, BuiltLeg, LegSummary};
pub use simulate::{
    DEFAULT_SIM_STRIKES_AROUND, MAX_SIM_STRIKES_AROUND, SimulatePayload, SimulatedChainRow,
    simulate_chain,
};

/// The request-body types of the family, by registry slug ([`crate::openapi::body_schemas`]).
pub fn body_schemas() -> Vec<crate::openapi::DataSchema> {
    use crate::openapi::DataSchema;
    use crate::registry::Endpoint;
    vec![
        DataSchema::of::<pop::PopRequest>(Endpoint::Pop),
        DataSchema::of::<analyze::AnalyzeRequest>(Endpoint::AnalyzeStrategy),
        DataSchema::of::<simulate::SimulateRequest>(Endpoint::SimulateChain),
        DataSchema::of::<build::BuildRequest>(Endpoint::BuildStrategy),
        DataSchema::of::<optimize::OptimizeRequest>(Endpoint::OptimizeStrategy),
    ]
}

/// The continuously compounded risk-free rate used when no chain row carries one, decimal.
pub const DEFAULT_RATE: f64 = 0.04;

/// The label of an unbounded profit, loss or ratio.
pub const UNLIMITED: &str = "unlimited";

/// The longest horizon `/pop` accepts, days (ten years: beyond any listed option).
pub const MAX_DAYS_TO_EXP: f64 = 3_650.0;

/// Target days to expiration when neither `expiration` nor `dte` is sent.
pub const DEFAULT_DTE: f64 = 30.0;

/// Wing width when `width` is absent, dollars.
pub const DEFAULT_WIDTH: f64 = 5.0;

/// Short-strike |delta| when `target_delta` is absent.
pub const DEFAULT_TARGET_DELTA: f64 = 0.3;
