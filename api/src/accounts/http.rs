//! The account area: a session surface outside the data prefix (spec part 5).
//!
//! | route | what |
//! | --- | --- |
//! | `GET /account` | the account page (HTML; talks to the routes below) |
//! | `POST /api/account/login` | `{email, password}` → session cookie |
//! | `POST /api/account/logout` | ends the session |
//! | `GET /api/account` | the account, its plan, budget and month |
//! | `GET /api/account/api-tokens` | the account's tokens (ids and prefixes) |
//! | `POST /api/account/api-tokens` | `{name?, expires_in_days?}` → a new token, shown once |
//! | `POST /api/account/api-tokens/{id}/rotate` | a fresh secret for the token, shown once |
//! | `POST /api/account/api-tokens/{id}/revoke`, `DELETE /api/account/api-tokens/{id}` | revoke |
//! | `POST /api/account/dashboard-token` | the dashboard's token (see [`dashboard_token`]) |
//!
//! The session cookie (`optics_session`) is `HttpOnly; SameSite=Strict; Path=/` (plus `Secure`
//! when configured): scripts cannot read it and no other site's page can make the browser send
//! it, which is the CSRF defence; bodies are JSON, which a cross-site form cannot send either.
//! Only the SHA-256 of the session secret is stored. A failed login says only "wrong email or
//! password", and an unknown email costs the same argon2 verification as a known one.

use std::fmt;

use axum::Json;
use axum::Router;
use axum::extract::{FromRef, FromRequestParts, State};
use axum::http::header::{CACHE_CONTROL, COOKIE, RETRY_AFTER, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::AccountError;
use super::model::{Account, NewSession, TokenInfo, normalise_email};
use super::tokens::{IssuedToken, issue_token, rotate_token};
use crate::auth::AccessControl;
use crate::auth::password::Password;
use crate::auth::token::{TokenHash, random_secret};
use crate::envelope::{ApiJson, ApiPath, ok};
use crate::error::{ApiError, ErrorBody};
use crate::limits::usage::{WindowView, iso_utc};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "optics_session";

/// The account page.
const ACCOUNT_PAGE: &str = include_str!("../../static/account.html");

/// The account-area routes with their state, mergeable into a router of any state.
pub fn account_router<S>(access: AccessControl) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/account", get(account_page))
        .route("/api/account/login", post(login))
        .route("/api/account/logout", post(logout))
        .route("/api/account", get(account_summary))
        .route(
            "/api/account/api-tokens",
            get(list_tokens).post(create_token),
        )
        .route("/api/account/api-tokens/{id}/rotate", post(rotate))
        .route("/api/account/api-tokens/{id}/revoke", post(revoke))
        .route(
            "/api/account/api-tokens/{id}",
            axum::routing::delete(revoke),
        )
        .route("/api/account/dashboard-token", post(dashboard_token))
        .with_state(access)
}

/// Why an account-area request failed.
#[derive(Debug)]
pub enum AreaError {
    /// No valid session (401).
    NotSignedIn,
    /// Login failed (401); the same for an unknown email and a wrong password.
    BadLogin,
    /// An account or token error.
    Account(AccountError),
    /// A request the API error type already describes (bad JSON, 500s).
    Api(ApiError),
    /// Too many login attempts from this address or against this e-mail, or every hashing
    /// slot busy (429 with `Retry-After`).
    Throttled {
        /// Seconds until an attempt is counted again.
        retry_after_secs: u64,
    },
}

impl From<AccountError> for AreaError {
    fn from(error: AccountError) -> Self {
        Self::Account(error)
    }
}

impl From<ApiError> for AreaError {
    fn from(error: ApiError) -> Self {
        Self::Api(error)
    }
}

fn error_response(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(ErrorBody::new(message))).into_response()
}

