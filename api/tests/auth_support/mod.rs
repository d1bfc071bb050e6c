//! Shared fixtures of the auth and limits tests: stores, routers with every data endpoint
//! behind `require_token`, requests and the expected rules written out independently of the
//! code under test.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::middleware::from_fn_with_state;
use axum::response::IntoResponse;
use axum::routing::{MethodRouter, get, post};
use axum::{Extension, Json, Router};
use chrono::{DateTime, TimeZone, Utc};
use optics_api::accounts::http::account_router;
use optics_api::accounts::{
    Account, AccountId, AccountStore, AuthorizationCode, Credentials, IssuedToken, MonthlyUsage,
    NewAccount, NewSession, NewToken, OAuthClient, Plan, SqliteStore, StoreFuture, TokenGrant,
    TokenInfo, TokenPolicy, tokens,
};
use optics_api::auth::{
    AccessConfig, AccessControl, Caller, PasswordCost, PasswordHasher, TokenHash, require_token,
    requires_token,
};
use optics_api::limits::{InMemoryLimiter, Limiter, PlanBudgets, RateLimits};
use optics_api::registry::{self, EndpointSpec, Tier};
use optics_api::{DATA_PREFIX, MatchedEndpoint};
use optics_compute::time::{Clock, ManualClock};
use serde_json::Value;
use tower::ServiceExt as _;

/// 2026-11-20 14:30:20 UTC: 20 seconds into a minute, 30 minutes into an hour.
pub fn start_instant() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 20).unwrap()
}

/// Limits high enough that a matrix of hundreds of requests never meets them.
pub const UNLIMITED: RateLimits = RateLimits {
    per_minute: 1_000_000,
    per_hour: 1_000_000,
};

/// A unique name for this test run (process id, a counter and OS randomness).
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut random = [0u8; 4];
    getrandom::fill(&mut random).unwrap();
    format!(
        "{prefix}_{}_{}_{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        u32::from_le_bytes(random)
    )
}

/// A directory under cargo's test scratch space, removed on drop.
#[derive(Debug)]
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new() -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique_name("auth"));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn hasher() -> PasswordHasher {
    PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).unwrap()
}

/// An SQLite store in a fresh scratch directory.
pub fn sqlite_store() -> (Arc<dyn AccountStore>, ScratchDir) {
    let dir = ScratchDir::new();
    let store = SqliteStore::open(&dir.0.join("accounts.sqlite3")).unwrap();
    (Arc::new(store), dir)
}

/// A store that counts token lookups ([`AccountStore::token_grant`]) and passes every call on:
/// proves which requests never reach the store.
#[derive(Debug)]
pub struct CountingStore {
    pub inner: Arc<dyn AccountStore>,
    pub token_lookups: AtomicU64,
}

impl CountingStore {
    pub fn new(inner: Arc<dyn AccountStore>) -> Self {
        Self {
            inner,
            token_lookups: AtomicU64::new(0),
        }
    }

    pub fn lookups(&self) -> u64 {
        self.token_lookups.load(Ordering::SeqCst)
    }
}

