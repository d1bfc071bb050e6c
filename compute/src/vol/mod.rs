//! Volatility and reference statistics, computed once per session close: realized volatility,
//! implied-volatility summaries of a chain, and the statistics the volatility, correlation and
//! earnings endpoints read.
//!
//! Every function is pure (slices and plain structs in, plain data out). Units throughout:
//! **volatilities are annualised percentage points** (25.0 means 25 %), moves are percent of the
//! reference price, correlations are in [−1, 1], betas are unitless.
//!
//! - [`realized`]: close-to-close realized volatility (`hv_basis`): the sample standard deviation
//!   (n − 1 denominator) of exactly N daily log returns, × √252, × 100; the standard windows
//!   5…252 ([`HvSet`]), an ex-earnings variant and a rolling series.
//! - [`implied`]: from one chain snapshot, the per-expiration ATM IV at the forward, the 25-delta
//!   skew, and constant-maturity IV at 10, 20, 30, 60, 90, 180 and 365 days.
//! - [`stats`]: IV rank and percentile over a lookback, the volatility risk premium, correlation
//!   and beta of log returns, earnings-move statistics, percentiles and the distribution
//!   figures of a volatility cone.
//! - [`daily`]: the `vol_daily` snapshot row of one underlying at a session close (with the
//!   close-to-close log return and the earnings-move statistics) and its `vol_term` rows (the
//!   ATM term structure, one per expiration).
//! - [`close`]: the rows of every underlying at a session close, from the reference tables,
//!   the closing chains and the earlier rows.
//! - [`range`]: intraday-range realized volatility from OHLC bars (Parkinson, Garman–Klass,
//!   Yang–Zhang) over exactly N sessions, and its rolling series.
//! - [`garch`]: GARCH(1,1) with a constant mean fitted by Gaussian maximum likelihood to daily
//!   percent log returns (`arch`'s model and backcast), with its variance and vol forecasts.
//! - [`svi`]: raw SVI smile per expiration (quasi-explicit weighted least squares), its fit
//!   error, a butterfly-arbitrage check, ATM IV, slope, curvature and IV at fixed call deltas.
//! - [`vix`]: the Cboe VIX white-paper method: per-expiration model-free variance from the
//!   out-of-the-money strip, and the 30-day interpolation.
//! - [`vix_chain`]: the VIX of one SPX chain snapshot: the white paper's choice of the near and
//!   next Friday-cycle terms, minutes to their AM or PM settlement, and the index.
//!
//! Input that cannot be computed on is a [`VolError`] naming what is wrong; "not enough data"
//! for an otherwise valid input is `None` where the function documents it.

pub mod close;
pub mod daily;
pub mod garch;
pub mod implied;
mod optimize;
pub mod range;
pub mod realized;
pub mod regimes;
pub mod signals;
pub mod stats;
pub mod svi;
pub mod vix;
pub mod vix_chain;

#[cfg(test)]
mod tests;

pub use close::{
    BENCHMARK_SYMBOL, SessionCloseInputs, SessionCloseRows, earnings_moves, vol_daily_rows,
};
pub use daily::{
    DailyVolInputs, IV_RANK_LOOKBACK_SESSIONS, IV_RANK_MIN_SESSIONS, iv_rank_against_prior,
    vol_daily_and_term_rows, vol_daily_row,
};
pub use garch::{
    GARCH_MIN_RETURNS, GarchFit, GarchParams, GarchUnavailable, fit_garch11, fit_garch11_closes,
    fit_garch11_recent, garch_backcast, garch11_log_likelihood, pct_log_returns,
};
pub use implied::{
    CONSTANT_MATURITY_DAYS, ConstantMaturityIv, ExpirationVol, SmileShape, constant_maturity_iv,
    earnings_effect_pct, expiration_vols, front_atm, skew25_constant_maturity, smile_points,
    smile_shape_at,
};
pub use range::{
    OhlcBar, RangeEstimator, garman_klass, parkinson, range_vol, range_vol_series, yang_zhang,
};
pub use realized::{
    HV_WINDOWS, HvSet, TRADING_DAYS_PER_YEAR, earnings_in_window, hv, hv_ex_earnings, hv_series,
    log_returns,
};
pub use stats::{
    CORRELATION_WINDOW_1M, CORRELATION_WINDOW_1Y, CorrelationBeta, Distribution, EarningsMove,
    EarningsMoveStats, IvRankPercentile, Standing, Vrp, correlation_beta, distribution,
    earnings_move_stats, gap_move_pct, iv_rank_percentile, percentile_of, standing, vrp,
};
pub use svi::{
    DeltaPoint, STANDARD_CALL_DELTAS, SVI_MIN_POINTS, SmilePoint, SviFit, SviParams, fit_svi,
};
pub use vix::{
    BidAsk, MINUTES_30_DAYS, MINUTES_PER_YEAR, StripContribution, StripSide, TermVariance,
    VixIndex, VixStrike, vix_index, vix_term_variance,
};
pub use vix_chain::{
    ChainVix, VIX_UNDERLYING, VixTerm, VixTermSelection, chain_vix, vix_candidate_expirations,
};

/// Input the volatility functions cannot compute on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VolError {
    /// A value that must be a finite number (and, for prices and volatilities, > 0) is not.
    #[error("{what}[{index}] = {value} is not {rule}")]
    BadValue {
        /// Which input.
        what: &'static str,
        /// Position in the input.
        index: usize,
        /// The value found.
        value: f64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// Two inputs that must be aligned element by element have different lengths.
    #[error("{what}: lengths differ ({left} and {right}); the series must be aligned by date")]
    LengthMismatch {
        /// Which inputs.
        what: &'static str,
        /// Length of the first.
        left: usize,
        /// Length of the second.
        right: usize,
    },
    /// Fewer observations than the statistic needs.
    #[error("{what}: {got} observations, at least {needed} needed")]
    TooFewObservations {
        /// Which statistic.
        what: &'static str,
        /// How many it needs.
        needed: usize,
        /// How many there were.
        got: usize,
    },
    /// The chain rows are not one underlying's snapshot of one session.
    #[error("chain rows mix {what}: {first} and {other}")]
    MixedChain {
        /// `underlyings` or `trade dates`.
        what: &'static str,
        /// The first row's value.
        first: String,
        /// A differing value.
        other: String,
    },
    /// The input is well formed but the method has no figure for it (the reason says why).
    #[error("{what}: {reason}")]
    NotComputable {
        /// Which figure.
        what: &'static str,
        /// Why there is none.
        reason: String,
    },
}

/// Checks that every value is finite and > 0 (closes, volatilities).
pub(crate) fn check_positive(what: &'static str, values: &[f64]) -> Result<(), VolError> {
    match values.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        None => Ok(()),
        Some(index) => Err(VolError::BadValue {
            what,
            index,
            value: values[index],
            rule: "a finite number > 0",
        }),
    }
}

/// Checks that one value is finite.
pub(crate) fn check_finite(what: &'static str, index: usize, value: f64) -> Result<f64, VolError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(VolError::BadValue {
            what,
            index,
            value,
            rule: "a finite number",
        })
    }
}
