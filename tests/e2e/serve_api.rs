//! `optics backfill` then `optics serve` on port 0, called over HTTP as a user calls it: a
//! store built by the real pipeline, the real binary, the real account bootstrap. The chain
//! family is checked field by field against the stored snapshots and reference tables (an ETF
//! and a cash index priced on the forward), and the JSON request log on stderr is read back.

use std::path::Path;
use std::process::{Command, Stdio};

use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::{
    AssetClass, ChainRow, Company, DailyBar, EarningsEvent, PricingModelCode, Record,
    SettlementStyle,
};
use serde_json::Value;

use crate::support::{OPTICS, Running, TempDir, backfill, fetch, get, start_listening};

/// Starts `optics serve` on port 0, creating the local account on first start and logging JSON
/// to `log_file`, and returns it with the address it printed.
fn serve(data_dir: &Path, log_file: &Path) -> (Running, String) {
    let log = std::fs::File::create(log_file).expect("log file");
    let mut command = Command::new(OPTICS);
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            // The checks below make well over the interface's 60 calls a minute.
            "--rate-per-minute",
            "100000",
            "--rate-per-hour",
            "100000",
            "--data-dir",
        ])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .env("OPTICS_LOG", "info")
        .env("OPTICS_BOOTSTRAP_LOCAL_ACCOUNT", "true")
        .stderr(Stdio::from(log));
    let (server, address, _) = start_listening(command);
    (server, address)
}

/// The stored end-of-day chain of `ticker` on 2026-11-20.
fn stored_chain(data_dir: &Path, ticker: &str) -> Vec<ChainRow> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let key = SnapshotKey::new("chain", date, ticker);
        let snapshot = store.read(&key).await.unwrap().expect("a stored chain");
        snapshot
            .batches
            .iter()
            .flat_map(|b| ChainRow::from_batch(b).unwrap())
            .collect()
    })
}

/// Every row of the newest market-wide reference table `R` (companies, daily bars).
fn stored_reference<R: Record>(data_dir: &Path) -> Vec<R> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        let dataset = R::DATASET.name();
        let date = store
            .latest_trade_date(dataset, MARKET_WIDE, None)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no stored {dataset}"));
        let key = SnapshotKey::new(dataset, date, MARKET_WIDE);
        let snapshot = store.read(&key).await.unwrap().expect("reference snapshot");
        snapshot
            .batches
            .iter()
            .flat_map(|b| R::from_batch(b).unwrap())
            .collect()
    })
}

/// Dollars as the reference documents `market_cap` (`$3.45T`): two decimals of the largest
/// of trillions, billions, millions and thousands the amount reaches.
fn dollars_with_suffix(amount: f64) -> String {
    for (unit, suffix) in [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")] {
        if amount >= unit {
            return format!("${:.2}{suffix}", amount / unit);
        }
    }
    format!("${amount:.0}")
}

/// The documented market-cap tiers of `/search`: mega from $200B, large from $10B, mid from
/// $2B, small from $300M, micro below.
fn cap_tier(market_cap: f64) -> &'static str {
    [
        (200e9, "mega"),
        (10e9, "large"),
        (2e9, "mid"),
        (300e6, "small"),
    ]
    .into_iter()
    .find(|&(floor, _)| market_cap >= floor)
    .map_or("micro", |(_, tier)| tier)
}

/// The value a chain-row key of the payload must have for the stored row (spec 2.4 keys plus
/// quotes, IV, rho, volume, OI and symbols); `None` for a key the payload should not carry.
fn stored_value(row: &ChainRow, key: &str) -> Option<Value> {
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    let int = |v: Option<u64>| v.map_or(Value::Null, Value::from);
    let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::from);
    let (c, p) = (&row.call, &row.put);
    Some(match key {
        "Strike" => Value::from(row.strike),
        "Settlement" => Value::from(row.settlement.as_str()),
        "Call Bid" => num(c.bid),
        "Call Ask" => num(c.ask),
        "Call Mid" => num(c.mid),
        "Call Last" => num(c.last),
        "Put Bid" => num(p.bid),
        "Put Ask" => num(p.ask),
        "Put Mid" => num(p.mid),
        "Put Last" => num(p.last),
        "IV Call" => num(c.iv),
        "IV Put" => num(p.iv),
        "Delta Call" => num(c.greeks.delta),
        "Delta Put" => num(p.greeks.delta),
        "Gamma Call" => num(c.greeks.gamma),
        "Gamma Put" => num(p.greeks.gamma),
        "Theta Call" => num(c.greeks.theta),
        "Theta Put" => num(p.greeks.theta),
        "Vega Call" => num(c.greeks.vega),
        "Vega Put" => num(p.greeks.vega),
        "Rho Call" => num(c.greeks.rho),
        "Rho Put" => num(p.greeks.rho),
        "Epsilon Call" => num(c.greeks.epsilon),
        "Epsilon Put" => num(p.greeks.epsilon),
        "Extrinsic Call" => num(c.extrinsic),
        "Extrinsic Put" => num(p.extrinsic),
        "Call Volume" => int(c.volume),
        "Put Volume" => int(p.volume),
        "Call OI" => int(c.open_interest),
        "Put OI" => int(p.open_interest),
        "Call Symbol" => text(&c.option_symbol),
        "Put Symbol" => text(&p.option_symbol),
        _ => return None,
    })
}

