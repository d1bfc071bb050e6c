//! The simulator's error type.

use chrono::NaiveDate;
use optics_schemas::SchemaError;

/// Everything that can go wrong when building or running a simulated session or history.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimulatorError {
    /// The universe has no underlying.
    #[error("the simulator's universe is empty")]
    EmptyUniverse,
    /// A session was asked for on a weekend or an exchange holiday.
    #[error("{date} is not an NYSE trading day: there is no session to simulate")]
    NotATradingDay {
        /// The date asked for.
        date: NaiveDate,
    },
    /// A date before the simulator's first simulated day.
    #[error("{date} is before the simulator's first day {epoch}")]
    BeforeEpoch {
        /// The date asked for.
        date: NaiveDate,
        /// The first day the simulator simulates.
        epoch: NaiveDate,
    },
    /// A market tape that does not cover the date asked for.
    #[error("the market tape does not cover {date}")]
    DateNotInTape {
        /// The date asked for.
        date: NaiveDate,
    },
    /// Open interest that is not the previous session's close.
    #[error(
        "the open interest carried into the session of {trade_date} must be as of {expected}, \
         the previous session, not {as_of:?}"
    )]
    StaleOpenInterest {
        /// The session being built.
        trade_date: NaiveDate,
        /// The date the carried book is as of.
        as_of: Option<NaiveDate>,
        /// The previous trading day.
        expected: NaiveDate,
    },
    /// A quoting interval that is not a positive duration of at most one hour.
    #[error("the quote interval must be between 1 millisecond and 1 hour, got {millis} ms")]
    InvalidInterval {
        /// The interval asked for, milliseconds.
        millis: i64,
    },
    /// A partial update mix outside 1 to [`super::session::MAX_TAIL_EVERY`] intervals.
    #[error(
        "the tail's update interval must be 1 to {} quoting intervals, got {tail_every}",
        super::session::MAX_TAIL_EVERY
    )]
    InvalidTailEvery {
        /// The number asked for.
        tail_every: u32,
    },
    /// A risk-free rate that is not a finite number in (−1, 1).
    #[error("the risk-free rate must be a finite decimal in (-1, 1), got {rate}")]
    InvalidRate {
        /// The rate asked for.
        rate: f64,
    },
    /// History of zero years, or ending before it starts.
    #[error("invalid history request: {reason}")]
    InvalidHistory {
        /// What is wrong.
        reason: String,
    },
    /// A generated batch failed the schema's validation (a simulator bug, reported rather than
    /// panicking).
    #[error("a simulated batch failed validation: {0}")]
    Schema(String),
}

impl From<SchemaError> for SimulatorError {
    fn from(error: SchemaError) -> Self {
        Self::Schema(error.to_string())
    }
}
