//! `GET /api/mcp/data/me/usage`: the calling account's month and the calling token's windows.
//!
//! The handler runs behind [`crate::auth::require_token`] (it reads the [`Caller`] and
//! [`AccessControl`] extensions that middleware sets), so it works in a router of any state:
//! mount `get(me_usage)` as the `me-usage` endpoint.

use axum::Extension;
use axum::Json;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::unknown_paths::PathHits;
use super::{EndpointUsage, Quota, WindowState, Windows, endpoint_label, sort_usage};
use crate::accounts::TokenStatus;
use crate::auth::{AccessControl, Caller};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;

/// ISO 8601 in UTC with a `Z` (`2026-12-01T00:00:00Z`).
pub fn iso_utc(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// One rate-limit window as the usage payload shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WindowView {
    /// Requests allowed in the window.
    pub limit: u64,
    /// Requests made in it (this one included).
    pub used: u64,
    /// Requests left.
    pub remaining: u64,
    /// When the window ends (ISO 8601, UTC).
    pub resets_at: String,
}

impl From<&WindowState> for WindowView {
    fn from(window: &WindowState) -> Self {
        Self {
            limit: window.limit,
            used: window.used,
            remaining: window.remaining,
            resets_at: iso_utc(window.resets_at),
        }
    }
}

/// The calling token's per-minute and per-hour windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RateLimitView {
    /// The token these windows belong to.
    pub token_id: String,
    /// This calendar minute (UTC).
    pub per_minute: WindowView,
    /// This calendar hour (UTC).
    pub per_hour: WindowView,
}

/// One endpoint's charged calls this month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointCalls {
    /// `METHOD /path` as the registry names it.
    pub endpoint: String,
    /// Charged calls.
    pub calls: u64,
    /// Units charged.
    pub units: u64,
    /// The endpoint's documentation page; null for a label no longer served.
    pub docs: Option<String>,
}

/// One unknown path this token asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownPathView {
    /// The path as requested (cut at 256 characters).
    pub path: String,
    /// Requests in the last seven days (on this server).
    pub count: u64,
    /// The latest (ISO 8601, UTC).
    pub last_seen: String,
}

/// What concerns the calling token only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThisTokenView {
    /// Its public id.
    pub token_id: String,
    /// Data paths that named no endpoint for it in the last seven days, most asked first.
    pub unknown_paths_7d: Vec<UnknownPathView>,
}

/// An active token, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActiveTokenView {
    /// Public id.
    pub id: String,
    /// Display prefix (`optx_Ab3x`).
    pub prefix: String,
    /// Label.
    pub name: String,
    /// Creation instant (ISO 8601, UTC).
    pub created_at: String,
    /// End of life (ISO 8601, UTC); null = never.
    pub expires_at: Option<String>,
    /// Whether this is the token of the current request.
    pub current: bool,
}

/// The `data` of `/me/usage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsagePayload {
    /// The plan in force.
    pub plan: String,
    /// The budget month, `YYYY-MM` (UTC).
    pub period: String,
    /// What `used`, `limit` and `remaining` count.
    pub unit: &'static str,
    /// Units spent this month.
    pub used: u64,
    /// The account's monthly budget.
    pub limit: u64,
    /// Units left.
    pub remaining: u64,
    /// `used / limit` in percent, two decimals (100 when the budget is 0).
    pub percent_used: f64,
    /// When the budget resets: the 1st of next month, 00:00 UTC.
    pub resets_at: String,
    /// The calling token's request windows.
    pub rate_limits: RateLimitView,
    /// Charged calls this month, all endpoints: answers that succeeded (2xx) and were built
    /// fresh, this report included. Cached answers and errors are not counted (they still count
    /// in the minute and hour windows).
    pub calls_this_month: u64,
    /// Charged calls and units this month by endpoint, most called first, with docs pages.
    pub endpoints: Vec<EndpointCalls>,
    /// Active tokens on the account, this one included.
    pub tokens_active: usize,
    /// The account's active tokens.
    pub active_tokens: Vec<ActiveTokenView>,
    /// The calling token's unknown paths.
    pub this_token: ThisTokenView,
    /// Most tokens that may be active at once.
    pub max_active_tokens: u32,
}

fn percent(used: u64, limit: u64) -> f64 {
    if limit == 0 {
        return 100.0;
    }
    // Units are far below 2^53, so the conversion is exact.
    (used as f64 / limit as f64 * 10_000.0).round() / 100.0
}

