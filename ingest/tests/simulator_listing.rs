//! The simulator's universe and listing structure against known facts of the US options market.

use std::collections::{BTreeSet, HashSet};

use chrono::{Datelike, NaiveDate, TimeDelta, Weekday};
use optics_compute::time::NyseCalendar;
use optics_ingest::simulator::listing::{
    DAILY_HORIZON_DAYS, Expiration, ExpirationCycle, ExpirationFamily, SettlementStyle, StrikeGrid,
    StrikeStyle, expirations, monthly_expiration, strike_grid, third_friday,
};
use optics_ingest::simulator::universe::{AssetClass, ExerciseStyle, Underlying, Universe};

const CAL: NyseCalendar = NyseCalendar;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn underlying(symbol: &str) -> Underlying {
    Universe::real().get(symbol).unwrap().clone()
}

fn listed(symbol: &str, trade_date: NaiveDate) -> Vec<Expiration> {
    expirations(&underlying(symbol), trade_date, &CAL)
}

fn find(list: &[Expiration], on: NaiveDate) -> Option<Expiration> {
    list.iter().copied().find(|e| e.date == on)
}

// --- universe -------------------------------------------------------------------------------

#[test]
fn the_real_universe_covers_the_required_names() {
    let universe = Universe::real();
    assert!(universe.len() >= 60, "{} underlyings", universe.len());
    for symbol in [
        "SPX", "NDX", "RUT", "VIX", "SPY", "QQQ", "IWM", "DIA", "XLK", "XLF", "XLE", "XLV", "XLY",
        "XLP", "XLI", "XLU", "XLB", "XLRE", "XLC", "SMH", "GLD", "TLT", "AAPL", "MSFT", "NVDA",
        "AMZN", "GOOGL", "META", "TSLA", "JPM",
    ] {
        assert!(universe.contains(symbol), "{symbol} missing");
    }
    let stocks: Vec<&Underlying> = universe
        .iter()
        .filter(|u| u.asset_class == AssetClass::Stock)
        .collect();
    assert!(stocks.len() >= 40, "{} stocks", stocks.len());
    let sectors: HashSet<_> = stocks.iter().filter_map(|u| u.sector).collect();
    assert!(sectors.len() >= 9, "{} sectors", sectors.len());
    for stock in &stocks {
        assert!(stock.market_cap_usd_bn.is_some(), "{}", stock.symbol);
        assert!(stock.earnings.is_some(), "{}", stock.symbol);
        let etf = stock.sector_etf().unwrap();
        assert!(universe.contains(etf), "{} → {etf}", stock.symbol);
        assert!(!stock.synthetic);
    }
    assert!(universe.iter().all(|u| !u.synthetic));
}

#[test]
fn symbols_are_unique_and_lookup_agrees_with_iteration() {
    let universe = Universe::scaled(500, 7);
    let symbols: HashSet<&str> = universe.symbols().collect();
    assert_eq!(symbols.len(), universe.len());
    for (index, underlying) in universe.iter().enumerate() {
        assert_eq!(universe.index_of(&underlying.symbol), Some(index));
        assert_eq!(universe.get(&underlying.symbol), Some(underlying));
    }
    assert_eq!(universe.get("aapl"), None, "lookup is exact");
    assert_eq!((&universe).into_iter().count(), universe.len());
}

#[test]
fn cash_indices_are_priced_on_the_forward_and_european() {
    let universe = Universe::real();
    for symbol in ["SPX", "NDX", "RUT", "VIX"] {
        let index = universe.get(symbol).unwrap();
        assert!(index.priced_on_forward, "{symbol}");
        assert_eq!(index.exercise_style(), ExerciseStyle::European);
        assert_eq!(index.asset_class, AssetClass::Index);
    }
    for symbol in ["SPY", "AAPL", "XLK"] {
        let u = universe.get(symbol).unwrap();
        assert!(!u.priced_on_forward, "{symbol}");
        assert_eq!(u.exercise_style(), ExerciseStyle::American);
    }
    let spx = universe.get("SPX").unwrap();
    assert_eq!(spx.option_root(ExpirationFamily::Monthly), "SPX");
    assert_eq!(spx.option_root(ExpirationFamily::Weekly), "SPXW");
    assert_eq!(
        universe
            .get("AAPL")
            .unwrap()
            .option_root(ExpirationFamily::Weekly),
        "AAPL"
    );
}

