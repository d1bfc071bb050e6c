//! The in-process limiter: every counter behind one mutex, so check-and-count is one critical
//! section of a few hash lookups (exact under any concurrency; uncontended in practice on the
//! service's core count).
//!
//! The minute and hour windows live as long as the process (a restart reopens them, which
//! costs a client at most one window's worth of extra requests). The month must not be
//! forgotten that way, or every restart would hand out a fresh budget: a limiter built with
//! [`InMemoryLimiter::restored`] starts from the month stored in the account store and keeps
//! track of what it has counted since, and the service writes that back behind the requests
//! ([`InMemoryLimiter::save_to`], every few seconds and at shutdown). Writes are additive
//! (`calls += n`), so a write that fails is retried with the next one and a restarted process
//! never overwrites what the one before it wrote. What a crash loses is the few seconds since
//! the last write. [`super::RedisLimiter`] keeps the month in Redis instead.
//!
//! Units reserved by requests in flight ([`Limiter::reserve`]) count against the budget but are
//! never written: only charges are ([`Limiter::settle`]), so the store holds exactly what was
//! charged, and a restart drops the reservations of requests that never finished.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use super::{
    Decision, EndpointUsage, LimitFuture, LimitRequest, Limiter, Quota, RateLimits, Settlement,
    UsageReport, WindowState, Windows, month_label, refusal, sort_usage,
};
use crate::{AccountError, AccountId, AccountStore, MonthlyUsage};

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
    /// Each account's minute and hour, over all its tokens: a revoked and recreated token
    /// gets no fresh windows.
    account_windows: HashMap<AccountId, TokenWindows>,
    /// Whether counted usage is kept for writing back (a [`InMemoryLimiter::restored`] one).
    persisted: bool,
    /// Accounts with usage not yet handed out by [`InMemoryLimiter::take_unsaved`], each once.
    dirty: Vec<AccountId>,
    /// Unsaved usage of months that ended before it was written.
    unsaved_of_ended_months: Vec<MonthlyUsage>,
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

/// One endpoint's month: what was counted, and how much of it the store already has.
#[derive(Debug, Default, Clone, Copy)]
struct EndpointMonth {
    calls: u64,
    units: u64,
    saved_calls: u64,
    saved_units: u64,
}

impl EndpointMonth {
    fn unsaved(&self) -> (u64, u64) {
        (
            self.calls.saturating_sub(self.saved_calls),
            self.units.saturating_sub(self.saved_units),
        )
    }
}

/// An account's spending in the month it was last counted in.
#[derive(Debug, Default)]
struct AccountMonth {
    month_index: i64,
    /// Units charged (settled answers).
    units: u64,
    /// Units held by admitted requests not settled yet.
    reserved_units: u64,
    /// Charged calls and units by endpoint.
    by_endpoint: HashMap<String, EndpointMonth>,
    /// Listed in [`State::dirty`].
    dirty: bool,
}

impl AccountMonth {
    /// Units spent or held in the month of `windows`: what the budget check reads.
    fn units(&self, windows: &Windows) -> u64 {
        if self.month_index == windows.month_index {
            self.units.saturating_add(self.reserved_units)
        } else {
            0
        }
    }

    /// Marks everything counted as saved and returns what was not, as stored rows.
    fn drain_unsaved(&mut self, account_id: AccountId, into: &mut Vec<MonthlyUsage>) {
        let month = month_label(self.month_index);
        for (endpoint, counts) in &mut self.by_endpoint {
            let (calls, units) = counts.unsaved();
            if calls == 0 && units == 0 {
                continue;
            }
            counts.saved_calls = counts.calls;
            counts.saved_units = counts.units;
            into.push(MonthlyUsage {
                account_id,
                month: month.clone(),
                endpoint: endpoint.clone(),
                calls,
                units,
            });
        }
        self.dirty = false;
    }
}

impl InMemoryLimiter {
    /// A limiter enforcing `limits` per token, starting from nothing and keeping nothing: the
    /// month lasts as long as the process (tests, and deployments that accept that).
    pub fn new(limits: RateLimits) -> Self {
        Self {
            limits,
            state: Mutex::new(State::default()),
        }
    }

    /// A limiter that starts from the month (at `now`) stored in `store` and keeps what it
    /// counts until [`Self::take_unsaved`] or [`Self::save_to`] hands it out.
    pub async fn restored(
        limits: RateLimits,
        store: &dyn AccountStore,
        now: DateTime<Utc>,
    ) -> Result<Self, AccountError> {
        let stored = store.monthly_usage(&Windows::at(now).month_label()).await?;
        Ok(Self::from_stored(limits, stored, now))
    }