/// Every key of every payload row against the stored row of the same settlement and strike;
/// every stored row is served once.
fn assert_rows_match(served: &[Value], stored: &[&ChainRow], what: &str) {
    assert_eq!(served.len(), stored.len(), "{what}: row count");
    for row in served {
        let strike = row["Strike"].as_f64().expect("Strike");
        let settlement = row["Settlement"].as_str().expect("Settlement");
        let matches: Vec<&&ChainRow> = stored
            .iter()
            .filter(|r| r.strike == strike && r.settlement.as_str() == settlement)
            .collect();
        assert_eq!(matches.len(), 1, "{what}: {settlement} {strike}");
        let keys = row.as_object().unwrap();
        // The 17 keys of spec 2.4 and the 19 further ones.
        assert!(keys.len() >= 32, "{what}: {} keys", keys.len());
        for (key, value) in keys {
            let expected = stored_value(matches[0], key)
                .unwrap_or_else(|| panic!("{what}: unexpected row key {key:?}"));
            assert_eq!(value, &expected, "{what}: {key} at {settlement} {strike}");
        }
    }
}

/// The rows of one expiration in the order the API lists them: settlement, then strike.
fn rows_of(stored: &[ChainRow], expiration: chrono::NaiveDate) -> Vec<&ChainRow> {
    let mut rows: Vec<&ChainRow> = stored
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    rows.sort_by(|a, b| {
        a.settlement
            .as_str()
            .cmp(b.settlement.as_str())
            .then(a.strike.total_cmp(&b.strike))
    });
    rows
}

/// The underlyings with a stored chain on 2026-11-20, and every stored earnings event.
fn stored_underlyings_and_earnings(data_dir: &Path) -> (Vec<String>, Vec<EarningsEvent>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let underlyings = store.underlyings("chain", date).await.unwrap();
        let earnings_date = store
            .latest_trade_date("earnings", MARKET_WIDE, None)
            .await
            .unwrap()
            .expect("stored earnings");
        let key = SnapshotKey::new("earnings", earnings_date, MARKET_WIDE);
        let snapshot = store.read(&key).await.unwrap().expect("earnings snapshot");
        let events = snapshot
            .batches
            .iter()
            .flat_map(|b| EarningsEvent::from_batch(b).unwrap())
            .collect();
        (underlyings, events)
    })
}

