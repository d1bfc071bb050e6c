//! `/earnings-calendar` and `/economic-calendar` through the real router, on a clock at Friday
//! 2026-11-20 10:30 New York: the window and its day grid, the implied move recomputed here
//! from the chain's rows (forward-ATM IV by hand, time to the expiration's close by hand), the
//! historical move from the fixture's gaps, the point-in-time cut of actuals, the parameter
//! edges, and every field the reference documents.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{NaiveDate, NaiveTime, TimeZone, Utc};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{Market, MemoryMarket, app, apple, assert_close, market, num, quoted_at};
use optics_api::market::SessionBar;
use optics_compute::time::NyseCalendar;
use optics_schemas::{ChainRow, EarningsEvent, EarningsTiming, EconomicEvent, Importance};
use serde_json::Value;

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// The clock's New York date.
fn today() -> NaiveDate {
    day(2026, 11, 20)
}

fn report(
    symbol: &str,
    date: NaiveDate,
    timing: EarningsTiming,
    eps_actual: Option<f64>,
) -> EarningsEvent {
    EarningsEvent {
        symbol: symbol.to_owned(),
        report_date: date,
        timing,
        fiscal_quarter: "FY2026 Q4".to_owned(),
        eps_estimate: 1.5,
        eps_actual,
        revenue_estimate: Some(9.0e10),
        revenue_actual: eps_actual.map(|_| 9.4e10),
    }
}

/// AAPL's past gaps, percent, oldest first: 14 reports, so the last 12 are averaged.
const GAPS: [f64; 14] = [
    9.0, -11.0, 6.0, -4.0, 3.0, 8.0, -2.5, 5.0, -7.0, 1.5, 4.0, -3.5, 2.0, 6.5,
];

/// NYSE sessions from 2023-01-03 through the day before the clock's date, plus the clock's
/// own date (a bar the read must not use before that session's close).
fn sessions() -> Vec<NaiveDate> {
    day(2023, 1, 3)
        .iter_days()
        .take_while(|d| *d <= today())
        .filter(|d| NyseCalendar.is_trading_day(*d))
        .collect()
}

/// AAPL's past reports: report `k` reacts at session 30 + 50 k, alternately after the close
/// (dated the session before) and before the open (dated the reaction session itself).
fn past_reports(dates: &[NaiveDate]) -> Vec<(EarningsEvent, usize)> {
    (0..GAPS.len())
        .map(|k| {
            let reaction = 30 + 50 * k;
            let (date, timing) = if k % 2 == 0 {
                (dates[reaction - 1], EarningsTiming::AfterClose)
            } else {
                (dates[reaction], EarningsTiming::BeforeOpen)
            };
            (report("AAPL", date, timing, Some(1.6)), reaction)
        })
        .collect()
}

/// Bars whose closes drift slowly; each reaction session opens at its gap from the close
/// before. Today's bar opens 50 % up: a read before the close must ignore it.
fn bars() -> Vec<SessionBar> {
    let dates = sessions();
    let reactions: Vec<usize> = past_reports(&dates).iter().map(|(_, r)| *r).collect();
    let mut out: Vec<SessionBar> = Vec::new();
    for (i, date) in dates.iter().enumerate() {
        let close = 150.0 + (i % 17) as f64;
        let prev_close = out.last().map_or(close, |b| b.close);
        let open = match reactions.iter().position(|r| *r == i) {
            Some(k) => prev_close * (1.0 + GAPS[k] / 100.0),
            None if *date == today() => prev_close * 1.5,
            None => prev_close,
        };
        out.push(SessionBar {
            date: *date,
            open,
            high: open.max(close),
            low: open.min(close),
            close,
            volume: 1,
        });
    }
    out
}

fn aapl_market() -> Market {
    market("AAPL", 230.0, 41, 11)
}