#[test]
fn scaled_universe_has_the_requested_size_and_is_deterministic() {
    let real = Universe::real().len();
    for n in [0, 1, 10, real, real + 1, 3_000] {
        assert_eq!(Universe::scaled(n, 1).len(), n);
    }
    let a = Universe::scaled(3_000, 42);
    assert_eq!(a, Universe::scaled(3_000, 42));
    assert_ne!(a, Universe::scaled(3_000, 43));
    // The real names come first, then SY0001, SY0002, …
    assert_eq!(&a.as_slice()[..real], Universe::real().as_slice());
    assert_eq!(a.as_slice()[real].symbol, "SY0001");
    assert_eq!(a.as_slice()[real + 1].symbol, "SY0002");
    assert!(a.as_slice()[real..].iter().all(|u| u.synthetic));
    // A larger universe extends a smaller one with the same seed.
    let b = Universe::scaled(1_000, 42);
    assert_eq!(b.as_slice(), &a.as_slice()[..1_000]);
}

#[test]
fn synthetic_parameters_are_plausible() {
    let universe = Universe::scaled(5_000, 9);
    let synthetic: Vec<&Underlying> = universe.iter().filter(|u| u.synthetic).collect();
    let sectors: HashSet<_> = synthetic.iter().filter_map(|u| u.sector).collect();
    assert_eq!(sectors.len(), 11);
    for u in &synthetic {
        assert!((8.0..=600.0).contains(&u.start_price), "{u:?}");
        assert!((0.15..=0.75).contains(&u.base_iv), "{u:?}");
        assert!((0.3..=2.5).contains(&u.beta), "{u:?}");
        assert!((0.05..=0.95).contains(&u.correlation), "{u:?}");
        assert!((0.0..0.05).contains(&u.dividend_yield), "{u:?}");
        assert!(
            (2.0..=300.0).contains(&u.market_cap_usd_bn.unwrap()),
            "{u:?}"
        );
    }
    let with_weeklies = synthetic.iter().filter(|u| u.listing.weeklies > 0).count();
    assert!(with_weeklies > synthetic.len() / 5 && with_weeklies < synthetic.len());
}

// --- expirations ----------------------------------------------------------------------------

#[test]
fn spy_lists_a_0dte_on_a_monthly_expiration_friday() {
    let today = date(2026, 11, 20);
    assert_eq!(today.weekday(), Weekday::Fri);
    assert_eq!(third_friday(2026, 11), Some(today));
    let list = listed("SPY", today);
    let first = list[0];
    assert_eq!(first.date, today, "0DTE listed on its own date");
    assert_eq!(first.family, ExpirationFamily::Monthly);
    assert_eq!(first.settlement, SettlementStyle::Pm);
    // The next monthly is December's third Friday.
    let next_monthly = list
        .iter()
        .find(|e| e.family == ExpirationFamily::Monthly && e.date > today)
        .unwrap();
    assert_eq!(next_monthly.date, date(2026, 12, 18));
    // Dailies on Monday 2026-11-23, Tuesday, Wednesday; none on Thanksgiving.
    for day in [23, 24, 25] {
        let e = find(&list, date(2026, 11, day)).unwrap();
        assert_eq!(e.family, ExpirationFamily::Daily);
    }
    assert_eq!(find(&list, date(2026, 11, 26)), None, "Thanksgiving");
    assert_eq!(
        find(&list, date(2026, 11, 27)).unwrap().family,
        ExpirationFamily::Weekly
    );
}