#[test]
fn a_backfilled_store_is_served_with_auth_and_the_envelope() {
    let dir = TempDir::new("serve");
    let data_dir = dir.path().to_str().unwrap().to_owned();
    // The indices and ETFs the coverage universe lists first, and its first stock (AAPL), so
    // the company fields of a stock are served from the store too.
    backfill(&data_dir, "2026-11-20", 24, 1);
    assert!(
        dir.path()
            .join("snapshots/chain/trade_date=2026-11-20")
            .is_dir()
    );
    // The session close: the market-wide volatility row of every underlying.
    assert!(
        dir.path()
            .join("snapshots/vol_daily/trade_date=2026-11-20/underlying=_all")
            .is_dir()
    );

    let log_file = dir.path().join("serve-log.jsonl");
    let (_server, address) = serve(dir.path(), &log_file);
    let token =
        std::fs::read_to_string(dir.path().join("api-token")).expect("bootstrap token file");
    let token = token.trim();
    assert!(token.starts_with("optx_"));

    // The index, authenticated.
    let (status, body) = get(&address, "/api/mcp/data/", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    let count = body["data"]["endpoint_count"].as_u64().unwrap();
    assert_eq!(
        count as usize,
        body["data"]["endpoints"].as_array().unwrap().len()
    );

    // No token, a malformed token: 401 in the envelope.
    for bad in [None, Some("optx_not-a-token")] {
        let (status, body) = get(&address, "/api/mcp/data/", bad);
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["success"], false);
        assert!(body["error"].is_string());
    }

    // The caller's usage report (free, any plan).
    let (status, body) = get(&address, "/api/mcp/data/me/usage", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert!(body["data"]["limit"].as_u64().unwrap() > 0, "{body}");

    // /chain/SPY with the full strike list of its nearest expiration, field by field against
    // the snapshot the pipeline stored.
    let (status, body) = get(
        &address,
        "/api/mcp/data/chain/SPY?strikes_around=0",
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["ticker"], "SPY");
    let stored = stored_chain(dir.path(), "SPY");
    let nearest = stored.iter().map(|r| r.expiration).min().unwrap();
    let expiration = nearest.to_string();
    assert_eq!(data["expirations"][0], expiration.as_str());
    let rows = data["chains"][expiration.as_str()].as_array().unwrap();
    let stored_rows = rows_of(&stored, nearest);
    assert_rows_match(rows, &stored_rows, "chain/SPY");
    assert_eq!(data["stock_price"].as_f64(), Some(stored_rows[0].spot));
    assert_eq!(data["priced_on_forward"], false);
    assert_eq!(data["strike_window"]["truncated"], false);
    assert_eq!(data["iv_units"], "decimal");
    for key in ["is_market_hours", "data_freshness", "message"] {
        assert!(!data[key].is_null(), "chain/SPY lacks {key}");
    }

    // /expirations: the stored chain's distinct expirations, nearest first.
    let mut listed: Vec<String> = stored.iter().map(|r| r.expiration.to_string()).collect();
    listed.sort();
    listed.dedup();
    let (status, body) = get(&address, "/api/mcp/data/expirations/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["expirations"], serde_json::json!(listed));
    assert_eq!(body["data"]["count"], listed.len());

    // /options-by-delta: the nearest expiration's call whose |delta| is closest to the default
    // 0.3 (ties to the lower strike), found here among the stored rows with an IV.
    let mut best: Option<(f64, &ChainRow)> = None;
    for row in &stored_rows {
        let (Some(delta), Some(_)) = (row.call.greeks.delta, row.call.iv) else {
            continue;
        };
        let distance = (delta.abs() - 0.3).abs();
        if best.is_none_or(|(d, b)| distance < d || (distance == d && row.strike < b.strike)) {
            best = Some((distance, row));
        }
    }
    let (_, chosen) = best.expect("a call with a delta");
    let (status, body) = get(&address, "/api/mcp/data/options-by-delta/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["strike"].as_f64(), Some(chosen.strike));
    assert_eq!(
        data["option_symbol"].as_str(),
        chosen.call.option_symbol.as_deref()
    );
    let iv = chosen.call.iv.unwrap();
    assert_eq!(data["iv"].as_f64(), Some(iv));
    assert!((data["iv_pct"].as_f64().unwrap() - iv * 100.0).abs() < 1e-9);
    assert_eq!(data["iv_units"], "decimal");
    assert_eq!(data["actual_delta"].as_f64(), chosen.call.greeks.delta);

    // /stock: the chain's spot, the stored company name, the stored bar's share volume.
    let companies: Vec<Company> = stored_reference(dir.path());
    let bars: Vec<DailyBar> = stored_reference(dir.path());
    let spy = companies.iter().find(|c| c.symbol == "SPY").expect("SPY");
    let session = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let bar = bars
        .iter()
        .filter(|b| b.symbol == "SPY" && b.date <= session)
        .max_by_key(|b| b.date)
        .expect("a SPY bar");
    assert!(bar.volume > 0);
    let (status, body) = get(&address, "/api/mcp/data/stock/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["price"].as_f64(), Some(stored_rows[0].spot));
    assert_eq!(data["company_name"].as_str(), Some(spy.name.as_str()));
    assert_eq!(data["volume_shares"].as_u64(), Some(bar.volume));
    assert_eq!(data["volume_date"], bar.date.to_string());
    #[allow(clippy::cast_precision_loss)]
    let millions = bar.volume as f64 / 1e6;
    assert_eq!(data["volume"], format!("{millions:.2}M"));

    // /stock and /search: every stored company's identity fields as the store has them.
    let stock = companies
        .iter()
        .find(|c| c.asset_class == AssetClass::Stock)
        .expect("a stock in the stored company map");
    assert!(
        stock.industry.is_some() && stock.market_cap.is_some(),
        "{stock:?}"
    );
    for company in &companies {
        let symbol = company.symbol.as_str();
        let (status, body) = get(
            &address,
            &format!("/api/mcp/data/stock/{symbol}"),
            Some(token),
        );
        assert_eq!(status, 200, "{symbol}: {body}");
        let data = &body["data"];
        let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::from);
        assert_eq!(data["company_name"], company.name.as_str(), "{symbol}");
        assert_eq!(data["sector"], text(&company.sector), "{symbol}");
        assert_eq!(data["industry"], text(&company.industry), "{symbol}");
        assert_eq!(
            data["market_cap"],
            company
                .market_cap
                .map_or(Value::Null, |cap| Value::from(dollars_with_suffix(cap))),
            "{symbol}"
        );
        assert_eq!(data["beta"], format!("{:.2}", company.beta_spy), "{symbol}");

        let (status, body) = get(
            &address,
            &format!("/api/mcp/data/search?q={symbol}&limit=1"),
            Some(token),
        );
        assert_eq!(status, 200, "{symbol}: {body}");
        let first = &body["data"]["results"][0];
        assert_eq!(first["symbol"], symbol);
        assert_eq!(first["matched_on"], "symbol");
        assert_eq!(first["sector"], text(&company.sector), "{symbol}");
        assert_eq!(
            first["market_cap_tier"],
            company
                .market_cap
                .map_or(Value::Null, |cap| Value::from(cap_tier(cap))),
            "{symbol}"
        );
    }

    // /search: the covered symbols starting with SP, with their stored names.
    let (status, body) = get(&address, "/api/mcp/data/search?q=sp&limit=20", Some(token));
    assert_eq!(status, 200, "{body}");
    let results = body["data"]["results"].as_array().unwrap();
    let mut expected: Vec<&Company> = companies
        .iter()
        .filter(|c| c.symbol.starts_with("SP"))
        .collect();
    expected.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    let mut found: Vec<(String, String)> = results
        .iter()
        .filter(|r| r["matched_on"] == "symbol_prefix" || r["matched_on"] == "symbol")
        .map(|r| {
            (
                r["symbol"].as_str().unwrap().to_owned(),
                r["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|c| (c.symbol.clone(), c.name.clone()))
        .collect();
    assert_eq!(found, expected);
    assert!(found.iter().any(|(symbol, _)| symbol == "SPX"), "{found:?}");

    // A cash index: priced on the forward. Every row against the store; the quoted price is
    // the nearest expiration's forward, not the spot, on /chain, /stock and /chain-at-time.
    let spx = stored_chain(dir.path(), "SPX");
    assert!(spx.iter().all(|r| r.model == PricingModelCode::Black76));
    let spx_nearest = spx.iter().map(|r| r.expiration).min().unwrap();
    let spx_rows = rows_of(&spx, spx_nearest);
    let forward = spx_rows[0].forward;
    assert!(
        (forward - spx_rows[0].spot).abs() > 1e-6,
        "forward equals spot"
    );
    let (status, body) = get(
        &address,
        "/api/mcp/data/chain/SPX?strikes_around=0",
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["priced_on_forward"], true);
    assert_eq!(data["stock_price"].as_f64(), Some(forward));
    let key = spx_nearest.to_string();
    assert_eq!(
        data["forwards"][key.as_str()]["forward"].as_f64(),
        Some(forward)
    );
    assert_rows_match(
        data["chains"][key.as_str()].as_array().unwrap(),
        &spx_rows,
        "chain/SPX",
    );
    let (status, body) = get(&address, "/api/mcp/data/stock/SPX", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["price"].as_f64(), Some(forward));
    assert_eq!(body["data"]["priced_on_forward"], true);
    assert_eq!(
        body["data"]["volume"],
        Value::Null,
        "a cash index trades no shares"
    );
    let (status, body) = get(
        &address,
        &format!("/api/mcp/data/chain-at-time/SPX?expiration={key}&trade_date=2026-11-20"),
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["underlying_price"].as_f64(), Some(forward));
    assert_eq!(body["data"]["priced_on_forward"], true);
    assert_rows_match(
        body["data"]["chain"].as_array().unwrap(),
        &spx_rows,
        "chain-at-time/SPX",
    );
    // Settlement codes are the stored ones.
    assert!(
        spx_rows
            .iter()
            .all(|r| matches!(r.settlement, SettlementStyle::Am | SettlementStyle::Pm))
    );

    // Earnings dates come from the stored reference data: the first report on or after the
    // session, or null (AAPL is the one stock of this universe; api/tests/store_market.rs
    // covers stocks with reports).
    let (underlyings, events) = stored_underlyings_and_earnings(dir.path());
    let session = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    for symbol in &underlyings {
        let next = events
            .iter()
            .filter(|e| e.symbol == *symbol && e.report_date >= session)
            .map(|e| e.report_date.to_string())
            .min();
        let expected = next.map_or(serde_json::Value::Null, serde_json::Value::from);
        for endpoint in ["stock", "greeks-heatmap"] {
            let path = format!("/api/mcp/data/{endpoint}/{symbol}");
            let (status, body) = get(&address, &path, Some(token));
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["data"]["earnings_date"], expected, "{path}");
        }
    }
    assert!(!underlyings.is_empty());

    // The heatmap's gamma cells are the stored chain's call gammas.
    let (status, body) = get(&address, "/api/mcp/data/greeks-heatmap/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    let heatmap = &body["data"];
    assert_eq!(heatmap["expirations_raw"][0], expiration.as_str());
    let mut cells = 0;
    for (strike, cell) in heatmap["strikes"]
        .as_array()
        .unwrap()
        .iter()
        .zip(heatmap["greek_matrices"]["gamma"][0].as_array().unwrap())
    {
        let strike = strike.as_f64().unwrap();
        let row = stored_rows
            .iter()
            .filter(|r| r.strike == strike)
            // The PM series where an expiration lists both.
            .max_by_key(|r| r.settlement.as_str() == "PM");
        assert_eq!(
            cell.as_f64(),
            row.and_then(|r| r.call.greeks.gamma),
            "{strike}"
        );
        cells += usize::from(cell.is_number());
    }
    assert!(cells > 10, "{cells} gamma cells");

    // Chain-at-time through DataFusion over the stored Parquet: the same rows.
    let (status, body) = get(
        &address,
        &format!("/api/mcp/data/chain-at-time/SPY?expiration={expiration}&trade_date=2026-11-20"),
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    let at_time = body["data"]["chain"].as_array().expect("chain rows");
    assert_rows_match(at_time, &stored_rows, "chain-at-time/SPY");
    assert_eq!(
        body["data"]["underlying_price"].as_f64(),
        Some(stored_rows[0].spot)
    );

    // An uncovered ticker: a 4xx that names it.
    let (status, body) = get(&address, "/api/mcp/data/chain/NOPE", Some(token));
    assert_eq!(status, 404, "{body}");
    assert!(body["error"].as_str().unwrap().contains("NOPE"), "{body}");

    // An unknown path: 404 with suggestions, the docs link and the count.
    let (status, body) = get(&address, "/api/mcp/data/no-such-endpoint", Some(token));
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["endpoint_count"].as_u64(), Some(count));
    assert!(body["did_you_mean"].is_array());
    assert_eq!(body["docs"], "/api/mcp/data/docs");

    // The snapshot-age gauge is fed by the snapshots the server loaded.
    let (status, metrics) = fetch(&address, "/metrics", None);
    assert_eq!(status, 200, "{metrics}");
    for dataset in ["chain", "exposures", "flow"] {
        assert!(
            metrics.contains(&format!(
                "optics_snapshot_age_seconds{{dataset=\"{dataset}\"}}"
            )),
            "{dataset}: {metrics}"
        );
    }

    // One JSON log line per request on stderr, with the path and status, and neither the
    // token nor the query string anywhere in the log.
    let log = std::fs::read_to_string(&log_file).expect("log file");
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let request_line = |path: &str, status: u64| {
        lines.iter().any(|l| {
            l["span"]["name"] == "request"
                && l["span"]["path"] == path
                && l["span"]["status"].as_u64() == Some(status)
        })
    };
    assert!(request_line("/api/mcp/data/chain/SPY", 200), "{log}");
    assert!(request_line("/api/mcp/data/no-such-endpoint", 404), "{log}");
    assert!(request_line("/api/mcp/data/", 401), "{log}");
    assert!(
        lines
            .iter()
            .all(|l| l["level"].is_string() && l["timestamp"].is_string())
    );
    assert!(!log.contains(token), "the token was logged");
    assert!(!log.contains("strikes_around"), "a query string was logged");
}
