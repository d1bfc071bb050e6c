//! Auth + limit overhead per data request with the embedded engines (SQLite file store, the
//! in-memory limiter restored from the store, as the service runs it). Goal: at most 20 µs per
//! request.
//!
//! Measured, each as the median of 15 batches of 2,000 calls on one thread:
//! - `admit`: the whole check of one request (bearer parse + checksum, SHA-256, the SQLite
//!   lookup by digest, constant-time compare, plan and tier, the limiter's check-and-count,
//!   which also notes the month's unsaved usage for the write-behind, and the charge of the
//!   answer's budget units once it is known);
//! - its parts: parse + hash, the store lookup, the limiter;
//! - through the router: `oneshot` on a route behind `require_token` against the same route
//!   without it; the difference is what authentication adds to a request;
//! - the write-behind of the month (off the request path, every few seconds): one write of
//!   the usage of 200 accounts, and one of a single account, to the SQLite file.
//!
//! The limits are raised so that the counted requests are never refused (the code path is the
//! admitted one). Figures print; nothing asserts on time.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderValue, Request, StatusCode};
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use axum::{Extension, Router};
use chrono::TimeZone;
use optics_api::MatchedEndpoint;
use optics_api::accounts::{AccountStore, NewAccount, Plan, SqliteStore, TokenPolicy, tokens};
use optics_api::auth::{
    AccessConfig, AccessControl, ApiToken, PasswordCost, PasswordHasher, require_token,
};
use optics_api::limits::{
    InMemoryLimiter, LimitRequest, Limiter, PlanBudgets, RateLimits, Settlement,
};
use optics_api::registry;
use optics_compute::time::{Clock, ManualClock};
use optics_tests::bench::time_median;
use tower::ServiceExt as _;

const BATCH: u32 = 2_000;
const REPEATS: usize = 15;

