//! The session simulator: determinism, session hours, volume and open interest through and
//! across sessions, bursts, continuity with the history, and the surface's earnings crush.

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};
use optics_compute::pricing::implied_vol;
use optics_compute::time::{NyseCalendar, new_york_datetime};
use optics_ingest::simulator::SimulatorError;
use optics_ingest::simulator::history::{HistoryConfig, generate_history};
use optics_ingest::simulator::market::{MarketTape, earnings_events};
use optics_ingest::simulator::quotes::{BLOCK_PROBABILITY, BURST_MIN_MULTIPLE, BURST_PROBABILITY};
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::universe::Universe;
use optics_ingest::source::{QuoteSource, SourceEvent};
use optics_schemas::{
    DailyBar, Dataset, EarningsTiming, Message, OptionQuote, UnderlyingTick, encode,
};
use support::correlation;

const SEED: u64 = 20_261_118;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn at(day: NaiveDate, hour: u32, minute: u32) -> DateTime<Utc> {
    new_york_datetime(day, NaiveTime::from_hms_opt(hour, minute, 0).unwrap()).to_utc()
}

/// A small universe with every kind of underlying.
fn small_universe() -> Arc<Universe> {
    let real = Universe::real();
    Arc::new(
        Universe::new(
            ["SPX", "VIX", "SPY", "QQQ", "XLE", "AAPL", "KO"]
                .iter()
                .map(|s| real.get(s).unwrap().clone())
                .collect(),
        )
        .unwrap(),
    )
}

fn session(
    universe: &Arc<Universe>,
    trade_date: NaiveDate,
    seed: u64,
    minutes: i64,
) -> SessionSimulator {
    let config = SessionConfig::new(seed, trade_date).with_interval(TimeDelta::minutes(minutes));
    SessionSimulator::new(Arc::clone(universe), config, None).unwrap()
}

fn run(mut simulator: SessionSimulator) -> Vec<SourceEvent> {
    let mut events = Vec::new();
    while let Some(event) = simulator.step() {
        events.push(event.unwrap());
    }
    events
}

fn rows<R: optics_schemas::Record>(event: &SourceEvent, dataset: Dataset) -> Vec<R> {
    event
        .messages_of(dataset)
        .flat_map(|m| match m {
            Message::Data(batch) => batch.rows::<R>().unwrap(),
            Message::Snapshot(_) => Vec::new(),
        })
        .collect()
}

fn encoded(events: &[SourceEvent]) -> Vec<Vec<u8>> {
    events
        .iter()
        .flat_map(|e| e.messages.iter().map(|m| encode(m).unwrap()))
        .collect()
}

#[test]
fn the_same_seed_gives_byte_identical_batches_and_another_seed_differs() {
    let universe = small_universe();
    let day = date(2026, 11, 18);
    let a = encoded(&run(session(&universe, day, SEED, 60)));
    let b = encoded(&run(session(&universe, day, SEED, 60)));
    assert!(a.len() > 50);
    assert_eq!(a, b, "same seed, same bytes");
    let c = encoded(&run(session(&universe, day, SEED + 1, 60)));
    assert_ne!(a, c, "another seed, other numbers");
}

