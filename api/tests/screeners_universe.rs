//! `/screen` and `/market-overview` through the real router over a small universe: every
//! preset's membership and order is recomputed here from the documented rule applied to the
//! `/cores` figures of each name (the screens read the same row), with names planted so the
//! IV-rank, VRP and mean-reversion screens are not empty; the market overview's aggregates are
//! recomputed the same way.

mod common;
mod exposure_support;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::NaiveDate;
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{
    MemoryMarket, app, market, market_from_rows, quoted_at, result_tickers, weekdays_before,
};
use optics_api::market::SessionBar;
use optics_schemas::{AssetClass, Company, VolDailyRow};
use serde_json::Value;

/// Sessions of stored history per name.
const SESSIONS: usize = 300;

/// (symbol, asset class, sector, market cap $, spot, base iv30d, how the last sessions move).
type Name = (
    &'static str,
    AssetClass,
    Option<&'static str>,
    Option<f64>,
    f64,
    f64,
    Ending,
);

#[derive(Debug, Clone, Copy)]
enum Ending {
    /// iv30d wanders around its base to the end.
    Calm,
    /// iv30d jumps to twice its base over the last five sessions.
    Spike,
    /// iv30d falls to half its base over the last five sessions.
    Slump,
}

const NAMES: [Name; 8] = [
    (
        "SPX",
        AssetClass::Index,
        None,
        None,
        6_000.0,
        16.0,
        Ending::Calm,
    ),
    (
        "SPY",
        AssetClass::Etf,
        None,
        None,
        600.0,
        15.0,
        Ending::Calm,
    ),
    (
        "XLK",
        AssetClass::Etf,
        Some("Information Technology"),
        None,
        285.0,
        22.0,
        Ending::Calm,
    ),
    (
        "AAA",
        AssetClass::Stock,
        Some("Information Technology"),
        Some(9e10),
        200.0,
        30.0,
        Ending::Spike,
    ),
    (
        "BBB",
        AssetClass::Stock,
        Some("Information Technology"),
        Some(4e10),
        150.0,
        35.0,
        Ending::Slump,
    ),
    (
        "CCC",
        AssetClass::Stock,
        Some("Energy"),
        Some(2e10),
        80.0,
        28.0,
        Ending::Calm,
    ),
    (
        "DDD",
        AssetClass::Stock,
        Some("Energy"),
        Some(3e9),
        60.0,
        40.0,
        Ending::Spike,
    ),
    (
        "EEE",
        AssetClass::Stock,
        Some("Energy"),
        Some(5e8),
        45.0,
        55.0,
        Ending::Calm,
    ),
];

