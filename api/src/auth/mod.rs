//! Authentication and authorisation of data requests (spec part 5) and the metering that
//! follows them (part 8).
//!
//! Every data request passes [`require_token`] (an axum middleware over [`AccessControl`]):
//!
//! 1. `Authorization: Bearer <token>` — missing, not a bearer header, malformed, a bad
//!    checksum, unknown, revoked or expired: **401**, one body for all of them
//!    ([`crate::ApiError::Unauthorized`]), so the answer never tells whether an account or a
//!    token exists. The format and checksum are checked before any lookup; the lookup is by
//!    SHA-256 digest and the digest read back is compared in constant time.
//! 2. The account's plan — none (or lapsed): **403** without `upgrade_required`; below the
//!    endpoint's tier: **403** with `upgrade_required: true`, `required_tier`, `your_tier`.
//! 3. The limits — per-token minute and hour, per-account monthly budget in the endpoint's
//!    cost units: **429** with `Retry-After` and which limit ([`crate::limits`]). The cost is
//!    reserved, not yet spent.
//! 4. The handler runs with [`Caller`] and the [`AccessControl`] in its request extensions.
//!    A fresh success (2xx, not served from the response cache) is charged its reserved units;
//!    an error or a cached answer gets them back ([`settlement_of`]). The response then gets
//!    the `X-RateLimit-*` and `X-Monthly-Budget-Remaining` headers as they stand after that.
//!
//! The endpoint (tier and cost) comes from the router's [`crate::MatchedEndpoint`] extension
//! when present, otherwise from the matched route template looked up in the registry.

mod gate;

pub use optics_accounts::{password, token};

pub use gate::{
    AccessConfig, AccessControl, Admission, Caller, Denied, Reservation, SessionPolicy,
    X_MONTHLY_BUDGET_REMAINING, X_RATELIMIT_LIMIT_HOUR, X_RATELIMIT_LIMIT_MINUTE,
    X_RATELIMIT_REMAINING_HOUR, X_RATELIMIT_REMAINING_MINUTE, cost_units, gate,
    insert_rate_limit_headers, require_token, requires_token, settlement_of,
};
pub use password::{Password, PasswordCost, PasswordHasher};
pub use token::{ApiToken, TOKEN_PREFIX, TokenFormatError, TokenHash};

use crate::accounts::http::account_router;
use crate::state::{AppState, RouteGate};

/// The whole HTTP service as `optics serve` and `optics run` answer it: [`crate::router`] (every
/// data route with its real handler) with [`gate`] as the route gate, the account area and
/// the dashboard at `/`.
/// The state keeps its own clock for the data (a simulated market may run on replayed or
/// accelerated time); authentication and metering read `access`'s.
pub fn service_router(state: AppState, access: AccessControl) -> axum::Router {
    let gate_access = access.clone();
    let state = state.with_gate(RouteGate::new(move |request, next| {
        gate(gate_access.clone(), request, next)
    }));
    let recorder = access.clone();
    crate::router::router_with_more(
        state,
        crate::handlers::data_routes(),
        account_router(access).merge(crate::dashboard::dashboard_router()),
    )
    .layer(axum::middleware::from_fn(move |request, next| {
        record_unknown_path(recorder.clone(), request, next)
    }))
}

/// Records a data path that named no endpoint against the caller's token (when the request
/// carries a valid one), for `/me/usage`'s `this_token.unknown_paths_7d`.
async fn record_unknown_path(
    access: AccessControl,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let path = request.uri().path().to_owned();
    let authorization = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .cloned();
    let response = next.run(request).await;
    let unknown = response
        .extensions()
        .get::<crate::router::UnknownEndpoint>()
        .is_some();
    if unknown
        && path.starts_with(crate::registry::DATA_PREFIX)
        && let Some(token_id) = access.active_token_id(authorization.as_ref()).await
    {
        access
            .unknown_paths()
            .record(&token_id, &path, access.now());
    }
    response
}
