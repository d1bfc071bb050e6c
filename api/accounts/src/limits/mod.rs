//! Rate limits and the monthly budget (spec part 8).
//!
//! Per token: 60 requests per minute and 1,000 per hour. Per account: a monthly budget in
//! upstream data units (10,000 by default, per plan configurable; an endpoint's cost is its
//! registry's `Cost`).
//!
//! **Windows are fixed calendar windows in UTC**: the minute from `:00` to `:59` seconds, the
//! hour from `:00:00`, the month from the 1st at 00:00. They are exact under concurrency with
//! one counter per window (an atomic increment in memory or in Redis), need no per-request log,
//! and make `Retry-After` exact: a refused request may succeed at the start of the next window
//! of the limit that refused it, so `Retry-After` is the seconds until then, rounded up. The
//! price is the known burst at a boundary (up to 2 × 60 requests across one minute change),
//! which the hourly limit bounds.
//!
//! A request is admitted only if every limit has room; then all three counters move together
//! (a refused request costs nothing). When several limits are exhausted the 429 names the one
//! that reopens last, so the `Retry-After` it gives is the earliest instant a retry can succeed.
//!
//! **The month is charged for answers, not for requests.** The budget counts upstream data
//! requests, so only an answer that needed them spends it: a success (2xx) built by its handler.
//! An answer served from the response cache, and an error (400, 404, 424, …), spend nothing. The
//! outcome is known only after the handler, so admission ([`Limiter::reserve`]) counts the request
//! in the minute and the hour for good and *reserves* its cost in the month, and
//! [`Limiter::settle`] then either charges it (the units stay spent and the call joins the calls
//! by endpoint) or releases the units. Reserving rather than checking keeps the budget exact
//! under concurrency: calls in flight hold their units, so together they can never pass it.
//!
//! [`Limiter`] has two implementations: [`InMemoryLimiter`] (default; one process, the month
//! written behind to the account store so it survives a restart) and [`RedisLimiter`] (API
//! replicas sharing counters; one Lua script to admit and one to settle; the month lives in
//! Redis).

mod memory;
mod redis;

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{AccountId, Plan};

pub use memory::InMemoryLimiter;
pub use redis::{RedisLimiter, redacted_url};

/// Which limit a 429 hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateLimit {
    /// 60 requests per minute per token.
    PerMinute,
    /// 1,000 requests per hour per token.
    PerHour,
    /// The account's monthly budget.
    MonthlyBudget,
}

impl RateLimit {
    /// The 429's message for this limit.
    pub fn describe(self) -> &'static str {
        match self {
            Self::PerMinute => "Rate limit exceeded: too many requests this minute",
            Self::PerHour => "Rate limit exceeded: too many requests this hour",
            Self::MonthlyBudget => "Monthly budget exceeded",
        }
    }
}

/// Why a limiter could not answer (the request is then refused with a 500: failing open
/// would hand out unmetered access).
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// Redis could not be reached or answered an error.
    #[error("rate-limit store: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// Redis answered something the script does not return.
    #[error("rate-limit store answered unexpectedly: {0}")]
    Protocol(String),
    /// The limiter could not be configured.
    #[error("rate limiter configuration: {0}")]
    Config(String),
}

/// The per-token request limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests per calendar minute per token.
    pub per_minute: u32,
    /// Requests per calendar hour per token.
    pub per_hour: u32,
}

impl Default for RateLimits {
    /// The interface's limits: 60 a minute, 1,000 an hour.
    fn default() -> Self {
        Self {
            per_minute: 60,
            per_hour: 1_000,
        }
    }
}

/// The monthly budget of each plan in upstream data units (an account may override its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanBudgets {
    /// Trial accounts.
    pub trial: u64,
    /// Basic accounts.
    pub basic: u64,
    /// Premium accounts.
    pub premium: u64,
    /// Pro accounts.
    pub pro: u64,
}

impl PlanBudgets {
    /// The interface's default: 10,000 units a month.
    pub const DEFAULT_UNITS: u64 = 10_000;

    /// The budget of `plan` (0 for no plan).
    pub fn for_plan(&self, plan: Plan) -> u64 {
        match plan {
            Plan::None => 0,
            Plan::Trial => self.trial,
            Plan::Basic => self.basic,
            Plan::Premium => self.premium,
            Plan::Pro => self.pro,
        }
    }
}