fn wobble(i: usize, k: usize) -> f64 {
    let x = ((i * 7919 + k * 104_729) as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (x >> 33) as f64 / (1u64 << 31) as f64 - 0.5
}

fn history(k: usize, name: &Name) -> (Vec<VolDailyRow>, Vec<SessionBar>) {
    let (symbol, _, _, _, spot, base, ending) = *name;
    let dates = weekdays_before(SESSIONS);
    // Closes walk back from spot so the last stored close is near the chain's.
    let mut closes = vec![spot; SESSIONS];
    for i in (0..SESSIONS - 1).rev() {
        closes[i] = closes[i + 1] * (-(wobble(i, k) * 0.03)).exp();
    }
    let mut rows = Vec::new();
    let mut bars = Vec::new();
    for (i, date) in dates.into_iter().enumerate() {
        let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
        let mut row = VolDailyRow::new(symbol, date, as_of, closes[i]);
        let left = SESSIONS - i;
        let factor = match ending {
            Ending::Spike if left <= 5 => 1.0 + (6 - left) as f64 / 5.0,
            Ending::Slump if left <= 5 => 1.0 - (6 - left) as f64 / 10.0,
            _ => 1.0 + 0.15 * ((i as f64) * 0.21 + k as f64).sin(),
        };
        row.iv30d_pct = Some(base * factor);
        row.iv60d_pct = Some(base * factor * 1.03);
        row.iv90d_pct = Some(base * factor * (1.02 + 0.04 * k as f64));
        row.hv_20d_pct = Some(base * 0.9);
        row.hv_30d_pct = Some(base * 0.9);
        row.skew_slope_30d = Some(-30.0 + 5.0 * ((i as f64) * 0.2 + k as f64).sin());
        rows.push(row);
        let previous = if i == 0 { closes[0] } else { closes[i - 1] };
        bars.push(SessionBar {
            date,
            open: previous,
            high: previous.max(closes[i]) * 1.004,
            low: previous.min(closes[i]) * 0.996,
            close: closes[i],
            volume: 1_000_000 + (k as u64) * 10_000,
        });
    }
    (rows, bars)
}

fn company(name: &Name) -> Company {
    let (symbol, asset_class, sector, market_cap, ..) = *name;
    Company {
        symbol: symbol.to_owned(),
        name: format!("{symbol} Inc."),
        asset_class,
        sector: sector.map(str::to_owned),
        sector_etf: sector.map(|_| "XLK".to_owned()),
        market_cap,
        beta_spy: 1.0,
        corr_spy: 0.7,
        priced_on_forward: asset_class == AssetClass::Index,
        industry: None,
    }
}

/// The names with planted IV endings have no live chain, so their figures come from their
/// stored sessions; the others have one (CCC's traded heavily against its open interest).
fn reader() -> MemoryMarket {
    let mut reader = MemoryMarket::default();
    for (k, name) in NAMES.iter().enumerate() {
        let (rows, bars) = history(k, name);
        reader = match name.6 {
            Ending::Calm => {
                let mut listed = market(name.0, name.4, 41, 3 + k as u64);
                if name.0 == "CCC" {
                    let mut chain_rows = listed.chain.rows.clone();
                    for row in &mut chain_rows {
                        for side in [&mut row.call, &mut row.put] {
                            let oi = side.open_interest.unwrap_or(0).max(100);
                            side.open_interest = Some(oi);
                            side.volume = Some(3 * oi);
                        }
                    }
                    listed = market_from_rows(chain_rows);
                }
                reader.with(&listed)
            }
            Ending::Spike | Ending::Slump => reader.covering(name.0),
        };
        reader = reader
            .with_company(company(name))
            .with_vol_history(name.0, rows)
            .with_bars(name.0, bars);
    }
    // CCC reports on the Tuesday after the session: this week's earnings.
    reader.with_earnings("CCC", NaiveDate::from_ymd_opt(2026, 11, 24).unwrap())
}

async fn data(app: &axum::Router, uri: &str) -> Value {
    get(app, &format!("/api/mcp/data{uri}"), &[]).await.data()
}

/// The cores figures every name's screen row is read from.
const FIELDS: &str = "stkPx,mktCap,iv30d,iv60d,clsHv20d,ivPctile1y,slopePctile1y,contango,\
iv30dMean1y,iv30dStdv1y,daysToNextErn,impErnMv,correlSpy1m,correlSpy1y,cVolu,pVolu,cOi,pOi,\
stkPxChng1d,stkPxChng1wk,skew25d30d";

async fn cores(app: &axum::Router) -> BTreeMap<&'static str, Value> {
    let mut out = BTreeMap::new();
    for name in NAMES {
        out.insert(
            name.0,
            data(app, &format!("/cores/{}?fields={FIELDS}", name.0)).await,
        );
    }
    out
}

fn f(row: &Value, field: &str) -> Option<f64> {
    row[field].as_f64()
}

/// The documented rule of each preset over one cores row: its ranking figure when the name is
/// a member.
fn rule(screen: &str, row: &Value) -> Option<f64> {
    let vrp = || Some(f(row, "iv30d")? - f(row, "clsHv20d")?);
    match screen {
        "high_iv_rank" => f(row, "ivPctile1y").filter(|p| *p >= 80.0),
        "low_iv_rank" => f(row, "ivPctile1y").filter(|p| *p <= 20.0),
        "high_vrp" => vrp().filter(|v| *v >= 5.0),
        "high_skew" => f(row, "slopePctile1y")
            .map(|p| 100.0 - p)
            .filter(|p| *p >= 80.0),
        "steep_contango" => f(row, "contango").filter(|c| *c >= 3.0),
        "mean_reversion" => {
            let sd = f(row, "iv30dStdv1y").filter(|s| *s > 0.0)?;
            let z = (f(row, "iv30d")? - f(row, "iv30dMean1y")?) / sd;
            (z.abs() >= 2.0).then_some(z)
        }
        "decorrelation" => {
            let (m, y) = (f(row, "correlSpy1m")?, f(row, "correlSpy1y")?);
            (y >= 0.5 && y - m >= 0.3).then_some(y - m)
        }
        "unusual_volume" => {
            let volume = f(row, "cVolu")? + f(row, "pVolu")?;
            let oi = f(row, "cOi")? + f(row, "pOi")?;
            (volume >= 1_000.0 && oi > 0.0 && volume / oi >= 0.5).then_some(volume / oi)
        }
        "earnings_this_week" => f(row, "daysToNextErn").filter(|d| (0.0..=7.0).contains(d)),
        other => panic!("no rule for {other}"),
    }
}

