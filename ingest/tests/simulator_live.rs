//! The simulator on a clock: what it emits when, outside hours, across sessions. Every test
//! uses a `ManualClock` (and the `VirtualSleeper` that moves it): no wall clock, no sleeping.

mod support;

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};
use optics_compute::time::{Clock, ManualClock, new_york_datetime};
use optics_ingest::simulator::live::{LiveConfig, LivePoll, LiveSimulator, VirtualSleeper};
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::universe::Universe;
use optics_ingest::source::{QuoteSource, SourceEvent};
use optics_schemas::Dataset;
use support::quotes;

const SEED: u64 = 5;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn at(day: NaiveDate, hour: u32, minute: u32, second: u32) -> DateTime<Utc> {
    new_york_datetime(day, NaiveTime::from_hms_opt(hour, minute, second).unwrap()).to_utc()
}

fn universe() -> Arc<Universe> {
    let real = Universe::real();
    Arc::new(
        Universe::new(
            ["SPY", "AAPL", "VIX"]
                .iter()
                .map(|s| real.get(s).unwrap().clone())
                .collect(),
        )
        .unwrap(),
    )
}

fn live(clock: &Arc<ManualClock>, minutes: i64) -> LiveSimulator {
    let config = LiveConfig {
        interval: TimeDelta::minutes(minutes),
        ..LiveConfig::new(SEED)
    };
    simulator(clock, config)
}

/// The simulator of [`universe`] with `config`, on `clock`.
fn simulator(clock: &Arc<ManualClock>, config: LiveConfig) -> LiveSimulator {
    LiveSimulator::new(
        universe(),
        config,
        Arc::clone(clock) as Arc<dyn Clock>,
        Arc::new(VirtualSleeper::new(Arc::clone(clock))),
    )
}

#[test]
fn emits_the_current_interval_then_waits_for_the_next() {
    let day = date(2026, 11, 18);
    let clock = Arc::new(ManualClock::new(at(day, 10, 0, 20)));
    let mut source = live(&clock, 1);
    let LivePoll::Event(event) = source.poll().unwrap() else {
        panic!("in session: an event");
    };
    assert_eq!(event.at, at(day, 10, 0, 0), "the interval in progress");
    assert!(event.quote_count() > 0);
    assert!(
        event.messages_of(Dataset::Companies).count() == 1,
        "reference data first"
    );
    assert_eq!(
        source.poll().unwrap(),
        LivePoll::NextInstant(at(day, 10, 1, 0))
    );
    clock.advance(TimeDelta::seconds(30));
    assert_eq!(
        source.poll().unwrap(),
        LivePoll::NextInstant(at(day, 10, 1, 0))
    );
    clock.advance(TimeDelta::seconds(15));
    let LivePoll::Event(next) = source.poll().unwrap() else {
        panic!("the next interval");
    };
    assert_eq!(next.at, at(day, 10, 1, 0));
    assert_eq!(next.messages_of(Dataset::Companies).count(), 0);
    // Fallen behind by five minutes: the latest due instant is emitted, the rest skipped.
    clock.advance(TimeDelta::minutes(5));
    let LivePoll::Event(late) = source.poll().unwrap() else {
        panic!("behind: the latest instant");
    };
    assert_eq!(late.at, at(day, 10, 6, 0));
    // ... and it is the same snapshot a session stepped through every instant gives.
    let mut reference = SessionSimulator::new(
        universe(),
        SessionConfig::new(SEED, day).with_interval(TimeDelta::minutes(1)),
        None,
    )
    .unwrap();
    let mut same = None;
    while let Some(event) = reference.step() {
        let event = event.unwrap();
        if event.at == late.at {
            same = Some(event);
            break;
        }
    }
    assert_eq!(quotes(&same.unwrap()), quotes(&late));
}