impl Default for PlanBudgets {
    fn default() -> Self {
        Self {
            trial: Self::DEFAULT_UNITS,
            basic: Self::DEFAULT_UNITS,
            premium: Self::DEFAULT_UNITS,
            pro: Self::DEFAULT_UNITS,
        }
    }
}

/// Why a `--plan-budgets` value was refused; the message names the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} (expected plan=units pairs such as basic=10000,premium=20000,pro=50000,trial=1000)")]
pub struct PlanBudgetsError(String);

impl std::str::FromStr for PlanBudgets {
    type Err = PlanBudgetsError;

    /// Parses `basic=N,premium=N,pro=N,trial=N`: any of the four plans, each at most once, in
    /// any order; a plan left out keeps the default of [`Self::DEFAULT_UNITS`]. `none` has no
    /// budget to set (it opens no data endpoint).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |message: String| Err(PlanBudgetsError(message));
        let mut budgets = Self::default();
        let mut seen = Vec::new();
        if text.trim().is_empty() {
            return fail("no plan budgets given".into());
        }
        for pair in text.split(',') {
            let pair = pair.trim();
            let Some((name, units)) = pair.split_once('=') else {
                return fail(format!("{pair:?} is not plan=units"));
            };
            let (name, units) = (name.trim().to_ascii_lowercase(), units.trim());
            let slot = match name.as_str() {
                "trial" => &mut budgets.trial,
                "basic" => &mut budgets.basic,
                "premium" => &mut budgets.premium,
                "pro" => &mut budgets.pro,
                "none" => return fail("the plan none has no budget to set".into()),
                _ => {
                    return fail(format!(
                        "unknown plan {name:?} (trial, basic, premium, pro)"
                    ));
                }
            };
            if seen.contains(&name) {
                return fail(format!("the plan {name} is given twice"));
            }
            // Digits only: no sign, no separators, no unit suffix to guess at.
            let parsed = units
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| units.parse::<u64>().ok())
                .flatten()
                .filter(|units| i64::try_from(*units).is_ok());
            let Some(parsed) = parsed.filter(|_| !units.is_empty()) else {
                return fail(format!(
                    "the budget of {name} must be a whole number of units from 0 to {}, got {units:?}",
                    i64::MAX
                ));
            };
            *slot = parsed;
            seen.push(name);
        }
        Ok(budgets)
    }
}

/// The three fixed windows that contain an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Minutes since the Unix epoch.
    pub minute_index: i64,
    /// Hours since the Unix epoch.
    pub hour_index: i64,
    /// `year * 12 + month0`: the calendar month.
    pub month_index: i64,
    /// Start of the next minute.
    pub minute_resets_at: DateTime<Utc>,
    /// Start of the next hour.
    pub hour_resets_at: DateTime<Utc>,
    /// The 1st of next month, 00:00 UTC.
    pub month_resets_at: DateTime<Utc>,
}

impl Windows {
    /// The windows containing `now`.
    pub fn at(now: DateTime<Utc>) -> Self {
        let secs = now.timestamp();
        let minute_index = secs.div_euclid(60);
        let hour_index = secs.div_euclid(3_600);
        let (year, month0) = (now.year(), now.month0());
        let (next_year, next_month) = if month0 == 11 {
            (year + 1, 1)
        } else {
            (year, month0 + 2)
        };
        Self {
            minute_index,
            hour_index,
            month_index: i64::from(year) * 12 + i64::from(month0),
            minute_resets_at: epoch_plus_secs((minute_index + 1) * 60),
            hour_resets_at: epoch_plus_secs((hour_index + 1) * 3_600),
            month_resets_at: Utc
                .with_ymd_and_hms(next_year, next_month, 1, 0, 0, 0)
                .single()
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        }
    }

    /// The month as `YYYY-MM` (keys, the usage payload).
    pub fn month_label(&self) -> String {
        month_label(self.month_index)
    }
}

/// A [`Windows::month_index`] as `YYYY-MM`.
pub fn month_label(month_index: i64) -> String {
    format!(
        "{:04}-{:02}",
        month_index.div_euclid(12),
        month_index.rem_euclid(12) + 1
    )
}