/// AAPL (chain, bars, company, 14 past reports and one next Tuesday after the close); MSFT
/// reporting today before the open (its reaction has opened) and NVDA today after the close
/// (its reaction is Monday), both with actuals stored; ZZZ outside the universe on Wednesday
/// with an unknown timing; a report yesterday and one in December.
fn reader() -> MemoryMarket {
    let dates = sessions();
    let mut reader = MemoryMarket::default()
        .with(&aapl_market())
        .with_company(apple())
        .with_bars("AAPL", bars())
        .covering("MSFT")
        .covering("NVDA")
        .with_report(report(
            "AAPL",
            day(2026, 11, 24),
            EarningsTiming::AfterClose,
            Some(1.9),
        ))
        .with_report(report(
            "MSFT",
            today(),
            EarningsTiming::BeforeOpen,
            Some(3.1),
        ))
        .with_report(report(
            "NVDA",
            today(),
            EarningsTiming::AfterClose,
            Some(0.8),
        ))
        .with_report(report(
            "ZZZ",
            day(2026, 11, 25),
            EarningsTiming::Unknown,
            None,
        ))
        .with_report(report(
            "IBM",
            day(2026, 11, 19),
            EarningsTiming::AfterClose,
            None,
        ))
        .with_report(report(
            "ORCL",
            day(2026, 12, 15),
            EarningsTiming::AfterClose,
            None,
        ));
    for (r, _) in past_reports(&dates) {
        reader = reader.with_report(r);
    }
    reader
}

async fn data(reader: MemoryMarket, uri: &str) -> Value {
    let app = app(reader, quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await.data()
}

fn row<'a>(d: &'a Value, symbol: &str) -> &'a Value {
    d["earnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["symbol"] == symbol)
        .unwrap_or_else(|| panic!("no row of {symbol}: {d}"))
}

/// Forward-ATM IV (percentage points) of `rows` (one expiration), written out here: each
/// strike's out-of-the-money IV, total variance linear in ln(K) between the strikes around
/// the forward.
fn forward_atm_iv(rows: &[&ChainRow]) -> f64 {
    let forward = rows[0].forward;
    let otm_iv = |r: &ChainRow| {
        if r.strike >= forward {
            r.call.iv.unwrap()
        } else {
            r.put.iv.unwrap()
        }
    };
    let below = rows
        .iter()
        .filter(|r| r.strike <= forward)
        .max_by(|a, b| a.strike.total_cmp(&b.strike))
        .unwrap();
    let above = rows
        .iter()
        .filter(|r| r.strike >= forward)
        .min_by(|a, b| a.strike.total_cmp(&b.strike))
        .unwrap();
    let (k1, s1, k2, s2) = (below.strike, otm_iv(below), above.strike, otm_iv(above));
    let x = (forward / k1).ln() / (k2 / k1).ln();
    100.0 * ((1.0 - x) * s1 * s1 + x * s2 * s2).sqrt()
}

