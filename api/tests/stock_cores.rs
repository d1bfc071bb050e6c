//! `/cores/{ticker}` through the real router: the default subset, `fields=a,b`, `fields=all`,
//! unknown names, values recomputed here with plain loops from the injected bars, vol_daily
//! rows, borrow fees and chain, an index's null borrow, and the catalog served at `/docs`.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::NaiveDate;
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{
    Market, MemoryMarket, app, assert_close, market, noise, num, quoted_at, trade_date,
    weekdays_before,
};
use optics_api::market::SessionBar;
use optics_compute::cores::{DEFAULT_FIELDS, catalog};
use optics_schemas::{AssetClass, BorrowRate, Company, Dividend, DividendFrequency, VolDailyRow};
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";

/// A deterministic shock in about ±1.5 %.
fn shock(i: u64, seed: u64) -> f64 {
    noise(i, seed) * 0.03
}

/// 300 sessions before the fixture session and the session itself.
fn dates() -> Vec<NaiveDate> {
    let mut d = weekdays_before(300);
    d.push(trade_date());
    d
}

/// Bars with log returns `ret(i)`, a high 1 % and a low 1.5 % beyond open/close.
fn bars(ret: impl Fn(u64) -> f64, start: f64) -> Vec<SessionBar> {
    let mut close = start;
    dates()
        .iter()
        .enumerate()
        .map(|(i, &date)| {
            let open = close;
            if i > 0 {
                close *= ret(i as u64).exp();
            }
            SessionBar {
                date,
                open,
                high: open.max(close) * 1.01,
                low: open.min(close) * 0.985,
                close,
                volume: 1_000 + (i as u64 % 7) * 100,
            }
        })
        .collect()
}

fn company(symbol: &str, class: AssetClass, market_cap: Option<f64>) -> Company {
    Company {
        symbol: symbol.to_owned(),
        name: symbol.to_owned(),
        asset_class: class,
        sector: None,
        sector_etf: None,
        market_cap,
        beta_spy: 1.0,
        corr_spy: 0.5,
        priced_on_forward: false,
        industry: None,
    }
}

/// Stored iv30d of session `i`.
fn stored_iv30(i: usize) -> f64 {
    25.0 + 6.0 * ((i as f64) * 0.37).sin()
}

fn vol_rows() -> Vec<VolDailyRow> {
    let d = weekdays_before(300);
    let n = d.len();
    d.iter()
        .enumerate()
        .map(|(i, &date)| {
            let mut r = VolDailyRow::new("AAPL", date, quoted_at(), 150.0);
            r.iv30d_pct = Some(stored_iv30(i));
            r.iv10d_pct = Some(stored_iv30(i) + 2.0);
            r.iv20d_pct = Some(stored_iv30(i) + 1.0);
            r.iv60d_pct = Some(stored_iv30(i) - 1.0);
            r.iv90d_pct = Some(stored_iv30(i) - 1.5);
            r.iv6m_pct = Some(stored_iv30(i) - 2.0);
            r.iv1yr_pct = Some(stored_iv30(i) - 2.5);
            r.skew25_30d_pct = Some(3.0);
            r.skew_slope_30d = Some(-10.0 + (i as f64 * 0.11).cos());
            if i == n - 1 {
                r.earnings_count = Some(8);
                r.earnings_avg_abs_move_pct = Some(4.2);
                r.earnings_up_count = Some(5);
                r.earnings_down_count = Some(3);
                r.earnings_beat_count = Some(6);
                r.earnings_miss_count = Some(2);
                r.earnings_avg_move_pct = Some(0.8);
                r.earnings_avg_up_move_pct = Some(4.0);
                r.earnings_avg_down_move_pct = Some(-4.5);
                r.earnings_avg_beat_move_pct = Some(1.5);
                r.earnings_avg_miss_move_pct = Some(-2.0);
                r.earnings_max_up_pct = Some(7.0);
                r.earnings_max_down_pct = Some(-8.0);
            }
            r
        })
        .collect()
}

fn dividend(ex_date: NaiveDate) -> Dividend {
    Dividend {
        symbol: "AAPL".to_owned(),
        ex_date,
        pay_date: ex_date + chrono::Duration::days(3),
        amount: 0.26,
        frequency: DividendFrequency::Quarterly,
    }
}

fn aapl() -> Market {
    market("AAPL", 150.0, 161, 7)
}

