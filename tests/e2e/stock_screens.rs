//! The stock-analytics and screener endpoints against `optics run` over the first 25 names of
//! the coverage universe (the four indices, the index ETFs, the sector ETFs, then AAPL and
//! MSFT): every answer is a 200 whose headline figures are numbers computed from the seeded
//! year and the live session, and the screens scan the whole universe table.

use std::time::{Duration, Instant};

use crate::support::{TempDir, get, optics_run, start_listening};

/// From listening to AAPL's first live chain.
const READY_WITHIN: Duration = Duration::from_secs(120);
/// From then to the first universe table (25 cores rows, debug build).
const TABLE_WITHIN: Duration = Duration::from_secs(600);

#[test]
fn optics_run_serves_stock_analytics_and_the_screens() {
    let dir = TempDir::new("stock");
    // The waits below poll every 250 ms, past the interface's 60 requests a minute when the
    // machine is slow; the limits have tests of their own.
    let mut run = optics_run(dir.path(), 25);
    run.args(["--rate-per-minute", "100000", "--rate-per-hour", "1000000"]);
    let (_service, address, _) = start_listening(run);
    let token = std::fs::read_to_string(dir.path().join("api-token")).expect("token file");
    let token = token.trim();

    // The live chains arrive with the first compute cycles: wait for AAPL's.
    let started = Instant::now();
    loop {
        let (status, _) = get(&address, "/api/mcp/data/chain/AAPL", Some(token));
        if status == 200 || started.elapsed() > READY_WITHIN {
            assert_eq!(status, 200, "no AAPL chain within {READY_WITHIN:?}");
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    // The universe table is built once in the background (a debug build on a busy machine
    // takes a while); until then a screen answers 503 with Retry-After.
    let started = Instant::now();
    loop {
        let (status, body) = get(
            &address,
            "/api/mcp/data/screen?screen_type=high_vrp&min_market_cap=0",
            Some(token),
        );
        if status == 200 {
            break;
        }
        assert!(
            status == 503 && started.elapsed() < TABLE_WITHIN,
            "no screen within {TABLE_WITHIN:?}: {status} {body}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    for (path, figure) in [
        ("/cores/AAPL", "/iv30d"),
        ("/cores/AAPL?fields=all", "/available_field_count"),
        ("/cores/AAPL?fields=clsHv20d,correlSpy1m", "/correlSpy1m"),
        ("/correlation/AAPL", "/correlations/spy_1m"),
        ("/dividend/AAPL", "/current/price"),
        ("/borrow-rate/AAPL", "/current/borrow30"),
        ("/borrow-rate/AAPL?days=20", "/timeseries/0/borrow30"),
        ("/price-context/AAPL", "/return_1m"),
        ("/price-context/AAPL", "/quick_take"),
        (
            "/correlation/AAPL/compare/MSFT?days=20",
            "/timeseries/0/correl1m",
        ),
        ("/relative-value/AAPL", "/ratios/iv_spy_ratio"),
        ("/relative-value-scan?threshold=0.5", "/total_scanned"),
        ("/screen?screen_type=list", "/screens/10/rule"),
        (
            "/screen?screen_type=high_vrp&min_market_cap=0",
            "/universe_size",
        ),
        ("/market-overview", "/market_stats/avg_iv30d"),
        ("/market-overview", "/index_prices/SPX/price"),
        ("/market-overview", "/treasury_rates/points/0/rate_pct"),
    ] {
        let (status, body) = get(&address, &format!("/api/mcp/data{path}"), Some(token));
        assert_eq!(status, 200, "{path}: {body}");
        let value = body["data"].pointer(figure);
        assert!(
            value.is_some_and(|v| v.is_number() || v.is_string()),
            "{path}: {figure} is {value:?} in {body}"
        );
    }
    // The screens scan every covered name of the table.
    let (_, screen) = get(
        &address,
        "/api/mcp/data/screen?screen_type=high_iv_rank&min_market_cap=0",
        Some(token),
    );
    assert_eq!(screen["data"]["universe_size"], 25, "{screen}");
    assert_eq!(screen["data"]["total_scanned"], 25, "{screen}");
    // An unknown cores field is a 400 naming the closest ones.
    let (status, body) = get(
        &address,
        "/api/mcp/data/cores/AAPL?fields=iv30",
        Some(token),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("iv30d"), "{body}");
}