    /// [`Self::restored`] from rows already read: those of the month at `now` are counted as
    /// spent (and saved); rows of other months are ignored.
    pub fn from_stored(limits: RateLimits, stored: Vec<MonthlyUsage>, now: DateTime<Utc>) -> Self {
        let windows = Windows::at(now);
        let label = windows.month_label();
        let limiter = Self::new(limits);
        {
            let mut state = limiter.lock();
            state.persisted = true;
            for row in stored.into_iter().filter(|row| row.month == label) {
                let month = state
                    .accounts
                    .entry(row.account_id)
                    .or_insert_with(|| AccountMonth {
                        month_index: windows.month_index,
                        ..AccountMonth::default()
                    });
                month.units = month.units.saturating_add(row.units);
                let counts = month.by_endpoint.entry(row.endpoint).or_default();
                counts.calls = counts.calls.saturating_add(row.calls);
                counts.units = counts.units.saturating_add(row.units);
                counts.saved_calls = counts.calls;
                counts.saved_units = counts.units;
            }
        }
        limiter
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Counters are plain integers updated after every check; a panic elsewhere cannot
        // leave them half-written, so a poisoned lock is taken over.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The synchronous core of [`Limiter::reserve`].
    pub fn reserve_now(&self, request: &LimitRequest<'_>) -> Decision {
        let mut state = self.lock();
        self.reserve_in(&mut state, request)
    }

    /// The synchronous core of [`Limiter::settle`].
    pub fn settle_now(&self, request: &LimitRequest<'_>, settlement: Settlement) -> WindowState {
        let mut state = self.lock();
        Self::settle_in(&mut state, request, settlement)
    }

    /// The synchronous core of [`Limiter::acquire`]: reserve and charge in one critical section.
    pub fn acquire_now(&self, request: &LimitRequest<'_>) -> Decision {
        let mut state = self.lock();
        match self.reserve_in(&mut state, request) {
            Decision::Admitted(quota) => Decision::Admitted(Quota {
                month: Self::settle_in(&mut state, request, Settlement::Charge),
                ..quota
            }),
            refused => refused,
        }
    }

    fn reserve_in(&self, state: &mut State, request: &LimitRequest<'_>) -> Decision {
        let windows = Windows::at(request.now);
        let (token_minute, token_hour) = state
            .tokens
            .get(request.token_id)
            .map_or((0, 0), |token| token.counts(&windows));
        let (account_minute, account_hour) = state
            .account_windows
            .get(&request.account_id)
            .map_or((0, 0), |account| account.counts(&windows));
        let (minute_used, hour_used) = (
            token_minute.max(account_minute),
            token_hour.max(account_hour),
        );
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
        let counted = |minute: u64, hour: u64| TokenWindows {
            minute_index: windows.minute_index,
            minute_count: minute + 1,
            hour_index: windows.hour_index,
            hour_count: hour + 1,
        };
        let for_token = counted(token_minute, token_hour);
        // Look up before inserting: the key is copied only for a token's first request.
        match state.tokens.get_mut(request.token_id) {
            Some(token) => *token = for_token,
            None => {
                state.tokens.insert(request.token_id.to_owned(), for_token);
            }
        }
        state
            .account_windows
            .insert(request.account_id, counted(account_minute, account_hour));
        let month = state.accounts.entry(request.account_id).or_default();
        if month.month_index != windows.month_index {
            // A new month: what the old one has not written yet is still owed to the store;
            // its reservations end with it (they were never written).
            let ended = std::mem::replace(
                month,
                AccountMonth {
                    month_index: windows.month_index,
                    ..AccountMonth::default()
                },
            );
            if state.persisted {
                let mut ended = ended;
                ended.drain_unsaved(request.account_id, &mut state.unsaved_of_ended_months);
            }
        }
        month.reserved_units += u64::from(request.cost_units);
        Decision::Admitted(Quota::from_counts(
            self.limits,
            request.monthly_budget_units,
            &windows,
            minute_used + 1,
            hour_used + 1,
            month.units(&windows),
        ))
    }

    fn settle_in(
        state: &mut State,
        request: &LimitRequest<'_>,
        settlement: Settlement,
    ) -> WindowState {
        let windows = Windows::at(request.now);
        let cost = u64::from(request.cost_units);
        let month_state =
            |used| WindowState::new(request.monthly_budget_units, used, windows.month_resets_at);
        let month = state
            .accounts
            .get_mut(&request.account_id)
            .filter(|month| month.month_index == windows.month_index);
        let Some(month) = month else {
            // The request's month has ended since it was admitted (a later request of the
            // account opened the next one, dropping the reservations): a charge is owed to the
            // ended month in the store, a release has nothing left to give back.
            if settlement == Settlement::Charge && state.persisted {
                state.unsaved_of_ended_months.push(MonthlyUsage {
                    account_id: request.account_id,
                    month: windows.month_label(),
                    endpoint: request.endpoint.to_owned(),
                    calls: 1,
                    units: cost,
                });
            }
            return month_state(0);
        };
        month.reserved_units = month.reserved_units.saturating_sub(cost);
        if settlement == Settlement::Charge {
            month.units += cost;
            match month.by_endpoint.get_mut(request.endpoint) {
                Some(counts) => {
                    counts.calls += 1;
                    counts.units += cost;
                }
                None => {
                    month.by_endpoint.insert(
                        request.endpoint.to_owned(),
                        EndpointMonth {
                            calls: 1,
                            units: cost,
                            ..EndpointMonth::default()
                        },
                    );
                }
            }
            if state.persisted && !month.dirty {
                month.dirty = true;
                state.dirty.push(request.account_id);
            }
        }
        month_state(month.units(&windows))
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
        let (token_minute, token_hour) = state
            .tokens
            .get(token_id)
            .map_or((0, 0), |t| t.counts(&windows));
        let (account_minute, account_hour) = state
            .account_windows
            .get(&account_id)
            .map_or((0, 0), |a| a.counts(&windows));
        let (minute_used, hour_used) = (
            token_minute.max(account_minute),
            token_hour.max(account_hour),
        );
        let month = state.accounts.get(&account_id);
        let month_used = month.map_or(0, |m| m.units(&windows));
        let mut by_endpoint: Vec<EndpointUsage> = month
            .filter(|m| m.month_index == windows.month_index)
            .map(|m| {
                m.by_endpoint
                    .iter()
                    .map(|(endpoint, counts)| EndpointUsage {
                        endpoint: endpoint.clone(),
                        calls: counts.calls,
                        units: counts.units,
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

    /// The usage counted since the last call, as rows to add to the store (sorted, so
    /// concurrent writers lock rows in the same order), and marks it saved. Empty for a
    /// limiter that is not [`Self::restored`]. Give the rows back with
    /// [`Self::return_unsaved`] if they could not be written.
    pub fn take_unsaved(&self) -> Vec<MonthlyUsage> {
        let mut state = self.lock();
        let state = &mut *state;
        let mut rows = std::mem::take(&mut state.unsaved_of_ended_months);
        for account_id in state.dirty.drain(..) {
            if let Some(month) = state.accounts.get_mut(&account_id) {
                month.drain_unsaved(account_id, &mut rows);
            }
        }
        rows.sort_by(|a, b| {
            (&a.month, a.account_id, &a.endpoint).cmp(&(&b.month, b.account_id, &b.endpoint))
        });
        rows
    }

    /// Takes back rows from [`Self::take_unsaved`] that were not written: they are handed out
    /// again next time.
    pub fn return_unsaved(&self, rows: Vec<MonthlyUsage>) {
        let mut state = self.lock();
        let state = &mut *state;
        for row in rows {
            let current = state
                .accounts
                .get_mut(&row.account_id)
                .filter(|month| month_label(month.month_index) == row.month);
            let Some(month) = current else {
                state.unsaved_of_ended_months.push(row);
                continue;
            };
            let counts = month.by_endpoint.entry(row.endpoint).or_default();
            counts.saved_calls = counts.saved_calls.saturating_sub(row.calls);
            counts.saved_units = counts.saved_units.saturating_sub(row.units);
            if !month.dirty {
                month.dirty = true;
                state.dirty.push(row.account_id);
            }
        }
    }

    /// Writes the unsaved usage to `store` ([`AccountStore::add_monthly_usage`]); on failure
    /// the rows are kept for the next attempt. Returns how many rows were written.
    pub async fn save_to(&self, store: &dyn AccountStore) -> Result<usize, AccountError> {
        let rows = self.take_unsaved();
        if rows.is_empty() {
            return Ok(0);
        }
        let written = rows.len();
        match store.add_monthly_usage(rows.clone()).await {
            Ok(()) => Ok(written),
            Err(error) => {
                self.return_unsaved(rows);
                Err(error)
            }
        }
    }
}

impl Default for InMemoryLimiter {
    fn default() -> Self {
        Self::new(RateLimits::default())
    }
}

impl Limiter for InMemoryLimiter {
    fn reserve<'a>(&'a self, request: LimitRequest<'a>) -> LimitFuture<'a, Decision> {
        Box::pin(std::future::ready(Ok(self.reserve_now(&request))))
    }

    fn settle<'a>(
        &'a self,
        request: LimitRequest<'a>,
        settlement: Settlement,
    ) -> LimitFuture<'a, WindowState> {
        Box::pin(std::future::ready(
            Ok(self.settle_now(&request, settlement)),
        ))
    }

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
    use crate::limits::RateLimit;
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
        // Another token of the same account shares the account's windows: refused too.
        match limiter.acquire_now(&request("u", now, 1, 10_000)) {
            Decision::Refused { limit, quota, .. } => {
                assert_eq!(limit, RateLimit::PerMinute);
                assert_eq!(quota.minute.used, 60);
            }
            other => panic!("{other:?}"),
        }
        // Another account's token has windows of its own.
        let other_account = LimitRequest {
            account_id: 2,
            ..request("v", now, 1, 10_000)
        };
        match limiter.acquire_now(&other_account) {
            Decision::Admitted(q) => {
                assert_eq!(q.minute.used, 1);
                assert_eq!(q.month.used, 1);
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

    fn usage_row(
        account_id: AccountId,
        month: &str,
        endpoint: &str,
        calls: u64,
        units: u64,
    ) -> MonthlyUsage {
        MonthlyUsage {
            account_id,
            month: month.into(),
            endpoint: endpoint.into(),
            calls,
            units,
        }
    }

    #[test]
    fn a_restored_limiter_starts_from_the_stored_month_and_hands_out_only_what_is_new() {
        let now = start();
        let stored = vec![
            usage_row(1, "2026-11", "GET /chain/{ticker}", 5, 5),
            usage_row(1, "2026-11", "GET /screen", 2, 4),
            // Another month: not this month's spending.
            usage_row(1, "2026-10", "GET /chain/{ticker}", 50, 50),
        ];
        let limiter = InMemoryLimiter::from_stored(RateLimits::default(), stored, now);
        let report = limiter.usage_now("t", 1, 100, now);
        assert_eq!(report.quota.month.used, 9);
        assert_eq!(report.quota.month.remaining, 91);
        let calls: Vec<_> = report
            .by_endpoint
            .iter()
            .map(|e| (e.endpoint.as_str(), e.calls, e.units))
            .collect();
        assert_eq!(
            calls,
            [("GET /chain/{ticker}", 5, 5), ("GET /screen", 2, 4)]
        );
        // What was loaded is saved already.
        assert!(limiter.take_unsaved().is_empty());
        for _ in 0..3 {
            assert!(matches!(
                limiter.acquire_now(&request("t", now, 1, 100)),
                Decision::Admitted(_)
            ));
        }
        assert_eq!(
            limiter.take_unsaved(),
            [usage_row(1, "2026-11", "GET /chain/{ticker}", 3, 3)]
        );
        assert!(limiter.take_unsaved().is_empty(), "handed out once");
        // A failed write gives the rows back; they come out again with what was added since.
        limiter.return_unsaved(vec![usage_row(1, "2026-11", "GET /chain/{ticker}", 3, 3)]);
        assert!(matches!(
            limiter.acquire_now(&request("t", now, 2, 100)),
            Decision::Admitted(_)
        ));
        assert_eq!(
            limiter.take_unsaved(),
            [usage_row(1, "2026-11", "GET /chain/{ticker}", 4, 5)]
        );
        assert_eq!(limiter.usage_now("t", 1, 100, now).quota.month.used, 14);
    }

    #[test]
    fn unsaved_usage_of_an_ended_month_is_still_handed_out() {
        let now = start();
        let limiter = InMemoryLimiter::from_stored(RateLimits::default(), Vec::new(), now);
        assert!(matches!(
            limiter.acquire_now(&request("t", now, 2, 100)),
            Decision::Admitted(_)
        ));
        let december = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 5).unwrap();
        assert!(matches!(
            limiter.acquire_now(&request("t", december, 1, 100)),
            Decision::Admitted(_)
        ));
        assert_eq!(
            limiter.take_unsaved(),
            [
                usage_row(1, "2026-11", "GET /chain/{ticker}", 1, 2),
                usage_row(1, "2026-12", "GET /chain/{ticker}", 1, 1),
            ]
        );
        // A returned row of an ended month waits for the next write.
        limiter.return_unsaved(vec![usage_row(1, "2026-11", "GET /chain/{ticker}", 1, 2)]);
        assert_eq!(
            limiter.take_unsaved(),
            [usage_row(1, "2026-11", "GET /chain/{ticker}", 1, 2)]
        );
    }

    #[test]
    fn a_limiter_that_is_not_persisted_keeps_nothing_to_write() {
        let limiter = InMemoryLimiter::default();
        assert!(matches!(
            limiter.acquire_now(&request("t", start(), 1, 100)),
            Decision::Admitted(_)
        ));
        assert!(limiter.take_unsaved().is_empty());
    }

    #[test]
    fn a_released_reservation_gives_the_units_back_but_not_the_request() {
        let limiter = InMemoryLimiter::from_stored(RateLimits::default(), Vec::new(), start());
        let now = start();
        let held = request("t", now, 2, 10);
        match limiter.reserve_now(&held) {
            Decision::Admitted(q) => {
                assert_eq!((q.minute.used, q.month.used), (1, 2), "the units are held");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            limiter.take_unsaved().is_empty(),
            "a reservation is not written"
        );
        let after = limiter.settle_now(&held, Settlement::Release);
        assert_eq!((after.used, after.remaining), (0, 10));
        let report = limiter.usage_now("t", 1, 10, now);
        assert_eq!((report.quota.minute.used, report.quota.hour.used), (1, 1));
        assert_eq!(report.quota.month.used, 0);
        assert!(
            report.by_endpoint.is_empty(),
            "a released call is not listed"
        );
        assert!(limiter.take_unsaved().is_empty());
        // A charged one is spent, listed and written.
        let charged = request("t", now, 3, 10);
        assert!(matches!(
            limiter.reserve_now(&charged),
            Decision::Admitted(_)
        ));
        assert_eq!(limiter.settle_now(&charged, Settlement::Charge).used, 3);
        assert_eq!(limiter.usage_now("t", 1, 10, now).quota.minute.used, 2);
        assert_eq!(
            limiter.take_unsaved(),
            [usage_row(1, "2026-11", "GET /chain/{ticker}", 1, 3)]
        );
    }

    #[test]
    fn requests_in_flight_hold_their_units_against_the_budget() {
        let limiter = InMemoryLimiter::default();
        let now = start();
        let held = request("t", now, 1, 3);
        for _ in 0..3 {
            assert!(matches!(limiter.reserve_now(&held), Decision::Admitted(_)));
        }
        // Three units held of three: a fourth call does not fit until one is settled.
        assert!(matches!(
            limiter.reserve_now(&held),
            Decision::Refused {
                limit: RateLimit::MonthlyBudget,
                ..
            }
        ));
        assert_eq!(limiter.settle_now(&held, Settlement::Release).used, 2);
        assert!(matches!(limiter.reserve_now(&held), Decision::Admitted(_)));
        assert_eq!(limiter.settle_now(&held, Settlement::Charge).used, 3);
        let report = limiter.usage_now("t", 1, 3, now);
        assert_eq!(report.by_endpoint[0].calls, 1, "only the charged call");
    }

    #[test]
    fn a_charge_settled_after_the_month_turned_is_written_to_its_month() {
        let now = start();
        let limiter = InMemoryLimiter::from_stored(RateLimits::default(), Vec::new(), now);
        let november = request("t", now, 2, 100);
        let november_released = request("u", now, 5, 100);
        assert!(matches!(
            limiter.reserve_now(&november),
            Decision::Admitted(_)
        ));
        assert!(matches!(
            limiter.reserve_now(&november_released),
            Decision::Admitted(_)
        ));
        // A request of December opens the new month before the November ones are settled.
        let december = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 1).unwrap();
        assert!(matches!(
            limiter.acquire_now(&request("t", december, 1, 100)),
            Decision::Admitted(_)
        ));
        limiter.settle_now(&november, Settlement::Charge);
        limiter.settle_now(&november_released, Settlement::Release);
        assert_eq!(limiter.usage_now("t", 1, 100, december).quota.month.used, 1);
        assert_eq!(
            limiter.take_unsaved(),
            [
                usage_row(1, "2026-11", "GET /chain/{ticker}", 1, 2),
                usage_row(1, "2026-12", "GET /chain/{ticker}", 1, 1),
            ]
        );
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