fn reader() -> MemoryMarket {
    let mut reader = MemoryMarket::default()
        .with(&aapl())
        .with_bars("AAPL", bars(|i| shock(i, 1) + 0.6 * shock(i, 2), 150.0))
        .with_bars("SPY", bars(|i| shock(i, 2), 600.0))
        .with_bars("SPX", bars(|i| shock(i, 2), 6000.0))
        .with_bars("QQQ", bars(|i| shock(i, 3), 500.0))
        .with_bars("IWM", bars(|i| shock(i, 4), 200.0))
        .with_bars("XLK", bars(|i| shock(i, 2) + shock(i, 1), 230.0))
        .with_earnings("AAPL", NaiveDate::from_ymd_opt(2026, 7, 30).unwrap())
        .with_dividend(dividend(NaiveDate::from_ymd_opt(2026, 8, 11).unwrap()))
        .with_dividend(dividend(NaiveDate::from_ymd_opt(2026, 11, 10).unwrap()))
        .with_dividend(dividend(NaiveDate::from_ymd_opt(2027, 2, 9).unwrap()))
        .with_vol_history("AAPL", vol_rows())
        .with_company(Company {
            sector: Some("Information Technology".to_owned()),
            sector_etf: Some("XLK".to_owned()),
            ..company("AAPL", AssetClass::Stock, Some(3.0e12))
        })
        .with_company(company("SPX", AssetClass::Index, None))
        .with_earnings("AAPL", NaiveDate::from_ymd_opt(2026, 11, 24).unwrap())
        .covering("SPY")
        .covering("SPX");
    for (i, date) in weekdays_before(40).into_iter().enumerate() {
        reader = reader.with_borrow(BorrowRate {
            symbol: "AAPL".to_owned(),
            date,
            borrow_rate: 0.003 + 0.0001 * i as f64,
            is_hard_to_borrow: false,
        });
    }
    reader
}

async fn call(uri: &str) -> (StatusCode, Value) {
    let app = app(reader(), quoted_at());
    let answer = get(&app, &format!("{PREFIX}{uri}"), &[]).await;
    (answer.status, answer.json())
}

fn log_returns(closes: &[f64]) -> Vec<f64> {
    closes.windows(2).map(|w| (w[1] / w[0]).ln()).collect()
}