#[test]
fn spx_monthly_is_am_settled_and_its_expiration_day_shows_the_pm_series() {
    let spx = underlying("SPX");
    let before = expirations(&spx, date(2026, 11, 19), &CAL);
    let monthly = find(&before, date(2026, 11, 20)).unwrap();
    assert_eq!(monthly.family, ExpirationFamily::Monthly);
    assert_eq!(monthly.settlement, SettlementStyle::Am);
    assert_eq!(monthly.last_trading_date(&CAL), date(2026, 11, 19));
    assert_eq!(spx.option_root(monthly.family), "SPX");

    let on_the_day = expirations(&spx, date(2026, 11, 20), &CAL);
    let zero_dte = on_the_day[0];
    assert_eq!(zero_dte.date, date(2026, 11, 20));
    assert_eq!(zero_dte.settlement, SettlementStyle::Pm);
    assert_eq!(zero_dte.family, ExpirationFamily::Weekly);
    assert_eq!(spx.option_root(zero_dte.family), "SPXW");
    assert_eq!(zero_dte.last_trading_date(&CAL), zero_dte.date);

    // Every non-standard SPX series is PM-settled.
    for e in &on_the_day {
        let expected = if e.family.is_standard() {
            SettlementStyle::Am
        } else {
            SettlementStyle::Pm
        };
        assert_eq!(e.settlement, expected, "{e:?}");
    }
    // Equities are PM-settled throughout.
    assert!(
        listed("AAPL", date(2026, 11, 19))
            .iter()
            .all(|e| e.settlement == SettlementStyle::Pm)
    );
}

#[test]
fn juneteenth_moves_the_june_2026_monthly_to_thursday() {
    assert_eq!(third_friday(2026, 6), Some(date(2026, 6, 19)));
    assert_eq!(
        monthly_expiration(2026, 6, ExpirationCycle::ThirdFriday, &CAL),
        Some(date(2026, 6, 18))
    );
    for symbol in ["AAPL", "SPY", "SPX", "XLE"] {
        let list = listed(symbol, date(2026, 5, 1));
        let june = find(&list, date(2026, 6, 18)).unwrap();
        assert_eq!(june.family, ExpirationFamily::Monthly, "{symbol}");
        assert_eq!(find(&list, date(2026, 6, 19)), None, "{symbol}");
    }
}

#[test]
fn good_friday_moves_the_weekly_to_thursday() {
    for symbol in ["AAPL", "TSLA", "XLF", "DIA"] {
        let list = listed(symbol, date(2026, 3, 30));
        let weekly = find(&list, date(2026, 4, 2)).unwrap();
        assert_eq!(weekly.family, ExpirationFamily::Weekly, "{symbol}");
        assert_eq!(find(&list, date(2026, 4, 3)), None, "{symbol}");
        // On the Thursday itself it is the 0DTE.
        let list = listed(symbol, date(2026, 4, 2));
        assert_eq!(list[0].date, date(2026, 4, 2), "{symbol}");
    }
    // Names with dailies list Thursday as the weekly expiration, not as a daily.
    let spy = listed("SPY", date(2026, 3, 30));
    assert_eq!(
        find(&spy, date(2026, 4, 2)).unwrap().family,
        ExpirationFamily::Weekly
    );
    // Stocks without weeklies list nothing that week.
    let lin = listed("LIN", date(2026, 3, 30));
    assert_eq!(find(&lin, date(2026, 4, 2)), None);
}

#[test]
fn leaps_are_third_fridays_of_january_out_to_about_three_years() {
    let list = listed("SPY", date(2026, 11, 20));
    let januaries: Vec<NaiveDate> = list
        .iter()
        .filter(|e| e.date.month() == 1 && e.family.is_standard())
        .map(|e| e.date)
        .collect();
    assert_eq!(
        januaries,
        [date(2027, 1, 15), date(2028, 1, 21), date(2029, 1, 19)]
    );
    for d in &januaries {
        assert_eq!(Some(*d), third_friday(d.year(), 1));
    }
    let leaps: Vec<NaiveDate> = list
        .iter()
        .filter(|e| e.family == ExpirationFamily::Leaps)
        .map(|e| e.date)
        .collect();
    assert_eq!(leaps, [date(2028, 1, 21), date(2029, 1, 19)]);
    assert_eq!(list.last().unwrap().date, date(2029, 1, 19));
    // Names without LEAPS stop at their last monthly.
    assert!(
        listed("VIX", date(2026, 11, 20))
            .iter()
            .all(|e| e.family != ExpirationFamily::Leaps)
    );
}

