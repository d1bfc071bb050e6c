//! Reference data of the simulated market, as the schemas' row types: the company map,
//! earnings reports with EPS and revenue, dividends, stock-borrow fees and the US economic
//! calendar. Shared by the history generator ([`super::history`]) and the live session
//! ([`super::session`]), so both publish the same rows for the same dates.
//!
//! Every generator is deterministic from the seed and a date range, and a date's rows do not
//! depend on the range asked for (stateful processes run from [`EPOCH`]).
//!
//! # Earnings ([`earnings_rows`])
//! Report dates and timing come from [`super::market::earnings_events`]. Per company (seeded by
//! symbol): a P/E of 12–42 and an EPS growth of 2–15 % a year give the consensus EPS
//! `start_price / PE / 4 · (1 + g)^years-from-2025`; a price/sales ratio of 1–10 gives the
//! revenue consensus `market cap / PS / 4`, growing alike. The reported figures follow the
//! news the price reacted to: the surprise score is `z = 0.7·g + 0.71·ε` with `g` the reaction
//! day's gap in standard deviations ([`PricePath::gap_z`]), EPS actual =
//! estimate × (1 + 0.03 + 0.05·z) (so about 70 % of reports beat), revenue actual =
//! estimate × (1 + 0.01 + 0.02·(0.5z + 0.87ε')). A report's actuals are known from its
//! publication instant on: 07:00 New York before the open, 16:05 after the close.
//!
//! # Dividends ([`dividend_rows`])
//! Stocks and ETFs with a dividend yield pay it quarterly (TLT monthly, EEM semi-annually); cash
//! indices pay none. Ex-dates fall on a seeded day (8th–22nd) of a seeded month of each period,
//! moved to the next trading day; payment two to four weeks later. The amount per payment is
//! `start_price · yield / payments-per-year`, raised each January by a seeded 2–8 % (as of
//! 2025), in cents.
//!
//! # Borrow ([`borrow_rows`])
//! Stocks and ETFs (indices are not lent). A base fee (ETFs 0.2–0.6 %, large caps 0.25–0.5 %,
//! smaller companies up to 3 %), times a log-normal mean-reverting daily noise (daily sd 5 %,
//! reversion 5 % a day), times rare spikes: a stock starts a spike with probability 1/750 a
//! day (an ETF 1/3,000), lasting 5–40 sessions at 5–40 × the base, decaying over the last
//! third. Hard to borrow from 5 % a year.
//!
//! # Economic calendar ([`economic_calendar`])
//! US releases on their usual schedules (see [`SERIES`]), times in New York, with
//! importance HIGH / MEDIUM / LOW. Each series' values are an AR(1) around a typical level;
//! the forecast is the AR(1) expectation given the previous release, and the actual is known
//! from the release instant on. The Fed funds target (upper bound) moves by 25 bp at some
//! meetings, within 0.25–5.50 %.

use chrono::{DateTime, Datelike, Months, NaiveDate, NaiveTime, TimeDelta, Utc, Weekday};
use optics_compute::time::{NyseCalendar, new_york_datetime};
use optics_schemas::{
    AssetClass, BorrowRate, Company, Dividend, DividendFrequency, EarningsEvent, EarningsTiming,
    EconomicEvent, Importance,
};

use super::market::{ANCHOR_DATE, EPOCH, PricePath, earnings_events, fnv1a, normal};
use super::rng::{SplitMix64, derive_seed};
use super::universe::{Underlying, Universe};

/// The company map of `universe`, in universe order.
pub fn companies(universe: &Universe) -> Vec<Company> {
    universe
        .iter()
        .map(|u| Company {
            symbol: u.symbol.clone(),
            name: u.name.clone(),
            asset_class: u.asset_class,
            sector: u.sector.map(|s| s.name().to_owned()),
            sector_etf: u.sector_etf().map(str::to_owned),
            market_cap: u.market_cap_usd_bn.map(|cap| cap * 1e9),
            beta_spy: u.beta,
            corr_spy: u.correlation,
            priced_on_forward: u.priced_on_forward,
            industry: u.industry.clone(),
        })
        .collect()
}