fn sample_std(x: &[f64]) -> f64 {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

#[tokio::test]
async fn default_subset_is_served_with_hand_checked_values() {
    let (status, body) = call("/cores/AAPL").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = &body["data"];
    assert_eq!(data["ticker"], "AAPL");
    assert_eq!(data["field_set"], "default");
    assert_eq!(
        data["returned_field_count"].as_u64(),
        Some(DEFAULT_FIELDS.len() as u64)
    );
    assert_eq!(
        data["available_field_count"].as_u64(),
        Some(catalog().len() as u64)
    );
    assert!(catalog().len() >= 340);
    for name in DEFAULT_FIELDS {
        assert!(data.get(*name).is_some(), "{name} missing");
    }
    assert!(data.get("dlt5Iv1yr").is_none(), "not in the default subset");
    assert_documented_fields_served("cores", data);

    // Bars.
    let own = bars(|i| shock(i, 1) + 0.6 * shock(i, 2), 150.0);
    let spy = bars(|i| shock(i, 2), 600.0);
    let closes: Vec<f64> = own.iter().map(|b| b.close).collect();
    let n = closes.len();
    assert_close(num(&data["stkPx"], "stkPx"), closes[n - 1], 1e-12, "stkPx");
    assert_close(
        num(&data["stkPxChng1wk"], "chng"),
        (closes[n - 1] / closes[n - 6] - 1.0) * 100.0,
        1e-9,
        "stkPxChng1wk",
    );
    let returns = log_returns(&closes);
    let hv20 = sample_std(&returns[returns.len() - 20..]) * 252f64.sqrt() * 100.0;
    assert_close(num(&data["clsHv20d"], "hv"), hv20, 1e-9, "clsHv20d");
    let park: f64 = own[n - 20..]
        .iter()
        .map(|b| (b.high / b.low).ln().powi(2))
        .sum::<f64>()
        / (20.0 * 4.0 * 2f64.ln());
    assert_close(
        num(&data["orHv20d"], "or"),
        (park * 252.0).sqrt() * 100.0,
        1e-9,
        "orHv20d (Parkinson)",
    );
    let vols: Vec<f64> = own[n - 20..].iter().map(|b| b.volume as f64).collect();
    assert_close(
        num(&data["avgStkVolu20d"], "vol"),
        vols.iter().sum::<f64>() / 20.0,
        1e-12,
        "avgStkVolu20d",
    );
    // Beta and correlation to SPY over the last 252 returns.
    let spy_returns = log_returns(&spy.iter().map(|b| b.close).collect::<Vec<_>>());
    let (a, b) = (
        &returns[returns.len() - 252..],
        &spy_returns[spy_returns.len() - 252..],
    );
    let (ma, mb) = (a.iter().sum::<f64>() / 252.0, b.iter().sum::<f64>() / 252.0);
    let cov: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - ma) * (y - mb))
        .sum::<f64>()
        / 251.0;
    let (sa, sb) = (sample_std(a), sample_std(b));
    assert_close(
        num(&data["beta1y"], "beta"),
        cov / (sb * sb),
        1e-9,
        "beta1y",
    );
    assert_close(
        num(&data["correlSpy1y"], "corr"),
        cov / (sa * sb),
        1e-9,
        "correlSpy1y",
    );

    // IV: today's from the live chain, statistics over the 252 stored rows before it.
    let chain = aapl().chain;
    let iv30 = chain.implied().constant_maturity.iv30d_pct.unwrap();
    assert_close(num(&data["iv30d"], "iv30d"), iv30, 1e-12, "iv30d");
    let prior: Vec<f64> = (300 - 252..300).map(stored_iv30).collect();
    assert_close(
        num(&data["iv30dMean1y"], "mean"),
        prior.iter().sum::<f64>() / 252.0,
        1e-9,
        "iv30dMean1y",
    );
    assert_close(
        num(&data["iv30dStdv1y"], "std"),
        sample_std(&prior),
        1e-9,
        "iv30dStdv1y",
    );
    let below = prior.iter().filter(|v| **v < iv30).count() as f64;
    assert_close(
        num(&data["ivPctile1y"], "pctile"),
        below / 252.0 * 100.0,
        1e-9,
        "ivPctile1y",
    );
    let (lo, hi) = prior
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    assert_close(
        num(&data["ivRank1y"], "rank"),
        ((iv30 - lo) / (hi - lo) * 100.0).clamp(0.0, 100.0),
        1e-9,
        "ivRank1y",
    );
    let cm = &chain.implied().constant_maturity;
    assert_close(
        num(&data["contango"], "contango"),
        cm.iv90d_pct.unwrap() - cm.iv30d_pct.unwrap(),
        1e-9,
        "contango",
    );

    // Reference data.
    assert_eq!(data["mktCap"].as_f64(), Some(3.0e12));
    assert_eq!(data["nextErn"].as_f64(), Some(20261124.0));
    assert_eq!(data["daysToNextErn"].as_f64(), Some(4.0));
    assert_eq!(data["absAvgErnMv"].as_f64(), Some(4.2));
    assert_close(
        num(&data["borrow30"], "borrow"),
        (0.003 + 0.0001 * 39.0) * 100.0,
        1e-9,
        "borrow30 (percent)",
    );

    // Chain: volume and the largest-OI strike of the front (monthly) expiration.
    let rows: Vec<_> = chain
        .rows
        .iter()
        .filter(|r| r.expiration >= chain.open_expirations()[0])
        .collect();
    let calls: u64 = rows.iter().filter_map(|r| r.call.volume).sum();
    assert_eq!(data["cVolu"].as_f64(), Some(calls as f64));
    let front = chain.open_expirations()[0];
    assert_eq!(front, trade_date(), "2026-11-20 is a third Friday");
    let mut best = (0.0, 0u64);
    for r in chain.rows.iter().filter(|r| r.expiration == front) {
        let oi = r.call.open_interest.unwrap_or(0) + r.put.open_interest.unwrap_or(0);
        if oi > best.1 {
            best = (r.strike, oi);
        }
    }
    assert_eq!(data["oiMaxStrike"].as_f64(), Some(best.0));
    // The implied earnings move: the 2026-11-24 after-close report falls before the 11-27
    // and 12-04 expirations.
    let atm = |d: u32| {
        let e = chain
            .implied()
            .expirations
            .iter()
            .find(|e| {
                e.expiration == NaiveDate::from_ymd_opt(2026, 11, d).unwrap_or_default()
                    || (d == 34 && e.expiration == NaiveDate::from_ymd_opt(2026, 12, 4).unwrap())
            })
            .unwrap();
        (e.years_to_expiry, e.atm_iv_pct.unwrap() / 100.0)
    };
    let ((t1, s1), (t2, s2)) = (atm(27), atm(34));
    let (w1, w2) = (s1 * s1 * t1, s2 * s2 * t2);
    let event = w1 - (w2 - w1) / (t2 - t1) * t1;
    assert!(event > 0.0, "the fixture chain prices an event: {event}");
    if event > 0.0 {
        let e = event.sqrt();
        assert_close(
            num(&data["impErnMv"], "impErnMv"),
            e * (2.0 / std::f64::consts::PI).sqrt() * 100.0,
            1e-9,
            "impErnMv",
        );
        let t30 = 30.0 / 365.0;
        let ex = (((iv30 / 100.0).powi(2) * t30 - event).max(0.0) / t30).sqrt() * 100.0;
        assert_close(num(&data["exErnIv30d"], "exErn"), ex, 1e-9, "exErnIv30d");
    } else {
        assert!(data["impErnMv"].is_null());
    }
    // The fit statistic and delta IVs come from the live chain's smile fits.
    assert!(num(&data["error"], "error") >= 0.0);
    let (d25, d75) = (
        num(&data["dlt25Iv30d"], "dlt25"),
        num(&data["dlt75Iv30d"], "dlt75"),
    );
    assert!(d25 > 0.0 && d75 > 0.0);
}