#[test]
fn family_structure_of_the_main_names() {
    let today = date(2026, 11, 20);
    let count = |list: &[Expiration], family| list.iter().filter(|e| e.family == family).count();

    let spx = listed("SPX", date(2026, 11, 19));
    assert_eq!(count(&spx, ExpirationFamily::Monthly), 12);
    assert_eq!(count(&spx, ExpirationFamily::Quarterly), 4);
    assert!(count(&spx, ExpirationFamily::Daily) >= 12);
    // Quarterlies: last trading days of December, March, June, September.
    let quarterlies: Vec<NaiveDate> = spx
        .iter()
        .filter(|e| e.family == ExpirationFamily::Quarterly)
        .map(|e| e.date)
        .collect();
    assert_eq!(
        quarterlies,
        [
            date(2026, 12, 31),
            date(2027, 3, 31),
            date(2027, 6, 30),
            date(2027, 9, 30)
        ]
    );

    // AAPL: weeklies for six weeks, nine monthlies, LEAPS; no dailies or quarterlies.
    let aapl = listed("AAPL", today);
    assert_eq!(count(&aapl, ExpirationFamily::Daily), 0);
    assert_eq!(count(&aapl, ExpirationFamily::Quarterly), 0);
    assert_eq!(count(&aapl, ExpirationFamily::Monthly), 9);
    let fridays: Vec<NaiveDate> = aapl.iter().take(6).map(|e| e.date).collect();
    assert_eq!(
        fridays,
        [
            date(2026, 11, 20),
            date(2026, 11, 27),
            date(2026, 12, 4),
            date(2026, 12, 11),
            date(2026, 12, 18),
            date(2026, 12, 24), // Christmas Friday → Thursday Christmas Eve
        ]
    );

    // IWM: Monday/Wednesday dailies only.
    let iwm = listed("IWM", today);
    assert!(iwm.iter().any(|e| e.family == ExpirationFamily::Daily));
    assert!(
        iwm.iter()
            .filter(|e| e.family == ExpirationFamily::Daily)
            .all(|e| matches!(e.date.weekday(), Weekday::Mon | Weekday::Wed))
    );

    // Dailies stay within the horizon.
    let horizon = today + TimeDelta::days(DAILY_HORIZON_DAYS);
    assert!(
        listed("SPY", today)
            .iter()
            .filter(|e| e.family == ExpirationFamily::Daily)
            .all(|e| e.date <= horizon)
    );
}

#[test]
fn vix_expires_on_wednesdays_thirty_days_before_the_next_spx_monthly() {
    // December 2026: 30 days before the January 2027 SPX expiration (Friday 2027-01-15).
    assert_eq!(
        monthly_expiration(2026, 12, ExpirationCycle::VixWednesday, &CAL),
        Some(date(2026, 12, 16))
    );
    // May 2026: June's third Friday is Juneteenth, so 30 days before Thursday 2026-06-18 is
    // Tuesday 2026-05-19.
    assert_eq!(
        monthly_expiration(2026, 5, ExpirationCycle::VixWednesday, &CAL),
        Some(date(2026, 5, 19))
    );
    let vix = listed("VIX", date(2026, 11, 20));
    assert!(vix.iter().all(|e| e.settlement == SettlementStyle::Am));
    assert!(
        vix.iter()
            .filter(|e| e.family == ExpirationFamily::Weekly)
            .all(|e| e.date.weekday() == Weekday::Wed)
    );
    assert_eq!(
        vix.iter()
            .filter(|e| e.family == ExpirationFamily::Monthly)
            .count(),
        8
    );
}