fn symbol_stream(seed: u64, symbol: &str, tag: u64) -> u64 {
    derive_seed(derive_seed(seed, fnv1a(symbol.as_bytes())), tag)
}

fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Years from the anchor date to `date` (negative before it).
fn years_from_anchor(date: NaiveDate) -> f64 {
    (date - ANCHOR_DATE).num_days() as f64 / 365.25
}

/// The instant a report is published: 07:00 New York before the open, 16:05 after the close
/// (and noon when the timing is unknown).
pub fn report_instant(report_date: NaiveDate, timing: EarningsTiming) -> DateTime<Utc> {
    let (hour, minute) = match timing {
        EarningsTiming::BeforeOpen => (7, 0),
        EarningsTiming::AfterClose => (16, 5),
        EarningsTiming::Unknown => (12, 0),
    };
    let time = NaiveTime::from_hms_opt(hour, minute, 0).unwrap_or(NaiveTime::MIN);
    new_york_datetime(report_date, time).to_utc()
}

/// The fiscal-quarter label of a report published in `report_date`'s month: the calendar
/// quarter before it (`FY2026 Q1` for a report in April 2026).
fn fiscal_quarter(report_date: NaiveDate) -> String {
    let quarter = (report_date.month0() / 3) as i32; // 0..3, the quarter of the report
    let (year, reported) = if quarter == 0 {
        (report_date.year() - 1, 4)
    } else {
        (report_date.year(), quarter)
    };
    format!("FY{year} Q{reported}")
}

/// The earnings reports of `underlying` with a report date in `[from, to]`, with actuals for
/// those published by `as_of` (see the module documentation). `path` gives the reaction-day
/// gaps; a report whose reaction day lies beyond the path is reported without a gap score.
pub fn earnings_rows(
    underlying: &Underlying,
    path: &PricePath,
    seed: u64,
    from: NaiveDate,
    to: NaiveDate,
    as_of: DateTime<Utc>,
    calendar: &NyseCalendar,
) -> Vec<EarningsEvent> {
    if underlying.earnings.is_none() {
        return Vec::new();
    }
    let mut company = SplitMix64::new(symbol_stream(seed, &underlying.symbol, 0x0045_5053)); // "EPS"
    let pe = company.uniform(12.0, 42.0);
    let growth = company.uniform(0.02, 0.15);
    let price_to_sales = company.uniform(1.0, 10.0);
    let cap_usd = underlying.market_cap_usd_bn.unwrap_or(10.0) * 1e9;
    earnings_events(underlying, seed, from, to, calendar)
        .into_iter()
        .map(|event| {
            let years = years_from_anchor(event.report_date);
            let scale = (1.0 + growth).powf(years);
            let eps_estimate = round_cents((underlying.start_price / pe / 4.0 * scale).max(0.01));
            let revenue_estimate = (cap_usd / price_to_sales / 4.0 * scale / 1e6).round() * 1e6;
            let mut quarter = SplitMix64::new(derive_seed(
                symbol_stream(seed, &underlying.symbol, 0x5355_5250), // "SURP"
                optics_schemas::date_to_days(event.report_date) as i64 as u64,
            ));
            let (noise, revenue_noise) = (normal(&mut quarter), normal(&mut quarter));
            let gap_z = path
                .index_of(event.reaction_date)
                .and_then(|i| path.gap_z.get(i).copied())
                .unwrap_or(0.0);
            let surprise = 0.7 * gap_z + 0.71 * noise;
            let reported = as_of >= report_instant(event.report_date, event.timing);
            EarningsEvent {
                symbol: underlying.symbol.clone(),
                report_date: event.report_date,
                timing: event.timing,
                fiscal_quarter: fiscal_quarter(event.report_date),
                eps_estimate,
                eps_actual: reported
                    .then(|| round_cents(eps_estimate * (1.0 + 0.03 + 0.05 * surprise))),
                revenue_estimate: Some(revenue_estimate),
                revenue_actual: reported.then(|| {
                    let change = 0.01 + 0.02 * (0.5 * surprise + 0.87 * revenue_noise);
                    (revenue_estimate * (1.0 + change) / 1e6).round() * 1e6
                }),
            }
        })
        .collect()
}

