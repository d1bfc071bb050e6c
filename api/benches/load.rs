//! Load benchmark of the real router over loopback: a Rust load generator (hyper HTTP/1
//! client, keep-alive connections) against `optics_api::router` served on 127.0.0.1:0, beside
//! a bare axum route returning a static JSON body of the same bytes, in the same run.
//!
//! Two measurements per route:
//! - **fixed rate** (open loop): requests are scheduled at `RATE` per second spread over
//!   `CONNECTIONS` connections for `SECS` seconds. Two latencies: from the moment the request
//!   is sent (the server's answer time, p50/p99), and from its *scheduled* time (p99), which
//!   also counts time a request waited behind a slow one on its connection, so a server that
//!   falls behind cannot hide it (no coordinated omission). Tokio's timer wakes with
//!   millisecond granularity, so the scheduled-time figure carries up to ~1 ms of timer lag;
//! - **saturation** (closed loop): every connection sends back to back for `SECS` seconds;
//!   throughput in requests per second, and the ratio to the static route.
//!
//! `OPTICS_BENCH_RATE` (default 5000), `OPTICS_BENCH_SECS` (default 3) and
//! `OPTICS_BENCH_CONNECTIONS` (default 16) override the settings; `OPTICS_BENCH_ROUTES`, a
//! comma-separated list of words, measures only the routes whose label contains one of them
//! (`OPTICS_BENCH_ROUTES=flow`: the three `/flow/SPY` routes). Only loopback is used; the
//! run is bounded by those settings. Figures print; nothing asserts on time.
//!
//! Routes measured: the index (`/api/mcp/data/`), `/chain/SPY` (default window: the nearest
//! expiration, 20 strikes per side), `/expirations/SPY`, `/gex/SPY` in full and compact
//! (`detail=compact`, 25 strikes per side), `/flow/SPY` in full (`all_flow` every contract
//! that traded, `largest_flows` the top 50 by premium, `unusual_activity` every unusual
//! contract; the row counts print) and compact (25/10/10 rows), `/greeks-heatmap/SPY`, and
//! the volatility family (`/iv-rank`, `/batch/iv-rank` of 25 symbols — SPY and 24 aliases of
//! it —, `/iv-opportunities`, `/term-structure`, the three `/vrp` routes, `/volatility-cone`,
//! `/hv-regimes`, `/monies`, `/skew`, over 1,000 stored sessions); `/batch/iv-rank` is also
//! timed computed afresh on every request (another `lookback_days` each time), one at a time,
//! over an
//! in-memory reader holding a SPY chain built by the chain builder from synthetic quotes
//! (30 weekly expirations × 135 one-dollar strikes around 600, calls and puts: 8,100 quotes,
//! about the size of SPY's listed chain) with its exposures and flow computed as the worker
//! does. Each data route is paired with a static twin: a bare axum route returning that
//! route's exact response bytes, measured in the same run; the throughput ratio is route /
//! twin. Requests send `Accept-Encoding: gzip` (answers of 1,400 bytes and more come back
//! gzip-encoded, the encoding made once per held answer); `/flow/SPY` full is also measured
//! without it. Data routes answer from the response cache after the first request of each clock
//! second, as the store-backed reader does between snapshot swaps (`BenchMarket` has one
//! generation).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue};
use axum::routing::get;
use chrono::NaiveDate;
use chrono::TimeZone;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use optics_api::market::Coverage;
use optics_api::{AppState, router};
use optics_compute::time::ManualClock;
use tokio::net::TcpListener;

#[path = "support/loopback.rs"]
mod loopback;
#[path = "support/market.rs"]
mod market;
#[path = "support/universe.rs"]
mod universe;
use market::{BenchMarket, HISTORY_SESSIONS};
use universe::UniverseMarket;

/// Sessions of stored history per synthetic underlying of the screens benchmark.
const UNIVERSE_SESSIONS: usize = 300;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(addr: SocketAddr) -> Sender {
    loopback::connect(addr).await
}