fn per_call(batch: Duration) -> f64 {
    batch.as_secs_f64() * 1e6 / f64::from(BATCH)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = std::env::temp_dir().join(format!("optics-auth-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store: Arc<dyn AccountStore> =
        Arc::new(SqliteStore::open(&dir.join("accounts.sqlite3")).expect("an SQLite store"));
    let clock = Arc::new(ManualClock::new(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 20, 15, 0, 0)
            .unwrap(),
    ));
    let limits = RateLimits {
        per_minute: u32::MAX,
        per_hour: u32::MAX,
    };
    // As the service builds it: restored from the store, so it keeps the month's unsaved usage.
    let limiter = Arc::new(
        runtime
            .block_on(InMemoryLimiter::restored(limits, &*store, clock.now()))
            .expect("the month from the store"),
    );
    let budget = u64::MAX / 2;
    let budgets = PlanBudgets {
        trial: budget,
        basic: budget,
        premium: budget,
        pro: budget,
    };
    let access = AccessControl::new(
        store.clone(),
        limiter.clone(),
        clock.clone() as Arc<dyn Clock>,
        PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).expect("argon2 parameters"),
        AccessConfig {
            budgets,
            ..AccessConfig::default()
        },
    );

    // A few accounts with their tokens, so the lookup is not on a one-row table.
    let mut header = None;
    let mut token_id = String::new();
    let mut account_ids = Vec::new();
    runtime.block_on(async {
        for i in 0..200 {
            let account = store
                .create_account(NewAccount {
                    email: format!("user{i}@example.com"),
                    password_hash: optics_api::accounts::PasswordHashPhc::new("x".into()),
                    plan: Plan::Pro,
                    plan_expires_at: None,
                    monthly_budget_units: None,
                    created_at: clock.now(),
                })
                .await
                .expect("an account");
            account_ids.push(account.id);
            for _ in 0..3 {
                let issued = tokens::issue_token(
                    &*store,
                    &TokenPolicy::default(),
                    account.id,
                    None,
                    None,
                    clock.now(),
                )
                .await
                .expect("a token");
                token_id.clone_from(&issued.info.id);
                header = Some(
                    HeaderValue::from_str(&format!("Bearer {}", issued.token.expose())).unwrap(),
                );
            }
        }
    });
    let header = header.expect("a token");
    let token = ApiToken::parse(header.to_str().unwrap().trim_start_matches("Bearer ")).unwrap();
    let chain = registry::endpoint("chain").expect("the chain endpoint");

    let admit = time_median(REPEATS, || {
        runtime.block_on(async {
            for _ in 0..BATCH {
                // Admitted and charged, as the gate does for a fresh successful answer.
                let admission = access.admit(chain, None, Some(&header)).await;
                let admission = admission.expect("admitted");
                admission.reservation.settle(Settlement::Charge).await;
            }
        });
    });
    let parse_and_hash = time_median(REPEATS, || {
        for _ in 0..BATCH {
            let parsed = ApiToken::parse(token.expose()).expect("a valid token");
            std::hint::black_box(parsed.hash());
        }
    });
    let hash = token.hash();
    let lookup = time_median(REPEATS, || {
        runtime.block_on(async {
            for _ in 0..BATCH {
                let grant = store.token_grant(&hash).await.expect("the lookup");
                assert!(grant.is_some());
            }
        });
    });
    let limiter_only = time_median(REPEATS, || {
        runtime.block_on(async {
            for _ in 0..BATCH {
                let decision = limiter
                    .acquire(LimitRequest {
                        token_id: &token_id,
                        account_id: 1,
                        endpoint: "GET /chain/{ticker}",
                        cost_units: 1,
                        monthly_budget_units: budget,
                        now: clock.now(),
                    })
                    .await;
                assert!(decision.is_ok());
            }
        });
    });

    // Write-behind: what the 5-second writer does, for 200 accounts with new usage and for one.
    let count_for = |accounts: &[i64]| {
        for account_id in accounts {
            let decision = limiter.acquire_now(&LimitRequest {
                token_id: "tok_write",
                account_id: *account_id,
                endpoint: "GET /chain/{ticker}",
                cost_units: 1,
                monthly_budget_units: budget,
                now: clock.now(),
            });
            assert!(matches!(
                decision,
                optics_api::limits::Decision::Admitted(_)
            ));
        }
    };
    let write_times = |accounts: &[i64]| {
        let mut samples = Vec::new();
        for _ in 0..=REPEATS {
            count_for(accounts);
            let started = std::time::Instant::now();
            let written = runtime
                .block_on(limiter.save_to(&*store))
                .expect("the usage write");
            samples.push(started.elapsed());
            assert_eq!(written, accounts.len());
        }
        optics_tests::bench::median(samples)
    };
    let write_200 = write_times(&account_ids);
    let write_1 = write_times(&account_ids[..1]);

    let handler = || async { "{\"success\":true,\"data\":{}}" };
    let guarded: Router = Router::new().route(
        "/api/mcp/data/chain/{ticker}",
        get(handler)
            .layer::<_, std::convert::Infallible>(from_fn_with_state(access.clone(), require_token))
            .layer::<_, std::convert::Infallible>(Extension(MatchedEndpoint(chain))),
    );
    let open: Router = Router::new().route("/api/mcp/data/chain/{ticker}", get(handler));
    let through = |router: &Router, with_token: bool| {
        time_median(REPEATS, || {
            runtime.block_on(async {
                for _ in 0..BATCH {
                    let mut request = Request::builder().uri("/api/mcp/data/chain/SPY");
                    if with_token {
                        request = request.header(AUTHORIZATION, header.clone());
                    }
                    let response = router
                        .clone()
                        .oneshot(request.body(Body::empty()).unwrap())
                        .await
                        .expect("a response");
                    assert_eq!(response.status(), StatusCode::OK);
                }
            });
        })
    };
    let router_guarded = through(&guarded, true);
    let router_open = through(&open, false);

    println!("auth + limits per request, embedded engines (SQLite file, in-memory limiter)");
    println!(
        "  measured on a shared 2-core machine under load from other builds; medians of {REPEATS} batches of {BATCH}"
    );
    println!(
        "  admit (whole check)            {:8.2} µs   goal ≤ 20 µs",
        per_call(admit)
    );
    println!(
        "    parse + checksum + SHA-256   {:8.2} µs",
        per_call(parse_and_hash)
    );
    println!(
        "    SQLite lookup by digest      {:8.2} µs",
        per_call(lookup)
    );
    println!(
        "    limiter check-and-count      {:8.2} µs",
        per_call(limiter_only)
    );
    println!(
        "  router oneshot, guarded route  {:8.2} µs",
        per_call(router_guarded)
    );
    println!(
        "  router oneshot, open route     {:8.2} µs",
        per_call(router_open)
    );
    println!(
        "  overhead added by require_token {:7.2} µs",
        per_call(router_guarded) - per_call(router_open)
    );
    println!("  write-behind of the month (every 5 s, off the request path)");
    println!(
        "    200 accounts' usage, one write  {:8.2} ms",
        write_200.as_secs_f64() * 1e3
    );
    println!(
        "    one account's usage, one write  {:8.2} ms",
        write_1.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}