/// How often `underlying` pays a dividend, `None` when it pays none.
pub fn dividend_frequency(underlying: &Underlying) -> Option<DividendFrequency> {
    if underlying.asset_class == AssetClass::Index || !(underlying.dividend_yield > 0.0) {
        return None;
    }
    Some(match underlying.symbol.as_str() {
        "TLT" => DividendFrequency::Monthly,
        "EEM" => DividendFrequency::SemiAnnual,
        _ => DividendFrequency::Quarterly,
    })
}

/// The dividends of `underlying` with an ex-date in `[from, to]` (see the module
/// documentation).
pub fn dividend_rows(
    underlying: &Underlying,
    seed: u64,
    from: NaiveDate,
    to: NaiveDate,
    calendar: &NyseCalendar,
) -> Vec<Dividend> {
    let Some(frequency) = dividend_frequency(underlying) else {
        return Vec::new();
    };
    let per_year = frequency.payments_per_year().unwrap_or(4);
    let period_months = 12 / per_year.max(1);
    let mut rng = SplitMix64::new(symbol_stream(seed, &underlying.symbol, 0x0044_4956)); // "DIV"
    let month_offset = rng.below(u64::from(period_months)) as u32;
    let day = 8 + rng.below(15) as u32;
    let pay_lag = 14 + rng.below(15) as i64;
    let raise = rng.uniform(0.02, 0.08);
    let base_amount = underlying.start_price * underlying.dividend_yield / f64::from(per_year);
    let mut out = Vec::new();
    for year in from.year()..=to.year() {
        let amount = round_cents(base_amount * (1.0 + raise).powi(year - 2025)).max(0.01);
        for period in 0..per_year {
            let month = 1 + month_offset + period * period_months;
            let Some(mut ex_date) = NaiveDate::from_ymd_opt(year, month, day) else {
                continue;
            };
            while !calendar.is_trading_day(ex_date) {
                ex_date = calendar.next_trading_day(ex_date);
            }
            if ex_date < from || ex_date > to {
                continue;
            }
            out.push(Dividend {
                symbol: underlying.symbol.clone(),
                ex_date,
                pay_date: ex_date + TimeDelta::days(pay_lag),
                amount,
                frequency,
            });
        }
    }
    out
}

/// The rate at which a borrow fee counts as hard to borrow, decimal a year.
pub const HARD_TO_BORROW_RATE: f64 = 0.05;

