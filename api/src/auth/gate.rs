//! [`AccessControl`]: the shared state of authentication, plans, limits and the account area,
//! and the [`require_token`] middleware that applies it to data routes.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeDelta, Utc};
use optics_compute::time::Clock;

use super::password::PasswordHasher;
use super::token::ApiToken;
use crate::MatchedEndpoint;
use crate::accounts::model::{TokenStatus, active_plan, token_status};
use crate::accounts::{AccountId, AccountStore, Plan, TokenPolicy};
use crate::error::ApiError;
use crate::limits::{
    Decision, LimitRequest, Limiter, PlanBudgets, Quota, Settlement, endpoint_label,
};
use crate::registry::{self, Cost, DATA_PREFIX, EndpointSpec, ParamKind, ParamLocation};
use crate::response_cache::ServedFromCache;

/// Requests allowed per minute per token (the header names are part of the interface).
pub const X_RATELIMIT_LIMIT_MINUTE: HeaderName =
    HeaderName::from_static("x-ratelimit-limit-minute");
/// Requests left this minute.
pub const X_RATELIMIT_REMAINING_MINUTE: HeaderName =
    HeaderName::from_static("x-ratelimit-remaining-minute");
/// Requests allowed per hour.
pub const X_RATELIMIT_LIMIT_HOUR: HeaderName = HeaderName::from_static("x-ratelimit-limit-hour");
/// Requests left this hour.
pub const X_RATELIMIT_REMAINING_HOUR: HeaderName =
    HeaderName::from_static("x-ratelimit-remaining-hour");
/// Budget units left this month for the account.
pub const X_MONTHLY_BUDGET_REMAINING: HeaderName =
    HeaderName::from_static("x-monthly-budget-remaining");

/// Login sessions of the account area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionPolicy {
    /// How long a session lasts after login.
    pub lifetime: TimeDelta,
    /// Adds `Secure` to the session cookie: set it when the service is behind HTTPS. Off by
    /// default because the embedded service listens on plain HTTP on localhost.
    pub secure_cookie: bool,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        Self {
            lifetime: TimeDelta::hours(12),
            secure_cookie: false,
        }
    }
}

/// The rules [`AccessControl`] applies (the per-token request limits belong to the
/// [`Limiter`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccessConfig {
    /// Monthly budget of each plan.
    pub budgets: PlanBudgets,
    /// Token cap and lifetimes.
    pub tokens: TokenPolicy,
    /// Account-area sessions.
    pub sessions: SessionPolicy,
}

/// Who is calling: set as a request extension on every admitted data request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's account.
    pub account_id: AccountId,
    /// Public id of the token used.
    pub token_id: String,
    /// The plan in force.
    pub plan: Plan,
    /// The account's budget this month, in units.
    pub monthly_budget_units: u64,
}

/// An admitted request: who called, the quota after counting it, and its reserved units.
#[derive(Debug)]
pub struct Admission {
    /// The caller.
    pub caller: Caller,
    /// Limits after this request, its cost included while reserved.
    pub quota: Quota,
    /// The request's units, held until the answer settles them.
    pub reservation: Reservation,
}

/// The budget units an admitted request holds until its answer is known. [`Self::settle`]
/// charges or releases them; dropped unsettled (the handler panicked, the client went away)
/// the reservation releases them on the runtime, since no answer left.
pub struct Reservation {
    limiter: Arc<dyn Limiter>,
    token_id: String,
    account_id: AccountId,
    endpoint: String,
    cost_units: u32,
    monthly_budget_units: u64,
    admitted_at: DateTime<Utc>,
    quota: Quota,
    settled: bool,
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("token_id", &self.token_id)
            .field("account_id", &self.account_id)
            .field("endpoint", &self.endpoint)
            .field("cost_units", &self.cost_units)
            .field("admitted_at", &self.admitted_at)
            .field("settled", &self.settled)
            .finish_non_exhaustive()
    }
}