impl IntoResponse for AreaError {
    fn into_response(self) -> Response {
        match self {
            Self::NotSignedIn => error_response(StatusCode::UNAUTHORIZED, "Not signed in"),
            Self::BadLogin => error_response(StatusCode::UNAUTHORIZED, "Wrong email or password"),
            Self::Api(error) => error.into_response(),
            Self::Throttled { retry_after_secs } => {
                let mut body =
                    ErrorBody::new(format!("Too many attempts; retry in {retry_after_secs} s"));
                body.retry_after_seconds = Some(retry_after_secs);
                let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
                response
            }
            Self::Account(AccountError::HasherBusy) => Self::Throttled {
                retry_after_secs: 1,
            }
            .into_response(),
            Self::Account(error) => match &error {
                AccountError::InvalidInput(message) => {
                    ApiError::bad_request(message.clone()).into_response()
                }
                AccountError::TokenNotFound | AccountError::AccountNotFound => {
                    error_response(StatusCode::NOT_FOUND, error.to_string())
                }
                AccountError::TokenCapReached { .. }
                | AccountError::TokenNotActive
                | AccountError::EmailTaken => {
                    error_response(StatusCode::CONFLICT, error.to_string())
                }
                _ => ApiError::account_store("serving the account area", error).into_response(),
            },
        }
    }
}

/// The signed-in account of a request.
#[derive(Debug, Clone)]
pub struct Session {
    /// The account.
    pub account: Account,
    /// Digest of the session secret.
    pub hash: TokenHash,
}

fn session_secret(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == SESSION_COOKIE && !value.is_empty()).then(|| value.to_owned())
        })
}

/// Any router state that holds the access control (the account area's own, the MCP crate's
/// authorization server's) can read the session.
impl<S> FromRequestParts<S> for Session
where
    AccessControl: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AreaError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AreaError> {
        let access = AccessControl::from_ref(state);
        let secret = session_secret(parts).ok_or(AreaError::NotSignedIn)?;
        let hash = TokenHash::of(secret.as_bytes());
        let account_id = access
            .store()
            .session_account(&hash, access.now())
            .await?
            .ok_or(AreaError::NotSignedIn)?;
        let account = access
            .store()
            .account(account_id)
            .await?
            .ok_or(AreaError::NotSignedIn)?;
        Ok(Self { account, hash })
    }
}

fn session_cookie(secret: &str, max_age_secs: i64, secure: bool) -> Result<HeaderValue, ApiError> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_secs}{secure}"
    ))
    .map_err(|e| ApiError::internal("writing the session cookie", e))
}

async fn account_page() -> Response {
    let mut response = Html(ACCOUNT_PAGE).into_response();
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `POST /api/account/login` body. Its `Debug` hides the password.
#[derive(Deserialize)]
pub struct LoginRequest {
    /// Login email.
    pub email: String,
    /// Password.
    pub password: String,
}

impl fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoginRequest")
            .field("email", &self.email)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The account as the account area shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountView {
    /// Login email.
    pub email: String,
    /// The stored plan.
    pub plan: &'static str,
    /// The plan in force now (`none` once it has ended).
    pub plan_in_force: &'static str,
    /// When the plan ends (ISO 8601, UTC), if it does.
    pub plan_expires_at: Option<String>,
    /// The monthly budget in data units.
    pub monthly_budget_units: u64,
    /// This month's spending.
    pub month: WindowView,
    /// Most tokens active at once.
    pub max_active_tokens: u32,
}

/// A token as the account area lists it (no secret, no digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenView {
    /// Public id.
    pub id: String,
    /// Label.
    pub name: String,
    /// Display prefix.
    pub prefix: String,
    /// active, expired or revoked.
    pub status: &'static str,
    /// ISO 8601 instants (UTC); `expires_at` null = never.
    pub created_at: String,
    /// End of life.
    pub expires_at: Option<String>,
    /// Revocation instant.
    pub revoked_at: Option<String>,
    /// Last rotation instant.
    pub rotated_at: Option<String>,
}

impl TokenView {
    fn new(info: &TokenInfo, now: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            id: info.id.clone(),
            name: info.name.clone(),
            prefix: info.prefix.clone(),
            status: match info.status(now) {
                super::TokenStatus::Active => "active",
                super::TokenStatus::Expired => "expired",
                super::TokenStatus::Revoked => "revoked",
            },
            created_at: iso_utc(info.created_at),
            expires_at: info.expires_at.map(iso_utc),
            revoked_at: info.revoked_at.map(iso_utc),
            rotated_at: info.rotated_at.map(iso_utc),
        }
    }
}

/// A token just issued: the secret (shown once) and its listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IssuedTokenView {
    /// The whole token. It is not stored and cannot be shown again.
    pub token: String,
    /// Its listing.
    #[serde(flatten)]
    pub info: TokenView,
}