#[test]
fn a_whole_year_of_trade_dates_never_lists_a_non_trading_or_past_day() {
    let universe = Universe::scaled(Universe::real().len() + 20, 5);
    let mut day = date(2026, 1, 1);
    while day <= date(2026, 12, 31) {
        for u in &universe {
            let list = expirations(u, day, &CAL);
            assert!(!list.is_empty(), "{} {day}", u.symbol);
            let mut previous: Option<NaiveDate> = None;
            for e in &list {
                assert!(CAL.is_trading_day(e.date), "{} {day}: {e:?}", u.symbol);
                assert!(e.date >= day, "{} {day}: {e:?}", u.symbol);
                if e.settlement == SettlementStyle::Am {
                    assert!(e.date > day, "{} {day}: {e:?}", u.symbol);
                }
                assert!(
                    previous < Some(e.date),
                    "sorted, unique: {} {day}",
                    u.symbol
                );
                previous = Some(e.date);
            }
            // A trading day lists a 0DTE for the daily names.
            if CAL.is_trading_day(day) && ["SPX", "SPY", "QQQ"].contains(&u.symbol.as_str()) {
                assert_eq!(list[0].date, day, "{} {day}", u.symbol);
            }
            // Every listed monthly is the (holiday-adjusted) third Friday.
            for e in list.iter().filter(|e| e.family.is_standard()) {
                if u.listing.cycle == ExpirationCycle::ThirdFriday {
                    let friday = third_friday(e.date.year(), e.date.month()).unwrap();
                    assert!(e.date <= friday && friday - e.date <= TimeDelta::days(3));
                }
            }
        }
        day = day.succ_opt().unwrap();
    }
}

// --- strikes --------------------------------------------------------------------------------

fn assert_well_formed(grid: &StrikeGrid, strikes: &[f64], spot: f64) {
    assert!(!strikes.is_empty());
    for pair in strikes.windows(2) {
        assert!(pair[0] < pair[1], "ascending and unique: {pair:?}");
    }
    let (low, high) = grid.range();
    for &strike in strikes {
        assert!(strike > 0.0);
        assert!(
            low <= strike && strike <= high,
            "{strike} outside {low}..{high}"
        );
        let increment = grid.increment_at(strike);
        let multiple = strike / increment;
        assert_eq!(
            multiple,
            multiple.round(),
            "{strike} not a multiple of {increment}"
        );
        assert_eq!(
            multiple.round() * increment,
            strike,
            "no floating dust: {strike}"
        );
    }
    assert!(
        strikes[0] <= spot && spot <= *strikes.last().unwrap(),
        "{grid:?} {strikes:?}"
    );
    assert!(strikes.iter().any(|&k| k <= spot) && strikes.iter().any(|&k| k >= spot));
}

#[test]
fn strike_grids_are_well_formed_across_styles_prices_and_expiries() {
    let styles = [
        StrikeStyle::Equity,
        StrikeStyle::Etf,
        StrikeStyle::Index,
        StrikeStyle::Volatility,
    ];
    for style in styles {
        for spot in [
            0.6, 1.2, 3.17, 12.5, 24.99, 37.0, 99.99, 180.33, 255.0, 680.42, 999.0, 2_450.7,
            6_812.35, 25_003.0,
        ] {
            for years in [0.0, 1.0 / 365.0, 0.05, 0.3, 0.8, 2.2] {
                for vol in [0.0, 0.12, 0.3, 0.9] {
                    let grid = StrikeGrid::new(style, spot, years, vol).unwrap();
                    assert_well_formed(&grid, &grid.strikes(), spot);
                }
            }
        }
    }
    assert_eq!(StrikeGrid::new(StrikeStyle::Equity, 0.0, 0.1, 0.3), None);
    assert_eq!(
        StrikeGrid::new(StrikeStyle::Equity, f64::NAN, 0.1, 0.3),
        None
    );
}