#[test]
fn outside_market_hours_nothing_is_emitted_and_the_next_open_is_known() {
    let cases = [
        // Saturday → Monday's open.
        (
            at(date(2026, 11, 21), 12, 0, 0),
            at(date(2026, 11, 23), 9, 30, 0),
        ),
        // Before the open → today's open.
        (
            at(date(2026, 11, 18), 8, 0, 0),
            at(date(2026, 11, 18), 9, 30, 0),
        ),
        // After the close → tomorrow's open.
        (
            at(date(2026, 11, 18), 16, 30, 0),
            at(date(2026, 11, 19), 9, 30, 0),
        ),
        // Thanksgiving → Friday's (early-close) session.
        (
            at(date(2026, 11, 26), 11, 0, 0),
            at(date(2026, 11, 27), 9, 30, 0),
        ),
    ];
    for (now, next_open) in cases {
        let clock = Arc::new(ManualClock::new(now));
        let mut source = live(&clock, 1);
        assert_eq!(
            source.poll().unwrap(),
            LivePoll::Closed { next_open },
            "{now}"
        );
        assert!(
            source.current_session().is_none(),
            "nothing built outside hours"
        );
    }
}

#[test]
fn runs_to_the_close_and_rolls_into_the_next_session_with_its_open_interest() {
    let day = date(2026, 11, 18);
    let next = date(2026, 11, 19);
    let clock = Arc::new(ManualClock::new(at(day, 15, 0, 0)));
    let mut source = live(&clock, 30);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let events: Vec<SourceEvent> = runtime.block_on(async {
        let mut events = Vec::new();
        while let Some(event) = source.next_event().await.unwrap() {
            let done = event.trade_date == next;
            events.push(event);
            if done {
                break;
            }
        }
        events
    });
    let instants: Vec<_> = events.iter().map(|e| e.at).collect();
    assert_eq!(
        instants,
        vec![
            at(day, 15, 0, 0),
            at(day, 15, 30, 0),
            at(day, 16, 0, 0),
            at(next, 9, 30, 0)
        ]
    );
    assert!(events[2].session_close && events[2].messages_of(Dataset::DailyBars).count() == 3);
    // The next session's open interest is the first one's close, as of the first day.
    let closing: std::collections::HashMap<_, _> = quotes(&events[2])
        .into_iter()
        .map(|q| (q.option_symbol.clone(), q))
        .collect();
    let book = SessionSimulator::new(
        universe(),
        SessionConfig::new(SEED, day).with_interval(TimeDelta::minutes(30)),
        None,
    )
    .unwrap()
    .closing_open_interest();
    let mut carried = 0;
    for q in quotes(&events[3]) {
        assert_eq!(q.oi_date, day);
        assert_eq!(q.volume, 0);
        if let Some(previous) = closing.get(&q.option_symbol) {
            let id = optics_ingest::simulator::quotes::ContractId {
                expiration: q.expiration,
                strike_thousandths: (q.strike * 1000.0).round() as u64,
                option_type: q.option_type,
            };
            assert_eq!(Some(q.open_interest), book.get(&q.underlying, &id));
            assert_eq!(previous.oi_date, date(2026, 11, 17));
            carried += 1;
        }
    }
    assert!(carried > 500, "{carried}");
}

#[test]
fn catch_up_emits_the_last_close_once_when_started_after_hours() {
    let clock = Arc::new(ManualClock::new(at(date(2026, 11, 21), 10, 0, 0))); // Saturday
    let config = LiveConfig {
        interval: TimeDelta::minutes(30),
        catch_up_last_close: true,
        ..LiveConfig::new(SEED)
    };
    let mut source = simulator(&clock, config);
    let LivePoll::Event(event) = source.poll().unwrap() else {
        panic!("the last close");
    };
    assert_eq!(event.at, at(date(2026, 11, 20), 16, 0, 0));
    assert!(event.session_close);
    assert_eq!(
        source.poll().unwrap(),
        LivePoll::Closed {
            next_open: at(date(2026, 11, 23), 9, 30, 0)
        }
    );
}

#[test]
fn a_past_date_replays_and_stops() {
    let day = date(2025, 3, 14);
    let clock = Arc::new(ManualClock::new(at(day, 9, 0, 0)));
    let config = LiveConfig {
        interval: TimeDelta::hours(1),
        stop_at: Some(at(day, 16, 0, 0)),
        ..LiveConfig::new(SEED)
    };
    let mut source = simulator(&clock, config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let count = runtime.block_on(async {
        let mut count = 0;
        while let Some(event) = source.next_event().await.unwrap() {
            assert_eq!(event.trade_date, day);
            count += 1;
        }
        count
    });
    assert_eq!(count, 8, "09:30 to 15:30 hourly, and the close");
    assert!(clock.now() > at(day, 16, 0, 0));
}