impl AccountStore for CountingStore {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn create_account(&self, account: NewAccount) -> StoreFuture<'_, Account> {
        self.inner.create_account(account)
    }
    fn account(&self, id: AccountId) -> StoreFuture<'_, Option<Account>> {
        self.inner.account(id)
    }
    fn credentials<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Credentials>> {
        self.inner.credentials(email)
    }
    fn account_by_email<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Account>> {
        self.inner.account_by_email(email)
    }
    fn list_accounts(&self) -> StoreFuture<'_, Vec<Account>> {
        self.inner.list_accounts()
    }
    fn count_accounts(&self) -> StoreFuture<'_, u64> {
        self.inner.count_accounts()
    }
    fn set_plan(
        &self,
        id: AccountId,
        plan: Plan,
        plan_expires_at: Option<DateTime<Utc>>,
    ) -> StoreFuture<'_, Account> {
        self.inner.set_plan(id, plan, plan_expires_at)
    }
    fn set_monthly_budget(
        &self,
        id: AccountId,
        monthly_budget_units: Option<u64>,
    ) -> StoreFuture<'_, Account> {
        self.inner.set_monthly_budget(id, monthly_budget_units)
    }
    fn insert_token(
        &self,
        token: NewToken,
        max_active: u32,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, TokenInfo> {
        self.inner.insert_token(token, max_active, now)
    }
    fn list_tokens(&self, account_id: AccountId) -> StoreFuture<'_, Vec<TokenInfo>> {
        self.inner.list_tokens(account_id)
    }
    fn rotate_token<'a>(
        &'a self,
        account_id: AccountId,
        token_id: &'a str,
        new_hash: TokenHash,
        new_prefix: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo> {
        self.inner
            .rotate_token(account_id, token_id, new_hash, new_prefix, now)
    }
    fn revoke_token<'a>(
        &'a self,
        account_id: Option<AccountId>,
        token_id: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo> {
        self.inner.revoke_token(account_id, token_id, now)
    }
    fn token_grant<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, Option<TokenGrant>> {
        self.token_lookups.fetch_add(1, Ordering::SeqCst);
        self.inner.token_grant(hash)
    }
    fn create_session(&self, session: NewSession) -> StoreFuture<'_, ()> {
        self.inner.create_session(session)
    }
    fn session_account<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AccountId>> {
        self.inner.session_account(hash, now)
    }
    fn delete_session<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, ()> {
        self.inner.delete_session(hash)
    }
    fn register_oauth_client(
        &self,
        client: OAuthClient,
        max_clients: u64,
        unused_before: DateTime<Utc>,
    ) -> StoreFuture<'_, ()> {
        self.inner
            .register_oauth_client(client, max_clients, unused_before)
    }
    fn oauth_client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<OAuthClient>> {
        self.inner.oauth_client(client_id)
    }
    fn insert_authorization_code(&self, code: AuthorizationCode) -> StoreFuture<'_, ()> {
        self.inner.insert_authorization_code(code)
    }
    fn take_authorization_code<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AuthorizationCode>> {
        self.inner.take_authorization_code(hash, now)
    }
    fn add_monthly_usage(&self, usage: Vec<MonthlyUsage>) -> StoreFuture<'_, ()> {
        self.inner.add_monthly_usage(usage)
    }
    fn monthly_usage<'a>(&'a self, month: &'a str) -> StoreFuture<'a, Vec<MonthlyUsage>> {
        self.inner.monthly_usage(month)
    }
}

/// Everything a test drives: the access control, its clock, and the router.
#[derive(Clone)]
pub struct Fixture {
    pub access: AccessControl,
    pub clock: Arc<ManualClock>,
    pub router: Router,
}

pub fn fixture(
    store: Arc<dyn AccountStore>,
    limiter: Arc<dyn Limiter>,
    clock: Arc<ManualClock>,
    budgets: PlanBudgets,
) -> Fixture {
    let config = AccessConfig {
        budgets,
        ..AccessConfig::default()
    };
    let access = AccessControl::new(
        store,
        limiter,
        clock.clone() as Arc<dyn Clock>,
        hasher(),
        config,
    );
    Fixture {
        router: data_router(access.clone(), Wiring::Extension),
        access,
        clock,
    }
}

/// SQLite + in-memory limiter with the given limits.
pub fn sqlite_fixture(limits: RateLimits) -> (Fixture, ScratchDir) {
    let (store, dir) = sqlite_store();
    let clock = Arc::new(ManualClock::new(start_instant()));
    (
        fixture(
            store,
            Arc::new(InMemoryLimiter::new(limits)),
            clock,
            PlanBudgets::default(),
        ),
        dir,
    )
}

/// How `require_token` finds a route's endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wiring {
    /// Per route, inside the router's `MatchedEndpoint` extension (as `optics_api::router`).
    Extension,
    /// `Router::route_layer`: the matched template is looked up in the registry.
    RouteLayer,
}

/// Every endpoint that needs a token, as the contract lists them.
pub fn data_endpoints() -> Vec<&'static EndpointSpec> {
    registry::all_endpoints()
        .filter(|e| requires_token(e))
        .collect()
}

/// A stand-in handler: says who called (the real handlers are another issue's).
async fn echo(Extension(caller): Extension<Caller>) -> impl IntoResponse {
    Json(serde_json::json!({
        "success": true,
        "data": {"account_id": caller.account_id, "plan": caller.plan.as_str(), "token_id": caller.token_id},
    }))
}

/// Every data endpoint (the real `/me/usage`, stand-ins for the rest) behind
/// `require_token`, plus the account area.
pub fn data_router(access: AccessControl, wiring: Wiring) -> Router {
    let mut router = Router::new();
    for spec in data_endpoints() {
        let handler: MethodRouter = if spec.slug == "me-usage" {
            get(optics_api::limits::usage::me_usage)
        } else {
            match spec.method {
                registry::Method::Get => get(echo),
                registry::Method::Post => post(echo),
            }
        };
        let handler = match wiring {
            Wiring::Extension => handler
                .layer::<_, std::convert::Infallible>(from_fn_with_state(
                    access.clone(),
                    require_token,
                ))
                .layer::<_, std::convert::Infallible>(Extension(MatchedEndpoint(spec))),
            Wiring::RouteLayer => handler,
        };
        router = router.route(&spec.full_path(), handler);
    }
    if wiring == Wiring::RouteLayer {
        router = router.route_layer(from_fn_with_state(access.clone(), require_token));
    }
    router.merge(account_router(access))
}

