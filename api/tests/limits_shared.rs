//! The shared engines: PostgreSQL accounts (127.0.0.1:5432, trust auth, database `test`) and
//! the Redis limiter (127.0.0.1:6379). Each test works in its own PostgreSQL schema and under
//! its own Redis key prefix, and removes them at the end. These services run on the project's
//! machines; when one is unreachable the tests fail and say which.
//!
//! `OPTICS_TEST_PG_URL` and `OPTICS_TEST_REDIS_URL` override the addresses.

mod auth_support;

use std::sync::Arc;

use auth_support::*;
use axum::http::StatusCode;
use chrono::TimeDelta;
use optics_api::accounts::{AccountError, AccountStore, PgStore, Plan, tokens};
use optics_api::limits::{Limiter, PlanBudgets, RateLimits, RedisLimiter};
use optics_api::registry;
use optics_compute::time::{Clock, ManualClock};

fn pg_url() -> String {
    std::env::var("OPTICS_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn redis_url() -> String {
    std::env::var("OPTICS_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

/// A schema of its own for one test; dropped when the guard goes (also after a failure).
struct PgSchema {
    name: String,
}

impl PgSchema {
    fn new() -> Self {
        Self {
            name: unique_name("optics_test"),
        }
    }

    async fn store(&self) -> PgStore {
        PgStore::connect_in_schema(&pg_url(), &self.name)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "PostgreSQL is required for this test at {} (trust auth, database `test`; \
                 set OPTICS_TEST_PG_URL to point elsewhere): {e}",
                    pg_url()
                )
            })
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Async clean-up from a synchronous drop: a small runtime on its own thread.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let store = PgStore::connect_in_schema(&pg_url(), &name).await.ok()?;
                store.drop_schema().await.ok()
            })
        })
        .join();
    }
}

async fn redis_limiter(prefix: &str, limits: RateLimits) -> RedisLimiter {
    RedisLimiter::connect(&redis_url(), prefix, limits)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "Redis is required for this test at {} (set OPTICS_TEST_REDIS_URL to point \
             elsewhere): {e}",
                redis_url()
            )
        })
}