impl IssuedTokenView {
    fn new(issued: &IssuedToken, now: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            token: issued.token.expose().to_owned(),
            info: TokenView::new(&issued.info, now),
        }
    }
}

/// A throttle's refusal.
fn throttled(retry_after_secs: u64) -> AreaError {
    AreaError::Throttled { retry_after_secs }
}

/// Counts a token creation or rotation. Both are counted per account: revoke-and-recreate
/// cannot mint tokens (or fresh windows) without bound.
fn count_token_change(
    access: &AccessControl,
    session: &Session,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), AreaError> {
    access
        .token_throttle()
        .attempt_account(session.account.id, now)
        .map_err(throttled)
}

/// A new token's secret and details, never cached.
fn issued_response(issued: &IssuedToken, now: chrono::DateTime<chrono::Utc>) -> Response {
    no_store(ok(IssuedTokenView::new(issued, now)).into_response())
}

/// Marks an answer not to be stored by any cache: responses carrying secrets or account data.
pub fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The peer address of the connection, when the server records it (the binary serves with
/// connect info; in-process tests have none).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<std::net::IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|info| info.0.ip()),
        ))
    }
}

async fn login(
    State(access): State<AccessControl>,
    ClientAddress(address): ClientAddress,
    ApiJson(body): ApiJson<LoginRequest>,
) -> Result<Response, AreaError> {
    let email = normalise_email(&body.email).ok();
    // Counted before any hashing: a flood or a guessing run stops at the door.
    access
        .login_throttle()
        .attempt(address, email.as_deref(), access.now())
        .map_err(throttled)?;
    let password = Password::presented(body.password).ok_or(AreaError::BadLogin)?;
    let credentials = match &email {
        Some(email) => access.store().credentials(email).await?,
        None => None,
    };
    let stored = credentials.as_ref().map(|c| c.password_hash.clone());
    let verified = access.hasher().verify(password, stored).await?;
    let Some(credentials) = credentials.filter(|_| verified) else {
        return Err(AreaError::BadLogin);
    };
    let now = access.now();
    let secret = random_secret().map_err(AccountError::from)?;
    let policy = access.config().sessions;
    access
        .store()
        .create_session(NewSession {
            hash: TokenHash::of(secret.as_bytes()),
            account_id: credentials.account.id,
            created_at: now,
            expires_at: now + policy.lifetime,
        })
        .await?;
    let cookie = session_cookie(&secret, policy.lifetime.num_seconds(), policy.secure_cookie)?;
    let account = credentials.account;
    let mut response = ok(serde_json::json!({
        "email": account.email,
        "plan": account.active_plan(now).as_str(),
    }))
    .into_response();
    response.headers_mut().insert(SET_COOKIE, cookie);
    Ok(no_store(response))
}

async fn logout(
    State(access): State<AccessControl>,
    session: Session,
) -> Result<Response, AreaError> {
    access.store().delete_session(&session.hash).await?;
    let mut response = ok(serde_json::json!({ "signed_out": true })).into_response();
    let cookie = session_cookie("", 0, access.config().sessions.secure_cookie)?;
    response.headers_mut().insert(SET_COOKIE, cookie);
    Ok(no_store(response))
}

async fn account_summary(
    State(access): State<AccessControl>,
    session: Session,
) -> Result<Response, AreaError> {
    let now = access.now();
    let account = session.account;
    let plan = account.active_plan(now);
    let budget = account
        .monthly_budget_units
        .unwrap_or_else(|| access.config().budgets.for_plan(plan));
    // The month is per account: any token id works for the report; none is counted.
    let report = access
        .limiter()
        .usage("", account.id, budget, now)
        .await
        .map_err(|e| ApiError::internal("reading usage counters", e))?;
    Ok(no_store(
        ok(AccountView {
            email: account.email,
            plan: account.plan.as_str(),
            plan_in_force: plan.as_str(),
            plan_expires_at: account.plan_expires_at.map(iso_utc),
            monthly_budget_units: budget,
            month: (&report.quota.month).into(),
            max_active_tokens: access.config().tokens.max_active,
        })
        .into_response(),
    ))
}