/// A concrete path for an endpoint (`{ticker}` → SPY, `{ticker2}` → QQQ).
pub fn concrete_path(spec: &EndpointSpec) -> String {
    spec.full_path()
        .replace("{ticker2}", "QQQ")
        .replace("{ticker}", "SPY")
}

/// A response, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn header_u64(&self, name: &str) -> u64 {
        self.header(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .parse()
            .unwrap()
    }
}

/// Sends one request through `router`.
pub async fn send(router: &Router, request: Request<Body>) -> Answer {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

/// A request to a data endpoint with an optional `Authorization` header value.
pub fn data_request(
    spec: &EndpointSpec,
    authorization: Option<&str>,
    query: Option<&str>,
) -> Request<Body> {
    let mut uri = concrete_path(spec);
    if let Some(query) = query {
        uri = format!("{uri}?{query}");
    }
    let method = match spec.method {
        registry::Method::Get => Method::GET,
        registry::Method::Post => Method::POST,
    };
    let mut builder = Request::builder().method(method.clone()).uri(uri);
    if let Some(value) = authorization {
        builder = builder.header(AUTHORIZATION, value);
    }
    if method == Method::POST {
        builder = builder.header(CONTENT_TYPE, "application/json");
        builder.body(Body::from("{}")).unwrap()
    } else {
        builder.body(Body::empty()).unwrap()
    }
}

/// `Bearer <token>`.
pub fn bearer(token: &IssuedToken) -> String {
    format!("Bearer {}", token.token.expose())
}

/// Creates an account directly in the store (cheap: the hash is of the minimum cost).
pub async fn account(fixture: &Fixture, email: &str, plan: Plan) -> AccountId {
    account_with_password(fixture, email, plan, "correct horse battery").await
}

pub async fn account_with_password(
    fixture: &Fixture,
    email: &str,
    plan: Plan,
    password: &str,
) -> AccountId {
    let hash = fixture
        .access
        .hasher()
        .hash(optics_api::auth::Password::new(password.into()).unwrap())
        .await
        .unwrap();
    fixture
        .access
        .store()
        .create_account(NewAccount {
            email: email.into(),
            password_hash: hash,
            plan,
            plan_expires_at: None,
            monthly_budget_units: None,
            created_at: fixture.clock.now(),
        })
        .await
        .unwrap()
        .id
}

/// Issues a token for `account` at the fixture's current instant.
pub async fn token(
    fixture: &Fixture,
    account: AccountId,
    expires_in_days: Option<u32>,
) -> IssuedToken {
    token_at(fixture, account, expires_in_days, fixture.clock.now()).await
}

pub async fn token_at(
    fixture: &Fixture,
    account: AccountId,
    expires_in_days: Option<u32>,
    at: DateTime<Utc>,
) -> IssuedToken {
    tokens::issue_token(
        &**fixture.access.store(),
        &TokenPolicy::default(),
        account,
        Some("test"),
        expires_in_days,
        at,
    )
    .await
    .unwrap()
}

/// The rule of spec part 5, written out here independently of `Plan::grants`: which plans
/// may call an endpoint of each tier.
pub fn expected_allowed(plan: Plan, tier: Tier) -> bool {
    let plan_rank = match plan {
        Plan::None => return false,
        Plan::Trial | Plan::Basic => 1,
        Plan::Premium => 2,
        Plan::Pro => 3,
    };
    let tier_rank = match tier {
        Tier::Any => 0,
        Tier::Basic => 1,
        Tier::Premium => 2,
        Tier::Pro => 3,
    };
    plan_rank >= tier_rank
}

/// Logs in through the account area; returns the `Cookie` header value.
pub async fn login(router: &Router, email: &str, password: &str) -> (Answer, Option<String>) {
    let request = Request::builder()
        .method(Method::POST)
        .uri("/api/account/login")
        .header(CONTENT_TYPE, "application/json")
        .body(Body::from(
            serde_json::json!({"email": email, "password": password}).to_string(),
        ))
        .unwrap();
    let answer = send(router, request).await;
    let cookie = answer
        .header(SET_COOKIE.as_str())
        .map(|c| c.split(';').next().unwrap().to_owned());
    (answer, cookie)
}

/// A request to the account area with a session cookie and an optional JSON body.
pub fn area_request(
    method: Method,
    uri: &str,
    cookie: Option<&str>,
    body: Option<Value>,
) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(cookie) = cookie {
        builder = builder.header(COOKIE, cookie);
    }
    match body {
        Some(body) => builder
            .header(CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    }
}

/// The data prefix, for assertions.
pub const PREFIX: &str = DATA_PREFIX;

/// Asserts a 503 that asks the caller to retry in 5 s and whose error says `why`.
pub fn assert_retry_later(answer: &Answer, why: &str) {
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.json()
    );
    assert_eq!(answer.header("retry-after"), Some("5"));
    let error = answer.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(error.contains(why), "{error}");
}

