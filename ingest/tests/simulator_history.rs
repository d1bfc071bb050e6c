//! The history generator: length, determinism, bar consistency, earnings gaps and reports,
//! dividends and the adjusted close, borrow spikes, the economic calendar, the IV history.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;
use std::time::Instant;

use chrono::{Datelike, NaiveDate, Weekday};
use optics_compute::time::NyseCalendar;
use optics_ingest::simulator::SimulatorError;
use optics_ingest::simulator::history::{HistoryConfig, MarketHistory, generate_history};
use optics_ingest::simulator::market::EPOCH;
use optics_ingest::simulator::reference::HARD_TO_BORROW_RATE;
use optics_ingest::simulator::universe::Universe;
use optics_schemas::{AssetClass, Importance, Message, decode, encode};

const SEED: u64 = 77;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn end() -> NaiveDate {
    date(2026, 11, 20)
}

/// The real universe's three-year history, generated once for the tests of this file.
fn history() -> &'static MarketHistory {
    static HISTORY: OnceLock<MarketHistory> = OnceLock::new();
    HISTORY.get_or_init(|| {
        let started = Instant::now();
        let history = generate_history(
            &Universe::real(),
            &HistoryConfig {
                seed: SEED,
                end: end(),
                years: 3,
            },
        )
        .unwrap();
        eprintln!(
            "history of {} underlyings, 3 years: {:.2} s (debug build)",
            Universe::real().len(),
            started.elapsed().as_secs_f64()
        );
        history
    })
}