#[tokio::test]
async fn the_postgres_store_passes_the_store_checks() {
    let schema = PgSchema::new();
    let store = schema.store().await;
    assert_eq!(store.backend(), "postgres");
    store_conformance(Arc::new(store.clone())).await;
    // Reconnecting to the same schema finds the data and applies no migration twice.
    let again = schema.store().await;
    assert_eq!(again.count_accounts().await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creations_on_two_postgres_stores_cannot_pass_the_cap() {
    let schema = PgSchema::new();
    let stores = [schema.store().await, schema.store().await];
    let clock = Arc::new(ManualClock::new(start_instant()));
    let fx = fixture(
        Arc::new(stores[0].clone()),
        Arc::new(optics_api::limits::InMemoryLimiter::default()),
        clock.clone(),
        PlanBudgets::default(),
    );
    let id = account(&fx, "race@example.com", Plan::Basic).await;
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let store: Arc<dyn AccountStore> = Arc::new(stores[i % 2].clone());
            let now = clock.now();
            tokio::spawn(async move {
                tokens::issue_token(&*store, &Default::default(), id, None, None, now).await
            })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => created += 1,
            Err(AccountError::TokenCapReached { max: 3 }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(created, 3);
}

#[tokio::test]
async fn the_redis_limiter_passes_the_limiter_checks() {
    let prefix = unique_name("optics-test");
    let limiter = redis_limiter(&prefix, RateLimits::default()).await;
    limiter_conformance(Arc::new(limiter.clone())).await;
    assert!(limiter.delete_all_keys().await.unwrap() > 0);
}

#[tokio::test]
async fn the_redis_limiter_refuses_a_bad_prefix() {
    let error = RedisLimiter::connect(&redis_url(), "a{b}", RateLimits::default()).await;
    assert!(error.is_err());
}

/// Two API replicas: each its own PostgreSQL connections and Redis connection, sharing the
/// schema and the key prefix, with one clock.
async fn replicas(schema: &PgSchema, prefix: &str, limits: RateLimits) -> [Fixture; 2] {
    let clock = Arc::new(ManualClock::new(start_instant()));
    let mut made = Vec::new();
    for _ in 0..2 {
        let limiter: Arc<dyn Limiter> = Arc::new(redis_limiter(prefix, limits).await);
        made.push(fixture(
            Arc::new(schema.store().await),
            limiter,
            clock.clone(),
            PlanBudgets::default(),
        ));
    }
    let second = made.pop().unwrap();
    [made.pop().unwrap(), second]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_requests_across_two_replicas_admit_exactly_sixty() {
    let schema = PgSchema::new();
    let prefix = unique_name("optics-test");
    let [a, b] = replicas(&schema, &prefix, RateLimits::default()).await;
    let id = account(&a, "burst@example.com", Plan::Pro).await;
    let token = token(&a, id, None).await;
    let header = bearer(&token);
    let chain = registry::endpoint("chain").unwrap();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let router = if i % 2 == 0 {
                a.router.clone()
            } else {
                b.router.clone()
            };
            let header = header.clone();
            tokio::spawn(
                async move { send(&router, data_request(chain, Some(&header), None)).await },
            )
        })
        .collect();
    let (mut ok, mut limited) = ([0; 2], [0; 2]);
    let mut remaining_seen = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        let answer = task.await.unwrap();
        match answer.status {
            StatusCode::OK => {
                ok[i % 2] += 1;
                remaining_seen.push(answer.header_u64("x-ratelimit-remaining-minute"));
            }
            StatusCode::TOO_MANY_REQUESTS => {
                limited[i % 2] += 1;
                assert_eq!(answer.header("retry-after"), Some("40"));
            }
            other => panic!(
                "unexpected {other}: {}",
                String::from_utf8_lossy(&answer.body)
            ),
        }
    }
    assert_eq!(ok[0] + ok[1], 60, "admitted per replica: {ok:?}");
    assert_eq!(limited[0] + limited[1], 40);
    remaining_seen.sort_unstable();
    assert_eq!(remaining_seen, (0..60).collect::<Vec<u64>>());
    // Both replicas agree on the account's month.
    let usage = registry::endpoint("me-usage").unwrap();
    a.clock.advance(TimeDelta::minutes(1));
    for fx in [&a, &b] {
        let answer = send(&fx.router, data_request(usage, Some(&header), None)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.json()["data"]["used"], 60);
    }
    let cleanup = redis_limiter(&prefix, RateLimits::default()).await;
    cleanup.delete_all_keys().await.unwrap();
}

#[tokio::test]
async fn bad_tokens_plans_and_rotation_on_the_shared_engines() {
    let schema = PgSchema::new();
    let prefix = unique_name("optics-test");
    let [a, b] = replicas(&schema, &prefix, UNLIMITED).await;
    let pro = account(&a, "pro@example.com", Plan::Pro).await;
    let basic = account(&a, "basic@example.com", Plan::Basic).await;
    let none = account(&a, "none@example.com", Plan::None).await;
    let valid = token(&a, pro, None).await;
    let expired = token_at(&a, pro, Some(1), a.clock.now() - TimeDelta::days(2)).await;
    let revoked = token(&a, pro, None).await;
    a.access
        .store()
        .revoke_token(Some(pro), &revoked.info.id, a.clock.now())
        .await
        .unwrap();
    let basic_token = token(&a, basic, None).await;
    let none_token = token(&a, none, None).await;
    // Rotated on replica A, refused at once on replica B.
    let rotated = token(&a, pro, None).await;
    let fresh = tokens::rotate_token(&**a.access.store(), pro, &rotated.info.id, a.clock.now())
        .await
        .unwrap();

    let sample = ["me-usage", "chain", "gex", "cores", "pop", "stress-tests"];
    for slug in sample {
        let spec = registry::endpoint(slug).unwrap();
        for bad in [
            None,
            Some(bearer(&expired)),
            Some(bearer(&revoked)),
            Some(bearer(&rotated)),
        ] {
            let answer = send(&b.router, data_request(spec, bad.as_deref(), None)).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{slug}");
        }
        for good in [bearer(&valid), bearer(&fresh)] {
            assert_eq!(
                send(&b.router, data_request(spec, Some(&good), None))
                    .await
                    .status,
                StatusCode::OK
            );
        }
        let answer = send(
            &b.router,
            data_request(spec, Some(&bearer(&basic_token)), None),
        )
        .await;
        let expected = if expected_allowed(Plan::Basic, spec.tier) {
            StatusCode::OK
        } else {
            StatusCode::FORBIDDEN
        };
        assert_eq!(answer.status, expected, "{slug}");
        let answer = send(
            &b.router,
            data_request(spec, Some(&bearer(&none_token)), None),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN);
        assert!(answer.json().get("upgrade_required").is_none());
    }
    let cleanup = redis_limiter(&prefix, RateLimits::default()).await;
    cleanup.delete_all_keys().await.unwrap();
}