#[test]
fn increments_follow_the_price_level_and_widen_away_from_spot() {
    let near = |style, spot| StrikeGrid::new(style, spot, 7.0 / 365.0, 0.25).unwrap();
    assert_eq!(near(StrikeStyle::Equity, 20.0).near_increment(), 0.5);
    assert_eq!(near(StrikeStyle::Equity, 60.0).near_increment(), 1.0);
    assert_eq!(near(StrikeStyle::Equity, 255.0).near_increment(), 2.5);
    assert_eq!(near(StrikeStyle::Equity, 720.0).near_increment(), 5.0);
    assert_eq!(near(StrikeStyle::Etf, 680.0).near_increment(), 1.0);
    assert_eq!(near(StrikeStyle::Etf, 53.0).near_increment(), 0.5);
    assert_eq!(near(StrikeStyle::Index, 6_800.0).near_increment(), 5.0);
    assert_eq!(near(StrikeStyle::Volatility, 17.0).near_increment(), 1.0);

    // SPX: 5 points at the money, 25, 50, 100 further out.
    let spx = StrikeGrid::new(StrikeStyle::Index, 6_800.0, 30.0 / 365.0, 0.16).unwrap();
    let strikes = spx.strikes();
    assert!(strikes.contains(&6_800.0) && strikes.contains(&6_805.0));
    let increments: BTreeSet<u64> = strikes
        .iter()
        .map(|&k| spx.increment_at(k) as u64)
        .collect();
    assert_eq!(increments, BTreeSet::from([5, 25, 50, 100]));
    // Increments never shrink moving away from spot.
    let above: Vec<f64> = strikes
        .iter()
        .filter(|&&k| k >= 6_800.0)
        .map(|&k| spx.increment_at(k))
        .collect();
    assert!(above.windows(2).all(|w| w[0] <= w[1]));
    let below: Vec<f64> = strikes
        .iter()
        .rev()
        .filter(|&&k| k <= 6_800.0)
        .map(|&k| spx.increment_at(k))
        .collect();
    assert!(below.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn strike_grids_widen_with_expiry_and_vol() {
    let aapl = underlying("AAPL");
    let today = date(2026, 11, 20);
    let list = expirations(&aapl, today, &CAL);
    let mut previous: Option<(f64, f64, f64)> = None;
    for e in &list {
        let grid = StrikeGrid::for_expiration(&aapl, 255.0, today, e).unwrap();
        let strikes = strike_grid(&aapl, 255.0, today, e);
        assert_eq!(strikes, grid.strikes());
        assert_well_formed(&grid, &strikes, 255.0);
        let current = (strikes[0], *strikes.last().unwrap(), grid.near_increment());
        if let Some((low, high, increment)) = previous {
            assert!(
                current.0 <= low,
                "{e:?}: lowest strike {} > {low}",
                current.0
            );
            assert!(
                current.1 >= high,
                "{e:?}: highest strike {} < {high}",
                current.1
            );
            assert!(current.2 >= increment, "{e:?}");
        }
        previous = Some(current);
    }
    // The LEAPS are coarser than the weeklies.
    let weekly = StrikeGrid::for_expiration(&aapl, 255.0, today, &list[1]).unwrap();
    let leaps = StrikeGrid::for_expiration(&aapl, 255.0, today, list.last().unwrap()).unwrap();
    assert!(leaps.near_increment() > weekly.near_increment());
    // Higher vol lists a wider range.
    let calm = StrikeGrid::new(StrikeStyle::Equity, 100.0, 0.25, 0.15)
        .unwrap()
        .range();
    let wild = StrikeGrid::new(StrikeStyle::Equity, 100.0, 0.25, 0.60)
        .unwrap()
        .range();
    assert!(wild.0 < calm.0 && wild.1 > calm.1);
}

#[test]
fn strike_grid_of_a_bad_spot_is_empty() {
    let spy = underlying("SPY");
    let today = date(2026, 11, 20);
    let e = listed("SPY", today)[0];
    assert!(strike_grid(&spy, -1.0, today, &e).is_empty());
    assert!(strike_grid(&spy, f64::INFINITY, today, &e).is_empty());
}