/// The checks every [`AccountStore`] must pass, in one run over a fresh store.
pub async fn store_conformance(store: Arc<dyn AccountStore>) {
    use optics_api::accounts::{AccountError, PasswordHashPhc, TokenStatus};

    let now = start_instant();
    let new_account = |email: &str, plan| NewAccount {
        email: email.into(),
        password_hash: PasswordHashPhc::new(
            "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g".into(),
        ),
        plan,
        plan_expires_at: None,
        monthly_budget_units: None,
        created_at: now,
    };
    assert_eq!(store.count_accounts().await.unwrap(), 0);
    let ann = store
        .create_account(new_account("ann@example.com", Plan::Basic))
        .await
        .unwrap();
    assert_eq!(ann.email, "ann@example.com");
    assert_eq!(ann.created_at, now);
    let taken = store
        .create_account(new_account("ann@example.com", Plan::Pro))
        .await;
    assert!(matches!(taken, Err(AccountError::EmailTaken)), "{taken:?}");
    let bob = store
        .create_account(new_account("bob@example.com", Plan::None))
        .await
        .unwrap();
    assert_eq!(store.count_accounts().await.unwrap(), 2);
    let listed: Vec<_> = store
        .list_accounts()
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.email)
        .collect();
    assert_eq!(listed, ["ann@example.com", "bob@example.com"]);
    assert_eq!(store.account(ann.id).await.unwrap().unwrap(), ann);
    assert_eq!(
        store
            .account_by_email("bob@example.com")
            .await
            .unwrap()
            .unwrap(),
        bob
    );
    assert!(
        store
            .account_by_email("nobody@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let credentials = store.credentials("ann@example.com").await.unwrap().unwrap();
    assert!(credentials.password_hash.as_str().starts_with("$argon2id$"));

    let ends = now + chrono::TimeDelta::days(30);
    let ann = store
        .set_plan(ann.id, Plan::Premium, Some(ends))
        .await
        .unwrap();
    assert_eq!((ann.plan, ann.plan_expires_at), (Plan::Premium, Some(ends)));
    let ann = store.set_monthly_budget(ann.id, Some(123)).await.unwrap();
    assert_eq!(ann.monthly_budget_units, Some(123));
    assert!(matches!(
        store.set_plan(9_999_999, Plan::Pro, None).await,
        Err(AccountError::AccountNotFound)
    ));

    let token = |id: &str, account, byte: u8| optics_api::accounts::NewToken {
        id: id.into(),
        account_id: account,
        name: format!("token {id}"),
        prefix: format!("optx_{id}"),
        hash: TokenHash::of(&[byte; 8]),
        created_at: now,
        expires_at: Some(now + chrono::TimeDelta::days(365)),
    };
    for (id, byte) in [("tok_a", 1), ("tok_b", 2), ("tok_c", 3)] {
        let info = store
            .insert_token(token(id, ann.id, byte), 3, now)
            .await
            .unwrap();
        assert_eq!(info.status(now), TokenStatus::Active);
    }
    let capped = store.insert_token(token("tok_d", ann.id, 4), 3, now).await;
    assert!(
        matches!(capped, Err(AccountError::TokenCapReached { max: 3 })),
        "{capped:?}"
    );
    let missing = store
        .insert_token(token("tok_e", 9_999_999, 5), 3, now)
        .await;
    assert!(
        matches!(missing, Err(AccountError::AccountNotFound)),
        "{missing:?}"
    );
    assert_eq!(store.list_tokens(ann.id).await.unwrap().len(), 3);
    assert!(store.list_tokens(bob.id).await.unwrap().is_empty());

    let grant = store
        .token_grant(&TokenHash::of(&[2; 8]))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(grant.token_id, "tok_b");
    assert_eq!(grant.account_id, ann.id);
    assert_eq!(grant.plan, Plan::Premium);
    assert_eq!(grant.plan_expires_at, Some(ends));
    assert_eq!(grant.monthly_budget_units, Some(123));
    assert!(grant.hash.ct_eq(&TokenHash::of(&[2; 8])));
    assert!(
        store
            .token_grant(&TokenHash::of(&[9; 8]))
            .await
            .unwrap()
            .is_none()
    );

    let rotated = store
        .rotate_token(ann.id, "tok_b", TokenHash::of(&[20; 8]), "optx_new", now)
        .await
        .unwrap();
    assert_eq!(
        (rotated.prefix.as_str(), rotated.rotated_at),
        ("optx_new", Some(now))
    );
    assert!(
        store
            .token_grant(&TokenHash::of(&[2; 8]))
            .await
            .unwrap()
            .is_none(),
        "old digest gone"
    );
    assert_eq!(
        store
            .token_grant(&TokenHash::of(&[20; 8]))
            .await
            .unwrap()
            .unwrap()
            .token_id,
        "tok_b"
    );
    let foreign = store
        .rotate_token(bob.id, "tok_b", TokenHash::of(&[21; 8]), "x", now)
        .await;
    assert!(
        matches!(foreign, Err(AccountError::TokenNotFound)),
        "{foreign:?}"
    );

    let revoked = store
        .revoke_token(Some(ann.id), "tok_a", now)
        .await
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(now));
    let later = now + chrono::TimeDelta::seconds(5);
    assert_eq!(
        store
            .revoke_token(None, "tok_a", later)
            .await
            .unwrap()
            .revoked_at,
        Some(now),
        "idempotent"
    );
    assert!(matches!(
        store.revoke_token(Some(bob.id), "tok_c", now).await,
        Err(AccountError::TokenNotFound)
    ));
    assert!(matches!(
        store
            .rotate_token(ann.id, "tok_a", TokenHash::of(&[22; 8]), "x", now)
            .await,
        Err(AccountError::TokenNotActive)
    ));
    assert!(
        store
            .token_grant(&TokenHash::of(&[1; 8]))
            .await
            .unwrap()
            .unwrap()
            .revoked_at
            .is_some()
    );
    // A revoked token frees a place under the cap.
    store
        .insert_token(token("tok_d", ann.id, 4), 3, now)
        .await
        .unwrap();

    let session = TokenHash::of(b"session secret");
    store
        .create_session(NewSession {
            hash: session,
            account_id: ann.id,
            created_at: now,
            expires_at: now + chrono::TimeDelta::hours(1),
        })
        .await
        .unwrap();
    assert_eq!(
        store.session_account(&session, now).await.unwrap(),
        Some(ann.id)
    );
    assert_eq!(
        store
            .session_account(&session, now + chrono::TimeDelta::hours(1))
            .await
            .unwrap(),
        None
    );
    store.delete_session(&session).await.unwrap();
    assert_eq!(store.session_account(&session, now).await.unwrap(), None);

    // Monthly usage: rows are added to, never overwritten, and read back by month.
    let usage = |account, month: &str, endpoint: &str, calls, units| MonthlyUsage {
        account_id: account,
        month: month.into(),
        endpoint: endpoint.into(),
        calls,
        units,
    };
    assert!(store.monthly_usage("2026-11").await.unwrap().is_empty());
    store.add_monthly_usage(Vec::new()).await.unwrap();
    store
        .add_monthly_usage(vec![
            usage(ann.id, "2026-11", "GET /chain/{ticker}", 3, 3),
            usage(ann.id, "2026-11", "GET /screen", 1, 2),
            usage(bob.id, "2026-11", "GET /chain/{ticker}", 1, 1),
            usage(ann.id, "2026-10", "GET /chain/{ticker}", 9, 9),
        ])
        .await
        .unwrap();
    store
        .add_monthly_usage(vec![
            usage(ann.id, "2026-11", "GET /chain/{ticker}", 2, 2),
            usage(ann.id, "2026-11", "GET /me/usage", 1, 0),
        ])
        .await
        .unwrap();
    let november: Vec<_> = store
        .monthly_usage("2026-11")
        .await
        .unwrap()
        .into_iter()
        .map(|u| {
            assert_eq!(u.month, "2026-11");
            (u.account_id, u.endpoint, u.calls, u.units)
        })
        .collect();
    assert_eq!(
        november,
        [
            (ann.id, "GET /chain/{ticker}".to_owned(), 5, 5),
            (ann.id, "GET /me/usage".to_owned(), 1, 0),
            (ann.id, "GET /screen".to_owned(), 1, 2),
            (bob.id, "GET /chain/{ticker}".to_owned(), 1, 1),
        ]
    );
    assert_eq!(store.monthly_usage("2026-10").await.unwrap().len(), 1);

    oauth_conformance(&*store, ann.id, now).await;
}

