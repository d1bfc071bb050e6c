//! The shared engines: PostgreSQL accounts (127.0.0.1:5432, trust auth, database `test`) and
//! the Redis limiter (127.0.0.1:6379). Each test works in its own PostgreSQL schema and under
//! its own Redis key prefix, and removes them at the end. These services run on the project's
//! machines; when one is unreachable the tests fail and say which.
//!
//! `OPTICS_TEST_PG_URL` and `OPTICS_TEST_REDIS_URL` override the addresses.

mod auth_support;
mod chain_support;
#[path = "auth_support/metering.rs"]
mod metering;

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
async fn the_budget_is_spent_only_by_fresh_successes_on_the_redis_limiter() {
    let prefix = unique_name("optics-test");
    let limiter = redis_limiter(&prefix, RateLimits::default()).await;
    metering::only_fresh_successes_spend_the_budget(Arc::new(limiter.clone())).await;
    limiter.delete_all_keys().await.unwrap();
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

/// Sends 100 concurrent requests with one fresh token, spread round-robin over `replicas`;
/// checks exactly 60 are admitted (each remaining count 0..59 seen once) and the other 40 are
/// 429s that reopen with the minute; returns the admitted count per replica.
async fn burst_of_a_hundred(replicas: &[&Fixture], header: &str) -> Vec<u32> {
    let chain = registry::endpoint("chain").unwrap();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let router = replicas[i % replicas.len()].router.clone();
            let header = header.to_owned();
            tokio::spawn(
                async move { send(&router, data_request(chain, Some(&header), None)).await },
            )
        })
        .collect();
    let mut ok = vec![0; replicas.len()];
    let mut limited = 0;
    let mut remaining_seen = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        let answer = task.await.unwrap();
        match answer.status {
            StatusCode::OK => {
                ok[i % replicas.len()] += 1;
                remaining_seen.push(answer.header_u64("x-ratelimit-remaining-minute"));
            }
            StatusCode::TOO_MANY_REQUESTS => {
                limited += 1;
                assert_eq!(answer.header("retry-after"), Some("40"));
            }
            other => panic!(
                "unexpected {other}: {}",
                String::from_utf8_lossy(&answer.body)
            ),
        }
    }
    assert_eq!(ok.iter().sum::<u32>(), 60, "admitted per replica: {ok:?}");
    assert_eq!(limited, 40);
    remaining_seen.sort_unstable();
    assert_eq!(remaining_seen, (0..60).collect::<Vec<u64>>());
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_requests_across_two_replicas_admit_exactly_sixty() {
    let schema = PgSchema::new();
    let prefix = unique_name("optics-test");
    let [a, b] = replicas(&schema, &prefix, RateLimits::default()).await;
    let id = account(&a, "burst@example.com", Plan::Pro).await;
    let token = token(&a, id, None).await;
    let header = bearer(&token);
    burst_of_a_hundred(&[&a, &b], &header).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_requests_on_one_replica_admit_exactly_sixty() {
    let schema = PgSchema::new();
    let prefix = unique_name("optics-test");
    let [a, _] = replicas(&schema, &prefix, RateLimits::default()).await;
    let id = account(&a, "burst-one@example.com", Plan::Pro).await;
    let header = bearer(&token(&a, id, None).await);
    assert_eq!(burst_of_a_hundred(&[&a], &header).await, [60]);
    let cleanup = redis_limiter(&prefix, RateLimits::default()).await;
    cleanup.delete_all_keys().await.unwrap();
}

#[tokio::test]
async fn the_month_in_redis_outlives_the_limiter_that_counted_it() {
    use optics_api::limits::{Decision, LimitRequest};
    let prefix = unique_name("optics-test");
    let first = redis_limiter(&prefix, RateLimits::default()).await;
    let now = start_instant();
    for (endpoint, cost) in [
        ("GET /chain/{ticker}", 1),
        ("GET /screen", 2),
        ("GET /chain/{ticker}", 1),
    ] {
        let decision = first
            .acquire(LimitRequest {
                token_id: "tok_m",
                account_id: 11,
                endpoint,
                cost_units: cost,
                monthly_budget_units: 100,
                now,
            })
            .await
            .unwrap();
        assert!(matches!(decision, Decision::Admitted(_)));
    }
    drop(first);
    // A restarted replica: a new connection, the same keys.
    let second = redis_limiter(&prefix, RateLimits::default()).await;
    let later = now + TimeDelta::hours(2);
    let report = second.usage("tok_m", 11, 100, later).await.unwrap();
    assert_eq!(
        (report.quota.month.used, report.quota.month.remaining),
        (4, 96)
    );
    let calls: Vec<_> = report
        .by_endpoint
        .iter()
        .map(|e| (e.endpoint.as_str(), e.calls, e.units))
        .collect();
    assert_eq!(
        calls,
        [("GET /chain/{ticker}", 2, 2), ("GET /screen", 1, 2)]
    );
    second.delete_all_keys().await.unwrap();
}

#[tokio::test]
async fn the_in_memory_month_survives_a_restart_on_postgres() {
    let schema = PgSchema::new();
    month_survives_a_restart(async || Arc::new(schema.store().await) as Arc<dyn AccountStore>)
        .await;
}

#[tokio::test]
async fn open_store_opens_postgres_by_url() {
    let schema = PgSchema::new();
    let direct = schema.store().await;
    // The URL as `--db` takes it; `options` puts this test's schema first on the search path.
    let separator = if pg_url().contains('?') { '&' } else { '?' };
    let url = format!(
        "{}{separator}options=-c%20search_path%3D{}",
        pg_url(),
        schema.name
    );
    let dir = ScratchDir::new();
    let opened = optics_api::accounts::open_store(Some(&url), &dir.0)
        .await
        .unwrap();
    assert_eq!(opened.backend(), "postgres");
    assert!(
        !dir.0
            .join(optics_api::accounts::DEFAULT_SQLITE_FILE)
            .exists(),
        "no SQLite file beside the data"
    );
    let clock = Arc::new(ManualClock::new(start_instant()));
    let fx = fixture(
        opened,
        Arc::new(optics_api::limits::InMemoryLimiter::default()),
        clock,
        PlanBudgets::default(),
    );
    account(&fx, "by-url@example.com", Plan::Basic).await;
    assert!(
        direct
            .account_by_email("by-url@example.com")
            .await
            .unwrap()
            .is_some(),
        "written to the schema the URL named"
    );
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

    let text = valid.token.expose().to_owned();
    let mut typo = text.clone().into_bytes();
    typo[12] = if typo[12] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap();
    let unknown = optics_api::auth::ApiToken::from_secret_bytes(&[61; 32]);
    let sample = ["me-usage", "chain", "gex", "cores", "pop", "stress-tests"];
    for slug in sample {
        let spec = registry::endpoint(slug).unwrap();
        for bad in [
            None,
            Some(format!("Bearer {}", &text[..text.len() - 3])),
            Some(format!("Bearer {}", text.replacen("optx_", "optq_", 1))),
            Some(format!("Bearer {typo}")),
            Some(format!("Bearer {}", unknown.expose())),
            Some(bearer(&expired)),
            Some(bearer(&revoked)),
            Some(bearer(&rotated)),
        ] {
            let answer = send(&b.router, data_request(spec, bad.as_deref(), None)).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{slug} {bad:?}");
            assert_eq!(
                answer.json(),
                serde_json::json!({"success": false, "error": "Missing or invalid API token"})
            );
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

/// A TCP relay to Redis that can be cut and restored: Redis stopping and coming back, as the
/// API replica sees it, without touching the machine's Redis.
struct Relay {
    address: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Relays `at` (a free port when `None`) to the test Redis.
    async fn start(at: Option<std::net::SocketAddr>) -> Self {
        let target = redis_url()
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let listener = tokio::net::TcpListener::bind(at.unwrap_or(([127, 0, 0, 1], 0).into()))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            // The connections live in this set: aborting the task closes every one of them.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                connections.spawn(async move {
                    if let Ok(mut redis) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut redis).await;
                    }
                });
            }
        });
        Self { address, task }
    }

    /// Redis "stops": the port closes and every relayed connection drops.
    async fn cut(self) -> std::net::SocketAddr {
        self.task.abort();
        let _ = self.task.await;
        self.address
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_fail_closed_while_redis_is_gone_and_recover_when_it_returns() {
    let relay = Relay::start(None).await;
    let prefix = unique_name("optics-test");
    let limiter = RedisLimiter::connect(&format!("redis://{}/", relay.address), &prefix, UNLIMITED)
        .await
        .unwrap();
    let (store, _dir) = sqlite_store();
    let clock = Arc::new(ManualClock::new(start_instant()));
    let fx = fixture(
        store,
        Arc::new(limiter.clone()),
        clock,
        PlanBudgets::default(),
    );
    let pro = account(&fx, "pro@example.com", Plan::Pro).await;
    let issued = token(&fx, pro, None).await;
    let chain = registry::endpoint("chain").unwrap();
    let ask = || {
        send(
            &fx.router,
            data_request(chain, Some(&bearer(&issued)), None),
        )
    };
    assert_eq!(ask().await.status, StatusCode::OK);

    let address = relay.cut().await;
    let refused = ask().await;
    assert_retry_later(&refused, "rate limiter cannot be reached");

    // Redis is back on the same address: the limiter reconnects and admits again.
    let relay = Relay::start(Some(address)).await;
    let mut status = StatusCode::SERVICE_UNAVAILABLE;
    for _ in 0..50 {
        status = ask().await.status;
        if status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(status, StatusCode::OK, "the limiter did not come back");
    limiter.delete_all_keys().await.unwrap();
    relay.cut().await;
}