/// The borrow fee of `underlying` on each trading day of `[from, to]` (none for indices; see
/// the module documentation).
pub fn borrow_rows(
    underlying: &Underlying,
    seed: u64,
    from: NaiveDate,
    to: NaiveDate,
    calendar: &NyseCalendar,
) -> Vec<BorrowRate> {
    if underlying.asset_class == AssetClass::Index || to < from {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(symbol_stream(seed, &underlying.symbol, 0x424F_5252)); // "BORR"
    let etf = underlying.asset_class == AssetClass::Etf;
    let base = if etf {
        rng.uniform(0.002, 0.006)
    } else {
        let cap = underlying.market_cap_usd_bn.unwrap_or(10.0);
        if cap >= 50.0 {
            rng.uniform(0.0025, 0.005)
        } else {
            rng.log_uniform(0.003, 0.03)
        }
    };
    let spike_probability = if etf { 1.0 / 3_000.0 } else { 1.0 / 750.0 };
    let mut log_noise = 0.0_f64;
    let (mut spike_left, mut spike_length, mut spike_size) = (0u32, 1u32, 1.0_f64);
    let mut out = Vec::new();
    for date in calendar.trading_days(EPOCH.min(from), to) {
        let (z, spike_draw, length_draw, size_draw) = (
            normal(&mut rng),
            rng.next_f64(),
            rng.below(36) as u32,
            rng.log_uniform(5.0, 40.0),
        );
        log_noise += -0.05 * log_noise + 0.05 * z;
        if spike_left == 0 && spike_draw < spike_probability {
            spike_length = 5 + length_draw;
            spike_left = spike_length;
            spike_size = size_draw;
        }
        let multiplier = if spike_left > 0 {
            // Full size for the first two thirds, then a linear decay to the base.
            let elapsed = spike_length - spike_left;
            let decay_start = 2 * spike_length / 3;
            let weight = if elapsed < decay_start {
                1.0
            } else {
                f64::from(spike_left) / f64::from((spike_length - decay_start).max(1))
            };
            spike_left -= 1;
            1.0 + (spike_size - 1.0) * weight
        } else {
            1.0
        };
        if date < from {
            continue;
        }
        let rate = (base * log_noise.exp() * multiplier * 1e6).round() / 1e6;
        out.push(BorrowRate {
            symbol: underlying.symbol.clone(),
            date,
            borrow_rate: rate,
            is_hard_to_borrow: rate >= HARD_TO_BORROW_RATE,
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The economic calendar
// ---------------------------------------------------------------------------------------------

/// When a series is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// The `n`-th (1-based) given weekday of every month; `n = 5` is the last one.
    NthWeekday(u8, Weekday),
    /// The first trading day on or after this day of every month.
    OnOrAfterDay(u32),
    /// The `n`-th (1-based) trading day of every month.
    NthTradingDay(u8),
    /// Every week on this weekday.
    Weekly(Weekday),
    /// The last Thursday of the months with this remainder modulo 3 (1 = Jan/Apr/Jul/Oct,
    /// 2 = Feb/May/Aug/Nov, 0 = Mar/Jun/Sep/Dec): the GDP estimates.
    QuarterlyLastThursday(u32),
    /// The eight FOMC decision days of a year (see [`fomc_days`]).
    Fomc,
    /// Three weeks after each FOMC decision (the minutes).
    FomcMinutes,
}

/// How a series' value prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueModel {
    /// The typical level.
    pub mean: f64,
    /// AR(1) persistence between releases.
    pub persistence: f64,
    /// Innovation standard deviation.
    pub sd: f64,
    /// Decimals printed.
    pub decimals: usize,
    /// Printed after the number (`%`, `K`, `M`, or nothing).
    pub suffix: &'static str,
}

/// One economic series of the calendar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Series {
    /// The event name.
    pub name: &'static str,
    /// Market importance.
    pub importance: Importance,
    /// Release time, New York (hour, minute).
    pub time: (u32, u32),
    /// Release schedule.
    pub schedule: Schedule,
    /// Its values; `None` for events without a number (press conferences, minutes).
    pub value: Option<ValueModel>,
}

const fn value(
    mean: f64,
    persistence: f64,
    sd: f64,
    decimals: usize,
    suffix: &'static str,
) -> Option<ValueModel> {
    Some(ValueModel {
        mean,
        persistence,
        sd,
        decimals,
        suffix,
    })
}

/// The US series of the simulated calendar.
pub const SERIES: &[Series] = &[
    Series {
        name: "Nonfarm Payrolls",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(1, Weekday::Fri),
        value: value(180.0, 0.5, 80.0, 0, "K"),
    },
    Series {
        name: "Unemployment Rate",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(1, Weekday::Fri),
        value: value(4.3, 0.97, 0.1, 1, "%"),
    },
    Series {
        name: "Average Hourly Earnings m/m",
        importance: Importance::Medium,
        time: (8, 30),
        schedule: Schedule::NthWeekday(1, Weekday::Fri),
        value: value(0.3, 0.3, 0.1, 1, "%"),
    },
    Series {
        name: "CPI m/m",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(2, Weekday::Wed),
        value: value(0.25, 0.4, 0.15, 1, "%"),
    },
    Series {
        name: "Core CPI m/m",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(2, Weekday::Wed),
        value: value(0.25, 0.6, 0.1, 1, "%"),
    },
    Series {
        name: "CPI y/y",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(2, Weekday::Wed),
        value: value(2.8, 0.95, 0.25, 1, "%"),
    },
    Series {
        name: "PPI m/m",
        importance: Importance::Medium,
        time: (8, 30),
        schedule: Schedule::NthWeekday(2, Weekday::Thu),
        value: value(0.2, 0.3, 0.3, 1, "%"),
    },
    Series {
        name: "Retail Sales m/m",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::OnOrAfterDay(15),
        value: value(0.3, 0.1, 0.6, 1, "%"),
    },
    Series {
        name: "Initial Jobless Claims",
        importance: Importance::Medium,
        time: (8, 30),
        schedule: Schedule::Weekly(Weekday::Thu),
        value: value(225.0, 0.9, 10.0, 0, "K"),
    },
    Series {
        name: "ISM Manufacturing PMI",
        importance: Importance::High,
        time: (10, 0),
        schedule: Schedule::NthTradingDay(1),
        value: value(51.0, 0.85, 1.5, 1, ""),
    },
    Series {
        name: "ISM Services PMI",
        importance: Importance::Medium,
        time: (10, 0),
        schedule: Schedule::NthTradingDay(3),
        value: value(54.0, 0.85, 1.5, 1, ""),
    },
    Series {
        name: "JOLTS Job Openings",
        importance: Importance::Medium,
        time: (10, 0),
        schedule: Schedule::NthWeekday(1, Weekday::Tue),
        value: value(7.5, 0.9, 0.3, 2, "M"),
    },
    Series {
        name: "Core PCE Price Index m/m",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::NthWeekday(5, Weekday::Fri),
        value: value(0.22, 0.5, 0.1, 1, "%"),
    },
    Series {
        name: "CB Consumer Confidence",
        importance: Importance::Medium,
        time: (10, 0),
        schedule: Schedule::NthWeekday(5, Weekday::Tue),
        value: value(100.0, 0.85, 5.0, 1, ""),
    },
    Series {
        name: "UoM Consumer Sentiment",
        importance: Importance::Low,
        time: (10, 0),
        schedule: Schedule::NthWeekday(2, Weekday::Fri),
        value: value(75.0, 0.85, 4.0, 1, ""),
    },
    Series {
        name: "Housing Starts",
        importance: Importance::Low,
        time: (8, 30),
        schedule: Schedule::OnOrAfterDay(17),
        value: value(1.35, 0.8, 0.08, 2, "M"),
    },
    Series {
        name: "Existing Home Sales",
        importance: Importance::Low,
        time: (10, 0),
        schedule: Schedule::OnOrAfterDay(21),
        value: value(4.9, 0.85, 0.2, 2, "M"),
    },
    Series {
        name: "Durable Goods Orders m/m",
        importance: Importance::Medium,
        time: (8, 30),
        schedule: Schedule::OnOrAfterDay(25),
        value: value(0.3, 0.0, 2.0, 1, "%"),
    },
    Series {
        name: "GDP q/q (Advance)",
        importance: Importance::High,
        time: (8, 30),
        schedule: Schedule::QuarterlyLastThursday(1),
        value: value(2.3, 0.5, 1.5, 1, "%"),
    },
    Series {
        name: "GDP q/q (Second Estimate)",
        importance: Importance::Medium,
        time: (8, 30),
        schedule: Schedule::QuarterlyLastThursday(2),
        value: value(2.3, 0.5, 1.5, 1, "%"),
    },
    Series {
        name: "GDP q/q (Third Estimate)",
        importance: Importance::Low,
        time: (8, 30),
        schedule: Schedule::QuarterlyLastThursday(0),
        value: value(2.3, 0.5, 1.5, 1, "%"),
    },
    Series {
        name: "FOMC Interest Rate Decision",
        importance: Importance::High,
        time: (14, 0),
        schedule: Schedule::Fomc,
        value: None,
    },
    Series {
        name: "FOMC Press Conference",
        importance: Importance::High,
        time: (14, 30),
        schedule: Schedule::Fomc,
        value: None,
    },
    Series {
        name: "FOMC Meeting Minutes",
        importance: Importance::Medium,
        time: (14, 0),
        schedule: Schedule::FomcMinutes,
        value: None,
    },
];

/// The `n`-th `weekday` of a month (n = 5: the last one).
fn nth_weekday(year: i32, month: u32, n: u8, weekday: Weekday) -> Option<NaiveDate> {
    if n >= 5 {
        let next = NaiveDate::from_ymd_opt(year, month, 1)?.checked_add_months(Months::new(1))?;
        let mut day = next.pred_opt()?;
        while day.weekday() != weekday {
            day = day.pred_opt()?;
        }
        return Some(day);
    }
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n)
}

/// The FOMC decision days of `year`: the Wednesdays of the usual eight meetings (last of
/// January, third of March, first of May, third of June, last of July, third of September,
/// first of November, second of December); a Wednesday that is an exchange holiday
/// (Juneteenth) moves a week earlier.
pub fn fomc_days(year: i32) -> Vec<NaiveDate> {
    [
        (1, 5),
        (3, 3),
        (5, 1),
        (6, 3),
        (7, 5),
        (9, 3),
        (11, 1),
        (12, 2),
    ]
    .into_iter()
    .filter_map(|(month, n)| nth_weekday(year, month, n, Weekday::Wed))
    .map(|d| {
        if NyseCalendar.is_trading_day(d) {
            d
        } else {
            d - TimeDelta::days(7)
        }
    })
    .collect()
}

/// The release dates of `schedule` in `year`, ascending, each moved to a trading day (the
/// previous one for fixed weekdays, the next one for day-of-month rules).
fn release_dates(schedule: Schedule, year: i32, calendar: &NyseCalendar) -> Vec<NaiveDate> {
    let to_trading_back = |d: NaiveDate| {
        if calendar.is_trading_day(d) {
            d
        } else {
            calendar.previous_trading_day(d)
        }
    };
    let mut out: Vec<NaiveDate> = match schedule {
        Schedule::NthWeekday(n, weekday) => (1..=12)
            .filter_map(|m| nth_weekday(year, m, n, weekday))
            .map(to_trading_back)
            .collect(),
        Schedule::OnOrAfterDay(day) => (1..=12)
            .filter_map(|m| NaiveDate::from_ymd_opt(year, m, day))
            .map(|d| {
                if calendar.is_trading_day(d) {
                    d
                } else {
                    calendar.next_trading_day(d)
                }
            })
            .collect(),
        Schedule::NthTradingDay(n) => (1..=12)
            .filter_map(|m| {
                let first = NaiveDate::from_ymd_opt(year, m, 1)?;
                let mut day = calendar.previous_trading_day(first);
                for _ in 0..n.max(1) {
                    day = calendar.next_trading_day(day);
                }
                Some(day)
            })
            .collect(),
        Schedule::Weekly(weekday) => {
            let Some(start) = NaiveDate::from_ymd_opt(year, 1, 1) else {
                return Vec::new();
            };
            start
                .iter_days()
                .take_while(|d| d.year() == year)
                .filter(|d| d.weekday() == weekday)
                .map(to_trading_back)
                .collect()
        }
        Schedule::QuarterlyLastThursday(remainder) => (1..=12)
            .filter(|m| m % 3 == remainder % 3)
            .filter_map(|m| nth_weekday(year, m, 5, Weekday::Thu))
            .map(to_trading_back)
            .collect(),
        Schedule::Fomc => fomc_days(year),
        Schedule::FomcMinutes => fomc_days(year)
            .into_iter()
            .map(|d| to_trading_back(d + TimeDelta::days(21)))
            .collect(),
    };
    out.dedup();
    out
}

fn format_value(model: &ValueModel, value: f64) -> String {
    format!("{value:.prec$}{}", model.suffix, prec = model.decimals)
}

/// The US economic calendar for `[from, to]`, by date and then series order, with actuals for
/// releases published by `as_of` (see the module documentation).
pub fn economic_calendar(
    seed: u64,
    from: NaiveDate,
    to: NaiveDate,
    as_of: DateTime<Utc>,
    calendar: &NyseCalendar,
) -> Vec<EconomicEvent> {
    let mut out = Vec::new();
    if to < from {
        return out;
    }
    let first_year = EPOCH.year().min(from.year());
    for (index, series) in SERIES.iter().enumerate() {
        let mut rng = SplitMix64::new(derive_seed(
            derive_seed(seed, 0x4543_4F4E), // "ECON"
            index as u64,
        ));
        let mut previous: Option<f64> = series.value.map(|m| m.mean);
        let mut fed_funds_upper = 0.25_f64;
        let time = NaiveTime::from_hms_opt(series.time.0, series.time.1, 0);
        for year in first_year..=to.year() {
            for date in release_dates(series.schedule, year, calendar) {
                let z = normal(&mut rng);
                let step = rng.next_f64();
                let (actual, forecast, prior) = match series.value {
                    Some(model) => {
                        let last = previous.unwrap_or(model.mean);
                        let expected = model.mean + model.persistence * (last - model.mean);
                        let actual = expected + model.sd * z;
                        previous = Some(actual);
                        (
                            format_value(&model, actual),
                            Some(format_value(&model, expected)),
                            Some(format_value(&model, last)),
                        )
                    }
                    None if series.name == "FOMC Interest Rate Decision" => {
                        let last = fed_funds_upper;
                        if step < 0.2 {
                            fed_funds_upper = (fed_funds_upper + 0.25).min(5.5);
                        } else if step > 0.8 {
                            fed_funds_upper = (fed_funds_upper - 0.25).max(0.25);
                        }
                        (
                            format!("{fed_funds_upper:.2}%"),
                            Some(format!("{last:.2}%")),
                            Some(format!("{last:.2}%")),
                        )
                    }
                    None => (String::new(), None, None),
                };
                if date < from || date > to {
                    continue;
                }
                let released = time.is_some_and(|t| as_of >= new_york_datetime(date, t).to_utc());
                out.push(EconomicEvent {
                    date,
                    time,
                    country: "US".to_owned(),
                    event: series.name.to_owned(),
                    importance: series.importance,
                    actual: (released && !actual.is_empty()).then_some(actual),
                    forecast,
                    previous: prior,
                });
            }
        }
    }
    out.sort_by_key(|e| e.date);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn fomc_meets_eight_times_on_wednesdays() {
        for year in 2020..2030 {
            let days = fomc_days(year);
            assert_eq!(days.len(), 8);
            assert!(days.iter().all(|d| d.weekday() == Weekday::Wed));
        }
    }

    #[test]
    fn fiscal_quarters_are_the_previous_calendar_quarter() {
        assert_eq!(fiscal_quarter(date(2026, 1, 28)), "FY2025 Q4");
        assert_eq!(fiscal_quarter(date(2026, 4, 28)), "FY2026 Q1");
        assert_eq!(fiscal_quarter(date(2026, 12, 10)), "FY2026 Q3");
    }

    #[test]
    fn payrolls_come_on_the_first_friday_or_the_day_before() {
        let dates = release_dates(Schedule::NthWeekday(1, Weekday::Fri), 2026, &NyseCalendar);
        assert_eq!(dates.len(), 12);
        // 2026-04-03 is Good Friday: the release moves to Thursday in this calendar.
        assert!(dates.contains(&date(2026, 4, 2)));
        assert!(dates.contains(&date(2026, 5, 1)));
    }
}
