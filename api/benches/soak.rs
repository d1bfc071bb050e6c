//! Soak benchmark: the real router under a steady mixed load for minutes while its snapshots
//! are swapped every second, as a live session swaps them.
//!
//! The router (`optics_api::router`, no token gate, so no request is refused for its limits)
//! is served on 127.0.0.1:0 over an in-memory reader whose SPY chain, exposures and flow are
//! rebuilt from scratch every second (a fresh allocation each time, the previous one dropped
//! once no request holds it) and whose generation moves with each swap, so every held answer
//! goes stale. A Rust load generator sends `OPTICS_BENCH_RATE` requests a second (default
//! 2,000) on `OPTICS_BENCH_CONNECTIONS` keep-alive connections (default 16), open loop, for
//! `OPTICS_BENCH_SECS` seconds (default 600): GETs of `/chain`, compact `/gex` and `/flow`,
//! `/iv-rank`, `/term-structure`, and POSTs of `/pop` and `/build-strategy`, in turn.
//!
//! Every `OPTICS_BENCH_WINDOW_SECS` (default 60) it prints the window's requests, errors (any
//! status other than 2xx, or a failed exchange), p50 / p99 / max from send, and the process's
//! resident memory (server and load generator together: one process); at the end, the RSS
//! growth from the first window to the last. Nothing asserts on time.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use chrono::{NaiveDate, TimeZone};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use optics_api::market::{ChainView, Coverage, ExposureView, FlowView};
use optics_api::{ApiError, AppState, MarketDataReader, ReadFuture, Ticker, VolSeries, router};
use optics_compute::time::ManualClock;
use optics_schemas::ChainRow;
use tokio::net::TcpListener;

// Its `send` panics on a non-2xx answer; the soak counts those as errors instead.
#[allow(dead_code)]
#[path = "support/loopback.rs"]
mod loopback;
#[path = "support/market.rs"]
mod market;
use market::BenchMarket;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

/// The bench market, replaced whole every second.
#[derive(Debug)]
struct SwappingMarket {
    current: RwLock<Arc<BenchMarket>>,
    generation: AtomicU64,
}

impl SwappingMarket {
    fn now(&self) -> Arc<BenchMarket> {
        Arc::clone(&self.current.read().expect("market lock"))
    }

    fn swap(&self, next: BenchMarket) {
        *self.current.write().expect("market lock") = Arc::new(next);
        self.generation.fetch_add(1, Ordering::Release);
    }
}

impl MarketDataReader for SwappingMarket {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.now().covers(ticker)
    }

    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>> {
        self.now().chain(ticker)
    }

    fn exposures(&self, ticker: &Ticker) -> Option<Arc<ExposureView>> {
        self.now().exposures(ticker)
    }

    fn flow(&self, ticker: &Ticker) -> Option<Arc<FlowView>> {
        self.now().flow(ticker)
    }

    fn coverage(&self) -> Arc<Coverage> {
        Arc::default()
    }

    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }

    fn chain_at_time<'a>(
        &'a self,
        _: &'a Ticker,
        _: NaiveDate,
        _: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }

    fn vol_history<'a>(
        &'a self,
        ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        let market = self.now();
        Box::pin(async move { market.vol_history(ticker).await })
    }
}

/// One request of the mix.
#[derive(Debug, Clone, Copy)]
struct Target {
    path: &'static str,
    body: Option<&'static str>,
}

const POP_BODY: &str = r#"{"ticker": "SPY", "stock_price": 600.0, "days_to_exp": 28, "rate": 0.045,
  "dividend_yield": 0.012, "legs": [
  {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0, "quantity": 1},
  {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1, "quantity": 1}]}"#;
const BUILD_BODY: &str = r#"{"ticker": "SPY", "strategy_type": "iron_condor", "target_delta": 0.3, "width": 5, "dte": 30}"#;

const MIX: [Target; 7] = [
    Target {
        path: "/api/mcp/data/chain/SPY",
        body: None,
    },
    Target {
        path: "/api/mcp/data/gex/SPY?detail=compact",
        body: None,
    },
    Target {
        path: "/api/mcp/data/flow/SPY?detail=compact",
        body: None,
    },
    Target {
        path: "/api/mcp/data/iv-rank/SPY",
        body: None,
    },
    Target {
        path: "/api/mcp/data/term-structure/SPY",
        body: None,
    },
    Target {
        path: "/api/mcp/data/pop",
        body: Some(POP_BODY),
    },
    Target {
        path: "/api/mcp/data/build-strategy",
        body: Some(BUILD_BODY),
    },
];

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Sends one request of the mix; whether it was answered 2xx (a failed exchange is `false`).
async fn exchange(sender: &mut Sender, target: Target) -> bool {
    let builder = Request::builder()
        .uri(target.path)
        .header("host", "127.0.0.1")
        .header("accept-encoding", "gzip");
    let request = match target.body {
        Some(body) => builder
            .method("POST")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(body.as_bytes()))),
        None => builder.method("GET").body(Full::new(Bytes::new())),
    }
    .expect("request");
    if sender.ready().await.is_err() {
        return false;
    }
    match sender.send_request(request).await {
        Ok(response) => {
            let ok = response.status().is_success();
            ok && response.into_body().collect().await.is_ok()
        }
        Err(_) => false,
    }
}

