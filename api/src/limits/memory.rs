//! The in-process limiter: every counter behind one mutex, so check-and-count is one critical
//! section of a few hash lookups (exact under any concurrency; uncontended in practice on the
//! service's core count). Counters live as long as the process: a restart starts fresh windows
//! and a fresh month, which is why replicas (and anyone who needs the month to survive a
//! restart) use [`super::RedisLimiter`].

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use super::{
    Decision, EndpointUsage, LimitFuture, LimitRequest, Limiter, Quota, RateLimits, UsageReport,
    Windows, refusal, sort_usage,
};
use crate::accounts::AccountId;

/// The in-memory [`Limiter`] (the embedded default).
#[derive(Debug)]
pub struct InMemoryLimiter {
    limits: RateLimits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tokens: HashMap<String, TokenWindows>,
    accounts: HashMap<AccountId, AccountMonth>,
}

/// A token's counts in the minute and hour they were last counted in.
#[derive(Debug, Default, Clone, Copy)]
struct TokenWindows {
    minute_index: i64,
    minute_count: u64,
    hour_index: i64,
    hour_count: u64,
}

impl TokenWindows {
    fn counts(&self, windows: &Windows) -> (u64, u64) {
        (
            if self.minute_index == windows.minute_index {
                self.minute_count
            } else {
                0
            },
            if self.hour_index == windows.hour_index {
                self.hour_count
            } else {
                0
            },
        )
    }
}

/// An account's spending in the month it was last counted in.
#[derive(Debug, Default)]
struct AccountMonth {
    month_index: i64,
    units: u64,
    by_endpoint: HashMap<String, (u64, u64)>,
}

impl AccountMonth {
    fn units(&self, windows: &Windows) -> u64 {
        if self.month_index == windows.month_index {
            self.units
        } else {
            0
        }
    }
}

impl InMemoryLimiter {
    /// A limiter enforcing `limits` per token.
    pub fn new(limits: RateLimits) -> Self {
        Self {
            limits,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Counters are plain integers updated after every check; a panic elsewhere cannot
        // leave them half-written, so a poisoned lock is taken over.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The synchronous core of [`Limiter::acquire`].
    pub fn acquire_now(&self, request: &LimitRequest<'_>) -> Decision {
        let windows = Windows::at(request.now);
        let mut state = self.lock();
        let state = &mut *state;
        let token = state.tokens.entry(request.token_id.to_owned()).or_default();
        let (minute_used, hour_used) = token.counts(&windows);
        let month = state.accounts.entry(request.account_id).or_default();
        let month_used = month.units(&windows);
        let before = Quota::from_counts(
            self.limits,
            request.monthly_budget_units,
            &windows,
            minute_used,
            hour_used,
            month_used,
        );
        if let Some((limit, retry_after_secs)) = refusal(&before, request.cost_units, request.now) {
            return Decision::Refused {
                limit,
                retry_after_secs,
                quota: before,
            };
        }
        *token = TokenWindows {
            minute_index: windows.minute_index,
            minute_count: minute_used + 1,
            hour_index: windows.hour_index,
            hour_count: hour_used + 1,
        };
        if month.month_index != windows.month_index {
            *month = AccountMonth {
                month_index: windows.month_index,
                ..AccountMonth::default()
            };
        }
        let cost = u64::from(request.cost_units);
        month.units += cost;
        let entry = month
            .by_endpoint
            .entry(request.endpoint.to_owned())
            .or_default();
        entry.0 += 1;
        entry.1 += cost;
        Decision::Admitted(Quota::from_counts(
            self.limits,
            request.monthly_budget_units,
            &windows,
            minute_used + 1,
            hour_used + 1,
            month.units,
        ))
    }

    /// The synchronous core of [`Limiter::usage`].
    pub fn usage_now(
        &self,
        token_id: &str,
        account_id: AccountId,
        monthly_budget_units: u64,
        now: DateTime<Utc>,
    ) -> UsageReport {
        let windows = Windows::at(now);
        let state = self.lock();
        let (minute_used, hour_used) = state
            .tokens
            .get(token_id)
            .map_or((0, 0), |t| t.counts(&windows));
        let month = state.accounts.get(&account_id);
        let month_used = month.map_or(0, |m| m.units(&windows));
        let mut by_endpoint: Vec<EndpointUsage> = month
            .filter(|m| m.month_index == windows.month_index)
            .map(|m| {
                m.by_endpoint
                    .iter()
                    .map(|(endpoint, (calls, units))| EndpointUsage {
                        endpoint: endpoint.clone(),
                        calls: *calls,
                        units: *units,
                    })
                    .collect()
            })
            .unwrap_or_default();
        sort_usage(&mut by_endpoint);
        UsageReport {
            quota: Quota::from_counts(
                self.limits,
                monthly_budget_units,
                &windows,
                minute_used,
                hour_used,
                month_used,
            ),
            by_endpoint,
        }
    }
}

impl Default for InMemoryLimiter {
    fn default() -> Self {
        Self::new(RateLimits::default())
    }
}

impl Limiter for InMemoryLimiter {
    fn acquire<'a>(&'a self, request: LimitRequest<'a>) -> LimitFuture<'a, Decision> {
        Box::pin(std::future::ready(Ok(self.acquire_now(&request))))
    }

    fn usage<'a>(
        &'a self,
        token_id: &'a str,
        account_id: AccountId,
        monthly_budget_units: u64,
        now: DateTime<Utc>,
    ) -> LimitFuture<'a, UsageReport> {
        Box::pin(std::future::ready(Ok(self.usage_now(
            token_id,
            account_id,
            monthly_budget_units,
            now,
        ))))
    }