fn epoch_plus_secs(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Whole seconds from `now` until `at`, rounded up, at least 1 (`Retry-After`).
pub fn seconds_until(now: DateTime<Utc>, at: DateTime<Utc>) -> u64 {
    let micros = (at - now).num_microseconds().unwrap_or(i64::MAX).max(0);
    let secs = micros.div_euclid(1_000_000) + i64::from(micros.rem_euclid(1_000_000) != 0);
    u64::try_from(secs).unwrap_or(0).max(1)
}

/// One window of one limit: its size, what has been used, when it reopens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowState {
    /// Requests (or units) allowed in the window.
    pub limit: u64,
    /// Used so far, the current request included when admitted.
    pub used: u64,
    /// Left: `limit - used`, never below zero.
    pub remaining: u64,
    /// When the window ends and the count restarts.
    pub resets_at: DateTime<Utc>,
}

impl WindowState {
    /// A window of `limit` with `used` spent, ending at `resets_at`.
    pub fn new(limit: u64, used: u64, resets_at: DateTime<Utc>) -> Self {
        Self {
            limit,
            used,
            remaining: limit.saturating_sub(used),
            resets_at,
        }
    }
}

/// Where a token and its account stand on all three limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// This minute, for the token.
    pub minute: WindowState,
    /// This hour, for the token.
    pub hour: WindowState,
    /// This month's budget, for the account, in units.
    pub month: WindowState,
}

impl Quota {
    /// The quota from raw counts in the windows at `windows`.
    pub fn from_counts(
        limits: RateLimits,
        budget_units: u64,
        windows: &Windows,
        minute_used: u64,
        hour_used: u64,
        month_used_units: u64,
    ) -> Self {
        Self {
            minute: WindowState::new(
                u64::from(limits.per_minute),
                minute_used,
                windows.minute_resets_at,
            ),
            hour: WindowState::new(
                u64::from(limits.per_hour),
                hour_used,
                windows.hour_resets_at,
            ),
            month: WindowState::new(budget_units, month_used_units, windows.month_resets_at),
        }
    }
}

/// One request to meter.
#[derive(Debug, Clone, Copy)]
pub struct LimitRequest<'a> {
    /// Public id of the token (per-token windows).
    pub token_id: &'a str,
    /// The token's account (monthly budget).
    pub account_id: AccountId,
    /// The endpoint, as named in the usage breakdown (`GET /chain/{ticker}`).
    pub endpoint: &'a str,
    /// Units this call costs against the budget (0 for free endpoints).
    pub cost_units: u32,
    /// The account's budget this month, in units.
    pub monthly_budget_units: u64,
    /// The instant of the request (from the injected clock). Settling a request passes the
    /// instant it was admitted at, so the units go back to (or stay in) the month that held them.
    pub now: DateTime<Utc>,
}

/// What a request admitted by [`Limiter::reserve`] turned out to cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// A fresh successful answer: its units stay spent and the call counts in the breakdown.
    Charge,
    /// A cached answer or an error: its units go back to the budget and the call is not in the
    /// breakdown (it still counted in the minute and the hour).
    Release,
}

/// The limiter's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Counted; the quota after this request (its cost included while it is reserved).
    Admitted(Quota),
    /// Refused, nothing counted.
    Refused {
        /// The limit that reopens last among the exhausted ones.
        limit: RateLimit,
        /// Seconds until a retry can succeed (rounded up, ≥ 1).
        retry_after_secs: u64,
        /// The quota as it stands.
        quota: Quota,
    },
}

impl Decision {
    /// The quota either way.
    pub fn quota(&self) -> &Quota {
        match self {
            Self::Admitted(quota) | Self::Refused { quota, .. } => quota,
        }
    }
}