/// Builds the payload from the limiter's report and the account's tokens.
pub fn usage_payload(
    caller: &Caller,
    quota: &Quota,
    by_endpoint: Vec<EndpointUsage>,
    tokens: &[crate::accounts::TokenInfo],
    max_active_tokens: u32,
    unknown_paths: Vec<PathHits>,
    now: DateTime<Utc>,
) -> UsagePayload {
    let windows = Windows::at(now);
    let active_tokens: Vec<ActiveTokenView> = tokens
        .iter()
        .filter(|t| t.status(now) == TokenStatus::Active)
        .map(|t| ActiveTokenView {
            id: t.id.clone(),
            prefix: t.prefix.clone(),
            name: t.name.clone(),
            created_at: iso_utc(t.created_at),
            expires_at: t.expires_at.map(iso_utc),
            current: t.id == caller.token_id,
        })
        .collect();
    UsagePayload {
        plan: caller.plan.as_str().to_owned(),
        period: windows.month_label(),
        unit: "upstream data units",
        used: quota.month.used,
        limit: quota.month.limit,
        remaining: quota.month.remaining,
        percent_used: percent(quota.month.used, quota.month.limit),
        resets_at: iso_utc(quota.month.resets_at),
        rate_limits: RateLimitView {
            token_id: caller.token_id.clone(),
            per_minute: (&quota.minute).into(),
            per_hour: (&quota.hour).into(),
        },
        calls_this_month: by_endpoint.iter().map(|e| e.calls).sum(),
        endpoints: by_endpoint
            .into_iter()
            .map(|e| EndpointCalls {
                docs: docs_of(&e.endpoint),
                endpoint: e.endpoint,
                calls: e.calls,
                units: e.units,
            })
            .collect(),
        tokens_active: active_tokens.len(),
        active_tokens,
        max_active_tokens,
        this_token: ThisTokenView {
            token_id: caller.token_id.clone(),
            unknown_paths_7d: unknown_paths
                .into_iter()
                .map(|h| UnknownPathView {
                    path: h.path,
                    count: h.count,
                    last_seen: iso_utc(h.last_seen),
                })
                .collect(),
        },
    }
}

/// The documentation page of the endpoint labelled `label` (`GET /chain/{ticker}`).
fn docs_of(label: &str) -> Option<String> {
    crate::registry::all_endpoints()
        .find(|e| endpoint_label(e) == label)
        .map(|e| e.docs_link())
}

/// Adds this report's own call to the breakdown: the report is read before the gate settles
/// the request, and once it is built the answer is a fresh success, which the gate charges
/// (the endpoint is free, so only its call count moves; its reserved units, none, are already
/// in `used`). The report then agrees with the next one.
fn with_own_call(mut by_endpoint: Vec<EndpointUsage>) -> Vec<EndpointUsage> {
    let Some(spec) = crate::registry::endpoint("me-usage") else {
        return by_endpoint;
    };
    let label = endpoint_label(spec);
    let units = u64::from(crate::auth::cost_units(spec, None));
    match by_endpoint.iter_mut().find(|e| e.endpoint == label) {
        Some(own) => {
            own.calls += 1;
            own.units += units;
        }
        None => by_endpoint.push(EndpointUsage {
            endpoint: label,
            calls: 1,
            units,
        }),
    }
    sort_usage(&mut by_endpoint);
    by_endpoint
}

/// `GET /me/usage` (tier any, free): reads, counts nothing beyond the request itself.
pub async fn me_usage(
    access: Option<Extension<AccessControl>>,
    caller: Option<Extension<Caller>>,
) -> Result<Json<Envelope<UsagePayload>>, ApiError> {
    // The token gate admits the caller and attaches both; a router mounted without the gate
    // has no caller to report on, which is the caller's problem to fix, not a server fault.
    let (Some(Extension(access)), Some(Extension(caller))) = (access, caller) else {
        return Err(ApiError::Unauthorized);
    };
    let now = access.now();
    let report = access
        .limiter()
        .usage(
            &caller.token_id,
            caller.account_id,
            caller.monthly_budget_units,
            now,
        )
        .await
        .map_err(|e| ApiError::internal("reading usage counters", e))?;
    let tokens = access
        .store()
        .list_tokens(caller.account_id)
        .await
        .map_err(|e| ApiError::internal("listing the account's tokens", e))?;
    Ok(ok(usage_payload(
        &caller,
        &report.quota,
        with_own_call(report.by_endpoint),
        &tokens,
        access.config().tokens.max_active,
        access.unknown_paths().recent(&caller.token_id, now),
        now,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_used_has_two_decimals() {
        assert_eq!(percent(0, 10_000), 0.0);
        assert_eq!(percent(1, 3), 33.33);
        assert_eq!(percent(2, 3), 66.67);
        assert_eq!(percent(10_000, 10_000), 100.0);
        assert_eq!(percent(5, 0), 100.0);
    }
}
