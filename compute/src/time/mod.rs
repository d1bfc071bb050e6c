//! Time: the NYSE trading calendar and year fractions to expiry.
//!
//! Conventions used across optics:
//!
//! - **Time zone.** Market times are New York wall-clock times ([`NEW_YORK`],
//!   America/New_York via `chrono-tz`, so EST/EDT switch on the right dates; never a fixed
//!   offset). Instants passed in and out are `DateTime<Utc>`; nothing here reads the clock, the
//!   caller passes "now".
//! - **Expiry instant.** An option expires, for time-to-expiry purposes, at the close of its
//!   expiration day's session: 16:00 New York ([`EXPIRY_CLOSE`]), 13:00 on early-close days
//!   ([`expiration_close_utc`]).
//! - **Year fractions.** Calendar time, ACT/365 fixed, in fractional seconds:
//!   `t = seconds / (365 × 86 400)` ([`SECONDS_PER_YEAR`], [`years_to_expiry`]). It goes
//!   negative after expiry rather than being clamped.
//! - **Greeks' time unit.** Theta and the other time-decay Greeks are per calendar day, i.e. per
//!   `1 / 365` year ([`DAYS_PER_YEAR`]).
//! - **Days to expiry.** The integer DTE is calendar days from the New York date of "now" to the
//!   expiration date, 0 on expiration day ([`days_to_expiry`]).
//! - **Trade date.** An instant belongs to the session in progress, or else to the last session
//!   that has closed ([`NyseCalendar::market_state`]).
//! - **Calendar.** [`NyseCalendar`] is rule-based: NYSE holidays with their weekend observance,
//!   a table of unscheduled closures, 13:00 early closes and 09:30–16:00 sessions. It is checked
//!   against the published calendar for 1990–2100 ([`VALIDATED_YEARS`]) and extrapolates the
//!   same rules, without panicking, outside it.
//! - **Now.** Services take an `Arc<dyn` [`Clock`]`>`: [`SystemClock`] in production,
//!   [`ManualClock`] in tests, [`AcceleratedClock`] for `--speed` and past-date sessions.

mod calendar;
mod clock;
mod year_fraction;

pub use calendar::{
    EARLY_CLOSE, MarketState, NEW_YORK, NyseCalendar, REGULAR_CLOSE, REGULAR_OPEN, Session,
    VALIDATED_YEARS, new_york_date, new_york_datetime,
};
pub use clock::{AcceleratedClock, Clock, InvalidSpeed, ManualClock, SystemClock};
pub use year_fraction::{
    DAYS_PER_YEAR, EXPIRY_CLOSE, SECONDS_PER_DAY, SECONDS_PER_YEAR, days_to_expiry,
    expiration_close_utc, year_fraction, years_to_expiry,
};