/// Which limits would refuse a request of `cost_units` given the counts before it; `None`
/// when it fits. Shared by both limiters so they decide identically.
pub fn refusal(
    quota_before: &Quota,
    cost_units: u32,
    now: DateTime<Utc>,
) -> Option<(RateLimit, u64)> {
    let exhausted = [
        (
            quota_before.minute.used >= quota_before.minute.limit,
            RateLimit::PerMinute,
            quota_before.minute.resets_at,
        ),
        (
            quota_before.hour.used >= quota_before.hour.limit,
            RateLimit::PerHour,
            quota_before.hour.resets_at,
        ),
        (
            quota_before
                .month
                .used
                .saturating_add(u64::from(cost_units))
                > quota_before.month.limit,
            RateLimit::MonthlyBudget,
            quota_before.month.resets_at,
        ),
    ];
    exhausted
        .into_iter()
        .filter(|(full, _, _)| *full)
        .max_by_key(|(_, _, resets_at)| *resets_at)
        .map(|(_, limit, resets_at)| (limit, seconds_until(now, resets_at)))
}

/// Calls and units one endpoint was charged for this month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointUsage {
    /// The endpoint (`GET /chain/{ticker}`).
    pub endpoint: String,
    /// Charged calls: fresh successful answers (cached answers and errors are not counted).
    pub calls: u64,
    /// Budget units they cost.
    pub units: u64,
}

/// What the usage endpoint shows: the calling token's windows, the account's month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageReport {
    /// The quota now (without counting anything).
    pub quota: Quota,
    /// This month's calls by endpoint, most called first (ties by name).
    pub by_endpoint: Vec<EndpointUsage>,
}

/// Sorts a usage breakdown: most calls first, then by endpoint name.
pub fn sort_usage(by_endpoint: &mut [EndpointUsage]) {
    by_endpoint.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
}

/// The future a limiter returns (boxed so the trait can be used as `dyn`).
pub type LimitFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LimitError>> + Send + 'a>>;

/// Counts requests against the three limits, exactly under concurrency.
pub trait Limiter: Send + Sync + fmt::Debug {
    /// Admits the request if every limit has room: counts it in the token's minute and hour and
    /// reserves its cost in the account's month until [`Self::settle`]. Otherwise refuses it and
    /// counts nothing.
    fn reserve<'a>(&'a self, request: LimitRequest<'a>) -> LimitFuture<'a, Decision>;