/// The OAuth part of [`store_conformance`]: registration with its cap, codes used once.
async fn oauth_conformance(store: &dyn AccountStore, account_id: AccountId, now: DateTime<Utc>) {
    use optics_api::accounts::AccountError;
    let client = |id: &str, at: DateTime<Utc>| OAuthClient {
        client_id: id.into(),
        client_name: format!("Client {id}"),
        redirect_uris: vec![
            "https://assistant.example/callback".into(),
            "http://127.0.0.1:33418/cb".into(),
        ],
        created_at: at,
        last_used_at: None,
    };
    let day = chrono::TimeDelta::days(1);
    assert_eq!(store.oauth_client("cli_a").await.unwrap(), None);
    store
        .register_oauth_client(client("cli_a", now - day * 2), 2, now - day)
        .await
        .unwrap();
    assert_eq!(
        store.oauth_client("cli_a").await.unwrap(),
        Some(client("cli_a", now - day * 2))
    );
    let code = |secret: &[u8], client_id: &str, expires_at| AuthorizationCode {
        hash: TokenHash::of(secret),
        client_id: client_id.into(),
        account_id,
        redirect_uri: "https://assistant.example/callback".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        resource: "https://options.example.com/mcp-server".into(),
        created_at: now,
        expires_at,
    };
    // An approval marks its client used: a full table keeps it.
    let ten_minutes = chrono::TimeDelta::minutes(10);
    let first = code(b"code-one", "cli_a", now + ten_minutes);
    store
        .insert_authorization_code(first.clone())
        .await
        .unwrap();
    assert_eq!(
        store
            .oauth_client("cli_a")
            .await
            .unwrap()
            .unwrap()
            .last_used_at,
        Some(now)
    );
    store
        .register_oauth_client(client("cli_b", now - day * 2), 2, now - day)
        .await
        .unwrap();
    // Full (2 of 2): the unused, day-old cli_b makes room; then cli_c (fresh) and the used
    // cli_a fill it, and nothing can be dropped.
    store
        .register_oauth_client(client("cli_c", now), 2, now - day)
        .await
        .unwrap();
    assert_eq!(store.oauth_client("cli_b").await.unwrap(), None);
    assert!(matches!(
        store
            .register_oauth_client(client("cli_d", now), 2, now - day)
            .await,
        Err(AccountError::ClientCapReached)
    ));
    // A code is returned once, and not after it ends.
    let taken = store
        .take_authorization_code(&first.hash, now)
        .await
        .unwrap();
    assert_eq!(taken, Some(first.clone()));
    assert_eq!(
        store
            .take_authorization_code(&first.hash, now)
            .await
            .unwrap(),
        None
    );
    let late = code(b"code-two", "cli_c", now + ten_minutes);
    store.insert_authorization_code(late.clone()).await.unwrap();
    assert_eq!(
        store
            .take_authorization_code(&late.hash, now + ten_minutes)
            .await
            .unwrap(),
        None
    );
}

