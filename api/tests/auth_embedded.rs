//! Authentication, plans, limits and the account area on the embedded engines (SQLite and the
//! in-memory limiter), driven through routers with `oneshot` and a manual clock.

mod auth_support;
mod chain_support;
#[path = "auth_support/metering.rs"]
mod metering;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use auth_support::*;
use axum::http::{Method, StatusCode};
use chrono::{TimeDelta, TimeZone, Utc};
use metering::*;
use optics_api::accounts::admin::{self, AdminContext, LOCAL_PASSWORD_FILE};
use optics_api::accounts::cli::{AccountsCommand, TokensCommand, run_accounts, run_tokens};
use optics_api::accounts::{AccountError, Plan, TokenStatus, tokens};
use optics_api::auth::{ApiToken, Password};
use optics_api::limits::{InMemoryLimiter, Limiter, PlanBudgets, RateLimits};
use optics_api::registry::{self, Tier};
use optics_compute::time::Clock;
use sha2::Digest as _;

/// The body every 401 of the data API carries, whatever the cause.
fn unauthorized_body() -> serde_json::Value {
    serde_json::json!({"success": false, "error": "Missing or invalid API token"})
}

fn with_char_changed(text: &str, index: usize) -> String {
    let mut bytes = text.as_bytes().to_vec();
    bytes[index] = if bytes[index] == b'a' { b'b' } else { b'a' };
    String::from_utf8(bytes).unwrap()
}

#[tokio::test]
async fn every_bad_token_is_the_same_401_on_every_data_endpoint() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let account = account(&fx, "matrix@example.com", Plan::Pro).await;
    let valid = token(&fx, account, None).await;
    let expired = token_at(&fx, account, Some(1), fx.clock.now() - TimeDelta::days(2)).await;
    let revoked = token(&fx, account, None).await;
    fx.access
        .store()
        .revoke_token(Some(account), &revoked.info.id, fx.clock.now())
        .await
        .unwrap();
    // The cap counts only active tokens: the expired and revoked ones leave room for this.
    let rotated = token(&fx, account, None).await;
    let rotated_new = tokens::rotate_token(
        &**fx.access.store(),
        account,
        &rotated.info.id,
        fx.clock.now(),
    )
    .await
    .unwrap();
    let unknown = ApiToken::from_secret_bytes(&[42; 32]);

    let valid_text = valid.token.expose().to_owned();
    let cases: Vec<(&str, Option<String>)> = vec![
        ("missing", None),
        ("empty", Some(String::new())),
        ("not bearer", Some(format!("Basic {valid_text}"))),
        ("no scheme", Some(valid_text.clone())),
        (
            "wrong prefix",
            Some(format!(
                "Bearer {}",
                valid_text.replacen("optx_", "optz_", 1)
            )),
        ),
        (
            "truncated",
            Some(format!("Bearer {}", &valid_text[..valid_text.len() - 1])),
        ),
        (
            "bad checksum",
            Some(format!("Bearer {}", with_char_changed(&valid_text, 12))),
        ),
        ("unknown", Some(format!("Bearer {}", unknown.expose()))),
        ("expired", Some(bearer(&expired))),
        ("revoked", Some(bearer(&revoked))),
        ("rotated-old", Some(bearer(&rotated))),
    ];
    let endpoints = data_endpoints();
    assert!(
        endpoints.len() >= 64,
        "every data endpoint of the contract is covered"
    );
    for spec in &endpoints {
        for (case, header) in &cases {
            let answer = send(&fx.router, data_request(spec, header.as_deref(), None)).await;
            assert_eq!(
                answer.status,
                StatusCode::UNAUTHORIZED,
                "{case} on {}",
                spec.path
            );
            assert_eq!(
                answer.json(),
                unauthorized_body(),
                "{case} on {}",
                spec.path
            );
            assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
            assert!(answer.header("x-ratelimit-remaining-minute").is_none());
        }
        for good in [bearer(&valid), bearer(&rotated_new)] {
            let answer = send(&fx.router, data_request(spec, Some(&good), None)).await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "valid token on {}",
                spec.path
            );
        }
    }
}

#[tokio::test]
async fn route_layer_wiring_finds_the_tier_from_the_route_template() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let router = data_router(fx.access.clone(), Wiring::RouteLayer);
    let basic = account(&fx, "basic@example.com", Plan::Basic).await;
    let token = token(&fx, basic, None).await;
    for spec in data_endpoints() {
        let answer = send(&router, data_request(spec, Some(&bearer(&token)), None)).await;
        let expected = if expected_allowed(Plan::Basic, spec.tier) {
            StatusCode::OK
        } else {
            StatusCode::FORBIDDEN
        };
        assert_eq!(answer.status, expected, "{}", spec.path);
        assert_eq!(
            send(&router, data_request(spec, None, None)).await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    // The index is also served on the bare prefix; that template maps to the index too.
    let bare = router.route(
        PREFIX,
        axum::routing::get(|| async { "index" }).route_layer(axum::middleware::from_fn_with_state(
            fx.access.clone(),
            optics_api::auth::require_token,
        )),
    );
    let request = axum::http::Request::builder()
        .uri(PREFIX)
        .header("authorization", bearer(&token))
        .body(axum::body::Body::empty())
        .unwrap();
    assert_eq!(send(&bare, request).await.status, StatusCode::OK);
    let anonymous = axum::http::Request::builder()
        .uri(PREFIX)
        .body(axum::body::Body::empty())
        .unwrap();
    assert_eq!(
        send(&bare, anonymous).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn plans_against_tiers_on_every_endpoint() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let mut tokens_by_plan = Vec::new();
    for plan in Plan::ALL {
        let id = account(&fx, &format!("{plan}@example.com"), plan).await;
        tokens_by_plan.push((plan, token(&fx, id, None).await));
    }
    let mut seen_tiers = std::collections::BTreeSet::new();
    for spec in data_endpoints() {
        seen_tiers.insert(spec.tier);
        for (plan, token) in &tokens_by_plan {
            let answer = send(&fx.router, data_request(spec, Some(&bearer(token)), None)).await;
            let body = answer.json();
            if *plan == Plan::None {
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{plan} {}", spec.path);
                assert!(body.get("upgrade_required").is_none(), "{body}");
                assert!(body.get("required_tier").is_none(), "{body}");
                assert!(body.get("your_tier").is_none(), "{body}");
            } else if expected_allowed(*plan, spec.tier) {
                assert_eq!(answer.status, StatusCode::OK, "{plan} {}", spec.path);
                assert_eq!(body["data"]["plan"], plan.as_str());
            } else {
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{plan} {}", spec.path);
                assert_eq!(body["success"], false);
                assert_eq!(body["upgrade_required"], true);
                assert_eq!(body["required_tier"], spec.tier.as_str());
                assert_eq!(body["your_tier"], plan.as_str());
                // Refused requests are not counted and carry no quota.
                assert!(answer.header("x-monthly-budget-remaining").is_none());
            }
        }
    }
    assert_eq!(
        seen_tiers.into_iter().collect::<Vec<_>>(),
        [Tier::Any, Tier::Basic, Tier::Premium, Tier::Pro],
        "the sample covers every tier"
    );
}

#[tokio::test]
async fn spec_tiers_for_named_families_hold() {
    // Spec part 5: strategy endpoints Basic, risk endpoints Pro, utility endpoints any plan.
    for slug in [
        "analyze-strategy",
        "build-strategy",
        "optimize-strategy",
        "pop",
        "simulate-chain",
    ] {
        assert_eq!(
            registry::endpoint(slug).unwrap().tier,
            Tier::Basic,
            "{slug}"
        );
    }
    for slug in [
        "hedge-recommendations",
        "portfolio-greeks",
        "scenario-analysis",
        "stress-tests",
    ] {
        assert_eq!(registry::endpoint(slug).unwrap().tier, Tier::Pro, "{slug}");
    }
    for slug in [
        "search",
        "expirations",
        "earnings-calendar",
        "economic-calendar",
        "me-usage",
        "index",
    ] {
        assert_eq!(registry::endpoint(slug).unwrap().tier, Tier::Any, "{slug}");
    }
}

#[tokio::test]
async fn a_lapsed_plan_is_a_403_without_upgrade_required() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let id = account(&fx, "trial@example.com", Plan::Trial).await;
    let token = token(&fx, id, None).await;
    let ends = fx.clock.now() + TimeDelta::days(14);
    fx.access
        .store()
        .set_plan(id, Plan::Trial, Some(ends))
        .await
        .unwrap();
    let chain = registry::endpoint("chain").unwrap();
    assert_eq!(
        send(&fx.router, data_request(chain, Some(&bearer(&token)), None))
            .await
            .status,
        StatusCode::OK
    );
    fx.clock.set(ends);
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert!(answer.json().get("upgrade_required").is_none());
}

#[tokio::test]
async fn rate_limit_headers_on_every_admitted_response() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "headers@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let chain = registry::endpoint("chain").unwrap();
    let screen = registry::endpoint("screen").unwrap();
    let usage = registry::endpoint("me-usage").unwrap();
    // (endpoint, query, units it costs: chain 1, screen 2, usage 0)
    let calls = [(chain, 1u64), (screen, 2), (usage, 0), (chain, 1)];
    let mut spent = 0;
    for (n, (spec, cost)) in calls.iter().enumerate() {
        let answer = send(&fx.router, data_request(spec, Some(&bearer(&token)), None)).await;
        assert_eq!(answer.status, StatusCode::OK);
        spent += cost;
        let made = n as u64 + 1;
        assert_eq!(answer.header_u64("x-ratelimit-limit-minute"), 60);
        assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 60 - made);
        assert_eq!(answer.header_u64("x-ratelimit-limit-hour"), 1_000);
        assert_eq!(
            answer.header_u64("x-ratelimit-remaining-hour"),
            1_000 - made
        );
        assert_eq!(
            answer.header_u64("x-monthly-budget-remaining"),
            10_000 - spent
        );
    }
}