#[tokio::test]
async fn the_window_runs_from_today_with_every_report_in_it() {
    let d = data(reader(), "/earnings-calendar").await;
    assert_eq!(d["from_date"], "2026-11-20");
    assert_eq!(d["to_date"], "2026-11-27");
    assert_eq!(d["days_ahead"], 7);
    assert_eq!(d["timestamp"], "2026-11-20T15:30:00Z");
    assert_eq!(d["clamped"], serde_json::json!([]));
    // By date, then bmo, amc, tbd: yesterday's and December's reports are out.
    let symbols: Vec<&str> = d["earnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(symbols, ["MSFT", "NVDA", "AAPL", "ZZZ"]);
    assert_eq!(d["total_count"], 4);

    let aapl = row(&d, "AAPL");
    assert_eq!(aapl["company_name"], "Apple Inc.");
    assert_eq!(aapl["sector"], "Information Technology");
    assert_eq!(aapl["market_cap"], 3.4e12);
    assert_eq!(aapl["timing"], "amc");
    assert_eq!(aapl["days_until"], 4);
    // 16:05 New York in November is EST.
    assert_eq!(aapl["datetime"], "2026-11-24T16:05:00-05:00");
    assert_eq!(aapl["reaction_date"], "2026-11-25");
    assert_eq!(aapl["eps_estimate"], 1.5);
    assert_eq!(aapl["revenue_estimate"], 9.0e10);
    assert_eq!(aapl["implied_move_basis"], "expected_abs_move");
    assert_eq!(row(&d, "MSFT")["datetime"], "2026-11-20T08:00:00-05:00");
    assert_eq!(row(&d, "MSFT")["days_until"], 0);
    // An unknown timing: no listed time, and the later of its possible reactions.
    let zzz = row(&d, "ZZZ");
    assert_eq!(zzz["timing"], "tbd");
    assert_eq!(zzz["datetime"], Value::Null);
    assert_eq!(zzz["reaction_date"], "2026-11-27");
    assert_eq!(zzz["company_name"], Value::Null);
    assert!(
        zzz["implied_move_reason"]
            .as_str()
            .unwrap()
            .contains("not in the coverage universe")
    );
    assert_eq!(zzz["move_ratio"], Value::Null);

    // A wider window reaches December.
    let wide = data(reader(), "/earnings-calendar?days_ahead=30").await;
    assert_eq!(wide["to_date"], "2026-12-20");
    assert_eq!(wide["total_count"], 5);
    assert_eq!(row(&wide, "ORCL")["days_until"], 25);
}

#[tokio::test]
async fn actuals_wait_for_the_reaction_session() {
    let d = data(reader(), "/earnings-calendar").await;
    // MSFT reported before today's open, which has passed (10:30): its actuals are public.
    let msft = row(&d, "MSFT");
    assert_eq!(msft["reported"], true);
    assert_eq!(msft["eps_actual"], 3.1);
    assert_eq!(msft["revenue_actual"], 9.4e10);
    assert_eq!(msft["implied_move"], Value::Null);
    assert!(
        msft["implied_move_reason"]
            .as_str()
            .unwrap()
            .contains("has opened")
    );
    // NVDA reports after today's close: the stored actuals are hidden until Monday's open.
    let nvda = row(&d, "NVDA");
    assert_eq!(nvda["reaction_date"], "2026-11-23");
    assert_eq!(nvda["reported"], false);
    assert_eq!(nvda["eps_actual"], Value::Null);
    assert_eq!(nvda["revenue_actual"], Value::Null);
    assert_eq!(nvda["eps_estimate"], 1.5);
    assert_eq!(row(&d, "AAPL")["eps_actual"], Value::Null);
    // Friday 23:00 New York is still before NVDA's reaction.
    let app = app_at_friday_evening();
    let d = get(&app, "/api/mcp/data/earnings-calendar", &[])
        .await
        .data();
    assert_eq!(row(&d, "NVDA")["eps_actual"], Value::Null);
    // A pre-open report on Monday: hidden until 09:30 New York (14:30 UTC), shown from then.
    let with_monday = || {
        reader().with_report(report(
            "JPM",
            day(2026, 11, 23),
            EarningsTiming::BeforeOpen,
            Some(5.2),
        ))
    };
    let monday = |h, m, s| Utc.with_ymd_and_hms(2026, 11, 23, h, m, s).unwrap();
    let before = get(
        &app_at(with_monday(), monday(14, 29, 59)),
        "/api/mcp/data/earnings-calendar",
        &[],
    )
    .await
    .data();
    assert_eq!(row(&before, "JPM")["eps_actual"], Value::Null);
    assert_eq!(row(&before, "JPM")["reported"], false);
    let after = get(
        &app_at(with_monday(), monday(14, 30, 0)),
        "/api/mcp/data/earnings-calendar",
        &[],
    )
    .await
    .data();
    assert_eq!(row(&after, "JPM")["eps_actual"], 5.2);
    assert_eq!(row(&after, "JPM")["revenue_actual"], 9.4e10);
    assert_eq!(after["from_date"], "2026-11-23");
}

fn app_at(reader: MemoryMarket, at: chrono::DateTime<Utc>) -> axum::Router {
    app(reader, at)
}

/// The clock at Friday 23:00 New York (04:00 UTC Saturday): still Friday's calendar.
fn app_at_friday_evening() -> axum::Router {
    app(
        reader(),
        Utc.with_ymd_and_hms(2026, 11, 21, 4, 0, 0).unwrap(),
    )
}

#[tokio::test]
async fn the_implied_move_is_the_event_expirations_atm_iv_over_its_time() {
    let d = data(reader(), "/earnings-calendar").await;
    let aapl = row(&d, "AAPL");
    // AAPL reports Tuesday after the close: the reaction is Wednesday the 25th, and the first
    // listed expiration on or after it is Friday the 27th, an early close (13:00 New York).
    assert_eq!(aapl["implied_move_expiration"], "2026-11-27");
    let market = aapl_market();
    let rows: Vec<&ChainRow> = market
        .chain
        .rows
        .iter()
        .filter(|r| r.expiration == day(2026, 11, 27))
        .collect();
    let atm_iv = forward_atm_iv(&rows);
    assert_close(
        num(&aapl["implied_move_atm_iv"], "atm iv"),
        atm_iv,
        1e-12,
        "atm iv",
    );
    // From 15:30 UTC on the 20th to 18:00 UTC on the 27th: 7 days and 2.5 hours.
    let years: f64 = (7.0 * 86_400.0 + 2.5 * 3_600.0) / (365.0 * 86_400.0);
    let sigma = atm_iv * years.sqrt();
    assert_close(
        num(&aapl["implied_move_sigma"], "sigma"),
        sigma,
        1e-12,
        "sigma",
    );
    assert_close(
        num(&aapl["implied_move"], "implied"),
        0.8 * sigma,
        1e-12,
        "implied",
    );
    assert_eq!(aapl["implied_move_reason"], Value::Null);
    // Covered but no chain loaded: null with the reason.
    let nvda = row(&d, "NVDA");
    assert_eq!(nvda["implied_move_sigma"], Value::Null);
    assert!(
        nvda["implied_move_reason"]
            .as_str()
            .unwrap()
            .contains("no chain")
    );
    // A report whose reaction is after the last listed expiration (December 4th).
    let later = reader().with_report(report(
        "AAPL",
        day(2026, 12, 4),
        EarningsTiming::AfterClose,
        None,
    ));
    let d = data(later, "/earnings-calendar?days_ahead=20").await;
    let december = d["earnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["symbol"] == "AAPL" && r["date"] == "2026-12-04")
        .unwrap();
    assert_eq!(december["implied_move"], Value::Null);
    assert!(
        december["implied_move_reason"]
            .as_str()
            .unwrap()
            .contains("no listed expiration")
    );
}

#[tokio::test]
async fn the_historical_move_averages_the_last_twelve_gaps_and_the_ratio_divides() {
    let d = data(reader(), "/earnings-calendar").await;
    let aapl = row(&d, "AAPL");
    // The last twelve gaps of the fixture, by hand.
    let want = GAPS[2..].iter().map(|g| g.abs()).sum::<f64>() / 12.0;
    assert_eq!(aapl["hist_move_count"], 12);
    assert_close(
        num(&aapl["hist_avg_move"], "hist"),
        want,
        1e-9,
        "hist_avg_move",
    );
    // A report this morning reacts in today's bar (a 50 % gap), which is not complete before
    // the close: the average is unchanged at 10:30 and takes the gap in after 16:00.
    let with_today =
        || reader().with_report(report("AAPL", today(), EarningsTiming::BeforeOpen, None));
    let d_today = data(with_today(), "/earnings-calendar").await;
    for r in d_today["earnings"].as_array().unwrap() {
        if r["symbol"] == "AAPL" {
            assert_close(
                num(&r["hist_avg_move"], "hist"),
                want,
                1e-9,
                "before the close",
            );
        }
    }
    let evening = app(
        with_today(),
        Utc.with_ymd_and_hms(2026, 11, 20, 21, 30, 0).unwrap(),
    );
    let d_evening = get(&evening, "/api/mcp/data/earnings-calendar", &[])
        .await
        .data();
    let with_gap = (GAPS[3..].iter().map(|g| g.abs()).sum::<f64>() + 50.0) / 12.0;
    assert_close(
        num(&row(&d_evening, "AAPL")["hist_avg_move"], "hist"),
        with_gap,
        1e-9,
        "after the close",
    );
    let implied = num(&aapl["implied_move"], "implied");
    assert_close(
        num(&aapl["move_ratio"], "ratio"),
        implied / want,
        1e-9,
        "move_ratio",
    );
    // Without bars there is no history: null with a reason, and no ratio.
    let msft = row(&d, "MSFT");
    assert_eq!(msft["hist_avg_move"], Value::Null);
    assert_eq!(msft["hist_move_count"], 0);
    assert!(msft["hist_avg_move_reason"].is_string());
    assert_eq!(msft["move_ratio"], Value::Null);
}

#[tokio::test]
async fn every_day_of_the_window_is_listed_and_the_weeks_run_monday_to_sunday() {
    let d = data(reader(), "/earnings-calendar").await;
    let calendar = d["calendar"].as_array().unwrap();
    assert_eq!(calendar.len(), 8, "the 20th to the 27th");
    let friday = &calendar[0];
    assert_eq!(friday["date"], "2026-11-20");
    assert_eq!(friday["day_num"], 20);
    assert_eq!(friday["month_short"], "Nov");
    assert_eq!(friday["weekday"], 4);
    assert_eq!(friday["weekday_name"], "Friday");
    assert_eq!(friday["bmo"][0]["symbol"], "MSFT");
    assert_eq!(friday["amc"][0]["symbol"], "NVDA");
    assert_eq!(friday["tbd"], serde_json::json!([]));
    assert_eq!(friday["count"], 2);
    assert_eq!(calendar[1]["weekday_name"], "Saturday");
    assert_eq!(calendar[1]["count"], 0);
    assert_eq!(calendar[4]["amc"][0]["symbol"], "AAPL");
    assert_eq!(calendar[5]["tbd"][0]["symbol"], "ZZZ");
    // Weeks of Monday the 16th and Monday the 23rd.
    let grid = d["week_grid"].as_array().unwrap();
    assert_eq!(grid.len(), 2);
    for week in grid {
        assert_eq!(week.as_array().unwrap().len(), 7);
    }
    assert_eq!(grid[0][0]["date"], "2026-11-16");
    assert_eq!(grid[0][0]["in_window"], false);
    assert_eq!(grid[0][0]["empty"], true);
    assert_eq!(grid[0][4]["date"], "2026-11-20");
    assert_eq!(grid[0][4]["count"], 2);
    assert_eq!(grid[0][4]["empty"], false);
    assert_eq!(grid[1][1]["date"], "2026-11-24");
    assert_eq!(grid[1][1]["count"], 1);
    assert_eq!(grid[1][6]["date"], "2026-11-29");
    assert_eq!(grid[1][6]["in_window"], false);
    assert_eq!(grid[1][6]["day_num"], 29);
}

#[tokio::test]
async fn an_empty_store_lists_empty_days() {
    let d = data(MemoryMarket::default(), "/earnings-calendar?days_ahead=1").await;
    assert_eq!(d["earnings"], serde_json::json!([]));
    assert_eq!(d["total_count"], 0);
    assert_eq!(d["calendar"].as_array().unwrap().len(), 2);
    assert_eq!(d["calendar"][1]["weekday_name"], "Saturday");
    let grid = d["week_grid"].as_array().unwrap();
    assert_eq!(grid.len(), 1);
    assert!(
        grid[0]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["empty"] == true)
    );
    let e = data(MemoryMarket::default(), "/economic-calendar").await;
    assert_eq!(e["events"], serde_json::json!([]));
    assert_eq!(e["by_date"], serde_json::json!({}));
    assert_eq!(e["total_count"], 0);
}

#[tokio::test]
async fn days_ahead_is_clamped_with_a_notice() {
    let d = data(reader(), "/earnings-calendar?days_ahead=91").await;
    assert_eq!(d["days_ahead"], 90);
    assert_eq!(d["to_date"], "2027-02-18");
    assert_eq!(d["calendar"].as_array().unwrap().len(), 91);
    let notice = &d["clamped"][0];
    assert_eq!(notice["parameter"], "days_ahead");
    assert_eq!(notice["requested"], "91");
    assert_eq!(notice["used"], 90);
    assert_eq!(notice["max"], 90);
    let d = data(reader(), "/earnings-calendar?days_ahead=0").await;
    assert_eq!(d["days_ahead"], 1);
    assert_eq!(d["clamped"][0]["used"], 1);
    let app = app(reader(), quoted_at());
    let bad = get(&app, "/api/mcp/data/earnings-calendar?days_ahead=soon", &[]).await;
    bad.error(StatusCode::BAD_REQUEST);
}

// ---------------------------------------------------------------------------------------------
// /economic-calendar

fn release(
    date: NaiveDate,
    time: Option<(u32, u32)>,
    country: &str,
    event: &str,
    importance: Importance,
    [actual, forecast, previous]: [Option<&str>; 3],
) -> EconomicEvent {
    EconomicEvent {
        date,
        time: time.map(|(h, m)| NaiveTime::from_hms_opt(h, m, 0).unwrap()),
        country: country.to_owned(),
        event: event.to_owned(),
        importance,
        actual: actual.map(str::to_owned),
        forecast: forecast.map(str::to_owned),
        previous: previous.map(str::to_owned),
    }
}

fn economic_reader() -> MemoryMarket {
    use Importance::{High, Low, Medium};
    MemoryMarket::default().with_economic(vec![
        release(
            day(2026, 11, 19),
            Some((8, 30)),
            "US",
            "CPI YoY",
            High,
            [Some("3.2%"), Some("3.1%"), Some("-0.1%")],
        ),
        // Today 08:30: released by 10:30.
        release(
            today(),
            Some((8, 30)),
            "US",
            "Initial Jobless Claims",
            High,
            [Some("220K"), Some("225K"), Some("230K")],
        ),
        // Today 14:00 with an actual already stored: not public at 10:30.
        release(
            today(),
            Some((14, 0)),
            "US",
            "Treasury Budget",
            Medium,
            [Some("-257B"), Some("-250B"), Some("n/a")],
        ),
        // Today without a time: public only from tomorrow.
        release(
            today(),
            None,
            "US",
            "Baker Hughes Rig Count",
            Low,
            [Some("480"), None, Some("478")],
        ),
        release(
            day(2026, 11, 25),
            Some((10, 0)),
            "US",
            "New Home Sales",
            Medium,
            [None, Some("0.72M"), Some("0.71M")],
        ),
        release(
            day(2026, 11, 24),
            Some((5, 0)),
            "EU",
            "ECB Financial Stability Review",
            High,
            [None, None, None],
        ),
        release(
            day(2026, 12, 4),
            Some((8, 30)),
            "US",
            "Nonfarm Payrolls",
            High,
            [None, Some("150K"), Some("254K")],
        ),
        release(
            day(2026, 12, 10),
            Some((8, 30)),
            "US",
            "CPI YoY",
            High,
            [None, None, Some("3.2%")],
        ),
    ])
}

fn event<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == name)
        .unwrap_or_else(|| panic!("no {name}: {d}"))
}