/// The checks every [`Limiter`] must pass (fresh limiter with the default limits).
pub async fn limiter_conformance(limiter: Arc<dyn Limiter>) {
    use optics_api::RateLimit;
    use optics_api::limits::{Decision, LimitRequest};

    let now = start_instant();
    let request =
        |token: &'static str, endpoint: &'static str, cost: u32, budget: u64, now| LimitRequest {
            token_id: token,
            account_id: 7,
            endpoint,
            cost_units: cost,
            monthly_budget_units: budget,
            now,
        };
    for i in 0..60u64 {
        match limiter
            .acquire(request("tok_x", "GET /chain/{ticker}", 1, 100, now))
            .await
            .unwrap()
        {
            Decision::Admitted(quota) => {
                assert_eq!(quota.minute.remaining, 59 - i);
                assert_eq!(quota.hour.remaining, 999 - i);
                assert_eq!(quota.month.remaining, 99 - i);
            }
            refused => panic!("request {i}: {refused:?}"),
        }
    }
    match limiter
        .acquire(request("tok_x", "GET /chain/{ticker}", 1, 100, now))
        .await
        .unwrap()
    {
        Decision::Refused {
            limit,
            retry_after_secs,
            quota,
        } => {
            assert_eq!(limit, RateLimit::PerMinute);
            assert_eq!(retry_after_secs, 40);
            assert_eq!((quota.minute.used, quota.month.used), (60, 60));
        }
        admitted => panic!("{admitted:?}"),
    }
    // Another token of the account shares the account's windows: no fresh minute for it (a
    // revoked and recreated token gets none either).
    match limiter
        .acquire(request("tok_y", "GET /chain/{ticker}", 1, 100, now))
        .await
        .unwrap()
    {
        Decision::Refused { limit, quota, .. } => {
            assert_eq!(limit, RateLimit::PerMinute);
            assert_eq!(quota.minute.used, 60);
        }
        admitted => panic!("{admitted:?}"),
    }
    // The next minute it is admitted, against the shared budget (40 units left).
    let later = now + chrono::TimeDelta::seconds(40);
    for _ in 0..20 {
        assert!(matches!(
            limiter
                .acquire(request("tok_y", "GET /screen", 2, 100, later))
                .await
                .unwrap(),
            Decision::Admitted(_)
        ));
    }
    match limiter
        .acquire(request("tok_y", "GET /chain/{ticker}", 1, 100, later))
        .await
        .unwrap()
    {
        Decision::Refused {
            limit,
            retry_after_secs,
            quota,
        } => {
            assert_eq!(limit, RateLimit::MonthlyBudget);
            let to_december = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() - later;
            assert_eq!(retry_after_secs, to_december.num_seconds() as u64);
            assert_eq!(quota.month.remaining, 0);
            assert_eq!(quota.minute.used, 20);
            assert_eq!(quota.hour.used, 80, "the account's hour: 60 + 20");
        }
        admitted => panic!("{admitted:?}"),
    }
    let report = limiter.usage("tok_x", 7, 100, now).await.unwrap();
    assert_eq!(
        (report.quota.minute.used, report.quota.month.used),
        (60, 100)
    );
    let by_endpoint: Vec<(String, u64, u64)> = report
        .by_endpoint
        .iter()
        .map(|e| (e.endpoint.clone(), e.calls, e.units))
        .collect();
    assert_eq!(
        by_endpoint,
        [
            ("GET /chain/{ticker}".to_owned(), 60, 60),
            ("GET /screen".to_owned(), 20, 40)
        ]
    );
    // Next minute: the token's window reopened, the account's holds tok_y's 20 calls; the
    // hour holds all 80; the month does not reopen.
    let next_minute = later;
    let report = limiter.usage("tok_x", 7, 100, next_minute).await.unwrap();
    assert_eq!(
        (
            report.quota.minute.used,
            report.quota.hour.used,
            report.quota.month.used
        ),
        (20, 80, 100)
    );
    assert!(matches!(
        limiter
            .acquire(request("tok_x", "GET /me/usage", 0, 100, next_minute))
            .await
            .unwrap(),
        Decision::Admitted(_)
    ));
    // Next month: all fresh.
    let december = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
    let report = limiter.usage("tok_x", 7, 100, december).await.unwrap();
    assert_eq!(report.quota.month.used, 0);
    assert!(report.by_endpoint.is_empty());

    // Reserve and settle (another account, budget 10, calls of 3 units): admitted requests
    // hold their units until settled; a charge keeps them and lists the call, a release gives
    // them back and lists nothing; the minute counts every admitted request either way.
    use optics_api::limits::Settlement;
    let held = LimitRequest {
        token_id: "tok_r",
        account_id: 8,
        endpoint: "GET /screen",
        cost_units: 3,
        monthly_budget_units: 10,
        now,
    };
    for held_units in [3, 6, 9] {
        match limiter.reserve(held).await.unwrap() {
            Decision::Admitted(quota) => assert_eq!(quota.month.used, held_units),
            refused => panic!("{refused:?}"),
        }
    }
    match limiter.reserve(held).await.unwrap() {
        Decision::Refused { limit, quota, .. } => {
            assert_eq!(limit, RateLimit::MonthlyBudget, "9 held + 3 > 10");
            assert_eq!((quota.minute.used, quota.month.used), (3, 9));
        }
        admitted => panic!("{admitted:?}"),
    }
    let after = limiter.settle(held, Settlement::Release).await.unwrap();
    assert_eq!((after.used, after.remaining), (6, 4));
    let after = limiter.settle(held, Settlement::Charge).await.unwrap();
    assert_eq!(after.used, 6, "a charge keeps what was held");
    let after = limiter.settle(held, Settlement::Release).await.unwrap();
    assert_eq!(after.used, 3);
    let report = limiter.usage("tok_r", 8, 10, now).await.unwrap();
    assert_eq!((report.quota.minute.used, report.quota.month.used), (3, 3));
    let by_endpoint: Vec<(String, u64, u64)> = report
        .by_endpoint
        .iter()
        .map(|e| (e.endpoint.clone(), e.calls, e.units))
        .collect();
    assert_eq!(by_endpoint, [("GET /screen".to_owned(), 1, 3)]);
    // A free request releases nothing and, charged, is listed with no units.
    let free = LimitRequest {
        endpoint: "GET /me/usage",
        cost_units: 0,
        ..held
    };
    assert!(matches!(
        limiter.reserve(free).await.unwrap(),
        Decision::Admitted(_)
    ));
    assert_eq!(
        limiter.settle(free, Settlement::Charge).await.unwrap().used,
        3
    );
    let report = limiter.usage("tok_r", 8, 10, now).await.unwrap();
    assert_eq!(report.by_endpoint.len(), 2);
    assert!(
        report
            .by_endpoint
            .iter()
            .any(|e| (e.endpoint.as_str(), e.calls, e.units) == ("GET /me/usage", 1, 0))
    );
}