/// A route's path and whether its requests send `Accept-Encoding: gzip`.
#[derive(Debug, Clone, Copy)]
struct Target {
    path: &'static str,
    gzip: bool,
}

/// One request; returns the body length as received (checked by the caller).
async fn request(sender: &mut Sender, target: Target) -> usize {
    request_path(sender, target.path, target.gzip).await
}

/// One request of `path`; returns the body length as received.
async fn request_path(sender: &mut Sender, path: &str, gzip: bool) -> usize {
    let mut request = Request::get(path).header("host", "127.0.0.1");
    if gzip {
        request = request.header("accept-encoding", "gzip");
    }
    let request = request.body(Empty::<Bytes>::new()).expect("request");
    loopback::send(sender, request, path).await
}

struct FixedRate {
    sent: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    max: Duration,
    p99_from_schedule: Duration,
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

async fn fixed_rate(
    addr: SocketAddr,
    target: Target,
    rate: u64,
    secs: u64,
    conns: u64,
) -> FixedRate {
    let total = rate * secs;
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let mut tasks = Vec::new();
    for c in 0..conns {
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(addr).await;
            let mut latencies = Vec::new();
            let mut i = c;
            while i < total {
                let scheduled = start + interval * u32::try_from(i).unwrap_or(u32::MAX);
                tokio::time::sleep_until(scheduled).await;
                let sent = Instant::now();
                request(&mut sender, target).await;
                latencies.push((sent.elapsed(), scheduled.elapsed()));
                i += conns;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("client task"));
    }
    let elapsed = start.elapsed();
    let mut from_send: Vec<Duration> = latencies.iter().map(|(send, _)| *send).collect();
    let mut from_schedule: Vec<Duration> = latencies.iter().map(|(_, sched)| *sched).collect();
    from_send.sort_unstable();
    from_schedule.sort_unstable();
    FixedRate {
        sent: from_send.len(),
        elapsed,
        p50: quantile(&from_send, 0.50),
        p99: quantile(&from_send, 0.99),
        max: from_send[from_send.len() - 1],
        p99_from_schedule: quantile(&from_schedule, 0.99),
    }
}

async fn saturation(addr: SocketAddr, target: Target, secs: u64, conns: u64) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(addr).await;
            let mut count = 0u64;
            while Instant::now() < deadline {
                request(&mut sender, target).await;
                count += 1;
            }
            count
        }));
    }
    let mut count = 0;
    for task in tasks {
        count += task.await.expect("client task");
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// `/batch/iv-rank` of the 25 symbols.
const BATCH_PATH: &str = "/api/mcp/data/batch/iv-rank?tickers=SPY,AAA,BBB,CCC,DDD,EEE,FFF,GGG,\
HHH,III,JJJ,KKK,LLL,MMM,NNN,OOO,PPP,QQQ,RRR,SSS,TTT,UUU,VVV,WWW,XXX";

/// `/batch/iv-rank` of 25 symbols computed afresh on every request (each asks another
/// `lookback_days`, so no answer is reused): one request at a time, the p50 and p99 of 200.
async fn batch_uncached(addr: SocketAddr) {
    let mut sender = connect(addr).await;
    let mut latencies = Vec::new();
    for lookback in 20..220 {
        let path = format!("{BATCH_PATH}&lookback_days={lookback}");
        let started = Instant::now();
        request_path(&mut sender, &path, true).await;
        latencies.push(started.elapsed());
    }
    latencies.sort_unstable();
    println!(
        "vol /batch/iv-rank (25 symbols, {HISTORY_SESSIONS} stored sessions each) computed per \
         request: p50 {:.3} ms, p99 {:.3} ms over {} requests (goal p50 <= 5 ms)",
        quantile(&latencies, 0.50).as_secs_f64() * 1e3,
        quantile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.len()
    );
}

/// The cost of one cores row (what the universe table computes per underlying whose
/// snapshots changed) with the SPY-sized chain and its 1,000 stored sessions: median of 20.
fn cores_row_cost(market: &BenchMarket) {
    let today = NaiveDate::from_ymd_opt(2026, 11, 20).expect("date");
    let coverage = Coverage::default();
    // Cut once per day and series, as the universe table keeps it.
    let history = optics_compute::cores::CoresHistory::from_rows(&market.history, today);
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let row = optics_api::market::cores::cores_row(
            &coverage,
            Some(&market.spy),
            &history,
            Some(&market.flow),
            "SPY",
            today,
        );
        std::hint::black_box(row);
        times.push(started.elapsed());
    }
    times.sort_unstable();
    println!(
        "cores row of SPY (8,100 contracts, {HISTORY_SESSIONS} stored sessions): median {:.3} ms",
        quantile(&times, 0.5).as_secs_f64() * 1e3
    );
}