    /// Settles a request [`Self::reserve`] admitted (`request` as it was admitted, instant
    /// included): charges its reserved units or releases them. Returns the account's month
    /// after, for the answer's budget header (the request's minute and hour are the ones its
    /// admission counted: settling does not move them).
    fn settle<'a>(
        &'a self,
        request: LimitRequest<'a>,
        settlement: Settlement,
    ) -> LimitFuture<'a, WindowState>;

    /// [`Self::reserve`] and, when admitted, [`Settlement::Charge`] at once: metering a call
    /// that is charged whatever its answer (tools, tests, benchmarks).
    fn acquire<'a>(&'a self, request: LimitRequest<'a>) -> LimitFuture<'a, Decision> {
        Box::pin(async move {
            match self.reserve(request).await? {
                Decision::Admitted(quota) => Ok(Decision::Admitted(Quota {
                    month: self.settle(request, Settlement::Charge).await?,
                    ..quota
                })),
                refused => Ok(refused),
            }
        })
    }

    /// The token's and account's standing at `now`, without counting anything.
    fn usage<'a>(
        &'a self,
        token_id: &'a str,
        account_id: AccountId,
        monthly_budget_units: u64,
        now: DateTime<Utc>,
    ) -> LimitFuture<'a, UsageReport>;

    /// The per-token limits this limiter enforces.
    fn limits(&self) -> RateLimits;
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    #[test]
    fn windows_are_calendar_aligned_in_utc() {
        let w = Windows::at(at(2026, 12, 31, 23, 59, 30));
        assert_eq!(w.minute_resets_at, at(2027, 1, 1, 0, 0, 0));
        assert_eq!(w.hour_resets_at, at(2027, 1, 1, 0, 0, 0));
        assert_eq!(w.month_resets_at, at(2027, 1, 1, 0, 0, 0));
        assert_eq!(w.month_label(), "2026-12");
        let w = Windows::at(at(2026, 2, 14, 10, 7, 0));
        assert_eq!(w.minute_resets_at, at(2026, 2, 14, 10, 8, 0));
        assert_eq!(w.hour_resets_at, at(2026, 2, 14, 11, 0, 0));
        assert_eq!(w.month_resets_at, at(2026, 3, 1, 0, 0, 0));
        assert_eq!(w.month_label(), "2026-02");
        assert_eq!(w.minute_index, at(2026, 2, 14, 10, 7, 0).timestamp() / 60);
        // The same minute for every second in it, the next one at :00.
        assert_eq!(
            Windows::at(at(2026, 2, 14, 10, 7, 59)).minute_index,
            w.minute_index
        );
        assert_eq!(
            Windows::at(at(2026, 2, 14, 10, 8, 0)).minute_index,
            w.minute_index + 1
        );
    }

    #[test]
    fn retry_after_rounds_up_and_is_at_least_one() {
        let now = at(2026, 3, 2, 9, 30, 15);
        assert_eq!(seconds_until(now, at(2026, 3, 2, 9, 31, 0)), 45);
        let now_frac = now + TimeDelta::milliseconds(250);
        assert_eq!(seconds_until(now_frac, at(2026, 3, 2, 9, 31, 0)), 45);
        assert_eq!(seconds_until(now, now), 1);
        assert_eq!(seconds_until(now, now - TimeDelta::seconds(5)), 1);
    }

    #[test]
    fn the_refusal_names_the_limit_that_reopens_last() {
        let now = at(2026, 3, 2, 9, 30, 15);
        let w = Windows::at(now);
        let limits = RateLimits::default();
        let quota = |m, h, b| Quota::from_counts(limits, 100, &w, m, h, b);
        assert_eq!(refusal(&quota(59, 999, 99), 1, now), None);
        assert_eq!(
            refusal(&quota(60, 10, 0), 1, now),
            Some((RateLimit::PerMinute, 45))
        );
        assert_eq!(
            refusal(&quota(60, 1_000, 0), 1, now),
            Some((RateLimit::PerHour, 1_785))
        );
        let to_april = (at(2026, 4, 1, 0, 0, 0) - now).num_seconds() as u64;
        assert_eq!(
            refusal(&quota(60, 1_000, 100), 1, now),
            Some((RateLimit::MonthlyBudget, to_april))
        );
        // Budget: a call must fit whole; a free call passes an exhausted budget.
        assert_eq!(
            refusal(&quota(0, 0, 99), 2, now).map(|r| r.0),
            Some(RateLimit::MonthlyBudget)
        );
        assert_eq!(refusal(&quota(0, 0, 100), 0, now), None);
    }

    #[test]
    fn plan_budgets_parse_from_plan_unit_pairs() {
        let parsed: PlanBudgets = "basic=100,premium=2000,pro=30000,trial=4".parse().unwrap();
        assert_eq!(
            parsed,
            PlanBudgets {
                trial: 4,
                basic: 100,
                premium: 2_000,
                pro: 30_000
            }
        );
        // Any order, spaces and case tolerated; plans left out keep 10,000; 0 is allowed.
        let parsed: PlanBudgets = " PRO = 0 , trial=7".parse().unwrap();
        assert_eq!((parsed.pro, parsed.trial), (0, 7));
        assert_eq!((parsed.basic, parsed.premium), (10_000, 10_000));
        for (bad, says) in [
            ("", "no plan budgets"),
            ("pro", "not plan=units"),
            ("pro=", "whole number"),
            ("pro=-5", "whole number"),
            ("pro=+5", "whole number"),
            ("pro=1.5", "whole number"),
            ("pro=10k", "whole number"),
            ("pro=99999999999999999999", "whole number"),
            ("pro=9223372036854775808", "whole number"),
            ("gold=5", "unknown plan"),
            ("none=5", "none has no budget"),
            ("pro=1,pro=2", "given twice"),
            ("pro=1,", "not plan=units"),
        ] {
            let error = bad.parse::<PlanBudgets>().unwrap_err().to_string();
            assert!(error.contains(says), "{bad:?}: {error}");
        }
    }

    #[test]
    fn plan_budgets_default_to_ten_thousand() {
        let budgets = PlanBudgets::default();
        assert_eq!(budgets.for_plan(Plan::Pro), 10_000);
        assert_eq!(budgets.for_plan(Plan::Trial), 10_000);
        assert_eq!(budgets.for_plan(Plan::None), 0);
    }
}