#[test]
fn quotes_only_in_regular_session_hours_and_never_on_holidays() {
    let universe = small_universe();
    let day = date(2026, 11, 18);
    let simulator = session(&universe, day, SEED, 30);
    let (open, close) = (at(day, 9, 30), at(day, 16, 0));
    assert_eq!(simulator.instant(0), Some(open));
    assert_eq!(simulator.instant_count(), 14, "09:30, every 30 min, 16:00");
    let events = run(simulator);
    assert_eq!(events.last().unwrap().at, close);
    assert!(events.last().unwrap().session_close);
    assert_eq!(events.iter().filter(|e| e.session_close).count(), 1);
    for event in &events {
        assert!(open <= event.at && event.at <= close);
        for quote in rows::<OptionQuote>(event, Dataset::OptionQuotes) {
            assert!(open <= quote.quote_time && quote.quote_time <= close);
            assert_eq!(quote.quote_time, event.at);
        }
        for tick in rows::<UnderlyingTick>(event, Dataset::UnderlyingTicks) {
            assert_eq!(tick.tick_time, event.at);
        }
    }
    // Early close: the day after Thanksgiving ends at 13:00.
    let friday = date(2026, 11, 27);
    let early = session(&universe, friday, SEED, 30);
    assert_eq!(
        early.instant(early.instant_count() - 1),
        Some(at(friday, 13, 0))
    );
    // Thanksgiving and a Saturday have no session.
    for closed in [date(2026, 11, 26), date(2026, 11, 21)] {
        let err = SessionSimulator::new(
            Arc::clone(&universe),
            SessionConfig::new(SEED, closed),
            None,
        )
        .unwrap_err();
        assert_eq!(err, SimulatorError::NotATradingDay { date: closed });
    }
}

#[test]
fn volume_grows_through_the_session_and_starts_from_zero_the_next_day() {
    let universe = small_universe();
    let (day, next) = (date(2026, 11, 18), date(2026, 11, 19));
    let first = session(&universe, day, SEED, 45);
    let book = first.closing_open_interest();
    let events = run(first);
    let mut last_volume: HashMap<String, u64> = HashMap::new();
    let mut traded = 0;
    for event in &events {
        for q in rows::<OptionQuote>(event, Dataset::OptionQuotes) {
            let previous = last_volume
                .insert(q.option_symbol.clone(), q.volume)
                .unwrap_or(0);
            assert!(
                q.volume >= previous,
                "{}: {} < {previous}",
                q.option_symbol,
                q.volume
            );
            if let Some(last) = q.last {
                assert!(q.volume > 0 && q.bid <= last && last <= q.ask);
            }
        }
        let mut tick_volume = HashMap::new();
        for t in rows::<UnderlyingTick>(event, Dataset::UnderlyingTicks) {
            tick_volume.insert(t.symbol, t.volume);
        }
        assert_eq!(tick_volume.len(), universe.len());
    }
    traded += last_volume.values().filter(|&&v| v > 0).count();
    assert!(traded > 1_000, "{traded} contracts traded");
    let mut second = SessionSimulator::new(
        Arc::clone(&universe),
        SessionConfig::new(SEED, next).with_interval(TimeDelta::minutes(45)),
        Some(&book),
    )
    .unwrap();
    let opening = second.step().unwrap().unwrap();
    let quotes = rows::<OptionQuote>(&opening, Dataset::OptionQuotes);
    assert!(!quotes.is_empty());
    assert!(quotes.iter().all(|q| q.volume == 0 && q.last.is_none()));
    let ticks = rows::<UnderlyingTick>(&opening, Dataset::UnderlyingTicks);
    assert!(ticks.iter().all(|t| t.volume == 0));
}