#[test]
fn three_years_of_consistent_bars_for_every_underlying() {
    let h = history();
    let universe = Universe::real();
    let sessions = NyseCalendar.count_trading_days(h.start, h.end) as usize;
    assert!((750..=760).contains(&sessions), "{sessions}");
    assert_eq!(h.bars.len(), universe.len() * sessions);
    assert_eq!(h.iv.len(), h.bars.len());
    for u in universe.iter() {
        let bars: Vec<_> = h.bars_of(&u.symbol).collect();
        assert_eq!(bars.len(), sessions, "{}", u.symbol);
        assert_eq!(bars.last().unwrap().date, end());
        for pair in bars.windows(2) {
            assert!(pair[0].date < pair[1].date);
        }
        for b in &bars {
            assert!(NyseCalendar.is_trading_day(b.date));
            assert!(b.low > 0.0, "{} {}", b.symbol, b.date);
            assert!(b.high >= b.open.max(b.close), "{} {}", b.symbol, b.date);
            assert!(b.low <= b.open.min(b.close), "{} {}", b.symbol, b.date);
            assert!(b.adj_close > 0.0 && b.adj_close <= b.close + 1e-9);
            assert_eq!(
                b.volume == 0,
                u.asset_class == AssetClass::Index,
                "{}",
                b.symbol
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_history_and_another_seed_another() {
    let small = Universe::new(
        ["SPY", "AAPL", "VIX"]
            .iter()
            .map(|s| Universe::real().get(s).unwrap().clone())
            .collect(),
    )
    .unwrap();
    let config = HistoryConfig {
        seed: SEED,
        end: end(),
        years: 3,
    };
    let a = generate_history(&small, &config).unwrap();
    let b = generate_history(&small, &config).unwrap();
    assert_eq!(a, b);
    let c = generate_history(
        &small,
        &HistoryConfig {
            seed: SEED + 1,
            ..config
        },
    )
    .unwrap();
    assert_ne!(a.bars, c.bars);
    // A history of the same universe is the real universe's, name for name: a date's prices
    // do not depend on the other names or on how long the history is.
    let full: HashMap<_, _> = history()
        .bars
        .iter()
        .map(|b| ((b.symbol.clone(), b.date), b.clone()))
        .collect();
    for bar in &a.bars {
        assert_eq!(Some(bar), full.get(&(bar.symbol.clone(), bar.date)));
    }
    let shorter = generate_history(&small, &HistoryConfig { years: 1, ..config }).unwrap();
    for bar in &shorter.bars {
        let same = a
            .bars
            .iter()
            .find(|b| b.symbol == bar.symbol && b.date == bar.date)
            .unwrap();
        assert_eq!(bar.close, same.close);
        assert_eq!(bar.high, same.high);
    }
}

#[test]
fn earnings_gaps_land_on_reaction_days_and_reports_carry_the_news() {
    let h = history();
    let universe = Universe::real();
    let (mut on, mut on_n, mut off, mut off_n) = (0.0, 0usize, 0.0, 0usize);
    for u in universe.iter().filter(|u| u.earnings.is_some()) {
        let bars: Vec<_> = h.bars_of(&u.symbol).collect();
        let reactions: Vec<_> = h
            .reactions
            .iter()
            .filter(|r| r.symbol == u.symbol)
            .collect();
        assert!(
            (10..=13).contains(&reactions.len()),
            "{}: {}",
            u.symbol,
            reactions.len()
        );
        for pair in bars.windows(2) {
            let gap = (pair[1].open / pair[0].close - 1.0).abs();
            if reactions.iter().any(|r| r.reaction_date == pair[1].date) {
                on += gap;
                on_n += 1;
            } else {
                off += gap;
                off_n += 1;
            }
        }
        for r in &reactions {
            let bar = bars.iter().find(|b| b.date == r.reaction_date).unwrap();
            assert_eq!(bar.open, r.reaction_open);
            assert_eq!(bar.close, r.reaction_close);
            assert!(
                (r.gap_move_pct - (r.reaction_open / r.previous_close - 1.0) * 100.0).abs() < 1e-9
            );
        }
    }
    let (on, off) = (on / on_n as f64, off / off_n as f64);
    assert!(
        on > 3.0 * off,
        "mean |gap| {on} on reaction days vs {off} otherwise"
    );

    // Reports in the window carry actuals; those scheduled after the end do not. A beat goes
    // with an up-gap more often than not.
    let (mut agree, mut reported) = (0, 0);
    for e in &h.earnings {
        assert!(!e.fiscal_quarter.is_empty() && e.eps_estimate > 0.0);
        if e.report_date > end() {
            assert!(
                e.eps_actual.is_none() && e.revenue_actual.is_none(),
                "{e:?}"
            );
            continue;
        }
        if e.report_date < h.start {
            continue;
        }
        let actual = e.eps_actual.unwrap();
        assert!(e.revenue_actual.is_some());
        if let Some(r) = h
            .reactions
            .iter()
            .find(|r| r.symbol == e.symbol && r.report_date == e.report_date)
        {
            reported += 1;
            agree += usize::from((actual > e.eps_estimate) == (r.gap_move_pct > 0.0));
        }
    }
    assert!(
        reported > 500 && agree * 10 > reported * 6,
        "{agree} of {reported}"
    );
    // The IV crush: the 30-day IV falls over the reaction for most reports.
    let crushed = h
        .reactions
        .iter()
        .filter(|r| r.iv30_after < r.iv30_before)
        .count();
    assert!(
        crushed * 10 > h.reactions.len() * 9,
        "{crushed} of {}",
        h.reactions.len()
    );
}

#[test]
fn dividends_fall_on_trading_days_and_step_the_adjusted_close() {
    let h = history();
    let universe = Universe::real();
    let mut checked = 0;
    for u in universe.iter() {
        let dividends: Vec<_> = h
            .dividends
            .iter()
            .filter(|d| d.symbol == u.symbol)
            .collect();
        if u.asset_class == AssetClass::Index || u.dividend_yield == 0.0 {
            assert!(dividends.is_empty(), "{}", u.symbol);
            continue;
        }
        assert!(dividends.len() >= 6, "{}: {}", u.symbol, dividends.len());
        let bars: Vec<_> = h.bars_of(&u.symbol).collect();
        let by_date: BTreeMap<NaiveDate, usize> =
            bars.iter().enumerate().map(|(i, b)| (b.date, i)).collect();
        for d in &dividends {
            assert!(NyseCalendar.is_trading_day(d.ex_date) && d.pay_date >= d.ex_date);
            assert!(d.amount > 0.0);
            let Some(&i) = by_date.get(&d.ex_date) else {
                assert!(d.ex_date > end(), "{} {}", u.symbol, d.ex_date);
                continue;
            };
            if i == 0 {
                continue;
            }
            // Across the ex-date the adjustment ratio steps by 1 − amount / previous close.
            let ratio = |b: &optics_schemas::DailyBar| b.adj_close / b.close;
            let step = ratio(bars[i - 1]) / ratio(bars[i]);
            let expected = 1.0 - d.amount / bars[i - 1].close;
            assert!(
                (step - expected).abs() < 2e-4,
                "{} {}: {step} vs {expected}",
                u.symbol,
                d.ex_date
            );
            checked += 1;
        }
        // Between ex-dates the ratio does not move; after the last one it is 1.
        let last = bars.last().unwrap();
        assert!((last.adj_close - last.close).abs() < 1e-9);
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn borrow_fees_are_low_with_rare_spikes() {
    let h = history();
    let universe = Universe::real();
    let lendable = universe
        .iter()
        .filter(|u| u.asset_class != AssetClass::Index)
        .count();
    let sessions = h.bars_of("SPY").count();
    assert_eq!(h.borrow.len(), lendable * sessions);
    let hard = h.borrow.iter().filter(|b| b.is_hard_to_borrow).count();
    assert!(hard > 0, "some spike in three years of 80 names");
    assert!(hard * 20 < h.borrow.len(), "{hard} of {}", h.borrow.len());
    for b in &h.borrow {
        assert!(b.borrow_rate > 0.0 && b.borrow_rate < 2.0);
        assert_eq!(b.is_hard_to_borrow, b.borrow_rate >= HARD_TO_BORROW_RATE);
    }
}

#[test]
fn the_economic_calendar_has_the_major_releases_on_their_schedules() {
    let h = history();
    let year = |name: &str, y: i32| {
        h.economic
            .iter()
            .filter(|e| e.event == name && e.date.year() == y)
            .collect::<Vec<_>>()
    };
    for y in [2024, 2025] {
        assert_eq!(year("Nonfarm Payrolls", y).len(), 12);
        assert_eq!(year("CPI m/m", y).len(), 12);
        assert_eq!(year("Retail Sales m/m", y).len(), 12);
        assert_eq!(year("GDP q/q (Advance)", y).len(), 4);
        let fomc = year("FOMC Interest Rate Decision", y);
        assert_eq!(fomc.len(), 8);
        assert!(
            fomc.iter()
                .all(|e| e.date.weekday() == Weekday::Wed && e.importance == Importance::High)
        );
        assert!(year("Initial Jobless Claims", y).len() >= 50);
    }
    for e in &h.economic {
        assert_eq!(e.country, "US");
        assert!(
            NyseCalendar.is_trading_day(e.date),
            "{} {}",
            e.event,
            e.date
        );
        assert!(e.time.is_some());
        if e.date <= end() && !e.event.contains("Press Conference") && !e.event.contains("Minutes")
        {
            assert!(e.actual.is_some(), "{} {}", e.event, e.date);
        }
        if e.date > end() {
            assert!(e.actual.is_none());
        }
    }
    assert!(
        h.economic.iter().any(|e| e.date > end()),
        "scheduled releases ahead"
    );
}

#[test]
fn the_iv_history_prices_earnings_ahead_and_follows_the_market() {
    let h = history();
    for row in &h.iv {
        assert!(row.iv30 > 0.0 && row.iv30 < 3.0, "{row:?}");
        assert!(row.iv30 >= row.iv30_ex_earnings - 1e-12);
        assert!(row.vol_level > 0.0);
    }
    // A stock a few days before its report carries event variance in its 30-day IV.
    let reaction = h.reactions.iter().find(|r| r.symbol == "AAPL").unwrap();
    let before =
        h.iv.iter()
            .rfind(|r| r.symbol == "AAPL" && r.date < reaction.reaction_date)
            .unwrap();
    assert!(before.iv30 > 1.05 * before.iv30_ex_earnings, "{before:?}");
    assert!(before.next_earnings_move_sigma.is_some());
}

#[test]
fn history_messages_validate_and_round_trip() {
    let h = history();
    let messages = h.messages().unwrap();
    assert!(messages.len() > Universe::real().len() * 2);
    let first = encode(&messages[1]).unwrap();
    match (decode(&first).unwrap(), &messages[1]) {
        (Message::Data(a), Message::Data(b)) => assert_eq!(a.batch(), b.batch()),
        _ => panic!("data messages"),
    }
}

#[test]
fn bad_requests_are_refused() {
    let universe = Universe::real();
    let config = HistoryConfig {
        seed: SEED,
        end: end(),
        years: 0,
    };
    assert!(matches!(
        generate_history(&universe, &config),
        Err(SimulatorError::InvalidHistory { .. })
    ));
    let early = HistoryConfig {
        end: date(2011, 6, 1),
        years: 3,
        ..config
    };
    assert!(matches!(
        generate_history(&universe, &early),
        Err(SimulatorError::BeforeEpoch { epoch, .. }) if epoch == EPOCH
    ));
    let empty = Universe::new(Vec::new()).unwrap();
    assert_eq!(
        generate_history(&empty, &HistoryConfig { years: 1, ..config }),
        Err(SimulatorError::EmptyUniverse)
    );
}
