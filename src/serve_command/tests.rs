//! The API wiring of `optics serve` and `optics run`, served on port 0 and called over HTTP:
//! which clock meters, the `--plan-budgets` flag, the month written behind to the account store
//! and read back at start, the Redis limiter by URL.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use clap::Parser;
use optics_api::accounts::AccountStore;
use optics_api::accounts::admin::LOCAL_TOKEN_FILE;
use optics_api::limits::{Limiter as _, PlanBudgets, RateLimits, RedisLimiter};
use optics_compute::time::{AcceleratedClock, ManualClock};
use optics_pipeline::store::SnapshotStore;

use super::*;
use crate::run_command::announce_token;

/// The API flags alone, as `optics serve` and `optics run` parse them.
#[derive(Debug, Parser)]
struct ApiCli {
    #[command(flatten)]
    api: ApiArgs,
}

fn api_args(extra: &[&str]) -> ApiArgs {
    let mut argv = vec!["optics"];
    argv.extend_from_slice(extra);
    ApiCli::try_parse_from(argv).unwrap().api
}

/// A scratch data directory, removed on drop.
struct DataDir(PathBuf);

impl DataDir {
    fn new(name: &str) -> Self {
        let mut random = [0u8; 4];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut random))
            .unwrap();
        let dir = std::env::temp_dir().join(format!(
            "optics-serve-wiring-{name}-{}-{:08x}",
            std::process::id(),
            u32::from_le_bytes(random)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 2026-11-20 14:30:20 UTC: 40 seconds before the next minute.
fn real_start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 20).unwrap()
}

/// Serves `app(market_clock, empty market, access)` on port 0.
async fn serve(market_clock: Arc<dyn Clock>, access: &ApiAccess) -> SocketAddr {
    serve_store(
        market_clock,
        access,
        SnapshotStore::from_url("memory://").unwrap(),
    )
    .await
}

/// Serves a market holding one SPY chain of the session of [`real_start`], so that data calls
/// can answer 200 (only fresh successful answers spend the monthly budget).
async fn serve_with_spy_chain(market_clock: Arc<dyn Clock>, access: &ApiAccess) -> SocketAddr {
    use optics_compute::chain::{ChainMarket, build_chain};
    use optics_compute::pricing::PricingModel;
    use optics_pipeline::store::SnapshotKey;
    use optics_schemas::ChainRow;

    let store = SnapshotStore::from_url("memory://").unwrap();
    let as_of = real_start() - TimeDelta::minutes(1);
    let trade_date = as_of.date_naive();
    let quotes = optics_tests::fixtures::synthetic_chain("SPY", 600.0, 2, 21, 590.0, 5, 80);
    let market = ChainMarket {
        underlying: "SPY".to_owned(),
        trade_date,
        as_of,
        spot: Some(600.0),
        rate: 0.04,
        dividend_yield: 0.01,
        model: PricingModel::BlackScholesMerton,
    };
    let rows = build_chain(&quotes, &market).unwrap().rows;
    store
        .publish(
            &SnapshotKey::new("chain", trade_date, "SPY"),
            &ChainRow::to_batch(&rows).unwrap(),
            &[],
            as_of,
        )
        .await
        .unwrap();
    serve_store(market_clock, access, store).await
}

async fn serve_store(
    market_clock: Arc<dyn Clock>,
    access: &ApiAccess,
    store: SnapshotStore,
) -> SocketAddr {
    let market = Arc::new(StoreMarketData::new(store));
    market.load().await.unwrap();
    let router = app(market_clock, market, access.control.clone(), None).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    address
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: serde_json::Value,
}

impl Answer {
    fn header_u64(&self, name: &str) -> u64 {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", self.headers))
            .parse()
            .unwrap()
    }
}

/// One GET over a fresh connection (blocking I/O off the runtime's threads).
async fn get(address: SocketAddr, path: &str, token: &str) -> Answer {
    let path = path.to_owned();
    let token = token.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
             Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let mut lines = head.lines();
        let status = lines.next().unwrap().split_whitespace().nth(1).unwrap();
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        Answer {
            status: status.parse().unwrap(),
            headers,
            body: serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
        }
    })
    .await
    .unwrap()
}