#[test]
fn open_interest_rolls_over_from_the_previous_session_only() {
    let universe = small_universe();
    let (day, next) = (date(2026, 11, 18), date(2026, 11, 19));
    let first = session(&universe, day, SEED, 60);
    let book = first.closing_open_interest();
    assert_eq!(book.as_of, Some(day));
    // Activity of each contract, and the session's final volume and open interest from its
    // quotes, by (underlying, OCC symbol).
    let activity: HashMap<(String, String), _> = first
        .books()
        .flat_map(|b| {
            let symbol = b.underlying().symbol.clone();
            b.contracts()
                .iter()
                .map(move |c| ((symbol.clone(), c.option_symbol.clone()), c.activity))
        })
        .collect();
    let events = run(first);
    let closing = events.last().unwrap();
    let closing_quotes = rows::<OptionQuote>(closing, Dataset::OptionQuotes);
    let mut final_state = HashMap::new();
    for q in &closing_quotes {
        assert_eq!(
            q.oi_date,
            date(2026, 11, 17),
            "first session: OI as of the day before"
        );
        final_state.insert(
            (q.underlying.clone(), q.option_symbol.clone()),
            (q.volume, q.open_interest),
        );
    }
    let mut second = SessionSimulator::new(
        Arc::clone(&universe),
        SessionConfig::new(SEED, next).with_interval(TimeDelta::minutes(60)),
        Some(&book),
    )
    .unwrap();
    let next_quotes = rows::<OptionQuote>(&second.step().unwrap().unwrap(), Dataset::OptionQuotes);
    let mut checked = 0;
    let mut changed = 0;
    for q in &next_quotes {
        assert_eq!(q.oi_date, day, "OI as of the previous session");
        let key = (q.underlying.clone(), q.option_symbol.clone());
        let Some(&(volume, open_interest)) = final_state.get(&key) else {
            assert_eq!(
                q.open_interest, 0,
                "{}: a new listing starts without OI",
                q.option_symbol
            );
            continue;
        };
        // Recompute the roll from the session's own numbers: opening = round(φ·regular +
        // 0.8·prints), closing = the rest, capped at the open interest.
        let a = activity[&key];
        let prints = a.burst.map_or(0, |p| p.size) + a.block.map_or(0, |p| p.size);
        assert_eq!(
            volume,
            a.regular + prints,
            "{}: final volume",
            q.option_symbol
        );
        let opening =
            (a.regular as f64 * a.regular_opening_share + 0.8 * prints as f64).round() as u64;
        let closing = volume - opening.min(volume);
        let expected = open_interest + opening.min(volume) - closing.min(open_interest);
        assert_eq!(q.open_interest, expected, "{}", q.option_symbol);
        changed += usize::from(q.open_interest != open_interest);
        checked += 1;
    }
    assert!(
        checked > 1_000 && changed > checked / 2,
        "{checked} checked, {changed} changed"
    );

    // A book from a later session, or from two sessions back, is refused.
    for stale in [next, date(2026, 11, 17)] {
        let mut wrong = book.clone();
        wrong.as_of = Some(stale);
        let target = if stale == next { day } else { next };
        let err = SessionSimulator::new(
            Arc::clone(&universe),
            SessionConfig::new(SEED, target),
            Some(&wrong),
        )
        .unwrap_err();
        assert!(
            matches!(err, SimulatorError::StaleOpenInterest { .. }),
            "{err}"
        );
    }
}

#[test]
fn bursts_and_block_prints_occur_at_their_documented_rates() {
    let universe = Arc::new(Universe::real());
    let simulator = session(&universe, date(2026, 11, 18), SEED, 60);
    let (mut contracts, mut bursts, mut blocks) = (0u64, 0u64, 0u64);
    for book in simulator.books() {
        for c in book.contracts() {
            contracts += 1;
            if let Some(burst) = c.activity.burst {
                bursts += 1;
                assert!(
                    burst.size as f64 >= BURST_MIN_MULTIPLE * c.open_interest.max(100) as f64 - 0.5,
                    "{}: a burst is far above open interest",
                    c.option_symbol
                );
                assert!((0.0..=1.0).contains(&burst.session_fraction));
            }
            if let Some(block) = c.activity.block {
                blocks += 1;
                assert!(block.size >= 250 && block.size % 50 == 0, "{}", block.size);
            }
        }
    }
    // Binomial: within five standard deviations of n·p.
    let n = contracts as f64;
    let expected = n * BURST_PROBABILITY;
    let sd = (n * BURST_PROBABILITY * (1.0 - BURST_PROBABILITY)).sqrt();
    assert!(
        (bursts as f64 - expected).abs() < 5.0 * sd,
        "{bursts} bursts in {contracts} contracts, expected {expected:.0} ± {sd:.0}"
    );
    assert!(
        blocks > 0 && (blocks as f64) < n * BLOCK_PROBABILITY * 1.06,
        "{blocks} blocks"
    );
}