async fn list_tokens(
    State(access): State<AccessControl>,
    session: Session,
) -> Result<Response, AreaError> {
    let now = access.now();
    let tokens = access.store().list_tokens(session.account.id).await?;
    let views: Vec<TokenView> = tokens.iter().map(|t| TokenView::new(t, now)).collect();
    Ok(no_store(ok(views).into_response()))
}

/// `POST /api/account/api-tokens` body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    /// A label.
    #[serde(default)]
    pub name: Option<String>,
    /// Lifetime in days; 0 = never; absent = the default (365).
    #[serde(default)]
    pub expires_in_days: Option<u32>,
}

async fn create_token(
    State(access): State<AccessControl>,
    session: Session,
    ApiJson(body): ApiJson<CreateTokenRequest>,
) -> Result<Response, AreaError> {
    let now = access.now();
    count_token_change(&access, &session, now)?;
    let issued = issue_token(
        &**access.store(),
        &access.config().tokens,
        session.account.id,
        body.name.as_deref(),
        body.expires_in_days,
        now,
    )
    .await?;
    let mut response = issued_response(&issued, now);
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

async fn rotate(
    State(access): State<AccessControl>,
    session: Session,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, AreaError> {
    let now = access.now();
    count_token_change(&access, &session, now)?;
    let issued = rotate_token(&**access.store(), session.account.id, &id, now).await?;
    Ok(issued_response(&issued, now))
}

async fn revoke(
    State(access): State<AccessControl>,
    session: Session,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, AreaError> {
    let now = access.now();
    let info = access
        .store()
        .revoke_token(Some(session.account.id), &id, now)
        .await?;
    Ok(no_store(ok(TokenView::new(&info, now)).into_response()))
}

/// The name of the token the dashboard reads the data with.
pub const DASHBOARD_TOKEN_NAME: &str = "dashboard";

/// Days a dashboard token lives when it is first issued.
const DASHBOARD_TOKEN_DAYS: u32 = 1;

/// `POST /api/account/dashboard-token`: the token the signed-in account's dashboard sends as
/// its bearer header, so its reads go through the same gate, limits and budget as any client's
/// and no token ever travels in a URL. One per account, named [`DASHBOARD_TOKEN_NAME`]: asking
/// again rotates its secret (a page keeps it in memory only, and asks again when it reloads or
/// is refused), so page loads never pile up tokens against the account's cap. Counted per
/// account by its own throttle (a page load each, far more than tokens are created by hand).
async fn dashboard_token(
    State(access): State<AccessControl>,
    session: Session,
) -> Result<Response, AreaError> {
    let now = access.now();
    access
        .dashboard_throttle()
        .attempt_account(session.account.id, now)
        .map_err(throttled)?;
    let held = access
        .store()
        .list_tokens(session.account.id)
        .await?
        .into_iter()
        .find(|t| t.name == DASHBOARD_TOKEN_NAME && t.status(now) == super::TokenStatus::Active);
    let issued = match held {
        Some(token) => rotate_token(&**access.store(), session.account.id, &token.id, now).await?,
        None => {
            issue_token(
                &**access.store(),
                &access.config().tokens,
                session.account.id,
                Some(DASHBOARD_TOKEN_NAME),
                Some(DASHBOARD_TOKEN_DAYS),
                now,
            )
            .await?
        }
    };
    Ok(issued_response(&issued, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let request = axum::http::Request::builder()
            .header(COOKIE, "theme=dark; optics_session=abc123; other=1")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert_eq!(session_secret(&parts).as_deref(), Some("abc123"));
        let request = axum::http::Request::builder()
            .header(COOKIE, "optics_session=")
            .body(())
            .unwrap();
        assert_eq!(session_secret(&request.into_parts().0), None);
    }

    #[test]
    fn the_cookie_is_http_only_and_strict() {
        let cookie = session_cookie("s3cr3t", 3600, false).unwrap();
        let text = cookie.to_str().unwrap();
        assert!(text.contains("HttpOnly"));
        assert!(text.contains("SameSite=Strict"));
        assert!(!text.contains("Secure"));
        assert!(
            session_cookie("s", 1, true)
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("; Secure")
        );
    }

    #[test]
    fn login_requests_hide_the_password() {
        let request = LoginRequest {
            email: "a@b.c".into(),
            password: "hunter2hunter2".into(),
        };
        assert!(!format!("{request:?}").contains("hunter2"));
    }
}