    fn limits(&self) -> RateLimits {
        self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RateLimit;
    use chrono::{TimeDelta, TimeZone};
    use std::sync::Arc;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 0).unwrap()
    }

    fn request<'a>(token: &'a str, now: DateTime<Utc>, cost: u32, budget: u64) -> LimitRequest<'a> {
        LimitRequest {
            token_id: token,
            account_id: 1,
            endpoint: "GET /chain/{ticker}",
            cost_units: cost,
            monthly_budget_units: budget,
            now,
        }
    }

    #[test]
    fn sixty_a_minute_then_a_retry_after_to_the_next_minute() {
        let limiter = InMemoryLimiter::default();
        let now = start() + TimeDelta::seconds(20);
        for i in 0..60 {
            match limiter.acquire_now(&request("t", now, 1, 10_000)) {
                Decision::Admitted(q) => assert_eq!(q.minute.remaining, 59 - i),
                other => panic!("request {i} refused: {other:?}"),
            }
        }
        match limiter.acquire_now(&request("t", now, 1, 10_000)) {
            Decision::Refused {
                limit,
                retry_after_secs,
                quota,
            } => {
                assert_eq!(limit, RateLimit::PerMinute);
                assert_eq!(retry_after_secs, 40);
                assert_eq!(quota.minute.used, 60);
                assert_eq!(quota.month.used, 60, "refusals are not counted");
            }
            other => panic!("{other:?}"),
        }
        // Another token of the same account has its own windows but shares the budget.
        match limiter.acquire_now(&request("u", now, 1, 10_000)) {
            Decision::Admitted(q) => {
                assert_eq!(q.minute.used, 1);
                assert_eq!(q.month.used, 61);
            }
            other => panic!("{other:?}"),
        }
        // At the next minute the token is admitted again.
        let next = start() + TimeDelta::minutes(1);
        assert!(matches!(
            limiter.acquire_now(&request("t", next, 1, 10_000)),
            Decision::Admitted(_)
        ));
    }

    #[test]
    fn the_hourly_limit_holds_across_minutes() {
        let limiter = InMemoryLimiter::new(RateLimits {
            per_minute: 60,
            per_hour: 100,
        });
        let mut now = start();
        let mut admitted = 0;
        for _ in 0..4 {
            for _ in 0..60 {
                if matches!(
                    limiter.acquire_now(&request("t", now, 0, 0)),
                    Decision::Admitted(_)
                ) {
                    admitted += 1;
                }
            }
            now += TimeDelta::minutes(1);
        }
        assert_eq!(admitted, 100);
        match limiter.acquire_now(&request("t", now, 0, 0)) {
            Decision::Refused {
                limit,
                retry_after_secs,
                ..
            } => {
                assert_eq!(limit, RateLimit::PerHour);
                assert_eq!(retry_after_secs, 26 * 60);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_budget_counts_units_and_resets_with_the_month() {
        let limiter = InMemoryLimiter::new(RateLimits {
            per_minute: 1_000,
            per_hour: 10_000,
        });
        let now = start();
        for _ in 0..4 {
            assert!(matches!(
                limiter.acquire_now(&request("t", now, 2, 9)),
                Decision::Admitted(_)
            ));
        }
        // 8 of 9 used: a 2-unit call does not fit, a 1-unit call does, then nothing but free.
        assert!(matches!(
            limiter.acquire_now(&request("t", now, 2, 9)),
            Decision::Refused {
                limit: RateLimit::MonthlyBudget,
                ..
            }
        ));
        assert!(matches!(
            limiter.acquire_now(&request("t", now, 1, 9)),
            Decision::Admitted(_)
        ));
        assert!(matches!(
            limiter.acquire_now(&request("t", now, 0, 9)),
            Decision::Admitted(_)
        ));
        let report = limiter.usage_now("t", 1, 9, now);
        assert_eq!(report.quota.month.used, 9);
        assert_eq!(report.quota.month.remaining, 0);
        assert_eq!(report.by_endpoint[0].calls, 6);
        assert_eq!(report.by_endpoint[0].units, 9);
        let december = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        assert!(matches!(
            limiter.acquire_now(&request("t", december, 2, 9)),
            Decision::Admitted(_)
        ));
        assert_eq!(limiter.usage_now("t", 1, 9, december).quota.month.used, 2);
    }

    #[test]
    fn concurrent_threads_admit_exactly_the_limit() {
        let limiter = Arc::new(InMemoryLimiter::default());
        let now = start();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                std::thread::spawn(move || {
                    (0..25)
                        .filter(|_| {
                            matches!(
                                limiter.acquire_now(&request("t", now, 1, 10_000)),
                                Decision::Admitted(_)
                            )
                        })
                        .count()
                })
            })
            .collect();
        let admitted: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(admitted, 60);
    }
}