#[test]
fn the_session_continues_the_history_and_closes_on_the_tape() {
    let universe = small_universe();
    let day = date(2026, 11, 18);
    let history = generate_history(&universe, &HistoryConfig::for_session(SEED, day, 3)).unwrap();
    let tape = Arc::new(MarketTape::simulate(&universe, SEED, day));
    let simulator = SessionSimulator::with_tape(
        Arc::clone(&universe),
        Arc::clone(&tape),
        SessionConfig::new(SEED, day).with_interval(TimeDelta::minutes(30)),
        None,
    )
    .unwrap();
    for u in universe.iter() {
        assert_eq!(
            simulator.previous_close(&u.symbol),
            history.last_close(&u.symbol),
            "{}",
            u.symbol
        );
    }
    let events = run(simulator);
    let opening_ticks = rows::<UnderlyingTick>(&events[0], Dataset::UnderlyingTicks);
    let bars = rows::<DailyBar>(events.last().unwrap(), Dataset::DailyBars);
    assert_eq!(bars.len(), universe.len());
    let day_index = tape.day_index(day).unwrap();
    for (i, bar) in bars.iter().enumerate() {
        let path = &tape.paths[i];
        let cents = |x: f64| (x * 100.0).round() / 100.0;
        assert_eq!(bar.close, cents(path.closes[day_index]), "{}", bar.symbol);
        assert_eq!(bar.open, cents(path.opens[day_index]), "{}", bar.symbol);
        assert!(bar.high >= bar.open.max(bar.close) && bar.low <= bar.open.min(bar.close));
        assert_eq!(opening_ticks[i].last, bar.open, "{}", bar.symbol);
    }
    // Every tick of the day is within the bar, and the closing tick is the close.
    let closing_ticks = rows::<UnderlyingTick>(events.last().unwrap(), Dataset::UnderlyingTicks);
    for event in &events {
        for (tick, bar) in rows::<UnderlyingTick>(event, Dataset::UnderlyingTicks)
            .iter()
            .zip(&bars)
        {
            assert!(
                bar.low <= tick.last && tick.last <= bar.high,
                "{}",
                bar.symbol
            );
            if let (Some(bid), Some(ask)) = (tick.bid, tick.ask) {
                assert!(bid <= tick.last && tick.last <= ask);
            }
        }
    }
    for (tick, bar) in closing_ticks.iter().zip(&bars) {
        assert_eq!(tick.last, bar.close);
        assert_eq!(
            tick.volume, bar.volume,
            "{}: the ticks' volume adds up to the bar's",
            bar.symbol
        );
    }
}

#[test]
fn earnings_variance_is_priced_until_the_reaction_and_crushed_after() {
    // An after-close reporter of the real universe with a report in late 2026.
    let real = Universe::real();
    let calendar = NyseCalendar;
    let (underlying, event) = real
        .iter()
        .filter(|u| {
            u.earnings
                .is_some_and(|c| c.timing == EarningsTiming::AfterClose)
        })
        .find_map(|u| {
            earnings_events(u, SEED, date(2026, 10, 1), date(2026, 12, 15), &calendar)
                .into_iter()
                .next()
                .map(|e| (u.clone(), e))
        })
        .unwrap();
    let universe = Arc::new(Universe::new(vec![underlying.clone()]).unwrap());
    let reaction = event.reaction_date;
    let atm_iv = |trade_date: NaiveDate| -> f64 {
        let mut simulator = session(&universe, trade_date, SEED, 60);
        let noon = at(trade_date, 12, 0);
        let snapshot = simulator.advance_to(noon).unwrap().unwrap();
        let quotes = rows::<OptionQuote>(&snapshot, Dataset::OptionQuotes);
        // The first expiration after the reaction day, its call nearest the money.
        let expiry = quotes
            .iter()
            .map(|q| q.expiration)
            .filter(|&e| e > reaction)
            .min()
            .unwrap();
        let q = quotes
            .iter()
            .filter(|q| q.expiration == expiry && q.option_type == optics_schemas::OptionType::Call)
            .min_by(|a, b| {
                (a.strike - a.underlying_price)
                    .abs()
                    .total_cmp(&(b.strike - b.underlying_price).abs())
            })
            .unwrap();
        let inputs = optics_compute::pricing::OptionInputs {
            option_type: optics_compute::pricing::OptionType::Call,
            model: optics_compute::pricing::PricingModel::BlackScholesMerton,
            underlying: q.underlying_price,
            strike: q.strike,
            years: optics_compute::time::years_to_expiry(noon, expiry),
            rate: 0.04,
            dividend_yield: underlying.dividend_yield,
        };
        implied_vol(&inputs, q.mid()).unwrap()
    };
    let before = atm_iv(event.report_date);
    let after = atm_iv(event.reaction_date);
    assert!(
        before > 1.2 * after,
        "{}: IV {before} on the report day, {after} after the reaction",
        underlying.symbol
    );
}