/// The calls by endpoint of a usage report's `data`, as (endpoint, calls, units).
pub fn calls_by_endpoint(data: &Value) -> Vec<(String, u64, u64)> {
    data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["endpoint"].as_str().unwrap().to_owned(),
                e["calls"].as_u64().unwrap(),
                e["units"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Spends part of a monthly budget through the router over `open()`'s store and an in-memory
/// limiter restored from it, writes the month back, drops store and limiter, opens both again:
/// the budget left and the calls by endpoint must be the same.
pub async fn month_survives_a_restart(open: impl AsyncFn() -> Arc<dyn AccountStore>) {
    use optics_api::limits::InMemoryLimiter;

    let clock = Arc::new(ManualClock::new(start_instant()));
    let budgets = PlanBudgets {
        pro: 50,
        ..PlanBudgets::default()
    };
    let store = open().await;
    let limiter = Arc::new(
        InMemoryLimiter::restored(RateLimits::default(), &*store, clock.now())
            .await
            .unwrap(),
    );
    let fx = fixture(store.clone(), limiter.clone(), clock.clone(), budgets);
    let id = account(&fx, "month@example.com", Plan::Pro).await;
    let header = bearer(&token(&fx, id, None).await);
    let chain = registry::endpoint("chain").unwrap();
    let screen = registry::endpoint("screen").unwrap();
    let usage = registry::endpoint("me-usage").unwrap();
    for spec in [chain, chain, chain, screen, screen] {
        let answer = send(&fx.router, data_request(spec, Some(&header), None)).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", spec.path);
    }
    let before = send(&fx.router, data_request(usage, Some(&header), None))
        .await
        .json()["data"]
        .clone();
    // Three chains at 1 unit, two screens at 2 (the costs the index states).
    assert_eq!(
        (before["used"].as_u64(), before["remaining"].as_u64()),
        (Some(7), Some(43))
    );
    // chain, screen and the usage report itself.
    assert_eq!(limiter.save_to(&*store).await.unwrap(), 3);
    drop(fx);
    drop(limiter);
    drop(store);

    let store = open().await;
    let limiter = Arc::new(
        InMemoryLimiter::restored(RateLimits::default(), &*store, clock.now())
            .await
            .unwrap(),
    );
    let fx = fixture(store, limiter, clock.clone(), budgets);
    let after = send(&fx.router, data_request(usage, Some(&header), None))
        .await
        .json()["data"]
        .clone();
    for field in ["used", "remaining", "limit"] {
        assert_eq!(after[field], before[field], "{field}");
    }
    assert_eq!(
        calls_by_endpoint(&before),
        [
            ("GET /chain/{ticker}".to_owned(), 3, 3),
            ("GET /screen".to_owned(), 2, 4),
            ("GET /me/usage".to_owned(), 1, 0),
        ]
    );
    // The same, and the usage report just made counted once more.
    assert_eq!(
        calls_by_endpoint(&after),
        [
            ("GET /chain/{ticker}".to_owned(), 3, 3),
            ("GET /me/usage".to_owned(), 2, 0),
            ("GET /screen".to_owned(), 2, 4),
        ]
    );
    let answer = send(&fx.router, data_request(chain, Some(&header), None)).await;
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 42);
}
