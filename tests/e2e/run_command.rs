//! `optics run` — the all-in-one service a newcomer starts with `make run` — on a fresh data
//! directory: it seeds a tiny store, prints where it listens and where its token is, and
//! answers an authenticated chain request. The market clock starts at a fixed instant (a
//! Friday morning session), so the test does not depend on the wall clock's session state.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::{OPTICS, Running, TempDir, get, optics_run};

/// Seeding a year of history and one session for three underlyings, in a debug build on a
/// busy two-core machine: generous.
const LISTEN_WITHIN: Duration = Duration::from_secs(420);
/// From listening to the first 200 on /chain: the seeded session is loaded before listening.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

#[test]
fn optics_run_seeds_says_how_to_call_it_and_answers_a_chain() {
    let dir = TempDir::new("run");
    let started = Instant::now();
    let mut child = optics_run(dir.path(), 3)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start optics run");
    let stdout = child.stdout.take().expect("stdout");
    let service = Running(child);

    // Lines as they come (a reader thread keeps the pipe drained while the service runs).
    let (lines_tx, lines_rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Vec::new();
    let address = loop {
        let left = LISTEN_WITHIN.saturating_sub(started.elapsed());
        let line = lines_rx.recv_timeout(left).unwrap_or_else(|_| {
            panic!(
                "optics run did not print its address within {LISTEN_WITHIN:?}; it printed:\n{}\n\
                 stderr:\n{}",
                printed.join("\n"),
                std::fs::read_to_string(dir.path().join("run-log.txt")).unwrap_or_default()
            )
        });
        printed.push(line.clone());
        if let Some(address) = line.strip_prefix("listening on http://") {
            break address.to_owned();
        }
    };
    let listening_after = started.elapsed();
    // The curl line names the port bound, not the `:0` asked for.
    let curl = format!("http://{address}/api/mcp/data/chain/SPY");
    assert!(
        printed
            .iter()
            .any(|l| l.starts_with("try: curl") && l.contains(&curl)),
        "no curl line with {curl}:\n{}",
        printed.join("\n")
    );

    // It said where the token is, and the token is there.
    let token_path = dir.path().join("api-token");
    let token_path_text = token_path.display().to_string();
    assert!(
        printed.iter().any(|l| l.contains(&token_path_text)),
        "no line names {token_path_text}:\n{}",
        printed.join("\n")
    );
    let token = std::fs::read_to_string(&token_path).expect("token file");
    let token = token.trim();
    assert!(token.starts_with("optx_"), "{token}");
    assert!(
        printed.iter().any(|l| l.starts_with("seeded 1 sessions")),
        "{}",
        printed.join("\n")
    );

    // The first indices of the universe are cash indices; SPX is one of the three.
    let answered = Instant::now();
    let (status, body) = loop {
        let (status, body) = get(&address, "/api/mcp/data/chain/SPX", Some(token));
        if status == 200 || answered.elapsed() > ANSWER_WITHIN {
            break (status, body);
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["ticker"], "SPX");
    assert_eq!(data["priced_on_forward"], true);
    let nearest = data["expirations"][0].as_str().expect("an expiration");
    let rows = data["chains"][nearest].as_array().expect("rows");
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["Strike"].is_number()));
    // Without the token: 401.
    let (status, _) = get(
        &address,
        "/api/mcp/data/chain/SPX",
        Some("optx_not-a-token"),
    );
    assert_eq!(status, 401);

    // The volatility family answers from the seeded year and the live chain, every figure a
    // number (not a null with a reason) where a year of history suffices.
    for (path, figure) in [
        ("/iv-rank/SPX", "/iv_rank"),
        (
            "/batch/iv-rank?tickers=SPX,NDX",
            "/results/NDX/iv_percentile",
        ),
        ("/iv-opportunities/SPX", "/z_score"),
        ("/term-structure/SPX", "/term_structure/0/straddle_price"),
        ("/vrp/SPX", "/volatility_risk_premium"),
        ("/vrp/SPX/expirations", "/vrp_by_expiration/0/vrp"),
        ("/vrp/SPX/timeseries", "/timeseries/0/hv"),
        ("/volatility-cone/SPX", "/volatility_cone/30d/p50"),
        ("/hv-regimes/SPX", "/term_structure/2/or_hv"),
        (
            "/hv-regimes/SPX?view=decomposition",
            "/decomposition/overnight_share_pct",
        ),
        ("/monies/SPX", "/expirations/1/slope"),
        ("/skew/SPX", "/current/slope"),
        ("/vix", "/price"),
        // Moves and calendars from the seeded bars, chains and reference tables.
        ("/historical-moves/SPX", "/move_analysis/7/avg_abs_move_pct"),
        ("/expected-vs-actual/SPX", "/historical_avg_move_pct"),
        ("/mispricing-assessment/SPX", "/mispricing_score"),
        ("/seasonality/SPX?years=1", "/best_month/avg_return_pct"),
        ("/earnings-calendar?days_ahead=90", "/total_count"),
        ("/economic-calendar", "/total_count"),
    ] {
        let (status, body) = get(&address, &format!("/api/mcp/data{path}"), Some(token));
        assert_eq!(status, 200, "{path}: {body}");
        let value = &body["data"].pointer(figure);
        assert!(
            value.is_some_and(serde_json::Value::is_number),
            "{path}: {figure} is {value:?} in {body}"
        );
    }
    // The simulator's surfaces are free of static arbitrage: the scan of each covered chain
    // finds no butterfly, calendar or parity row at the quotes.
    let mut scanned = 0;
    for ticker in ["SPX", "NDX", "RUT"] {
        let path = format!("/api/mcp/data/vol-arb-scan?ticker={ticker}");
        let (status, body) = get(&address, &path, Some(token));
        if status == 404 {
            continue;
        }
        scanned += 1;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(body["data"]["arbitrage_count"], 0, "{path}: {body}");
        assert!(
            body["data"]["strikes_scanned"].as_u64().unwrap() > 0,
            "{body}"
        );
    }
    assert!(
        scanned >= 2,
        "SPX and NDX are in the three-underlying universe"
    );
    // The earnings family on an index (no reports): answered, empty, saying why.
    for path in [
        "/earnings-history/SPX",
        "/post-earnings-drift/SPX",
        "/iv-crush/SPX",
        "/earnings-verdict/SPX",
    ] {
        let (status, body) = get(&address, &format!("/api/mcp/data{path}"), Some(token));
        assert_eq!(status, 200, "{path}: {body}");
        assert!(body["data"]["reason"].is_string(), "{path}: {body}");
    }
    // Correlation of an index: SPY is not in the three-underlying universe (no ETF is), so
    // the figures that need it are null and the payload says why.
    let (status, body) = get(&address, "/api/mcp/data/correlation/SPX", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["ticker"], "SPX", "{body}");
    assert!(body["data"]["reason"].is_string(), "{body}");
    // A cash index pays no stored dividend: answered with its chain price and a reason.
    let (status, body) = get(&address, "/api/mcp/data/dividend/SPX", Some(token));
    assert_eq!(status, 200, "/dividend/SPX: {body}");
    assert_eq!(body["data"]["pays_dividends"], false, "{body}");
    assert!(body["data"]["reason"].is_string(), "{body}");
    assert!(body["data"]["current"]["price"].is_number(), "{body}");
    let (_, verdict) = get(&address, "/api/mcp/data/earnings-verdict/SPX", Some(token));
    assert_eq!(
        verdict["data"]["verdict"]["signal"], "NO_EARNINGS",
        "{verdict}"
    );

    // A report imported while the service runs reaches its API (the reference tables are read
    // again every few seconds): an after-close report of 2026-10-15 reacts on the 16th, inside
    // the seeded year of bars.
    let file = dir.path().join("earnings.csv");
    std::fs::write(
        &file,
        "symbol,date,timing,fiscal_quarter,eps_estimate,eps_actual\n\
         SPX,2026-10-15,amc,2026 Q3,1.00,1.10\n",
    )
    .unwrap();
    let output = optics_tests::run_optics(
        OPTICS,
        &[
            "import",
            "earnings",
            file.to_str().unwrap(),
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let imported = Instant::now();
    loop {
        let (status, body) = get(&address, "/api/mcp/data/earnings-history/SPX", Some(token));
        assert_eq!(status, 200, "{body}");
        if let Some(row) = body["data"]["earnings_moves"]
            .as_array()
            .and_then(|r| r.first())
        {
            assert_eq!(row["reaction_date"], "2026-10-16", "{body}");
            assert_eq!(row["surprise_direction"], "beat", "{body}");
            break;
        }
        assert!(
            imported.elapsed() < Duration::from_secs(20),
            "the imported report never reached the API: {body}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "optics run: listening after {:.1} s, first chain after {:.1} s more",
        listening_after.as_secs_f64(),
        answered.elapsed().as_secs_f64()
    );
    drop(service);
}