#[test]
fn the_session_is_a_quote_source() {
    let universe = small_universe();
    let mut simulator = session(&universe, date(2026, 11, 18), SEED, 60);
    let expected = simulator.instant_count();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut count = 0;
    runtime.block_on(async {
        while let Some(event) = simulator.next_event().await.unwrap() {
            assert!(event.quote_count() > 0);
            count += 1;
        }
    });
    assert_eq!(count, expected);
    assert_eq!(simulator.name(), "simulator");
}

#[test]
fn a_scaled_universe_of_hundreds_of_names_runs() {
    let universe = Arc::new(Universe::scaled(400, SEED));
    let mut simulator = session(&universe, date(2026, 11, 18), SEED, 60);
    let event = simulator.step().unwrap().unwrap();
    assert_eq!(
        event.messages_of(Dataset::OptionQuotes).count(),
        universe.len(),
        "one chain per underlying"
    );
    assert!(event.quote_count() > 100_000, "{}", event.quote_count());
    for message in event.messages_of(Dataset::OptionQuotes) {
        let Message::Data(batch) = message else {
            continue;
        };
        assert!(
            batch.num_rows() > 20,
            "{}: a chain for every name",
            batch.key()
        );
    }
    let closing = simulator
        .advance_to(at(date(2026, 11, 18), 16, 0))
        .unwrap()
        .unwrap();
    assert!(closing.session_close);
    assert_eq!(rows::<DailyBar>(&closing, Dataset::DailyBars).len(), 400);
}

#[test]
fn intraday_moves_are_correlated_through_the_market() {
    // Ten-minute returns over three sessions: QQQ moves with SPY, the VIX against it.
    let real = Universe::real();
    let universe = Arc::new(
        Universe::new(
            ["SPY", "QQQ", "VIX"]
                .iter()
                .map(|s| real.get(s).unwrap().clone())
                .collect(),
        )
        .unwrap(),
    );
    let mut returns: [Vec<f64>; 3] = Default::default();
    for day in [date(2026, 11, 16), date(2026, 11, 17), date(2026, 11, 18)] {
        let mut previous: Option<Vec<f64>> = None;
        for event in run(session(&universe, day, SEED, 10)) {
            let prices: Vec<f64> = rows::<UnderlyingTick>(&event, Dataset::UnderlyingTicks)
                .iter()
                .map(|t| t.last)
                .collect();
            if let Some(before) = previous {
                for i in 0..3 {
                    returns[i].push((prices[i] / before[i]).ln());
                }
            }
            previous = Some(prices);
        }
    }
    let qqq = correlation(&returns[0], &returns[1]);
    let vix = correlation(&returns[0], &returns[2]);
    assert!(returns[0].len() > 100);
    assert!(qqq > 0.7, "SPY–QQQ intraday correlation {qqq}");
    assert!(vix < -0.3, "SPY–VIX intraday correlation {vix}");
}