#[tokio::test]
async fn every_preset_is_its_documented_rule_over_the_cores_rows() {
    let app = app(reader(), quoted_at());
    let rows = cores(&app).await;
    let mut non_empty = Vec::new();
    for screen in [
        "high_iv_rank",
        "low_iv_rank",
        "high_vrp",
        "high_skew",
        "steep_contango",
        "mean_reversion",
        "decorrelation",
        "unusual_volume",
        "earnings_this_week",
    ] {
        let answer = data(
            &app,
            &format!("/screen?screen_type={screen}&limit=200&min_market_cap=0"),
        )
        .await;
        let mut expected: Vec<(&str, f64)> = rows
            .iter()
            .filter_map(|(symbol, row)| rule(screen, row).map(|m| (*symbol, m)))
            .collect();
        let served: Vec<(String, f64)> = answer["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ticker"].as_str().unwrap().to_owned(),
                    r["metric_value"].as_f64().unwrap(),
                )
            })
            .collect();
        let mut served_sorted = served.clone();
        served_sorted.sort_by(|a, b| a.0.cmp(&b.0));
        expected.sort_by(|a, b| a.0.cmp(b.0));
        assert_eq!(
            served_sorted
                .iter()
                .map(|s| s.0.as_str())
                .collect::<Vec<_>>(),
            expected.iter().map(|e| e.0).collect::<Vec<_>>(),
            "{screen}: {answer}"
        );
        for ((_, got), (_, want)) in served_sorted.iter().zip(&expected) {
            assert!((got - want).abs() < 1e-9, "{screen}: {got} vs {want}");
        }
        assert_eq!(answer["total_matches"], expected.len(), "{screen}");
        assert_eq!(answer["total_scanned"], NAMES.len(), "{screen}");
        assert_eq!(answer["screen_name"], screen);
        assert!(answer["rule"].as_str().unwrap().len() > 20);
        if !served.is_empty() {
            non_empty.push(screen);
        }
        // Each row carries the figures of its cores row.
        for r in answer["results"].as_array().unwrap() {
            let symbol = r["ticker"].as_str().unwrap();
            let core = &rows[symbol];
            assert_eq!(r["iv30d"], core["iv30d"], "{screen} {symbol}");
            assert_eq!(r["hv20d"], core["clsHv20d"], "{screen} {symbol}");
            assert_eq!(r["iv_percentile"], core["ivPctile1y"], "{screen} {symbol}");
            assert_eq!(r["contango"], core["contango"], "{screen} {symbol}");
        }
    }
    // The planted names make these screens non-empty: AAA's and DDD's IV spiked, BBB's fell,
    // CCC reports next Tuesday and traded three times its open interest.
    for screen in [
        "high_iv_rank",
        "low_iv_rank",
        "high_vrp",
        "mean_reversion",
        "earnings_this_week",
        "unusual_volume",
    ] {
        assert!(non_empty.contains(&screen), "{screen} is empty");
    }
    let high = data(&app, "/screen?screen_type=high_iv_rank&min_market_cap=0").await;
    let members = result_tickers(&high);
    assert!(
        members.contains(&"AAA") && members.contains(&"DDD"),
        "{high}"
    );
    let low = data(&app, "/screen?screen_type=low_iv_rank&min_market_cap=0").await;
    assert_eq!(low["results"][0]["ticker"], "BBB", "{low}");
}