/// `/screen` and `/market-overview` over a universe of `n` synthetic stocks, each request
/// computed afresh (the bench's clock moves one second per request, so the response cache never
/// answers; the universe table is built once for the reader's generation, as the binary builds
/// it after each cycle), one request at a time over loopback: p50 and p99 of 300, beside a
/// static route serving the same bytes the same way.
async fn universe_screens(n: usize) {
    let start = chrono::Utc
        .with_ymd_and_hms(2026, 11, 20, 15, 0, 0)
        .unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let built = Instant::now();
    let state = AppState::new(Arc::clone(&clock) as Arc<dyn optics_compute::time::Clock>)
        .with_market_data(Arc::new(UniverseMarket::new(n, UNIVERSE_SESSIONS)));
    let table = state.universe_table().await.expect("universe table");
    let rows = table.rows.len();
    println!(
        "universe of {n}: table of {rows} rows built in {:.1} ms (once per reader generation, \
         in the background in the binary)",
        built.elapsed().as_secs_f64() * 1e3
    );
    let app = router(state);
    for (label, path) in [
        (
            "/screen?screen_type=high_iv_rank",
            "/api/mcp/data/screen?screen_type=high_iv_rank&min_market_cap=0",
        ),
        (
            "/screen?screen_type=vol_pairs",
            "/api/mcp/data/screen?screen_type=vol_pairs&min_market_cap=0",
        ),
        ("/market-overview", "/api/mcp/data/market-overview"),
    ] {
        // The route's bytes once, for its static twin.
        let body = {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("address");
            let probe = app.clone();
            tokio::spawn(async move { axum::serve(listener, probe).await });
            let mut sender = connect(addr).await;
            let request = Request::get(path)
                .header("host", "127.0.0.1")
                .body(Empty::<Bytes>::new())
                .expect("request");
            loopback::body(&mut sender, request, path).await
        };
        let twin_body = body.clone();
        let served = app.clone().route(
            "/bench/static/universe",
            get(move || {
                let body = twin_body.clone();
                async move {
                    let mut headers = HeaderMap::new();
                    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    (headers, body)
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, served).await });
        let mut figures = Vec::new();
        for target in [path, "/bench/static/universe"] {
            let mut sender = connect(addr).await;
            let mut latencies = Vec::new();
            for i in 0..320u32 {
                // A new clock second per request: the response cache holds nothing to reuse.
                clock.set(start + chrono::TimeDelta::seconds(i64::from(i) + 1));
                let started = Instant::now();
                request_path(&mut sender, target, false).await;
                if i >= 20 {
                    latencies.push(started.elapsed());
                }
            }
            latencies.sort_unstable();
            figures.push((quantile(&latencies, 0.50), quantile(&latencies, 0.99)));
        }
        let goal = if n > 1_000 { 20.0 } else { 2.0 };
        println!(
            "  {label} ({} B): computed per request p50 {:.3} ms, p99 {:.3} ms | static twin p50 \
             {:.3} ms, p99 {:.3} ms (goal p50 <= {goal} ms)",
            body.len(),
            figures[0].0.as_secs_f64() * 1e3,
            figures[0].1.as_secs_f64() * 1e3,
            figures[1].0.as_secs_f64() * 1e3,
            figures[1].1.as_secs_f64() * 1e3,
        );
    }
}

fn main() {
    let rate = setting("OPTICS_BENCH_RATE", 5000);
    let secs = setting("OPTICS_BENCH_SECS", 3);
    let conns = setting("OPTICS_BENCH_CONNECTIONS", 16);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        // A fixed clock: the index fills its example dates from it.
        let now = chrono::Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        let clock = ManualClock::new(now);
        let app = router(AppState::new(Arc::new(clock)).with_market_data(Arc::new(BenchMarket::spy(now))));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("address");

        // Serve the router once to capture each data route's exact response bytes.
        let probe = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let probe_addr = probe.local_addr().expect("address");
        let probe_app = app.clone();
        tokio::spawn(async move { axum::serve(probe, probe_app).await });
        // Every client sends `Accept-Encoding: gzip` as curl --compressed, browsers and HTTP
        // libraries do (answers of 1,400 bytes and more then go out gzip-encoded); the full
        // flow is measured without it too.
        let route = |path, gzip| Target { path, gzip };
        let routes = [
            ("index /api/mcp/data/            ", route("/api/mcp/data/", true)),
            ("chain /chain/SPY                ", route("/api/mcp/data/chain/SPY", true)),
            ("expirations /SPY                ", route("/api/mcp/data/expirations/SPY", true)),
            ("gex /gex/SPY (full)             ", route("/api/mcp/data/gex/SPY", true)),
            ("gex /gex/SPY compact            ", route("/api/mcp/data/gex/SPY?detail=compact", true)),
            ("flow /flow/SPY (full)           ", route("/api/mcp/data/flow/SPY", true)),
            ("flow /flow/SPY (full, identity) ", route("/api/mcp/data/flow/SPY", false)),
            ("flow /flow/SPY compact          ", route("/api/mcp/data/flow/SPY?detail=compact", true)),
            ("heatmap /greeks-heatmap/SPY     ", route("/api/mcp/data/greeks-heatmap/SPY", true)),
            ("vol /iv-rank/SPY                ", route("/api/mcp/data/iv-rank/SPY", true)),
            ("vol /batch/iv-rank (25)         ", route(BATCH_PATH, true)),
            ("vol /iv-opportunities/SPY       ", route("/api/mcp/data/iv-opportunities/SPY", true)),
            ("vol /term-structure/SPY         ", route("/api/mcp/data/term-structure/SPY", true)),
            ("vol /vrp/SPY                    ", route("/api/mcp/data/vrp/SPY", true)),
            ("vol /vrp/SPY/expirations        ", route("/api/mcp/data/vrp/SPY/expirations", true)),
            ("vol /vrp/SPY/timeseries         ", route("/api/mcp/data/vrp/SPY/timeseries", true)),
            ("vol /volatility-cone/SPY        ", route("/api/mcp/data/volatility-cone/SPY", true)),
            ("vol /hv-regimes/SPY             ", route("/api/mcp/data/hv-regimes/SPY", true)),
            ("vol /monies/SPY                 ", route("/api/mcp/data/monies/SPY", true)),
            ("vol /skew/SPY                   ", route("/api/mcp/data/skew/SPY", true)),
        ];
        // OPTICS_BENCH_ROUTES: only the labels containing one of its words.
        let only: Vec<String> = std::env::var("OPTICS_BENCH_ROUTES")
            .unwrap_or_default()
            .split(',')
            .map(|word| word.trim().to_owned())
            .filter(|word| !word.is_empty())
            .collect();
        let routes: Vec<(&str, Target)> = routes
            .into_iter()
            .filter(|(label, _)| only.is_empty() || only.iter().any(|w| label.contains(w.as_str())))
            .collect();
        let screens_only = routes.is_empty()
            && only.iter().any(|w| "screen overview universe".contains(w.as_str()));
        if screens_only {
            cores_row_cost(&BenchMarket::spy(now));
            for n in [87, 20_000] {
                universe_screens(n).await;
            }
            return;
        }
        assert!(!routes.is_empty(), "OPTICS_BENCH_ROUTES={only:?} matches no route");
        let static_paths: Vec<String> =
            (0..routes.len()).map(|i| format!("/bench/static/{i}")).collect();
        let mut app: Router = app;
        for ((label, target), static_path) in routes.iter().zip(&static_paths) {
            let (body, encoding) = {
                let mut sender = connect(probe_addr).await;
                sender.ready().await.expect("ready");
                let mut probe = Request::get(target.path).header("host", "127.0.0.1");
                if target.gzip {
                    probe = probe.header("accept-encoding", "gzip");
                }
                let response = sender
                    .send_request(probe.body(Empty::<Bytes>::new()).expect("request"))
                    .await
                    .expect("response");
                assert!(response.status().is_success(), "{}: {}", target.path, response.status());
                let encoding = response.headers().get(CONTENT_ENCODING).cloned();
                (response.into_body().collect().await.expect("body").to_bytes(), encoding)
            };
            if encoding.is_none() && target.path == "/api/mcp/data/flow/SPY" {
                let payload: serde_json::Value =
                    serde_json::from_slice(&body).expect("flow answer is JSON");
                let rows = |list: &str| payload["data"][list].as_array().map_or(0, Vec::len);
                println!(
                    "{}: {} B decoded; all_flow {} rows, largest_flows {}, unusual_activity {}",
                    label.trim_end(),
                    body.len(),
                    rows("all_flow"),
                    rows("largest_flows"),
                    rows("unusual_activity")
                );
            }
            // The twin sends the same bytes with the same encoding.
            app = app.route(
                static_path,
                get(move || {
                    let (body, encoding) = (body.clone(), encoding.clone());
                    async move {
                        let mut headers = HeaderMap::new();
                        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                        if let Some(encoding) = encoding {
                            headers.insert(CONTENT_ENCODING, encoding);
                        }
                        (headers, body)
                    }
                }),
            );
        }
        tokio::spawn(async move { axum::serve(listener, app).await });

        println!(
            "load: {rate} req/s for {secs} s over {conns} keep-alive connections, loopback, \
             2 server+client worker threads"
        );
        println!("(server and load generator share the 2 cores: figures are indicative)");
        if routes.iter().any(|(_, t)| t.path == BATCH_PATH) {
            batch_uncached(probe_addr).await;
        }
        // The screens over the default universe's size and over 20,000 underlyings
        // (`OPTICS_BENCH_ROUTES=screen` runs them alone).
        if only.is_empty() {
            cores_row_cost(&BenchMarket::spy(now));
            for n in [87, 20_000] {
                universe_screens(n).await;
            }
        }
        for ((label, target), static_path) in routes.iter().zip(&static_paths) {
            let mut saturated = [0.0; 2];
            let static_path: &'static str = Box::leak(static_path.clone().into_boxed_str());
            let twin = Target { path: static_path, gzip: target.gzip };
            for (k, (name, target)) in [(*label, *target), ("  static twin                   ", twin)]
                .into_iter()
                .enumerate()
            {
                // Warm-up: connections, allocator, caches.
                let _ = saturation(addr, target, 1, conns).await;
                let bytes = {
                    let mut sender = connect(addr).await;
                    request(&mut sender, target).await
                };
                let fixed = fixed_rate(addr, target, rate, secs, conns).await;
                saturated[k] = saturation(addr, target, secs, conns).await;
                println!(
                    "{name} ({bytes} B)  fixed rate: {} requests in {:.2} s ({:.0} req/s), p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, p99 from schedule {:.3} ms | saturation: {:.0} req/s",
                    fixed.sent,
                    fixed.elapsed.as_secs_f64(),
                    fixed.sent as f64 / fixed.elapsed.as_secs_f64(),
                    fixed.p50.as_secs_f64() * 1e3,
                    fixed.p99.as_secs_f64() * 1e3,
                    fixed.max.as_secs_f64() * 1e3,
                    fixed.p99_from_schedule.as_secs_f64() * 1e3,
                    saturated[k]
                );
            }
            println!(
                "  throughput ratio {} / static twin: {:.2} (goal >= 0.5)",
                label.trim_end(),
                saturated[0] / saturated[1]
            );
        }
    });
}