#[tokio::test]
async fn the_economic_window_defaults_to_today_plus_fourteen_days_of_us_releases() {
    let d = data(economic_reader(), "/economic-calendar").await;
    assert_eq!(d["from_date"], "2026-11-20");
    assert_eq!(d["to_date"], "2026-12-04");
    assert_eq!(d["country"], "US");
    assert_eq!(d["timezone"], "America/New_York");
    let names: Vec<&str> = d["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    // By date and time, untimed last; yesterday, the EU release and December 10th are out.
    assert_eq!(
        names,
        [
            "Initial Jobless Claims",
            "Treasury Budget",
            "Baker Hughes Rig Count",
            "New Home Sales",
            "Nonfarm Payrolls"
        ]
    );
    assert_eq!(
        (
            &d["high_count"],
            &d["medium_count"],
            &d["low_count"],
            &d["total_count"]
        ),
        (
            &Value::from(2),
            &Value::from(2),
            &Value::from(1),
            &Value::from(5)
        )
    );
    let by_date = d["by_date"].as_object().unwrap();
    assert_eq!(
        by_date.keys().collect::<Vec<_>>(),
        ["2026-11-20", "2026-11-25", "2026-12-04"]
    );
    assert_eq!(by_date["2026-11-20"].as_array().unwrap().len(), 3);
    assert_eq!(by_date["2026-12-04"][0]["event"], "Nonfarm Payrolls");

    let claims = event(&d, "Initial Jobless Claims");
    assert_eq!(claims["time"], "08:30");
    assert_eq!(claims["impact"], "HIGH");
    assert_eq!(claims["importance"], "HIGH");
    assert_eq!(claims["released"], true);
    assert_eq!(
        (
            &claims["actual"],
            &claims["estimate"],
            &claims["previous"],
            &claims["unit"]
        ),
        (
            &Value::from(220.0),
            &Value::from(225.0),
            &Value::from(230.0),
            &Value::from("K")
        )
    );
    assert_eq!(claims["actual_text"], "220K");
    let sales = event(&d, "New Home Sales");
    assert_eq!(sales["estimate"], 0.72);
    assert_eq!(sales["unit"], "M");
    assert_eq!(sales["actual"], Value::Null);
}

#[tokio::test]
async fn an_actual_is_hidden_until_its_release_time() {
    let d = data(economic_reader(), "/economic-calendar?to_date=2026-11-20").await;
    // 14:00 today, after the clock's 10:30: the stored actual is not shown.
    let budget = event(&d, "Treasury Budget");
    assert_eq!(budget["released"], false);
    assert_eq!(budget["actual"], Value::Null);
    assert_eq!(budget["actual_text"], Value::Null);
    assert_eq!(budget["estimate"], -250.0);
    assert_eq!(budget["unit"], "B");
    // An unparseable text: null number, the text kept.
    assert_eq!(budget["previous"], Value::Null);
    assert_eq!(budget["previous_text"], "n/a");
    // No time: hidden for the whole of its day.
    let rigs = event(&d, "Baker Hughes Rig Count");
    assert_eq!(rigs["time"], Value::Null);
    assert_eq!(rigs["actual"], Value::Null);
    assert_eq!(rigs["previous"], 478.0);
    assert_eq!(rigs["unit"], Value::Null);
    // At 14:00 New York (19:00 UTC) the budget is out; the rig count the next day.
    let at_two = app(
        economic_reader(),
        Utc.with_ymd_and_hms(2026, 11, 20, 19, 0, 0).unwrap(),
    );
    let d = get(
        &at_two,
        "/api/mcp/data/economic-calendar?from_date=2026-11-20&to_date=2026-11-20",
        &[],
    )
    .await
    .data();
    assert_eq!(event(&d, "Treasury Budget")["actual"], -257.0);
    assert_eq!(event(&d, "Baker Hughes Rig Count")["actual"], Value::Null);
    let saturday = app(
        economic_reader(),
        Utc.with_ymd_and_hms(2026, 11, 21, 5, 0, 0).unwrap(),
    );
    let d = get(
        &saturday,
        "/api/mcp/data/economic-calendar?from_date=2026-11-20&to_date=2026-11-20",
        &[],
    )
    .await
    .data();
    assert_eq!(event(&d, "Baker Hughes Rig Count")["actual"], 480.0);
}

#[tokio::test]
async fn dates_and_country_choose_the_window() {
    let d = data(
        economic_reader(),
        "/economic-calendar?from_date=2026-11-19&to_date=2026-11-19",
    )
    .await;
    let cpi = event(&d, "CPI YoY");
    assert_eq!(
        (
            &cpi["actual"],
            &cpi["estimate"],
            &cpi["previous"],
            &cpi["unit"]
        ),
        (
            &Value::from(3.2),
            &Value::from(3.1),
            &Value::from(-0.1),
            &Value::from("%")
        )
    );
    assert_eq!(d["total_count"], 1);
    // from_date alone: fourteen days from it.
    let d = data(economic_reader(), "/economic-calendar?from_date=2026-11-26").await;
    assert_eq!(d["to_date"], "2026-12-10");
    assert_eq!(d["total_count"], 2);
    // Another country, in any case.
    let d = data(economic_reader(), "/economic-calendar?country=eu").await;
    assert_eq!(d["country"], "EU");
    assert_eq!(d["total_count"], 1);
    assert_eq!(d["events"][0]["time"], "05:00");
    assert_eq!(d["high_count"], 1);
}

#[tokio::test]
async fn bad_windows_and_countries_are_400s() {
    let app = app(economic_reader(), quoted_at());
    for (query, words) in [
        (
            "from_date=2026-11-20&to_date=2026-11-19",
            "before from_date",
        ),
        (
            "from_date=2026-01-01&to_date=2027-01-03",
            "at most 366 days",
        ),
        ("from_date=2026-13-01", "YYYY-MM-DD"),
        ("country=USA", "two-letter"),
        ("country=U1", "two-letter"),
    ] {
        let answer = get(
            &app,
            &format!("/api/mcp/data/economic-calendar?{query}"),
            &[],
        )
        .await;
        let body = answer.error(StatusCode::BAD_REQUEST);
        assert!(
            body["error"].as_str().unwrap().contains(words),
            "{query}: {body}"
        );
    }
    // 366 days is the longest window served.
    let answer = get(
        &app,
        "/api/mcp/data/economic-calendar?from_date=2026-01-01&to_date=2027-01-02",
        &[],
    )
    .await;
    assert_eq!(answer.data()["to_date"], "2027-01-02");
}

#[tokio::test]
async fn every_documented_field_is_served() {
    assert_documented_fields_served(
        "earnings-calendar",
        &data(reader(), "/earnings-calendar").await,
    );
    assert_documented_fields_served(
        "economic-calendar",
        &data(economic_reader(), "/economic-calendar").await,
    );
}