#[tokio::test]
async fn requested_and_all_fields() {
    let (status, body) = call("/cores/AAPL?fields=iv30d,slope").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = &body["data"];
    assert_eq!(data["field_set"], "requested");
    assert_eq!(data["returned_field_count"].as_u64(), Some(2));
    assert!(data["iv30d"].is_number() && data["slope"].is_number());
    assert!(data.get("iv60d").is_none());

    let (status, body) = call("/cores/AAPL?fields=all").await;
    assert_eq!(status, StatusCode::OK);
    let data = &body["data"];
    let available = data["available_field_count"].as_u64().unwrap();
    assert_eq!(data["returned_field_count"].as_u64(), Some(available));
    for f in catalog() {
        assert!(
            data.get(f.name).is_some(),
            "{} missing from fields=all",
            f.name
        );
    }
    // Every field is computable on this fixture but the 25-delta skew (the synthetic chain's
    // wings) — each null is a named exception, never a silent gap.
    let nulls: Vec<&str> = catalog()
        .iter()
        .map(|f| f.name)
        .filter(|n| data[*n].is_null())
        .collect();
    assert_eq!(data["null_field_count"].as_u64(), Some(nulls.len() as u64));
    assert!(nulls.is_empty(), "null: {nulls:?}");
}

#[tokio::test]
async fn unknown_field_is_a_400_with_the_closest_names() {
    let (status, body) = call("/cores/AAPL?fields=iv30d,ivv30d").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let text = body.to_string();
    assert!(text.contains("ivv30d") && text.contains("iv30d"), "{text}");
    let (status, _) = call("/cores/NOPE").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_index_has_no_borrow() {
    let (status, body) = call("/cores/SPX?fields=borrow30,stkPx,mktCap,iv30d").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = &body["data"];
    assert!(data["borrow30"].is_null());
    assert!(data["mktCap"].is_null());
    assert!(data["iv30d"].is_null());
    assert!(data["stkPx"].is_number());
    let reason = data["reason"].as_str().unwrap();
    assert!(reason.contains("no borrow fees"), "{reason}");
}

#[tokio::test]
async fn docs_table_equals_the_catalog() {
    let app = app(reader(), quoted_at());
    let answer = get(&app, &format!("{PREFIX}/docs"), &[]).await;
    assert_eq!(answer.status, StatusCode::OK);
    let text = String::from_utf8(answer.body).unwrap();
    let section = text
        .split("\n## Cores fields\n")
        .nth(1)
        .expect("docs carry the cores field catalog");
    let rows: Vec<Vec<String>> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().replace("\\|", "|"))
                .collect()
        })
        .collect();
    assert_eq!(
        rows.len(),
        catalog().len(),
        "a row per field, a field per row"
    );
    for (row, field) in rows.iter().zip(catalog()) {
        assert_eq!(row[0], format!("`{}`", field.name));
        assert_eq!(row[1], field.unit);
        assert_eq!(row[2], field.definition);
        assert_eq!(row[3], field.source);
    }
}