#[tokio::test]
async fn the_universe_filter_limit_and_catalog() {
    let app = app(reader(), quoted_at());
    // Default floor $1bn: the index, the ETFs (no market cap) and EEE ($0.5bn) are left out.
    let answer = data(&app, "/screen?screen_type=high_vrp").await;
    assert_eq!(answer["universe_size"], NAMES.len());
    assert_eq!(answer["total_scanned"], 4, "{answer}");
    assert!(
        answer["universe_filter"]
            .as_str()
            .unwrap()
            .contains("1000000000")
    );
    // Names reporting soon can be dropped: CCC reports in four days.
    let kept = data(
        &app,
        "/screen?screen_type=high_vrp&exclude_earnings_days=10",
    )
    .await;
    assert_eq!(kept["total_scanned"], 3);
    let kept = data(&app, "/screen?screen_type=high_vrp&exclude_earnings_days=3").await;
    assert_eq!(kept["total_scanned"], 4);
    // limit cuts the rows, not the count.
    let all = data(
        &app,
        "/screen?screen_type=high_vrp&min_market_cap=0&limit=200",
    )
    .await;
    let one = data(
        &app,
        "/screen?screen_type=high_vrp&min_market_cap=0&limit=1",
    )
    .await;
    assert_eq!(one["results"].as_array().unwrap().len(), 1);
    assert_eq!(one["total_matches"], all["total_matches"]);
    assert_eq!(one["results"][0], all["results"][0]);
    // Rows come best first.
    let metrics: Vec<f64> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric_value"].as_f64().unwrap())
        .collect();
    assert!(metrics.windows(2).all(|w| w[0] >= w[1]), "{metrics:?}");
    // The catalog.
    let list = data(&app, "/screen?screen_type=list").await;
    let screens = list["screens"].as_array().unwrap();
    assert_eq!(screens.len(), 11);
    assert!(
        screens
            .iter()
            .all(|s| s["rule"].as_str().unwrap().len() > 20)
    );
    assert_eq!(list["results"], serde_json::json!([]));
    assert_documented_fields_served("screen", &all);
    // Bad input: a 400 in the envelope.
    let bad = get(&app, "/api/mcp/data/screen?screen_type=hot", &[]).await;
    bad.error(StatusCode::BAD_REQUEST);
    let bad = get(&app, "/api/mcp/data/screen?exclude_earnings_days=x", &[]).await;
    bad.error(StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_market_overview_summarises_the_same_rows() {
    let app = app(reader(), quoted_at());
    let rows = cores(&app).await;
    let overview = data(&app, "/market-overview").await;
    assert_documented_fields_served("market-overview", &overview);
    // Statistics over single names and ETFs (the index stands apart).
    let names: Vec<&Value> = NAMES
        .iter()
        .filter(|n| n.1 != AssetClass::Index)
        .map(|n| &rows[n.0])
        .collect();
    let ivs: Vec<f64> = names.iter().filter_map(|r| f(r, "iv30d")).collect();
    let mean_iv = ivs.iter().sum::<f64>() / ivs.len() as f64;
    let stats = &overview["market_stats"];
    assert!((stats["avg_iv30d"].as_f64().unwrap() - mean_iv).abs() < 1e-9);
    assert_eq!(stats["universe_size"], NAMES.len());
    let vrps: Vec<f64> = names
        .iter()
        .filter_map(|r| Some(f(r, "iv30d")? - f(r, "clsHv20d")?))
        .collect();
    let mean_vrp = vrps.iter().sum::<f64>() / vrps.len() as f64;
    assert!((stats["avg_vrp"].as_f64().unwrap() - mean_vrp).abs() < 1e-9);
    let label = stats["market_regime"].as_str().unwrap();
    assert!(["calm", "normal", "elevated", "stressed"].contains(&label));
    // Sectors: IT holds XLK, AAA and BBB; Energy CCC, DDD and EEE.
    let sectors = overview["sector_heatmap"].as_array().unwrap();
    let count = |name: &str| {
        sectors
            .iter()
            .find(|s| s["sector"] == name)
            .map(|s| s["count"].as_u64().unwrap())
    };
    assert_eq!(count("Information Technology"), Some(3));
    assert_eq!(count("Energy"), Some(3));
    let etfs: Vec<&str> = overview["etf_heatmap"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ticker"].as_str().unwrap())
        .collect();
    assert_eq!(etfs, ["SPY", "XLK"]);
    assert_eq!(overview["index_prices"]["SPX"]["ticker"], "SPX");
    assert_eq!(
        overview["index_prices"]["SPX"]["price"], rows["SPX"]["stkPx"],
        "{overview}"
    );
    // Rates come from the SPX chain's pricing rate (the fixtures price at 4 %).
    let rates = &overview["treasury_rates"];
    assert_eq!(rates["source"], "SPX");
    for point in rates["points"].as_array().unwrap() {
        assert!((point["rate_pct"].as_f64().unwrap() - 4.0).abs() < 1e-12);
    }
    // Movers: largest |one-session change| first.
    let moves: Vec<f64> = overview["top_movers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["chg_1d"].as_f64().unwrap().abs())
        .collect();
    assert!(!moves.is_empty());
    assert!(moves.windows(2).all(|w| w[0] >= w[1]), "{moves:?}");
    // IV over HV: the rich list starts with the largest ratio.
    let rich = &overview["iv_hv_outliers"]["rich"][0];
    let best = names
        .iter()
        .filter_map(|r| Some(f(r, "iv30d")? / f(r, "clsHv20d")?))
        .fold(f64::MIN, f64::max);
    assert!((rich["iv_hv_ratio"].as_f64().unwrap() - best).abs() < 1e-9);
}