/// The local account's token, made by the first-start bootstrap of `optics run`.
async fn bootstrap_token(dir: &DataDir, access: &ApiAccess) -> String {
    announce_token(&dir.0, "127.0.0.1:0", &access.control)
        .await
        .unwrap();
    std::fs::read_to_string(dir.0.join(LOCAL_TOKEN_FILE))
        .unwrap()
        .trim()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_racing_market_clock_does_not_shorten_the_real_minute_of_the_limits() {
    let dir = DataDir::new("clocks");
    let real = Arc::new(ManualClock::new(real_start()));
    // A market replaying a past day a million times faster than real time: a real
    // millisecond is over 16 market minutes.
    let market_start = Utc.with_ymd_and_hms(2025, 3, 3, 14, 30, 0).unwrap();
    let market: Arc<dyn Clock> = Arc::new(AcceleratedClock::new(market_start, 1.0e6).unwrap());
    let access = access_control(&api_args(&[]).access, &dir.0, real.clone())
        .await
        .unwrap();
    let token = bootstrap_token(&dir, &access).await;
    // The token is stamped in real time, not in the replayed day.
    let account = access
        .control
        .store()
        .account_by_email(optics_api::accounts::admin::LOCAL_ACCOUNT_EMAIL)
        .await
        .unwrap()
        .unwrap();
    let tokens = access
        .control
        .store()
        .list_tokens(account.id)
        .await
        .unwrap();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].created_at, real_start());
    assert_eq!(
        tokens[0].expires_at,
        Some(real_start() + TimeDelta::days(365))
    );

    let address = serve(market.clone(), &access).await;
    for made in 1..=60u64 {
        let answer = get(address, "/api/mcp/data/me/usage", &token).await;
        assert_eq!(answer.status, 200, "{:?}", answer.body);
        assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 60 - made);
    }
    assert!(
        market.now() - market_start > TimeDelta::minutes(2),
        "the market clock ran on meanwhile"
    );
    let refused = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(refused.status, 429, "{:?}", refused.body);
    // Retry-After counts real seconds: 40 to the next real minute.
    assert_eq!(
        refused.headers.get("retry-after").map(String::as_str),
        Some("40")
    );
    real.advance(TimeDelta::seconds(40));
    let answer = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header_u64("x-ratelimit-remaining-minute"), 59);
    assert_eq!(answer.header_u64("x-ratelimit-remaining-hour"), 1_000 - 61);
    access.shutdown().await.unwrap();
}

#[test]
fn the_session_cookie_is_secure_behind_https_or_when_asked() {
    let secure = |args: &[&str]| api_args(args).access.access_config().sessions.secure_cookie;
    assert!(!secure(&[]), "plain HTTP on localhost by default");
    assert!(secure(&["--public-url", "https://options.example.com"]));
    assert!(!secure(&["--public-url", "http://10.0.0.5:8080"]));
    assert!(secure(&["--secure-cookie", "true"]));
    assert!(!secure(&[
        "--public-url",
        "https://options.example.com",
        "--secure-cookie",
        "false"
    ]));
}

#[test]
fn shared_accounts_with_limits_in_this_process_are_refused_unless_allowed() {
    let db = Some("postgres://optics@127.0.0.1/test");
    let error = api_args(&[])
        .access
        .limiter
        .check_shared(db)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("--limiter") && error.contains("--allow-local-limits"),
        "{error}"
    );
    assert!(
        api_args(&["--allow-local-limits"])
            .access
            .limiter
            .check_shared(db)
            .is_ok()
    );
    assert!(
        api_args(&["--limiter", "redis://127.0.0.1:6379"])
            .access
            .limiter
            .check_shared(db)
            .is_ok()
    );
    // SQLite accounts are one process's: its own limits are the right ones.
    assert!(api_args(&[]).access.limiter.check_shared(None).is_ok());
    assert!(
        api_args(&[])
            .access
            .limiter
            .check_shared(Some("sqlite:///tmp/a.sqlite3"))
            .is_ok()
    );
}