/// The process's resident memory, MB (Linux `/proc/self/status`).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let kb = line.strip_prefix("VmRSS:")?.trim().trim_end_matches(" kB");
                kb.trim().parse::<f64>().ok()
            })
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted
        .get(((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// Latencies of answered requests and the count of errors since the last report.
#[derive(Debug, Default)]
struct Window {
    latencies: Vec<Duration>,
    errors: u64,
}

fn main() {
    let rate = setting("OPTICS_BENCH_RATE", 2_000);
    let secs = setting("OPTICS_BENCH_SECS", 600);
    let conns = setting("OPTICS_BENCH_CONNECTIONS", 16);
    let window_secs = setting("OPTICS_BENCH_WINDOW_SECS", 60);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 11, 20, 15, 0, 0)
            .unwrap();
        let market = Arc::new(SwappingMarket {
            current: RwLock::new(Arc::new(BenchMarket::spy(now))),
            generation: AtomicU64::new(1),
        });
        let app = router(
            AppState::new(Arc::new(ManualClock::new(now)))
                .with_market_data(Arc::clone(&market) as Arc<dyn MarketDataReader>),
        );
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr: SocketAddr = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, app).await });

        // A new snapshot every second, built off the runtime's threads as the worker builds.
        let swapper = Arc::clone(&market);
        let swaps = tokio::spawn(async move {
            let mut count = 0u64;
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                let as_of = now + chrono::TimeDelta::seconds(count as i64);
                let next = tokio::task::spawn_blocking(move || BenchMarket::spy(as_of))
                    .await
                    .expect("snapshot build");
                swapper.swap(next);
                count += 1;
            }
        });

        println!(
            "soak: {rate} req/s on {conns} connections for {secs} s, snapshots swapped every \
             second; {} routes in turn; RSS at start {:.0} MB",
            MIX.len(),
            resident_mb()
        );
        let window = Arc::new(Mutex::new(Window::default()));
        let total = rate * secs;
        let interval = Duration::from_secs_f64(1.0 / rate as f64);
        let start = tokio::time::Instant::now() + Duration::from_millis(100);
        let mut clients = Vec::new();
        for c in 0..conns {
            let window = Arc::clone(&window);
            clients.push(tokio::spawn(async move {
                let mut sender: Sender = loopback::connect(addr).await;
                let mut i = c;
                while i < total {
                    let scheduled = start + interval * u32::try_from(i).unwrap_or(u32::MAX);
                    tokio::time::sleep_until(scheduled).await;
                    let target = MIX[(i / conns) as usize % MIX.len()];
                    let sent = Instant::now();
                    let ok = exchange(&mut sender, target).await;
                    let took = sent.elapsed();
                    {
                        let mut w = window.lock().expect("window lock");
                        if ok {
                            w.latencies.push(took);
                        } else {
                            w.errors += 1;
                        }
                    }
                    if !ok {
                        sender = loopback::connect(addr).await;
                    }
                    i += conns;
                }
            }));
        }

        let mut rss = Vec::new();
        let mut errors = 0;
        let mut answered = 0;
        let windows = secs.div_ceil(window_secs);
        for n in 1..=windows {
            tokio::time::sleep_until(start + Duration::from_secs(n * window_secs)).await;
            let Window {
                mut latencies,
                errors: window_errors,
            } = std::mem::take(&mut *window.lock().expect("window lock"));
            latencies.sort_unstable();
            let resident = resident_mb();
            rss.push(resident);
            errors += window_errors;
            answered += latencies.len();
            println!(
                "  {:>4} s: {:>7} answered ({:.0} req/s), {window_errors} errors, p50 {:>7.2?}, \
                 p99 {:>7.2?}, max {:>7.2?}, RSS {resident:.0} MB",
                n * window_secs,
                latencies.len(),
                latencies.len() as f64 / window_secs as f64,
                quantile(&latencies, 0.50),
                quantile(&latencies, 0.99),
                latencies.last().copied().unwrap_or_default(),
            );
        }
        for client in clients {
            client.await.expect("client task");
        }
        swaps.abort();
        let growth = match (rss.first(), rss.last()) {
            (Some(first), Some(last)) => (last - first) / first * 100.0,
            _ => f64::NAN,
        };
        println!(
            "soak: {answered} answered, {errors} errors; {} snapshot swaps; RSS after the first \
             window {:.0} MB, at the end {:.0} MB ({growth:+.1} %)",
            market.generation.load(Ordering::Acquire) - 1,
            rss.first().copied().unwrap_or(f64::NAN),
            rss.last().copied().unwrap_or(f64::NAN),
        );
    });
}