impl Reservation {
    fn request(&self) -> LimitRequest<'_> {
        LimitRequest {
            token_id: &self.token_id,
            account_id: self.account_id,
            endpoint: &self.endpoint,
            cost_units: self.cost_units,
            monthly_budget_units: self.monthly_budget_units,
            now: self.admitted_at,
        }
    }

    /// The units this request holds.
    pub fn cost_units(&self) -> u32 {
        self.cost_units
    }

    /// Charges or releases the units; returns the quota for the answer's headers: the minute
    /// and hour of the admission, the month after settling. A
    /// limiter that fails here leaves the units spent (the answer has been made; failing it
    /// now would not give back the data it used) and the quota of the admission is returned.
    pub async fn settle(mut self, settlement: Settlement) -> Quota {
        // Marked first: if this future is dropped mid-way the units stay spent rather than
        // being released twice.
        self.settled = true;
        if settlement == Settlement::Release && self.cost_units == 0 {
            return self.quota;
        }
        match self.limiter.settle(self.request(), settlement).await {
            // The minute and hour as this request's admission counted them (a header per
            // request, even among concurrent ones), the month as it stands now.
            Ok(month) => Quota {
                month,
                ..self.quota
            },
            Err(error) => {
                tracing::warn!(%error, ?settlement, "settling a request's budget units failed; they stay spent");
                self.quota
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.settled || self.cost_units == 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let limiter = Arc::clone(&self.limiter);
        let token_id = std::mem::take(&mut self.token_id);
        let endpoint = std::mem::take(&mut self.endpoint);
        let (account_id, cost_units, monthly_budget_units, now) = (
            self.account_id,
            self.cost_units,
            self.monthly_budget_units,
            self.admitted_at,
        );
        runtime.spawn(async move {
            let request = LimitRequest {
                token_id: &token_id,
                account_id,
                endpoint: &endpoint,
                cost_units,
                monthly_budget_units,
                now,
            };
            if let Err(error) = limiter.settle(request, Settlement::Release).await {
                tracing::warn!(%error, "releasing the budget units of an unanswered request failed");
            }
        });
    }
}

/// A refused request: the error to answer and, once the token was accepted, the quota for the
/// rate-limit headers.
#[derive(Debug)]
pub struct Denied {
    /// 401, 403, 429 or 500.
    pub error: ApiError,
    /// The quota (for 429s).
    pub quota: Option<Quota>,
}

impl From<ApiError> for Denied {
    fn from(error: ApiError) -> Self {
        Self { error, quota: None }
    }
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response {
        let unauthorized = matches!(self.error, ApiError::Unauthorized);
        let mut response = self.error.into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(quota) = &self.quota {
            insert_rate_limit_headers(quota, response.headers_mut());
        }
        response
    }
}

/// Writes the five quota headers of spec part 8.
pub fn insert_rate_limit_headers(quota: &Quota, headers: &mut HeaderMap) {
    for (name, value) in [
        (X_RATELIMIT_LIMIT_MINUTE, quota.minute.limit),
        (X_RATELIMIT_REMAINING_MINUTE, quota.minute.remaining),
        (X_RATELIMIT_LIMIT_HOUR, quota.hour.limit),
        (X_RATELIMIT_REMAINING_HOUR, quota.hour.remaining),
        (X_MONTHLY_BUDGET_REMAINING, quota.month.remaining),
    ] {
        headers.insert(name, HeaderValue::from(value));
    }
}

/// Whether an endpoint needs a token: every data endpoint does; the platform documentation
/// routes (`/docs`, `/changelog`, `/openapi.json`) do not.
pub fn requires_token(endpoint: &EndpointSpec) -> bool {
    endpoint.family != registry::PLATFORM_FAMILY.slug
}

/// Seconds a caller is asked to wait while the rate limiter (Redis) cannot be reached.
pub const LIMITER_RETRY_AFTER_SECS: u64 = 5;

/// Units one call costs: the endpoint's fixed cost, or one per symbol the handler computes
/// for [`Cost::PerSymbol`] endpoints — the symbol-list parameter read by the handler's own
/// parser ([`crate::params::QueryParams::symbols`]: an empty value is the documented default,
/// duplicates dropped), so what is billed is what is computed. A list the handler refuses
/// (400) costs one unit, as any refused call.
pub fn cost_units(endpoint: &'static EndpointSpec, query: Option<&str>) -> u32 {
    match endpoint.cost {
        Cost::Free => 0,
        Cost::Units(units) => units,
        Cost::PerSymbol => {
            let Some(name) = endpoint.params.iter().find_map(|p| {
                (matches!(p.kind, ParamKind::SymbolList { .. })
                    && p.location == ParamLocation::Query)
                    .then_some(p.name)
            }) else {
                return 1;
            };
            crate::params::QueryParams::parse(endpoint, query)
                .and_then(|params| params.symbols(name))
                .map_or(1, |symbols| {
                    u32::try_from(symbols.len().max(1)).unwrap_or(u32::MAX)
                })
        }
    }
}

/// Shared state of authentication, plans, limits and the account area. Cheap to clone.
#[derive(Clone)]
pub struct AccessControl {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn AccountStore>,
    limiter: Arc<dyn Limiter>,
    clock: Arc<dyn Clock>,
    hasher: PasswordHasher,
    config: AccessConfig,
    /// Login attempts per client address and per e-mail.
    login_throttle: crate::accounts::throttle::LoginThrottle,
    /// Unknown data paths per token, for `/me/usage`.
    unknown_paths: crate::limits::unknown_paths::UnknownPaths,
    /// Token creations and rotations per account.
    token_throttle: crate::accounts::throttle::LoginThrottle,
    /// Dashboard tokens asked for per account.
    dashboard_throttle: crate::accounts::throttle::LoginThrottle,
    /// (method, full route template) → endpoint, for routes without [`MatchedEndpoint`].
    by_route: HashMap<(&'static str, String), &'static EndpointSpec>,
}

impl fmt::Debug for AccessControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessControl")
            .field("store", &self.inner.store)
            .field("limiter", &self.inner.limiter)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl AccessControl {
    /// Access control over `store` and `limiter`, reading time from `clock`. Give it the real
    /// clock (tests: a manual one), not a simulated market clock: a token's lifetime, a session
    /// and a rate-limit window are spans of the caller's time, whatever the data replays.
    pub fn new(
        store: Arc<dyn AccountStore>,
        limiter: Arc<dyn Limiter>,
        clock: Arc<dyn Clock>,
        hasher: PasswordHasher,
        config: AccessConfig,
    ) -> Self {
        let mut by_route = HashMap::new();
        for endpoint in registry::all_endpoints() {
            let method = endpoint.method.as_str();
            by_route.insert((method, endpoint.full_path()), endpoint);
            if endpoint.path == "/" {
                by_route.insert((method, DATA_PREFIX.to_owned()), endpoint);
            }
        }
        Self {
            inner: Arc::new(Inner {
                store,
                limiter,
                clock,
                hasher,
                config,
                login_throttle: crate::accounts::throttle::LoginThrottle::default(),
                unknown_paths: crate::limits::unknown_paths::UnknownPaths::default(),
                token_throttle: crate::accounts::throttle::LoginThrottle::token_issues(),
                dashboard_throttle: crate::accounts::throttle::LoginThrottle::dashboard_tokens(),
                by_route,
            }),
        }
    }

    /// The account store.
    pub fn store(&self) -> &Arc<dyn AccountStore> {
        &self.inner.store
    }

    /// The limiter.
    pub fn limiter(&self) -> &Arc<dyn Limiter> {
        &self.inner.limiter
    }

    /// The password hasher.
    pub fn hasher(&self) -> &PasswordHasher {
        &self.inner.hasher
    }

    /// The login attempt counters.
    pub fn login_throttle(&self) -> &crate::accounts::throttle::LoginThrottle {
        &self.inner.login_throttle
    }

    /// The token creations and rotations counted per account.
    pub fn token_throttle(&self) -> &crate::accounts::throttle::LoginThrottle {
        &self.inner.token_throttle
    }

    /// The per-account counters of dashboard tokens.
    pub fn dashboard_throttle(&self) -> &crate::accounts::throttle::LoginThrottle {
        &self.inner.dashboard_throttle
    }

    /// The unknown data paths each token asked for.
    pub fn unknown_paths(&self) -> &crate::limits::unknown_paths::UnknownPaths {
        &self.inner.unknown_paths
    }

    /// The public id of the token in `authorization` when it is a well-formed, known and
    /// active token; `None` otherwise (nothing is counted).
    pub async fn active_token_id(&self, authorization: Option<&HeaderValue>) -> Option<String> {
        let token = bearer_token(authorization?.to_str().ok())?;
        let hash = token.hash();
        let grant = self.inner.store.token_grant(&hash).await.ok()??;
        let active = grant.hash.ct_eq(&hash)
            && token_status(grant.revoked_at, grant.expires_at, self.now()) == TokenStatus::Active;
        active.then_some(grant.token_id)
    }

    /// The rules in force.
    pub fn config(&self) -> &AccessConfig {
        &self.inner.config
    }

    /// The current instant, from the clock accounts, tokens, sessions and limits run on (the
    /// real one in the service, whatever clock the market data follows).
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    /// That clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// The endpoint of a matched route template (`/api/mcp/data/chain/{ticker}`).
    pub fn endpoint_for_route(&self, method: &str, route: &str) -> Option<&'static EndpointSpec> {
        self.inner
            .by_route
            .get(&(method_key(method)?, route.to_owned()))
            .copied()
    }

    /// The caller behind the bearer header — a known, active token of an account whose plan is
    /// in force — without counting anything: for a door that is not an endpoint (Flight SQL),
    /// which keeps its own bounds.
    /// `authorization` is the header's text (`Bearer <token>`).
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, ApiError> {
        let (grant, plan) = self.active_grant(authorization, self.now()).await?;
        Ok(Caller {
            account_id: grant.account_id,
            monthly_budget_units: grant
                .monthly_budget_units
                .unwrap_or_else(|| self.inner.config.budgets.for_plan(plan)),
            token_id: grant.token_id,
            plan,
        })
    }

    /// The grant of the bearer token and the plan in force, if the token is known and active
    /// and the plan is active.
    async fn active_grant(
        &self,
        authorization: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(crate::accounts::TokenGrant, Plan), ApiError> {
        let token = bearer_token(authorization).ok_or(ApiError::Unauthorized)?;
        let hash = token.hash();
        let grant = self
            .inner
            .store
            .token_grant(&hash)
            .await
            .map_err(|e| ApiError::account_store("looking up an API token", e))?
            .ok_or(ApiError::Unauthorized)?;
        if !grant.hash.ct_eq(&hash)
            || token_status(grant.revoked_at, grant.expires_at, now) != TokenStatus::Active
        {
            return Err(ApiError::Unauthorized);
        }
        let plan = active_plan(grant.plan, grant.plan_expires_at, now);
        if !plan.is_active() {
            return Err(ApiError::Forbidden {
                upgrade_required: false,
                required_tier: None,
                your_tier: None,
            });
        }
        Ok((grant, plan))
    }

    /// Authenticates the bearer header, checks the plan against `endpoint`'s tier, counts the
    /// request against the minute and hour limits and reserves its cost in the monthly budget.
    /// Everything a data request needs before its handler, in one call; settle the returned
    /// [`Admission::reservation`] once the answer is known.
    pub async fn admit(
        &self,
        endpoint: &'static EndpointSpec,
        query: Option<&str>,
        authorization: Option<&HeaderValue>,
    ) -> Result<Admission, Denied> {
        let now = self.now();
        let authorization = authorization.and_then(|value| value.to_str().ok());
        let (grant, plan) = self.active_grant(authorization, now).await?;
        if !plan.grants(endpoint.tier) {
            return Err(ApiError::Forbidden {
                upgrade_required: true,
                required_tier: Some(endpoint.tier),
                your_tier: Some(plan.as_str().to_owned()),
            }
            .into());
        }
        let monthly_budget_units = grant
            .monthly_budget_units
            .unwrap_or_else(|| self.inner.config.budgets.for_plan(plan));
        let label = endpoint_label(endpoint);
        let cost = cost_units(endpoint, query);
        let decision = self
            .inner
            .limiter
            .reserve(LimitRequest {
                token_id: &grant.token_id,
                account_id: grant.account_id,
                endpoint: &label,
                cost_units: cost,
                monthly_budget_units,
                now,
            })
            .await
            .map_err(|e| {
                // Fail closed: without its counts no request is admitted, and the caller is
                // told to come back rather than shown a fault.
                tracing::warn!(error = %e, "the rate limiter is unavailable");
                ApiError::Busy {
                    reason: format!(
                        "The rate limiter cannot be reached, so no request is admitted; retry \
                         in {LIMITER_RETRY_AFTER_SECS} s"
                    ),
                    retry_after_secs: LIMITER_RETRY_AFTER_SECS,
                }
            })?;
        match decision {
            Decision::Admitted(quota) => Ok(Admission {
                reservation: Reservation {
                    limiter: Arc::clone(&self.inner.limiter),
                    token_id: grant.token_id.clone(),
                    account_id: grant.account_id,
                    endpoint: label,
                    cost_units: cost,
                    monthly_budget_units,
                    admitted_at: now,
                    quota,
                    settled: false,
                },
                caller: Caller {
                    account_id: grant.account_id,
                    token_id: grant.token_id,
                    plan,
                    monthly_budget_units,
                },
                quota,
            }),
            Decision::Refused {
                limit,
                retry_after_secs,
                quota,
            } => Err(Denied {
                error: ApiError::RateLimited {
                    limit,
                    retry_after_secs,
                },
                quota: Some(quota),
            }),
        }
    }
}

fn method_key(method: &str) -> Option<&'static str> {
    match method {
        "GET" | "HEAD" => Some("GET"),
        "POST" => Some("POST"),
        _ => None,
    }
}

/// The token of an `Authorization: Bearer <token>` header, if well formed with a valid
/// checksum. The scheme is case-insensitive (RFC 9110 §11.1).
fn bearer_token(header: Option<&str>) -> Option<ApiToken> {
    let value = header?.trim();
    let (scheme, credentials) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    ApiToken::parse(credentials.trim()).ok()
}

/// The middleware of every data route: admits the request through [`AccessControl::admit`]
/// or answers 401/403/429; an admitted request reaches its handler with [`Caller`] and
/// [`AccessControl`] extensions, its reserved units are then charged if the answer is a fresh
/// success (2xx, not [`ServedFromCache`]) and released otherwise, and it comes back with the
/// quota headers as they stand after that.
///
/// Install it per route, inside the router's [`MatchedEndpoint`] extension layer
/// (`method_router.layer(from_fn_with_state(access, require_token)).layer(Extension(…))`), or
/// with `Router::route_layer` (then the route template is looked up in the registry). A route
/// that is in neither is refused with a 500: an endpoint without a known tier is a wiring bug,
/// and serving it unmetered would be worse.
pub async fn require_token(
    State(access): State<AccessControl>,
    mut request: Request,
    next: Next,
) -> Response {
    let endpoint = request
        .extensions()
        .get::<MatchedEndpoint>()
        .map(|matched| matched.0)
        .or_else(|| {
            let route = request.extensions().get::<MatchedPath>()?;
            access.endpoint_for_route(request.method().as_str(), route.as_str())
        });
    let Some(endpoint) = endpoint else {
        return ApiError::internal(
            "authorising a request",
            format!(
                "no endpoint registered for {} {}",
                request.method(),
                request.uri().path()
            ),
        )
        .into_response();
    };
    let admission = access
        .admit(
            endpoint,
            request.uri().query(),
            request.headers().get(AUTHORIZATION),
        )
        .await;
    match admission {
        Ok(Admission {
            caller,
            reservation,
            ..
        }) => {
            request.extensions_mut().insert(caller);
            request.extensions_mut().insert(access);
            let mut response = next.run(request).await;
            let quota = reservation.settle(settlement_of(&response)).await;
            insert_rate_limit_headers(&quota, response.headers_mut());
            response
        }
        Err(denied) => denied.into_response(),
    }
}

/// What an answer costs: its reserved units when the handler made it and it succeeded (the
/// upstream data were read), nothing for an error or an answer served from the response cache.
pub fn settlement_of(response: &Response) -> Settlement {
    let fresh = response.extensions().get::<ServedFromCache>().is_none();
    if response.status().is_success() && fresh {
        Settlement::Charge
    } else {
        Settlement::Release
    }
}

/// [`require_token`] for a gate that runs in front of every registered route (the router's
/// `RouteGate`): endpoints that need no token ([`requires_token`] is false: the documentation
/// routes) pass straight through; every other route is checked.
///
/// `state.with_gate(RouteGate::new(move |request, next| auth::gate(access.clone(), request, next)))`
pub async fn gate(access: AccessControl, request: Request, next: Next) -> Response {
    let open = request
        .extensions()
        .get::<MatchedEndpoint>()
        .is_some_and(|matched| !requires_token(matched.0));
    if open {
        return next.run(request).await;
    }
    require_token(State(access), request, next).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(slug: &str) -> &'static EndpointSpec {
        registry::endpoint(slug).unwrap()
    }

    #[test]
    fn costs_follow_the_registry_and_count_symbols() {
        assert_eq!(cost_units(spec("chain"), None), 1);
        assert_eq!(cost_units(spec("me-usage"), None), 0);
        assert_eq!(cost_units(spec("screen"), Some("limit=5")), 2);
        // cross-index-gex: its default list has four symbols.
        assert_eq!(cost_units(spec("cross-index-gex"), None), 4);
        assert_eq!(
            cost_units(spec("cross-index-gex"), Some("tickers=SPY,qqq,SPY")),
            2
        );
        // An empty list is the default list, for the handler and the bill alike.
        assert_eq!(cost_units(spec("cross-index-gex"), Some("tickers=")), 4);
        assert_eq!(cost_units(spec("gex-batch"), Some("tickers=")), 1);
        let max = (0..25)
            .map(|i| format!("T{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            cost_units(spec("gex-batch"), Some(&format!("tickers={max}"))),
            25
        );
        // More than the handler takes: refused with a 400, one unit.
        let many = (0..40)
            .map(|i| format!("T{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            cost_units(spec("gex-batch"), Some(&format!("tickers={many}"))),
            1
        );
    }

    #[test]
    fn bearer_headers_are_parsed_strictly() {
        let token = ApiToken::from_secret_bytes(&[5; 32]);
        let header = |s: String| bearer_token(Some(&s));
        assert!(header(format!("Bearer {}", token.expose())).is_some());
        assert!(header(format!("bearer  {} ", token.expose())).is_some());
        assert!(header(token.expose().to_owned()).is_none());
        assert!(header(format!("Basic {}", token.expose())).is_none());
        assert!(header("Bearer optx_short".into()).is_none());
        assert!(bearer_token(None).is_none());
    }

    #[test]
    fn documentation_routes_need_no_token() {
        assert!(!requires_token(spec("docs")));
        assert!(requires_token(spec("index")));
        assert!(requires_token(spec("me-usage")));
    }
}