#[test]
fn the_plan_budgets_flag_is_parsed_and_a_bad_value_is_refused() {
    assert_eq!(
        api_args(&[]).access.access_config().budgets,
        PlanBudgets::default()
    );
    let args = api_args(&["--plan-budgets", "basic=100,premium=200,pro=300,trial=40"]);
    assert_eq!(
        args.access.access_config().budgets,
        PlanBudgets {
            trial: 40,
            basic: 100,
            premium: 200,
            pro: 300
        }
    );
    for (bad, says) in [
        ("pro=lots", "whole number"),
        ("gold=5", "unknown plan"),
        ("pro=-1", "whole number"),
        ("pro=5,pro=6", "given twice"),
    ] {
        let error = ApiCli::try_parse_from(["optics", "--plan-budgets", bad])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--plan-budgets") && error.contains(says),
            "{bad}: {error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_plan_budget_is_the_one_metered() {
    let dir = DataDir::new("budget");
    let real = Arc::new(ManualClock::new(real_start()));
    let args = api_args(&["--plan-budgets", "pro=25,basic=7"]);
    let access = access_control(&args.access, &dir.0, real.clone())
        .await
        .unwrap();
    let token = bootstrap_token(&dir, &access).await;
    let address = serve(real.clone(), &access).await;
    // The usage report is free; the local account is Pro.
    let usage = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(usage.status, 200, "{:?}", usage.body);
    assert_eq!(usage.body["data"]["limit"], 25);
    assert_eq!(usage.header_u64("x-monthly-budget-remaining"), 25);
    // A one-unit call on the empty market answers 404: counted in the minute, but an error
    // spends no budget (only fresh successful answers do).
    let chain = get(address, "/api/mcp/data/chain/SPY", &token).await;
    assert_eq!(chain.status, 404, "{:?}", chain.body);
    assert_eq!(chain.header_u64("x-monthly-budget-remaining"), 25);
    assert_eq!(chain.header_u64("x-ratelimit-remaining-minute"), 58);
    access.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_rate_limits_are_the_ones_enforced() {
    let dir = DataDir::new("rates");
    let real = Arc::new(ManualClock::new(real_start()));
    let args = api_args(&["--rate-per-minute", "2", "--rate-per-hour", "500"]);
    let access = access_control(&args.access, &dir.0, real.clone())
        .await
        .unwrap();
    let token = bootstrap_token(&dir, &access).await;
    let address = serve(real.clone(), &access).await;
    let first = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(first.header_u64("x-ratelimit-limit-minute"), 2);
    assert_eq!(first.header_u64("x-ratelimit-limit-hour"), 500);
    assert_eq!(first.header_u64("x-ratelimit-remaining-minute"), 1);
    let second = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(second.status, 200, "{:?}", second.body);
    let third = get(address, "/api/mcp/data/me/usage", &token).await;
    assert_eq!(third.status, 429, "{:?}", third.body);
    assert_eq!(third.body["limit"], "per_minute");
    access.shutdown().await.unwrap();

    // Zero would refuse every request: not a setting.
    for flag in ["--rate-per-minute", "--rate-per-hour"] {
        assert!(
            ApiCli::try_parse_from(["optics", flag, "0"]).is_err(),
            "{flag} 0"
        );
    }
    let defaults = api_args(&[]).access.rate_limits();
    assert_eq!((defaults.per_minute, defaults.per_hour), (60, 1_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_month_is_written_behind_and_read_back_when_the_service_starts_again() {
    let dir = DataDir::new("month");
    let real = Arc::new(ManualClock::new(real_start()));
    let first = access_control(&api_args(&[]).access, &dir.0, real.clone())
        .await
        .unwrap();
    let token = bootstrap_token(&dir, &first).await;
    let address = serve_with_spy_chain(real.clone(), &first).await;
    // Only fresh successful answers are charged: three distinct chain reads spend one unit
    // each, the repeat (held answer) and the 404 of an uncovered ticker nothing.
    for (path, status) in [
        ("/api/mcp/data/chain/SPY", 200),
        ("/api/mcp/data/chain/SPY", 200),
        ("/api/mcp/data/chain/SPY?strikes_around=3", 200),
        ("/api/mcp/data/chain/SPY?strikes_around=5", 200),
        ("/api/mcp/data/chain/QQQ", 404),
    ] {
        let answer = get(address, path, &token).await;
        assert_eq!(answer.status, status, "{path}: {:?}", answer.body);
        assert!(
            answer.headers.contains_key("x-monthly-budget-remaining"),
            "{path}"
        );
    }
    let before = get(address, "/api/mcp/data/me/usage", &token).await.body["data"].clone();
    assert_eq!(before["used"], 3, "{before}");
    let store = Arc::clone(first.control.store());
    // Shutting down writes what the periodic writer has not yet.
    first.shutdown().await.unwrap();
    let stored = store.monthly_usage("2026-11").await.unwrap();
    let stored: Vec<_> = stored
        .iter()
        .map(|row| (row.endpoint.as_str(), row.calls, row.units))
        .collect();
    assert_eq!(
        stored,
        [("GET /chain/{ticker}", 3, 3), ("GET /me/usage", 1, 0)]
    );

    // A restart: a new store connection and limiter over the same data directory.
    let second = access_control(&api_args(&[]).access, &dir.0, real.clone())
        .await
        .unwrap();
    let address = serve(real.clone(), &second).await;
    let after = get(address, "/api/mcp/data/me/usage", &token).await.body["data"].clone();
    assert_eq!(after["used"], before["used"]);
    assert_eq!(after["remaining"], before["remaining"]);
    let calls = |data: &serde_json::Value| -> Vec<(String, u64)> {
        data["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["endpoint"] != "GET /me/usage")
            .map(|e| {
                (
                    e["endpoint"].as_str().unwrap().to_owned(),
                    e["calls"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(calls(&after), calls(&before));
    assert_eq!(calls(&after), [("GET /chain/{ticker}".to_owned(), 3)]);
    second.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usage_writer_writes_periodically_without_waiting_for_shutdown() {
    let dir = DataDir::new("writer");
    let store: Arc<dyn AccountStore> = optics_api::accounts::open_store(None, &dir.0)
        .await
        .unwrap();
    let limiter = Arc::new(
        InMemoryLimiter::restored(RateLimits::default(), &*store, real_start())
            .await
            .unwrap(),
    );
    let writer = UsageWriter::spawn(
        Arc::clone(&limiter),
        Arc::clone(&store),
        Duration::from_millis(20),
    );
    let request = optics_api::limits::LimitRequest {
        token_id: "tok_x",
        account_id: 1,
        endpoint: "GET /chain/{ticker}",
        cost_units: 3,
        monthly_budget_units: 100,
        now: real_start(),
    };
    limiter.acquire(request).await.unwrap();
    let mut stored = Vec::new();
    for _ in 0..250 {
        stored = store.monthly_usage("2026-11").await.unwrap();
        if !stored.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stored.len(), 1, "written within five seconds");
    assert_eq!((stored[0].calls, stored[0].units), (1, 3));
    assert_eq!(writer.finish().await.unwrap(), 0, "nothing left to write");
    assert_eq!(store.monthly_usage("2026-11").await.unwrap()[0].calls, 1);
}

fn redis_url() -> String {
    std::env::var("OPTICS_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_limiter_is_chosen_by_url_and_its_password_is_never_printed() {
    let dir = DataDir::new("redis");
    let prefix = format!(
        "optics-test-wiring-{}-{}",
        std::process::id(),
        dir.0.file_name().unwrap().to_string_lossy()
    );
    let url = redis_url();
    let args = api_args(&["--limiter", &url, "--limiter-prefix", &prefix]);
    let real = Arc::new(ManualClock::new(real_start()));
    let access = access_control(&args.access, &dir.0, real.clone())
        .await
        .unwrap_or_else(|e| {
            panic!("Redis is required for this test at {url} (OPTICS_TEST_REDIS_URL): {e:#}")
        });
    assert!(format!("{:?}", access.control).contains("RedisLimiter"));
    let token = bootstrap_token(&dir, &access).await;
    let address = serve(real.clone(), &access).await;
    for _ in 0..3 {
        assert_eq!(
            get(address, "/api/mcp/data/chain/SPY", &token).await.status,
            404
        );
    }
    // The counts are in Redis under the prefix: a second limiter there sees them.
    let observer = RedisLimiter::connect(&url, &prefix, RateLimits::default())
        .await
        .unwrap();
    let grant = access
        .control
        .store()
        .token_grant(&optics_api::auth::ApiToken::parse(&token).unwrap().hash())
        .await
        .unwrap()
        .unwrap();
    let report = observer
        .usage(&grant.token_id, grant.account_id, 10_000, real_start())
        .await
        .unwrap();
    // Three 404s: counted in the minute, no budget spent (errors are not charged).
    assert_eq!((report.quota.minute.used, report.quota.month.used), (3, 0));
    observer.delete_all_keys().await.unwrap();
    access.shutdown().await.unwrap();

    // An unreachable Redis with a password in its URL: the error names the place, not the
    // password.
    let secret_url = "redis://:s3cret-pw@127.0.0.1:1/";
    let args = api_args(&["--limiter", secret_url]);
    let error = access_control(&args.access, &dir.0, real)
        .await
        .unwrap_err();
    let shown = format!("{error:#} / {error:?}");
    assert!(!shown.contains("s3cret-pw"), "{shown}");
    assert!(shown.contains("redis://***@127.0.0.1:1/"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_file_is_named_only_when_it_exists() {
    let dir = DataDir::new("notice");
    let real = Arc::new(ManualClock::new(real_start()));
    let access = access_control(&api_args(&[]).access, &dir.0, real)
        .await
        .unwrap();
    let path = dir.0.join(LOCAL_TOKEN_FILE);
    let path_text = path.display().to_string();
    let first = announce_token(&dir.0, "127.0.0.1:8080", &access.control)
        .await
        .unwrap();
    assert!(path.is_file());
    assert!(first.iter().any(|l| l.contains(&path_text)), "{first:?}");
    let again = announce_token(&dir.0, "127.0.0.1:8080", &access.control)
        .await
        .unwrap();
    assert!(again.iter().any(|l| l.contains(&path_text)), "{again:?}");
    std::fs::remove_file(&path).unwrap();
    let without = announce_token(&dir.0, "127.0.0.1:8080", &access.control)
        .await
        .unwrap();
    assert!(!path.exists(), "no second bootstrap once accounts exist");
    assert!(
        without.iter().all(|l| !l.contains(&path_text)),
        "{without:?}"
    );
    assert!(without.iter().any(|l| l.contains("optics tokens create")));
    access.shutdown().await.unwrap();
}

#[test]
fn the_server_bounds_are_flags_with_safe_defaults() {
    let limits = api_args(&[]).serve_limits();
    assert_eq!(limits, optics_api::serve::ServeLimits::default());
    let limits = api_args(&[
        "--max-connections",
        "64",
        "--header-timeout-secs",
        "5",
        "--request-timeout-secs",
        "12",
        "--trusted-proxies",
        "172.28.0.10,10.0.0.0/8",
    ])
    .serve_limits();
    assert_eq!(limits.max_connections, 64);
    assert_eq!(limits.header_read_timeout, Duration::from_secs(5));
    assert_eq!(limits.request_timeout, Duration::from_secs(12));
    assert_eq!(
        limits.trusted_proxies,
        vec![
            "172.28.0.10".parse().unwrap(),
            "10.0.0.0/8".parse().unwrap()
        ]
    );
    for bad in [
        ["--max-connections", "0"],
        ["--header-timeout-secs", "0"],
        ["--request-timeout-secs", "99999"],
        ["--trusted-proxies", "10.0.0.0/40"],
    ] {
        let mut argv = vec!["optics"];
        argv.extend(bad);
        assert!(ApiCli::try_parse_from(argv).is_err(), "{bad:?}");
    }
}