#[tokio::test]
async fn the_sixty_first_request_of_a_minute_is_a_429_until_the_minute_ends() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "minute@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let chain = registry::endpoint("chain").unwrap();
    for _ in 0..60 {
        assert_eq!(
            send(&fx.router, data_request(chain, Some(&bearer(&token)), None))
                .await
                .status,
            StatusCode::OK
        );
    }
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    // The clock stands 20 s into the minute: 40 s until it ends.
    assert_eq!(answer.header("retry-after"), Some("40"));
    assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 0);
    assert_eq!(answer.header_u64("x-ratelimit-remaining-hour"), 940);
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 9_940);
    let body = answer.json();
    assert_eq!(body["success"], false);
    assert_eq!(body["limit"], "per_minute");
    assert_eq!(body["retry_after_seconds"], 40);
    // 39.5 s later it is still refused, with 1 s to go (rounded up); at the minute it passes.
    fx.clock.advance(TimeDelta::milliseconds(39_500));
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.header("retry-after"), Some("1"));
    fx.clock.advance(TimeDelta::milliseconds(500));
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 59);
}

#[tokio::test]
async fn the_hourly_limit_and_its_retry_after() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "hour@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let usage = registry::endpoint("me-usage").unwrap();
    let mut admitted = 0;
    // 17 minutes of 60 requests from 14:30:20: 1,000 fit in the hour, the rest are refused.
    for _ in 0..17 {
        for _ in 0..60 {
            let answer = send(&fx.router, data_request(usage, Some(&bearer(&token)), None)).await;
            if answer.status == StatusCode::OK {
                admitted += 1;
            }
        }
        fx.clock.advance(TimeDelta::minutes(1));
    }
    assert_eq!(admitted, 1_000);
    // Now 14:47:20; the hour ends at 15:00:00.
    let answer = send(&fx.router, data_request(usage, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.json()["limit"], "per_hour");
    assert_eq!(answer.header("retry-after"), Some("760"));
    fx.clock
        .set(Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap());
    assert_eq!(
        send(&fx.router, data_request(usage, Some(&bearer(&token)), None))
            .await
            .status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_exhausted_budget_is_a_429_budget_exceeded_until_next_month() {
    let (store, _dir) = sqlite_store();
    let clock = Arc::new(optics_compute::time::ManualClock::new(start_instant()));
    let budgets = PlanBudgets {
        pro: 5,
        ..PlanBudgets::default()
    };
    let fx = fixture(
        store,
        Arc::new(InMemoryLimiter::new(RateLimits::default())),
        clock,
        budgets,
    );
    let id = account(&fx, "budget@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let screen = registry::endpoint("screen").unwrap(); // 2 units
    let chain = registry::endpoint("chain").unwrap(); // 1 unit
    let usage = registry::endpoint("me-usage").unwrap(); // free
    for remaining in [3, 1] {
        let answer = send(
            &fx.router,
            data_request(screen, Some(&bearer(&token)), None),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.header_u64("x-monthly-budget-remaining"), remaining);
    }
    // 1 unit left: a 2-unit screen is refused, a 1-unit chain fits.
    let answer = send(
        &fx.router,
        data_request(screen, Some(&bearer(&token)), None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    let body = answer.json();
    assert_eq!(body["budget_exceeded"], true);
    assert_eq!(body["limit"], "monthly_budget");
    let to_december =
        (Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() - start_instant()).num_seconds();
    assert_eq!(
        answer.header("retry-after"),
        Some(to_december.to_string().as_str())
    );
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 1);
    assert_eq!(
        send(&fx.router, data_request(chain, Some(&bearer(&token)), None))
            .await
            .status,
        StatusCode::OK
    );
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.json()["budget_exceeded"], true);
    // Free endpoints stay reachable, so a caller can still see why.
    let answer = send(&fx.router, data_request(usage, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    let data = &answer.json()["data"];
    assert_eq!(
        (
            data["used"].as_u64(),
            data["limit"].as_u64(),
            data["remaining"].as_u64()
        ),
        (Some(5), Some(5), Some(0))
    );
    assert_eq!(data["percent_used"], 100.0);
    // An account's own budget overrides the plan's.
    fx.access
        .store()
        .set_monthly_budget(id, Some(7))
        .await
        .unwrap();
    let answer = send(
        &fx.router,
        data_request(screen, Some(&bearer(&token)), None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 0);
    // The month turns: the budget is whole again.
    fx.clock
        .set(Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap());
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 6);
}

#[tokio::test]
async fn per_symbol_endpoints_cost_one_unit_per_symbol() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "batch@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let batch = registry::endpoint("gex-batch").unwrap();
    let answer = send(
        &fx.router,
        data_request(batch, Some(&bearer(&token)), Some("tickers=SPY,QQQ,IWM")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header_u64("x-monthly-budget-remaining"), 10_000 - 3);
}

#[tokio::test]
async fn the_usage_endpoint_reports_the_month_the_windows_and_the_tokens() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "usage@example.com", Plan::Premium).await;
    let first = token(&fx, id, None).await;
    let second = token(&fx, id, Some(0)).await;
    let chain = registry::endpoint("chain").unwrap();
    let screen = registry::endpoint("screen").unwrap();
    let usage = registry::endpoint("me-usage").unwrap();
    for _ in 0..3 {
        send(&fx.router, data_request(chain, Some(&bearer(&first)), None)).await;
    }
    send(
        &fx.router,
        data_request(screen, Some(&bearer(&second)), None),
    )
    .await;
    let answer = send(&fx.router, data_request(usage, Some(&bearer(&first)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.json();
    assert_eq!(body["success"], true);
    let data = &body["data"];
    assert_eq!(data["plan"], "premium");
    assert_eq!(data["period"], "2026-11");
    assert_eq!(data["used"], 5);
    assert_eq!(data["limit"], 10_000);
    assert_eq!(data["remaining"], 9_995);
    assert_eq!(data["percent_used"], 0.05);
    assert_eq!(data["resets_at"], "2026-12-01T00:00:00Z");
    // The windows hold per account too: 3 chains, the other token's screen and this call.
    assert_eq!(data["rate_limits"]["token_id"], first.info.id.as_str());
    assert_eq!(data["rate_limits"]["per_minute"]["used"], 5);
    assert_eq!(data["rate_limits"]["per_minute"]["remaining"], 55);
    assert_eq!(
        data["rate_limits"]["per_minute"]["resets_at"],
        "2026-11-20T14:31:00Z"
    );
    assert_eq!(data["rate_limits"]["per_hour"]["used"], 5);
    assert_eq!(
        data["rate_limits"]["per_hour"]["resets_at"],
        "2026-11-20T15:00:00Z"
    );
    assert_eq!(data["calls_this_month"], 5);
    let docs = |slug: &str| registry::endpoint(slug).unwrap().docs_link();
    assert_eq!(
        data["endpoints"],
        serde_json::json!([
            {"endpoint": "GET /chain/{ticker}", "calls": 3, "units": 3, "docs": docs("chain")},
            {"endpoint": "GET /me/usage", "calls": 1, "units": 0, "docs": docs("me-usage")},
            {"endpoint": "GET /screen", "calls": 1, "units": 2, "docs": docs("screen")},
        ])
    );
    assert_eq!(data["tokens_active"], 2);
    assert_eq!(data["this_token"]["token_id"], first.info.id.as_str());
    assert_eq!(
        data["this_token"]["unknown_paths_7d"],
        serde_json::json!([])
    );
    let tokens = data["active_tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2);
    let text = answer_text(&answer);
    for issued in [&first, &second] {
        assert!(
            tokens.iter().any(|t| t["id"] == issued.info.id.as_str()
                && t["prefix"] == issued.info.prefix.as_str())
        );
        assert!(
            !text.contains(issued.token.expose()),
            "no secret in the usage payload"
        );
    }
    assert_eq!(data["max_active_tokens"], 3);
}

/// The account page's requests, as (method, path), from its `call("M", "path"…)` and
/// `act("M", "path"…)` lines; a path built with `+ encodeURIComponent(…) +` reads `{id}` there.
fn page_calls(html: &str) -> Vec<(String, String)> {
    let mut calls = Vec::new();
    for opener in ["call(\"", "act(\""] {
        for piece in html.split(opener).skip(1) {
            let Some((method, rest)) = piece.split_once('"') else {
                continue;
            };
            if !matches!(method, "GET" | "POST" | "DELETE") {
                continue; // the functions' own definitions: call(method, path, body)
            }
            let mut rest = rest.trim_start_matches(", ").trim_start();
            let mut path = String::new();
            while let Some(literal) = rest.strip_prefix('"') {
                let (text, after) = literal.split_once('"').unwrap();
                path.push_str(text);
                rest = after.trim_start();
                match rest.strip_prefix('+') {
                    Some(joined) => {
                        // `+ encodeURIComponent(token.id) + "…"`: a path parameter.
                        let Some(next) = joined.find('"') else { break };
                        if joined[..next].contains("encodeURIComponent") {
                            path.push_str("{id}");
                        }
                        rest = &joined[next..];
                    }
                    None => break,
                }
            }
            if path.starts_with('/') {
                calls.push((method.to_owned(), path));
            }
        }
    }
    calls.sort();
    calls.dedup();
    calls
}

fn answer_text(answer: &Answer) -> String {
    String::from_utf8_lossy(&answer.body).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_requests_admit_exactly_sixty() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "burst@example.com", Plan::Pro).await;
    let token = token(&fx, id, None).await;
    let chain = registry::endpoint("chain").unwrap();
    let header = bearer(&token);
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let router = fx.router.clone();
            let header = header.clone();
            tokio::spawn(
                async move { send(&router, data_request(chain, Some(&header), None)).await },
            )
        })
        .collect();
    let mut ok = 0;
    let mut limited = 0;
    let mut remaining_seen = Vec::new();
    for task in tasks {
        let answer = task.await.unwrap();
        match answer.status {
            StatusCode::OK => {
                ok += 1;
                remaining_seen.push(answer.header_u64("x-ratelimit-remaining-minute"));
            }
            StatusCode::TOO_MANY_REQUESTS => limited += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((ok, limited), (60, 40));
    // Each admitted request saw its own count: remaining values 0..=59, each once.
    remaining_seen.sort_unstable();
    assert_eq!(remaining_seen, (0..60).collect::<Vec<u64>>());
}

#[tokio::test]
async fn at_most_three_active_tokens_and_expired_ones_do_not_count() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "cap@example.com", Plan::Basic).await;
    let store = fx.access.store();
    let policy = fx.access.config().tokens;
    let now = fx.clock.now();
    let mut issued = Vec::new();
    for _ in 0..3 {
        issued.push(
            tokens::issue_token(&**store, &policy, id, None, None, now)
                .await
                .unwrap(),
        );
    }
    let fourth = tokens::issue_token(&**store, &policy, id, None, None, now).await;
    assert!(
        matches!(fourth, Err(AccountError::TokenCapReached { max: 3 })),
        "{fourth:?}"
    );
    store
        .revoke_token(Some(id), &issued[0].info.id, now)
        .await
        .unwrap();
    let replacement = tokens::issue_token(&**store, &policy, id, None, Some(1), now)
        .await
        .unwrap();
    assert!(
        tokens::issue_token(&**store, &policy, id, None, None, now)
            .await
            .is_err()
    );
    // A day later the 1-day token has expired and leaves room.
    let later = now + TimeDelta::days(1);
    assert_eq!(
        store
            .list_tokens(id)
            .await
            .unwrap()
            .iter()
            .find(|t| t.id == replacement.info.id)
            .unwrap()
            .status(later),
        TokenStatus::Expired
    );
    assert!(
        tokens::issue_token(&**store, &policy, id, None, None, later)
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creations_cannot_pass_the_cap() {
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "race@example.com", Plan::Basic).await;
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let store = fx.access.store().clone();
            let now = fx.clock.now();
            tokio::spawn(async move {
                tokens::issue_token(&*store, &Default::default(), id, None, None, now)
                    .await
                    .is_ok()
            })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        created += usize::from(task.await.unwrap());
    }
    assert_eq!(created, 3);
}

#[tokio::test]
async fn rotation_replaces_the_secret_at_once_and_keeps_the_id() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let id = account(&fx, "rotate@example.com", Plan::Pro).await;
    let old = token(&fx, id, Some(30)).await;
    let chain = registry::endpoint("chain").unwrap();
    assert_eq!(
        send(&fx.router, data_request(chain, Some(&bearer(&old)), None))
            .await
            .status,
        StatusCode::OK
    );
    let new = tokens::rotate_token(&**fx.access.store(), id, &old.info.id, fx.clock.now())
        .await
        .unwrap();
    assert_eq!(new.info.id, old.info.id);
    assert_eq!(
        new.info.expires_at, old.info.expires_at,
        "rotation does not extend the life"
    );
    assert_ne!(new.token, old.token);
    assert_eq!(new.info.prefix, new.token.display_prefix());
    assert_eq!(
        send(&fx.router, data_request(chain, Some(&bearer(&old)), None))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        send(&fx.router, data_request(chain, Some(&bearer(&new)), None))
            .await
            .status,
        StatusCode::OK
    );
    // A revoked token cannot be rotated back to life; another account's token is not found.
    fx.access
        .store()
        .revoke_token(Some(id), &old.info.id, fx.clock.now())
        .await
        .unwrap();
    let again = tokens::rotate_token(&**fx.access.store(), id, &old.info.id, fx.clock.now()).await;
    assert!(
        matches!(again, Err(AccountError::TokenNotActive)),
        "{again:?}"
    );
    let other = account(&fx, "other@example.com", Plan::Pro).await;
    let theirs = token(&fx, other, None).await;
    let stolen =
        tokens::rotate_token(&**fx.access.store(), id, &theirs.info.id, fx.clock.now()).await;
    assert!(
        matches!(stolen, Err(AccountError::TokenNotFound)),
        "{stolen:?}"
    );
}

#[tokio::test]
async fn the_account_area_logs_in_and_manages_tokens() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let id =
        account_with_password(&fx, "owner@example.com", Plan::Premium, "s3cure-passw0rd").await;
    let router = &fx.router;

    // Wrong password and unknown email: the same 401, no cookie.
    let (wrong, cookie) = login(router, "owner@example.com", "not-the-password").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(cookie.is_none());
    let (unknown, _) = login(router, "nobody@example.com", "not-the-password").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.body, unknown.body);

    let (answer, cookie) = login(router, "  Owner@Example.com ", "s3cure-passw0rd").await;
    assert_eq!(answer.status, StatusCode::OK);
    let set_cookie = answer.header("set-cookie").unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    let cookie = cookie.unwrap();

    // Without a session the area answers 401.
    let anonymous = send(
        router,
        area_request(Method::GET, "/api/account/api-tokens", None, None),
    )
    .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    let created = send(
        router,
        area_request(
            Method::POST,
            "/api/account/api-tokens",
            Some(&cookie),
            Some(serde_json::json!({"name": "notebook", "expires_in_days": 0})),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.header("cache-control"), Some("no-store"));
    let created = created.json()["data"].clone();
    let secret = created["token"].as_str().unwrap().to_owned();
    assert!(ApiToken::parse(&secret).is_ok());
    assert_eq!(created["name"], "notebook");
    assert!(created["expires_at"].is_null());
    let token_id = created["id"].as_str().unwrap().to_owned();

    // The new token works on the data API at once.
    let chain = registry::endpoint("chain").unwrap();
    let auth = format!("Bearer {secret}");
    assert_eq!(
        send(router, data_request(chain, Some(&auth), None))
            .await
            .status,
        StatusCode::OK
    );

    // The list shows ids and prefixes, never the secret.
    let list = send(
        router,
        area_request(Method::GET, "/api/account/api-tokens", Some(&cookie), None),
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(!answer_text(&list).contains(&secret));
    let listed = list.json()["data"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["prefix"], &secret[..9]);
    assert_eq!(listed[0]["status"], "active");

    // Rotate: a new secret, the old one refused.
    let rotated = send(
        router,
        area_request(
            Method::POST,
            &format!("/api/account/api-tokens/{token_id}/rotate"),
            Some(&cookie),
            None,
        ),
    )
    .await;
    assert_eq!(rotated.status, StatusCode::OK);
    let new_secret = rotated.json()["data"]["token"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, secret);
    assert_eq!(
        send(router, data_request(chain, Some(&auth), None))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let new_auth = format!("Bearer {new_secret}");
    assert_eq!(
        send(router, data_request(chain, Some(&new_auth), None))
            .await
            .status,
        StatusCode::OK
    );

    // The cap through the area: two more, then a 409.
    for _ in 0..2 {
        let answer = send(
            router,
            area_request(
                Method::POST,
                "/api/account/api-tokens",
                Some(&cookie),
                Some(serde_json::json!({})),
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED);
        assert!(
            !answer.json()["data"]["expires_at"].is_null(),
            "default lifetime applies"
        );
    }
    let full = send(
        router,
        area_request(
            Method::POST,
            "/api/account/api-tokens",
            Some(&cookie),
            Some(serde_json::json!({})),
        ),
    )
    .await;
    assert_eq!(full.status, StatusCode::CONFLICT);
    assert_eq!(full.json()["success"], false);

    // Revoke (DELETE) ends it at once; revoking again is harmless.
    let revoked = send(
        router,
        area_request(
            Method::DELETE,
            &format!("/api/account/api-tokens/{token_id}"),
            Some(&cookie),
            None,
        ),
    )
    .await;
    assert_eq!(revoked.status, StatusCode::OK);
    assert_eq!(revoked.json()["data"]["status"], "revoked");
    assert_eq!(
        send(router, data_request(chain, Some(&new_auth), None))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let again = send(
        router,
        area_request(
            Method::POST,
            &format!("/api/account/api-tokens/{token_id}/revoke"),
            Some(&cookie),
            None,
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK);

    // Another account cannot touch this account's tokens.
    account_with_password(&fx, "intruder@example.com", Plan::Pro, "intruder-password").await;
    let (_, intruder) = login(router, "intruder@example.com", "intruder-password").await;
    let theirs = send(
        router,
        area_request(
            Method::POST,
            &format!("/api/account/api-tokens/{token_id}/rotate"),
            intruder.as_deref(),
            None,
        ),
    )
    .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);

    // The summary and the page.
    let summary = send(
        router,
        area_request(Method::GET, "/api/account", Some(&cookie), None),
    )
    .await;
    let data = summary.json()["data"].clone();
    assert_eq!(data["email"], "owner@example.com");
    assert_eq!(data["plan_in_force"], "premium");
    assert_eq!(data["monthly_budget_units"], 10_000);
    assert_eq!(
        data["month"]["used"], 2,
        "the two chain calls that were admitted"
    );
    let page = send(router, area_request(Method::GET, "/account", None, None)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let html = answer_text(&page);
    // The sign-in form exists and its submit handler posts email and password to the login
    // route; the token list, creation, rotation and revocation the page calls are the routes
    // the account area serves (each is called below as the page would, with this session).
    assert!(html.contains("<form id=\"login-form\">"), "{html}");
    assert!(html.contains("id=\"email\"") && html.contains("id=\"password\""));
    let submit = html
        .split("$(\"login-form\").addEventListener(\"submit\"")
        .nth(1)
        .and_then(|rest| rest.split("});").next())
        .expect("a submit handler on the login form");
    assert!(
        submit.contains("call(\"POST\", \"/api/account/login\""),
        "{submit}"
    );
    let calls = page_calls(&html);
    for expected in [
        ("POST", "/api/account/login"),
        ("GET", "/api/account/api-tokens"),
        ("POST", "/api/account/api-tokens"),
        ("POST", "/api/account/api-tokens/{id}/rotate"),
        ("POST", "/api/account/api-tokens/{id}/revoke"),
    ] {
        assert!(
            calls
                .iter()
                .any(|(m, p)| (m.as_str(), p.as_str()) == expected),
            "the page calls {expected:?}: {calls:?}"
        );
    }
    // Each of them, in the order the page makes them, with a session of its own.
    let order = [
        ("POST", "/api/account/login"),
        ("GET", "/api/account"),
        ("GET", "/api/account/api-tokens"),
        ("POST", "/api/account/api-tokens"),
        ("POST", "/api/account/api-tokens/{id}/rotate"),
        ("POST", "/api/account/api-tokens/{id}/revoke"),
        ("POST", "/api/account/logout"),
    ];
    let (_, page_session) = login(router, "owner@example.com", "s3cure-passw0rd").await;
    let page_session = page_session.expect("a session for the page's calls");
    let mut made_id = None;
    for (method, path) in &calls {
        assert!(
            order.contains(&(method.as_str(), path.as_str())),
            "the page calls {method} {path}, which this test does not exercise"
        );
    }
    for (method, template) in order {
        let path = match made_id.as_deref() {
            Some(id) => template.replace("{id}", id),
            None => template.to_owned(),
        };
        let body = match template {
            "/api/account/login" => Some(
                serde_json::json!({"email": "owner@example.com", "password": "s3cure-passw0rd"}),
            ),
            "/api/account/api-tokens" if method == "POST" => {
                Some(serde_json::json!({"name": "from the page", "expires_in_days": 7}))
            }
            _ => None,
        };
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let answer = send(
            router,
            area_request(method.clone(), &path, Some(&page_session), body),
        )
        .await;
        assert!(
            answer.status.is_success(),
            "{method} {path}: {} {}",
            answer.status,
            answer_text(&answer)
        );
        if template == "/api/account/api-tokens" && method == Method::POST {
            made_id = Some(answer.json()["data"]["id"].as_str().unwrap().to_owned());
        }
    }

    // Bad input is a 400 that says why.
    let bad = send(
        router,
        area_request(
            Method::POST,
            "/api/account/api-tokens",
            Some(&cookie),
            Some(serde_json::json!({"expires_in_days": 99_999})),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.json()["error"]
            .as_str()
            .unwrap()
            .contains("expires_in_days")
    );

    // Logout ends the session.
    let out = send(
        router,
        area_request(Method::POST, "/api/account/logout", Some(&cookie), None),
    )
    .await;
    assert_eq!(out.status, StatusCode::OK);
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
    let after = send(
        router,
        area_request(Method::GET, "/api/account", Some(&cookie), None),
    )
    .await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    let _ = id;
}

#[tokio::test]
async fn sessions_expire() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    account_with_password(&fx, "s@example.com", Plan::Basic, "session-password").await;
    let (_, cookie) = login(&fx.router, "s@example.com", "session-password").await;
    let cookie = cookie.unwrap();
    let ok = send(
        &fx.router,
        area_request(Method::GET, "/api/account", Some(&cookie), None),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK);
    fx.clock.advance(TimeDelta::hours(12));
    let late = send(
        &fx.router,
        area_request(Method::GET, "/api/account", Some(&cookie), None),
    )
    .await;
    assert_eq!(late.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn secrets_stay_out_of_debug_output_and_the_database() {
    let (fx, dir) = sqlite_fixture(UNLIMITED);
    let id =
        account_with_password(&fx, "quiet@example.com", Plan::Pro, "very-secret-password").await;
    let issued = token(&fx, id, None).await;
    let secret_part = &issued.token.expose()[9..];
    for shown in [
        format!("{issued:?}"),
        format!("{:?}", fx.access),
        format!(
            "{:?}",
            fx.access
                .store()
                .credentials("quiet@example.com")
                .await
                .unwrap()
        ),
        format!(
            "{:?}",
            Password::new("very-secret-password".into()).unwrap()
        ),
    ] {
        assert!(!shown.contains(secret_part), "{shown}");
        assert!(!shown.contains("very-secret-password"), "{shown}");
        assert!(!shown.contains("$argon2id$"), "{shown}");
    }
    // The database file holds the token's digest, never the token.
    drop(fx);
    let bytes = std::fs::read(dir.0.join("accounts.sqlite3")).unwrap();
    let wal = std::fs::read(dir.0.join("accounts.sqlite3-wal")).unwrap_or_default();
    let contains =
        |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    for haystack in [&bytes, &wal] {
        assert!(!contains(haystack, secret_part.as_bytes()));
    }
    let digest = issued.token.hash().0;
    assert!(
        contains(&bytes, &digest) || contains(&wal, &digest),
        "the digest is what is stored"
    );
}

#[tokio::test]
async fn operators_manage_accounts_and_tokens_from_the_cli_functions() {
    let (store, dir) = sqlite_store();
    let clock = Arc::new(optics_compute::time::ManualClock::new(start_instant()));
    let ctx = AdminContext::new(store.clone(), hasher(), clock.clone());
    let mut out = Vec::new();
    let mut stdin = std::io::Cursor::new(b"operator-chosen-pw\n".to_vec());
    run_accounts(
        &ctx,
        AccountsCommand::Create {
            email: "Ops@Example.com".into(),
            plan: Plan::Trial,
            until: chrono::NaiveDate::from_ymd_opt(2026, 11, 30),
            monthly_budget: Some(500),
            password_stdin: true,
        },
        &mut stdin,
        &mut out,
    )
    .await
    .unwrap();
    let printed = String::from_utf8(out.clone()).unwrap();
    assert!(
        printed.contains("ops@example.com") && printed.contains("plan=trial"),
        "{printed}"
    );
    assert!(!printed.contains("operator-chosen-pw"));
    let account = store
        .account_by_email("ops@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        account.plan_expires_at,
        Some(Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap())
    );
    assert_eq!(account.monthly_budget_units, Some(500));
    let credentials = store.credentials("ops@example.com").await.unwrap().unwrap();
    assert!(hasher().verify_blocking(
        &Password::new("operator-chosen-pw".into()).unwrap(),
        &credentials.password_hash
    ));

    out.clear();
    run_accounts(
        &ctx,
        AccountsCommand::SetPlan {
            email: "ops@example.com".into(),
            plan: Plan::Pro,
            until: None,
        },
        &mut std::io::empty(),
        &mut out,
    )
    .await
    .unwrap();
    assert_eq!(
        store.account(account.id).await.unwrap().unwrap().plan,
        Plan::Pro
    );

    out.clear();
    run_tokens(
        &ctx,
        TokensCommand::Create {
            email: "ops@example.com".into(),
            name: Some("ci".into()),
            expires_in_days: Some(0),
        },
        &mut out,
    )
    .await
    .unwrap();
    let printed = String::from_utf8(out.clone()).unwrap();
    let secret = printed
        .lines()
        .find_map(|l| l.strip_prefix("token (shown once): "))
        .unwrap()
        .to_owned();
    let listed = store.list_tokens(account.id).await.unwrap();
    assert_eq!(listed.len(), 1);
    // The printed token is what the store knows by digest: its SHA-256, computed here with
    // the sha2 crate directly; a token one character off has another digest; the digest is
    // not the secret.
    let digest = ApiToken::parse(&secret).unwrap().hash();
    let independent: [u8; 32] = sha2::Sha256::digest(secret.as_bytes()).into();
    assert_eq!(digest.0, independent);
    let one_off = with_char_changed(&secret, secret.len() - 1);
    assert_ne!(
        optics_api::auth::TokenHash::of(one_off.as_bytes()).0,
        digest.0
    );
    assert_ne!(&digest.0[..], &secret.as_bytes()[..32]);
    let grant = store.token_grant(&digest).await.unwrap().unwrap();
    assert_eq!(grant.token_id, listed[0].id);
    assert!(grant.hash.ct_eq(&digest));

    out.clear();
    run_tokens(
        &ctx,
        TokensCommand::List {
            email: "ops@example.com".into(),
        },
        &mut out,
    )
    .await
    .unwrap();
    let printed = String::from_utf8(out.clone()).unwrap();
    assert!(
        printed.contains(&listed[0].id) && !printed.contains(&secret),
        "{printed}"
    );

    out.clear();
    run_tokens(
        &ctx,
        TokensCommand::Revoke {
            id: listed[0].id.clone(),
        },
        &mut out,
    )
    .await
    .unwrap();
    assert!(String::from_utf8(out.clone()).unwrap().contains("revoked"));

    out.clear();
    run_accounts(&ctx, AccountsCommand::List, &mut std::io::empty(), &mut out)
        .await
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);

    let missing = admin::set_plan(&ctx, "ghost@example.com", Plan::Pro, None).await;
    assert!(matches!(missing, Err(AccountError::AccountNotFound)));
    let duplicate = admin::create_account(
        &ctx,
        "ops@example.com",
        Password::new("another-password".into()).unwrap(),
        Plan::Basic,
        None,
        None,
    )
    .await;
    assert!(matches!(duplicate, Err(AccountError::EmailTaken)));
    drop(dir);
}

#[tokio::test]
async fn the_first_start_bootstrap_writes_a_working_private_token_once() {
    let (fx, dir) = sqlite_fixture(UNLIMITED);
    let ctx = AdminContext::new(fx.access.store().clone(), hasher(), fx.clock.clone());
    let token_path = dir.0.join("data").join("api-token");
    let made = admin::bootstrap_local_account(&ctx, &token_path)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.token_path, token_path);
    let text = std::fs::read_to_string(&token_path).unwrap();
    let token = text.trim();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for path in [&token_path, &made.password_path] {
            assert_eq!(
                std::fs::metadata(path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }
    assert!(made.password_path.ends_with(LOCAL_PASSWORD_FILE));
    // The token opens a Pro endpoint.
    let cores = registry::endpoint("cores").unwrap();
    let answer = send(
        &fx.router,
        data_request(cores, Some(&format!("Bearer {token}")), None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["data"]["plan"], "pro");
    // The password file logs in to the account area.
    let password_file = std::fs::read_to_string(&made.password_path).unwrap();
    let password = password_file
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .unwrap();
    let (login_answer, _) = login(&fx.router, &made.email, password).await;
    assert_eq!(login_answer.status, StatusCode::OK);
    // A second start changes nothing.
    assert!(
        admin::bootstrap_local_account(&ctx, &token_path)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(std::fs::read_to_string(&token_path).unwrap(), text);
}

#[tokio::test]
async fn the_sqlite_store_passes_the_store_checks() {
    let (store, _dir) = sqlite_store();
    store_conformance(store).await;
}

#[tokio::test]
async fn the_sqlite_store_reopens_with_its_data_and_migrations_applied_once() {
    let dir = ScratchDir::new();
    let path = dir.0.join("nested").join("accounts.sqlite3");
    let first = optics_api::accounts::SqliteStore::open(&path).unwrap();
    let fx = fixture(
        Arc::new(first),
        Arc::new(InMemoryLimiter::default()),
        Arc::new(optics_compute::time::ManualClock::new(start_instant())),
        PlanBudgets::default(),
    );
    let id = account(&fx, "persist@example.com", Plan::Basic).await;
    let issued = token(&fx, id, None).await;
    drop(fx);
    let reopened = optics_api::accounts::SqliteStore::open(&path).unwrap();
    use optics_api::accounts::AccountStore as _;
    let grant = reopened
        .token_grant(&issued.token.hash())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(grant.account_id, id);
}

#[tokio::test]
async fn the_in_memory_limiter_passes_the_limiter_checks() {
    limiter_conformance(Arc::new(InMemoryLimiter::default())).await;
}

#[tokio::test]
async fn open_store_picks_sqlite_by_default_and_rejects_unknown_urls() {
    let dir = ScratchDir::new();
    let store = optics_api::accounts::open_store(None, &dir.0)
        .await
        .unwrap();
    assert_eq!(store.backend(), "sqlite");
    assert!(
        dir.0
            .join(optics_api::accounts::DEFAULT_SQLITE_FILE)
            .exists()
    );
    let explicit = dir.0.join("elsewhere.db");
    let url = format!("sqlite://{}", explicit.display());
    assert_eq!(
        optics_api::accounts::open_store(Some(&url), &dir.0)
            .await
            .unwrap()
            .backend(),
        "sqlite"
    );
    assert!(explicit.exists());
    let bad = optics_api::accounts::open_store(Some("mysql://x"), &dir.0).await;
    assert!(matches!(bad, Err(AccountError::InvalidInput(_))), "{bad:?}");
}

#[tokio::test]
async fn the_route_gate_lets_documentation_through_and_checks_data_routes() {
    use axum::Extension;
    use optics_api::MatchedEndpoint;
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    let access = fx.access.clone();
    let mut router = axum::Router::new();
    for slug in ["docs", "chain"] {
        let spec = registry::endpoint(slug).unwrap();
        let access = access.clone();
        let guarded = axum::routing::get(|| async { "ok" })
            .layer::<_, std::convert::Infallible>(axum::middleware::from_fn(
                move |request, next| optics_api::auth::gate(access.clone(), request, next),
            ))
            .layer::<_, std::convert::Infallible>(Extension(MatchedEndpoint(spec)));
        router = router.route(&spec.full_path(), guarded);
    }
    let docs = registry::endpoint("docs").unwrap();
    let chain = registry::endpoint("chain").unwrap();
    assert_eq!(
        send(&router, data_request(docs, None, None)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        send(&router, data_request(chain, None, None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let id = account(&fx, "gate@example.com", Plan::Basic).await;
    let token = token(&fx, id, None).await;
    let answer = send(&router, data_request(chain, Some(&bearer(&token)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 999_999);
}

#[tokio::test]
async fn malformed_and_bad_checksum_tokens_are_refused_before_any_store_lookup() {
    let (store, _dir) = sqlite_store();
    let counting = Arc::new(CountingStore::new(store));
    let fx = fixture(
        counting.clone(),
        Arc::new(InMemoryLimiter::new(UNLIMITED)),
        Arc::new(optics_compute::time::ManualClock::new(start_instant())),
        PlanBudgets::default(),
    );
    let id = account(&fx, "lookups@example.com", Plan::Pro).await;
    let valid = token(&fx, id, None).await;
    let text = valid.token.expose().to_owned();
    let chain = registry::endpoint("chain").unwrap();
    let refused_unseen = [
        // No header, no scheme or no credentials.
        None,
        Some(String::new()),
        Some("Bearer".to_owned()),
        Some(format!("Basic {text}")),
        Some(text.clone()),
        // Malformed: prefix, length, alphabet (each of the right length but one).
        Some(format!("Bearer {}", text.replacen("optx_", "optz_", 1))),
        Some(format!("Bearer {}", &text[..text.len() - 1])),
        Some(format!("Bearer {text}x")),
        Some(format!("Bearer -{}{}", &text[..20], &text[21..])),
        Some(format!("Bearer {}-{}", &text[..20], &text[21..])),
        // A typo in the secret, and one in the checksum itself.
        Some(format!("Bearer {}", with_char_changed(&text, 12))),
        Some(format!(
            "Bearer {}",
            with_char_changed(&text, text.len() - 1)
        )),
    ];
    for header in &refused_unseen {
        let answer = send(&fx.router, data_request(chain, header.as_deref(), None)).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{header:?}");
        assert_eq!(counting.lookups(), 0, "looked up: {header:?}");
    }
    // Well formed with a valid checksum but unknown: exactly one lookup, then 401.
    let unknown = ApiToken::from_secret_bytes(&[77; 32]);
    let answer = send(
        &fx.router,
        data_request(chain, Some(&format!("Bearer {}", unknown.expose())), None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(counting.lookups(), 1);
    let answer = send(&fx.router, data_request(chain, Some(&bearer(&valid)), None)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(counting.lookups(), 2);
}

/// Every data endpoint of the reference records with the plan they require, copied from
/// `reference-records.json` (slug, method, path, plan) — not from our registry.
const REFERENCE_PLANS: [(&str, &str, &str, &str); 64] = [
    ("hv-regimes", "GET", "/hv-regimes/{ticker}", "premium"),
    (
        "iv-opportunities",
        "GET",
        "/iv-opportunities/{ticker}",
        "premium",
    ),
    ("iv-rank", "GET", "/iv-rank/{ticker}", "premium"),
    ("monies", "GET", "/monies/{ticker}", "pro"),
    ("skew", "GET", "/skew/{ticker}", "pro"),
    (
        "term-structure",
        "GET",
        "/term-structure/{ticker}",
        "premium",
    ),
    ("vix", "GET", "/vix", "premium"),
    (
        "volatility-cone",
        "GET",
        "/volatility-cone/{ticker}",
        "premium",
    ),
    ("vrp", "GET", "/vrp/{ticker}", "premium"),
    (
        "vrp-expirations",
        "GET",
        "/vrp/{ticker}/expirations",
        "premium",
    ),
    (
        "vrp-timeseries",
        "GET",
        "/vrp/{ticker}/timeseries",
        "premium",
    ),
    ("index", "GET", "/", "basic"),
    ("chain-at-time", "GET", "/chain-at-time/{ticker}", "pro"),
    ("chain", "GET", "/chain/{ticker}", "basic"),
    ("expirations", "GET", "/expirations/{ticker}", "basic"),
    (
        "options-by-delta",
        "GET",
        "/options-by-delta/{ticker}",
        "basic",
    ),
    ("search", "GET", "/search", "basic"),
    ("stock", "GET", "/stock/{ticker}", "basic"),
    ("charm", "GET", "/charm/{ticker}", "pro"),
    ("greeks-heatmap", "GET", "/greeks-heatmap/{ticker}", "basic"),
    (
        "third-order-greeks",
        "GET",
        "/third-order-greeks/{ticker}",
        "pro",
    ),
    ("cross-index-gex", "GET", "/cross-index-gex", "premium"),
    ("gex", "GET", "/gex/{ticker}", "premium"),
    (
        "greeks-exposure",
        "GET",
        "/greeks-exposure/{ticker}",
        "premium",
    ),
    ("max-pain", "GET", "/max-pain/{ticker}", "basic"),
    ("volume-profile", "GET", "/volume-profile/{ticker}", "basic"),
    ("zero-dte", "GET", "/zero-dte/{ticker}", "pro"),
    ("flow", "GET", "/flow/{ticker}", "premium"),
    ("smart-money", "GET", "/smart-money/{ticker}", "premium"),
    (
        "earnings-history",
        "GET",
        "/earnings-history/{ticker}",
        "pro",
    ),
    (
        "earnings-verdict",
        "GET",
        "/earnings-verdict/{ticker}",
        "pro",
    ),
    ("expected-move", "GET", "/expected-move/{ticker}", "premium"),
    (
        "expected-vs-actual",
        "GET",
        "/expected-vs-actual/{ticker}",
        "pro",
    ),
    (
        "historical-moves",
        "GET",
        "/historical-moves/{ticker}",
        "pro",
    ),
    ("iv-crush", "GET", "/iv-crush/{ticker}", "pro"),
    (
        "mispricing-assessment",
        "GET",
        "/mispricing-assessment/{ticker}",
        "pro",
    ),
    (
        "post-earnings-drift",
        "GET",
        "/post-earnings-drift/{ticker}",
        "pro",
    ),
    ("analyze-strategy", "POST", "/analyze-strategy", "basic"),
    ("build-strategy", "POST", "/build-strategy", "basic"),
    ("optimize-strategy", "POST", "/optimize-strategy", "basic"),
    ("pop", "POST", "/pop", "basic"),
    ("simulate-chain", "POST", "/simulate-chain", "basic"),
    (
        "hedge-recommendations",
        "POST",
        "/hedge-recommendations",
        "pro",
    ),
    ("portfolio-greeks", "POST", "/portfolio-greeks", "pro"),
    ("scenario-analysis", "POST", "/scenario-analysis", "pro"),
    ("stress-tests", "POST", "/stress-tests", "pro"),
    ("earnings-calendar", "GET", "/earnings-calendar", "basic"),
    ("economic-calendar", "GET", "/economic-calendar", "basic"),
    ("seasonality", "GET", "/seasonality/{ticker}", "pro"),
    ("market-overview", "GET", "/market-overview", "premium"),
    ("relative-value-scan", "GET", "/relative-value-scan", "pro"),
    ("screen", "GET", "/screen", "premium"),
    ("vol-arb-scan", "GET", "/vol-arb-scan", "pro"),
    ("borrow-rate", "GET", "/borrow-rate/{ticker}", "premium"),
    ("cores", "GET", "/cores/{ticker}", "pro"),
    ("correlation", "GET", "/correlation/{ticker}", "premium"),
    (
        "correlation-compare",
        "GET",
        "/correlation/{ticker}/compare/{ticker2}",
        "premium",
    ),
    ("dividend", "GET", "/dividend/{ticker}", "premium"),
    ("price-context", "GET", "/price-context/{ticker}", "basic"),
    ("relative-value", "GET", "/relative-value/{ticker}", "pro"),
    ("iv-rank-batch", "GET", "/batch/iv-rank", "premium"),
    ("gex-batch", "GET", "/batch/gex", "premium"),
    (
        "expected-move-batch",
        "GET",
        "/batch/expected-move",
        "premium",
    ),
    ("me-usage", "GET", "/me/usage", "basic"),
];

/// Utility endpoints that the issue opens to any active plan (the records list them as basic,
/// which every active plan, trial included, reaches anyway).
const UTILITY_SLUGS: [&str; 6] = [
    "index",
    "search",
    "expirations",
    "earnings-calendar",
    "economic-calendar",
    "me-usage",
];

#[test]
fn every_endpoint_has_the_tier_of_the_reference_records() {
    let registered: std::collections::BTreeSet<&str> =
        data_endpoints().iter().map(|spec| spec.slug).collect();
    let referenced: std::collections::BTreeSet<&str> =
        REFERENCE_PLANS.iter().map(|(slug, ..)| *slug).collect();
    assert_eq!(
        registered, referenced,
        "the registry has exactly the reference endpoints"
    );
    for (slug, method, path, plan) in REFERENCE_PLANS {
        let spec = registry::endpoint(slug).unwrap();
        assert_eq!(spec.method.as_str(), method, "{slug}");
        assert_eq!(spec.path, path, "{slug}");
        let expected = if UTILITY_SLUGS.contains(&slug) {
            Tier::Any
        } else {
            match plan {
                "basic" => Tier::Basic,
                "premium" => Tier::Premium,
                "pro" => Tier::Pro,
                other => panic!("{slug}: plan {other} in the records"),
            }
        };
        assert_eq!(spec.tier, expected, "{slug}");
        // Whatever the tier label, who may call it is the records' plan ranking.
        for plan_held in Plan::ALL {
            let by_records = match (plan_held, plan) {
                (Plan::None, _) => false,
                (_, "basic") => true,
                (Plan::Premium | Plan::Pro, "premium") => true,
                (Plan::Pro, "pro") => true,
                _ => false,
            };
            assert_eq!(
                plan_held.grants(spec.tier),
                by_records,
                "{plan_held} on {slug}"
            );
        }
    }
}

/// The production service over the in-memory limiter with `limits`.
fn service(limits: RateLimits, market_clock: Arc<dyn Clock>) -> (Service, ScratchDir) {
    service_with(Arc::new(InMemoryLimiter::new(limits)), market_clock)
}

#[tokio::test]
async fn the_production_router_meters_real_answers_cached_hits_and_handler_errors() {
    let (svc, _dir) = service(RateLimits::default(), fixed_market_clock());
    let id = account(&svc.fx, "wired@example.com", Plan::Pro).await;
    let token = bearer(&token(&svc.fx, id, None).await);

    let first = get_as(&svc, "/api/mcp/data/chain/SPY", &token).await;
    assert_eq!(first.status, StatusCode::OK, "{}", answer_text(&first));
    let body = first.json();
    assert_eq!(body["success"], true);
    assert_eq!(body["data"]["ticker"], "SPY");
    assert!(
        !body["data"]["chains"].as_object().unwrap().is_empty(),
        "{body}"
    );
    assert_eq!(quota_headers(&first), [60, 59, 1_000, 999, 9_999]);
    let reads_after_first = svc.market.chain_reads.load(Ordering::SeqCst);
    assert!(reads_after_first > 0);

    // The same request again: answered from the response cache (no chain read). It counts in
    // the minute and the hour but spends no budget: no upstream data were read.
    let second = again_from_the_cache(
        &svc,
        "/api/mcp/data/chain/SPY",
        &token,
        &first,
        reads_after_first,
    )
    .await;
    assert_eq!(quota_headers(&second), [60, 58, 1_000, 998, 9_999]);

    // A handler error (a ticker outside the coverage): the envelope, and the quota headers;
    // the minute and hour count it, the budget does not.
    let missing = get_as(&svc, "/api/mcp/data/chain/NOPE", &token).await;
    assert_eq!(
        missing.status,
        StatusCode::NOT_FOUND,
        "{}",
        answer_text(&missing)
    );
    assert_eq!(missing.json()["success"], false);
    assert_eq!(quota_headers(&missing), [60, 57, 1_000, 997, 9_999]);

    // A POST handler's 400 carries them too, and spends nothing either.
    let answer = send(
        &svc.router,
        post_json("/api/mcp/data/pop", &token, "{\"legs\": 5}"),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::BAD_REQUEST,
        "{}",
        answer_text(&answer)
    );
    assert_eq!(quota_headers(&answer), [60, 56, 1_000, 996, 9_999]);

    // The usage report agrees with the headers: five requests in the minute, one charged chain.
    let usage = get_as(&svc, "/api/mcp/data/me/usage", &token).await;
    let data = &usage.json()["data"];
    assert_eq!(data["rate_limits"]["per_minute"]["used"], 5);
    assert_eq!(data["used"], 1);
    let chain_calls = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == "GET /chain/{ticker}")
        .unwrap()["calls"]
        .clone();
    assert_eq!(chain_calls, 1);
    assert!(
        data["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["endpoint"] != "POST /pop"),
        "the refused body is not a charged call: {data}"
    );
}

#[tokio::test]
async fn the_budget_is_spent_only_by_fresh_successes_on_the_in_memory_limiter() {
    only_fresh_successes_spend_the_budget(Arc::new(InMemoryLimiter::new(RateLimits::default())))
        .await;
}

#[tokio::test]
async fn the_budget_check_still_refuses_before_the_handler_when_the_month_is_spent() {
    // Budget 2: a fresh chain spends 1, errors and cached answers spend nothing, so the budget
    // refuses only once two fresh successes have been made; then even a request that would have
    // been an error is refused (the check comes before the handler).
    let (store, _dir) = sqlite_store();
    let fx = fixture(
        store,
        Arc::new(InMemoryLimiter::new(RateLimits::default())),
        Arc::new(optics_compute::time::ManualClock::new(start_instant())),
        PlanBudgets {
            pro: 2,
            ..PlanBudgets::default()
        },
    );
    let state = optics_api::AppState::new(fixed_market_clock())
        .with_market_data(Arc::new(chain_support::MemoryMarket::spy()));
    let router = optics_api::auth::service_router(state, fx.access.clone());
    let id = account(&fx, "two-units@example.com", Plan::Pro).await;
    let token = bearer(&token(&fx, id, None).await);
    for _ in 0..3 {
        let missing = send(&router, get_path("/api/mcp/data/chain/NOPE", Some(&token))).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert_eq!(missing.header_u64("x-monthly-budget-remaining"), 2);
    }
    for remaining in [1, 0] {
        let fresh = send(&router, get_path("/api/mcp/data/chain/SPY", Some(&token))).await;
        assert_eq!(fresh.status, StatusCode::OK);
        assert_eq!(fresh.header_u64("x-monthly-budget-remaining"), remaining);
    }
    for path in ["/api/mcp/data/chain/SPY", "/api/mcp/data/chain/NOPE"] {
        let refused = send(&router, get_path(path, Some(&token))).await;
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{path}");
        assert_eq!(refused.json()["budget_exceeded"], true, "{path}");
        assert_eq!(refused.header_u64("x-monthly-budget-remaining"), 0);
    }
}

#[tokio::test]
async fn the_account_area_is_observed_like_every_other_route() {
    // The account routes sit inside the request span, the metrics and the panic guard: a
    // login is counted under its route template.
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let state = optics_api::AppState::new(fixed_market_clock())
        .with_market_data(Arc::new(chain_support::MemoryMarket::spy()));
    let router = optics_api::auth::service_router(state, fx.access.clone());
    let (answer, _) = login(&router, "nobody@example.com", "not-the-password").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let metrics = send(&router, get_path("/metrics", None)).await;
    let text = String::from_utf8(metrics.body.clone()).unwrap();
    assert!(
        text.contains(
            r#"optics_http_requests_total{method="POST",route="/api/account/login",status="401"} 1"#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_plain_text_error_keeps_its_quota_headers_when_it_is_enveloped() {
    // A handler that answers with axum's plain text (as an extractor rejection does): the
    // observe layer rewrites it into the envelope, and the gate's five quota headers stay.
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let id = account(&fx, "plain@example.com", Plan::Pro).await;
    let token = bearer(&token(&fx, id, None).await);
    let access = fx.access.clone();
    let state =
        optics_api::AppState::new(fixed_market_clock()).with_gate(optics_api::RouteGate::new(
            move |request, next| optics_api::auth::gate(access.clone(), request, next),
        ));
    let plain =
        axum::routing::get(|| async { (StatusCode::BAD_REQUEST, "strikes must be listed") });
    let router = optics_api::router_with(state, vec![(optics_api::Endpoint::Chain, plain)]);
    let answer = send(&router, get_path("/api/mcp/data/chain/SPY", Some(&token))).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.json(),
        serde_json::json!({"success": false, "error": "strikes must be listed"})
    );
    assert!(
        answer
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    // One request made; a 400 spends no budget.
    assert_eq!(quota_headers(&answer), [60, 59, 1_000, 999, 10_000]);
}

#[tokio::test]
async fn a_request_whose_handler_panics_gives_its_reserved_units_back() {
    let limiter = Arc::new(InMemoryLimiter::new(RateLimits::default()));
    let (store, _dir) = sqlite_store();
    let fx = fixture(
        store,
        limiter.clone(),
        Arc::new(optics_compute::time::ManualClock::new(start_instant())),
        PlanBudgets::default(),
    );
    let id = account(&fx, "panic@example.com", Plan::Pro).await;
    let issued = token(&fx, id, None).await;
    let access = fx.access.clone();
    let state =
        optics_api::AppState::new(fixed_market_clock()).with_gate(optics_api::RouteGate::new(
            move |request, next| optics_api::auth::gate(access.clone(), request, next),
        ));
    async fn panicking() -> &'static str {
        panic!("a handler bug")
    }
    let router = optics_api::router_with(
        state,
        vec![(optics_api::Endpoint::Chain, axum::routing::get(panicking))],
    );
    let answer = send(
        &router,
        get_path("/api/mcp/data/chain/SPY", Some(&bearer(&issued))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    // The unsettled reservation releases its unit on the runtime: let that task run.
    let mut used = u64::MAX;
    for _ in 0..100 {
        tokio::task::yield_now().await;
        let report = limiter
            .usage(&issued.info.id, id, 10_000, fx.clock.now())
            .await
            .unwrap();
        assert_eq!(report.quota.minute.used, 1, "the request was counted");
        used = report.quota.month.used;
        if used == 0 {
            break;
        }
    }
    assert_eq!(used, 0, "the chain's unit was given back");
}

#[tokio::test]
async fn the_production_router_answers_the_whole_401_matrix_on_real_endpoints() {
    let (svc, _dir) = service(UNLIMITED, fixed_market_clock());
    let fx = &svc.fx;
    let account = account(fx, "matrix-wired@example.com", Plan::Pro).await;
    let valid = token(fx, account, None).await;
    let expired = token_at(fx, account, Some(1), fx.clock.now() - TimeDelta::days(2)).await;
    let revoked = token(fx, account, None).await;
    fx.access
        .store()
        .revoke_token(Some(account), &revoked.info.id, fx.clock.now())
        .await
        .unwrap();
    let rotated = token(fx, account, None).await;
    let rotated_new = tokens::rotate_token(
        &**fx.access.store(),
        account,
        &rotated.info.id,
        fx.clock.now(),
    )
    .await
    .unwrap();
    let text = valid.token.expose().to_owned();
    let unknown = ApiToken::from_secret_bytes(&[43; 32]);
    let cases: Vec<(&str, Option<String>)> = vec![
        ("missing", None),
        ("empty", Some(String::new())),
        ("not bearer", Some(format!("Basic {text}"))),
        ("no scheme", Some(text.clone())),
        (
            "wrong prefix",
            Some(format!("Bearer {}", text.replacen("optx_", "optz_", 1))),
        ),
        (
            "truncated",
            Some(format!("Bearer {}", &text[..text.len() - 1])),
        ),
        (
            "bad checksum",
            Some(format!("Bearer {}", with_char_changed(&text, 12))),
        ),
        ("unknown", Some(format!("Bearer {}", unknown.expose()))),
        ("expired", Some(bearer(&expired))),
        ("revoked", Some(bearer(&revoked))),
        ("rotated-old", Some(bearer(&rotated))),
    ];
    // Every data route the production router mounts, as its own index lists them (the index
    // is itself a data route: read with the valid token), plus the index's second path.
    let index = get_as(&svc, "/api/mcp/data/", &bearer(&valid)).await;
    assert_eq!(index.status, StatusCode::OK);
    let index = index.json();
    let listed = index["data"]["endpoints"].as_array().unwrap();
    assert_eq!(index["data"]["endpoint_count"], listed.len());
    let mut routes: Vec<(Method, String)> = Vec::new();
    let mut data_slugs: Vec<&str> = Vec::new();
    for entry in listed {
        let slug = entry["slug"].as_str().unwrap();
        let spec = registry::endpoint(slug).unwrap_or_else(|| panic!("{slug} in the registry"));
        assert_eq!(entry["path"], spec.full_path().as_str(), "{slug}");
        assert_eq!(entry["method"], spec.method.as_str(), "{slug}");
        if !optics_api::auth::requires_token(spec) {
            continue;
        }
        let method = match spec.method {
            registry::Method::Get => Method::GET,
            registry::Method::Post => Method::POST,
        };
        routes.push((method, concrete_path(spec)));
        data_slugs.push(slug);
    }
    routes.push((Method::GET, PREFIX.to_owned()));
    // The index lists what is mounted: every platform and data handler of the production
    // router that needs a token.
    let mut mounted: Vec<&str> = optics_api::handlers::platform::routes()
        .into_iter()
        .chain(optics_api::handlers::data_routes())
        .map(|(endpoint, _)| endpoint.slug())
        .filter(|slug| registry::endpoint(slug).is_some_and(optics_api::auth::requires_token))
        .collect();
    mounted.sort_unstable();
    data_slugs.sort_unstable();
    assert_eq!(data_slugs, mounted);
    assert!(data_slugs.contains(&"pop") && data_slugs.contains(&"index"));
    let request = |method: &Method, path: &str, header: Option<&str>| {
        let mut builder = axum::http::Request::builder()
            .method(method.clone())
            .uri(path);
        if let Some(value) = header {
            builder = builder.header("authorization", value);
        }
        if *method == Method::POST {
            builder
                .header("content-type", "application/json")
                .body(axum::body::Body::from("{}"))
                .unwrap()
        } else {
            builder.body(axum::body::Body::empty()).unwrap()
        }
    };
    for (method, path) in &routes {
        let path = path.as_str();
        for (case, header) in &cases {
            let answer = send(&svc.router, request(method, path, header.as_deref())).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{case} on {path}");
            assert_eq!(answer.json(), unauthorized_body(), "{case} on {path}");
            assert_eq!(
                answer.header("www-authenticate"),
                Some("Bearer"),
                "{case} on {path}"
            );
            assert!(answer.header("x-ratelimit-remaining-minute").is_none());
        }
        for good in [bearer(&valid), bearer(&rotated_new)] {
            let answer = send(&svc.router, request(method, path, Some(&good))).await;
            assert_ne!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
            // All five quota headers, whatever the handler answered.
            let [per_minute, _, per_hour, _, _] = quota_headers(&answer);
            assert_eq!(
                (per_minute, per_hour),
                (
                    u64::from(UNLIMITED.per_minute),
                    u64::from(UNLIMITED.per_hour)
                ),
                "{path}"
            );
        }
    }
    // The documentation needs no token.
    let docs = send(&svc.router, get_path("/api/mcp/data/docs", None)).await;
    assert_eq!(docs.status, StatusCode::OK);
}

#[tokio::test]
async fn the_real_clock_meters_while_the_market_clock_races() {
    // The data follow a market replaying an old day a million times faster than real time;
    // the limits follow the (manual) real clock.
    let market_start = Utc.with_ymd_and_hms(2025, 3, 3, 14, 30, 0).unwrap();
    let market: Arc<dyn Clock> =
        Arc::new(optics_compute::time::AcceleratedClock::new(market_start, 1.0e6).unwrap());
    let (svc, _dir) = service(RateLimits::default(), market.clone());
    let id = account(&svc.fx, "clocks@example.com", Plan::Basic).await;
    let issued = token(&svc.fx, id, None).await;
    assert_eq!(
        issued.info.created_at,
        start_instant(),
        "stamped in real time"
    );
    let token = bearer(&issued);
    for made in 1..=60u64 {
        let answer = get_as(&svc, "/api/mcp/data/me/usage", &token).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 60 - made);
    }
    assert!(market.now() - market_start > TimeDelta::minutes(1));
    let refused = get_as(&svc, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.header("retry-after"), Some("40"));
    // The usage report's windows are real-time windows too.
    svc.fx.clock.advance(TimeDelta::seconds(40));
    let answer = get_as(&svc, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(answer.status, StatusCode::OK);
    let minute = &answer.json()["data"]["rate_limits"]["per_minute"];
    assert_eq!(minute["used"], 1);
    assert_eq!(minute["resets_at"], "2026-11-20T14:32:00Z");
}

#[tokio::test]
async fn the_monthly_budget_survives_a_restart_of_the_store_and_the_limiter() {
    let dir = ScratchDir::new();
    let path = dir.0.join("accounts.sqlite3");
    month_survives_a_restart(async || {
        Arc::new(optics_api::accounts::SqliteStore::open(&path).unwrap())
            as Arc<dyn optics_api::accounts::AccountStore>
    })
    .await;
}

#[tokio::test]
async fn logins_against_one_email_are_throttled_before_any_hash() {
    use optics_api::accounts::throttle::{PER_EMAIL, WINDOW_SECS};
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    account_with_password(&fx, "owner@example.com", Plan::Premium, "s3cure-passw0rd").await;
    let router = &fx.router;
    for _ in 0..PER_EMAIL {
        let (wrong, _) = login(router, "owner@example.com", "guess").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    }
    // The next attempt, even with the right password, is refused until the window reopens.
    let (refused, cookie) = login(router, "Owner@Example.com", "s3cure-passw0rd").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(cookie.is_none());
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!(retry > 0 && retry <= WINDOW_SECS as u64, "{retry}");
    assert_eq!(refused.json()["success"], false);
    assert_eq!(refused.json()["retry_after_seconds"], retry);
    // Another account is not affected (no address is known in process).
    let (other, _) = login(router, "nobody@example.com", "guess").await;
    assert_eq!(other.status, StatusCode::UNAUTHORIZED);
    fx.clock.advance(chrono::TimeDelta::seconds(WINDOW_SECS));
    let (answer, _) = login(router, "owner@example.com", "s3cure-passw0rd").await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn me_usage_lists_the_unknown_paths_this_token_asked_for() {
    // A client built against a path that does not exist sees it in its own usage report; a
    // "ticker not covered" 404 of a real endpoint, an anonymous caller and another token's
    // paths are not listed.
    let (fx, _dir) = sqlite_fixture(RateLimits::default());
    let state = optics_api::AppState::new(fixed_market_clock())
        .with_market_data(Arc::new(chain_support::MemoryMarket::spy()));
    let router = optics_api::auth::service_router(state, fx.access.clone());
    let id = account(&fx, "typo@example.com", Plan::Pro).await;
    let mine = bearer(&token(&fx, id, None).await);
    let other = bearer(&token(&fx, id, None).await);
    for _ in 0..2 {
        let answer = send(&router, get_path("/api/mcp/data/chains/SPY", Some(&mine))).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
    }
    send(&router, get_path("/api/mcp/data/gexx/SPY", Some(&mine))).await;
    send(&router, get_path("/api/mcp/data/chain/NOPE", Some(&mine))).await;
    send(&router, get_path("/api/mcp/data/elsewhere", None)).await;
    send(&router, get_path("/api/mcp/data/theirs", Some(&other))).await;
    let usage = send(&router, get_path("/api/mcp/data/me/usage", Some(&mine))).await;
    assert_eq!(usage.status, StatusCode::OK);
    let data = &usage.json()["data"];
    let paths: Vec<(String, u64)> = data["this_token"]["unknown_paths_7d"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_owned(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("/api/mcp/data/chains/SPY".to_owned(), 2),
            ("/api/mcp/data/gexx/SPY".to_owned(), 1)
        ]
    );
    assert_eq!(data["tokens_active"], 2);
}

#[tokio::test]
async fn token_issues_are_limited_per_account_so_revoke_and_recreate_has_a_bound() {
    use optics_api::accounts::throttle::{TOKEN_ISSUES, TOKEN_WINDOW_SECS};
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    account_with_password(&fx, "churn@example.com", Plan::Pro, "s3cure-passw0rd").await;
    let router = &fx.router;
    let (_, cookie) = login(router, "churn@example.com", "s3cure-passw0rd").await;
    let cookie = cookie.unwrap();
    let create = || {
        area_request(
            Method::POST,
            "/api/account/api-tokens",
            Some(&cookie),
            Some(serde_json::json!({"name": "churn"})),
        )
    };
    for _ in 0..TOKEN_ISSUES {
        let created = send(router, create()).await;
        assert_eq!(created.status, StatusCode::CREATED);
        let id = created.json()["data"]["id"].as_str().unwrap().to_owned();
        let revoked = send(
            router,
            area_request(
                Method::POST,
                &format!("/api/account/api-tokens/{id}/revoke"),
                Some(&cookie),
                None,
            ),
        )
        .await;
        assert_eq!(revoked.status, StatusCode::OK);
    }
    let refused = send(router, create()).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.header("retry-after").is_some());
    fx.clock
        .advance(chrono::TimeDelta::seconds(TOKEN_WINDOW_SECS));
    let (_, cookie) = login(router, "churn@example.com", "s3cure-passw0rd").await;
    let again = send(
        router,
        area_request(
            Method::POST,
            "/api/account/api-tokens",
            Some(&cookie.unwrap()),
            Some(serde_json::json!({"name": "later"})),
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_account_database_answers_503_and_reads_go_on() {
    let (fx, dir) = sqlite_fixture(UNLIMITED);
    let id = account_with_password(&fx, "locked@example.com", Plan::Pro, "s3cure-passw0rd").await;
    let issued = token(&fx, id, None).await;
    // Another process (an operator's sqlite3 shell, a stuck CLI) holds the write lock.
    let holder = rusqlite::Connection::open(dir.0.join("accounts.sqlite3")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    // A data request only reads its token (WAL): it is answered as before.
    let usage = registry::endpoint("me-usage").unwrap();
    let answer = send(
        &fx.router,
        data_request(usage, Some(&bearer(&issued)), None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.json());
    // A login writes its session: after the busy timeout, a 503 that says to retry, not a 500.
    let (refused, cookie) = login(&fx.router, "locked@example.com", "s3cure-passw0rd").await;
    assert_retry_later(&refused, "account database is busy");
    assert!(cookie.is_none());

    holder.execute_batch("COMMIT").unwrap();
    let (answer, cookie) = login(&fx.router, "locked@example.com", "s3cure-passw0rd").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(cookie.is_some());
}

/// The dashboard's token: asked for with the session only, one per account (asking again
/// rotates it, so the previous secret stops working at once), a day long, metered like any
/// token on the data API.
#[tokio::test]
async fn the_dashboard_token_is_one_per_account_and_rotates() {
    let (fx, _dir) = sqlite_fixture(UNLIMITED);
    account_with_password(&fx, "trader@example.com", Plan::Pro, "s3cure-passw0rd").await;
    let router = &fx.router;
    let ask = |cookie: Option<String>| async move {
        send(
            router,
            area_request(
                Method::POST,
                "/api/account/dashboard-token",
                cookie.as_deref(),
                None,
            ),
        )
        .await
    };
    assert_eq!(ask(None).await.status, StatusCode::UNAUTHORIZED);
    let (_, cookie) = login(router, "trader@example.com", "s3cure-passw0rd").await;
    let cookie = cookie.unwrap();

    let first = ask(Some(cookie.clone())).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.header("cache-control"), Some("no-store"));
    let first = first.json()["data"].clone();
    assert_eq!(first["name"], "dashboard");
    let expires = chrono::DateTime::parse_from_rfc3339(first["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    assert_eq!(expires, fx.clock.now() + TimeDelta::days(1));
    let first_secret = first["token"].as_str().unwrap().to_owned();
    let chain = registry::endpoint("chain").unwrap();
    let read = |secret: String| async move {
        send(
            router,
            data_request(chain, Some(&format!("Bearer {secret}")), None),
        )
        .await
        .status
    };
    assert_eq!(read(first_secret.clone()).await, StatusCode::OK);

    let second = ask(Some(cookie.clone())).await.json()["data"].clone();
    assert_eq!(second["id"], first["id"], "the same token, rotated");
    let second_secret = second["token"].as_str().unwrap().to_owned();
    assert_ne!(second_secret, first_secret);
    assert_eq!(read(first_secret).await, StatusCode::UNAUTHORIZED);
    assert_eq!(read(second_secret).await, StatusCode::OK);
    let listed = send(
        router,
        area_request(Method::GET, "/api/account/api-tokens", Some(&cookie), None),
    )
    .await
    .json()["data"]
        .clone();
    assert_eq!(listed.as_array().unwrap().len(), 1);
}
