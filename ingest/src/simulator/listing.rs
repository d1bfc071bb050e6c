//! The listing structure of a trade date: which expirations an underlying lists
//! ([`expirations`]) and which strikes each expiration lists ([`strike_grid`], [`StrikeGrid`]).
//!
//! The rules follow the US listed options market (Cboe, Nasdaq, OCC conventions) closely enough
//! that chains look familiar, and simplify where the real rules are a thicket of exchange
//! programmes. Every rule is stated where it is implemented. All functions are pure: the same
//! underlying, trade date and calendar give the same listing.
//!
//! # Expirations
//!
//! | family | when | who lists it | how far out |
//! | --- | --- | --- | --- |
//! | daily | every trading day (SPX, SPY, QQQ) or Monday/Wednesday (IWM, NDX, RUT) | [`DailyExpirations`] | trading days within [`DAILY_HORIZON_DAYS`] |
//! | weekly | Fridays (VIX: Wednesdays) | [`ListingRules::weeklies`] | that many consecutive weeks |
//! | monthly | third Friday (VIX: the Wednesday 30 days before the next month's third Friday) | everyone | [`ListingRules::monthlies`] consecutive months |
//! | quarterly | last trading day of March, June, September, December | index products | [`ListingRules::quarterlies`] quarter ends |
//! | LEAPS | January monthly | [`ListingRules::leaps`] | Januaries of the next three calendar years |
//!
//! - **Holidays.** An expiration whose regular day is an exchange holiday moves to the previous
//!   trading day (Good Friday weeklies expire on Thursday; the June 2026 monthly, whose third
//!   Friday is Juneteenth, expires on Thursday 2026-06-18). A daily expiration that would fall on
//!   a holiday simply does not exist. Nothing is ever listed on a non-trading day.
//! - **One expiration per date.** When several families land on the same date, the date is
//!   listed once, with the most "standard" family: monthly/LEAPS, then quarterly, weekly, daily.
//!   (The API keys chains by date.)
//! - **Settlement.** Equity and ETF options settle on the close (PM). The standard monthly and
//!   LEAPS series of SPX, NDX and RUT settle on the special opening quotation of expiration day
//!   (AM) and stop trading the trading day before; all VIX options are AM-settled. An AM-settled
//!   expiration is therefore listed only *before* its date. On an SPX monthly expiration day the
//!   chain shows that day's PM-settled SPXW series instead (the 0DTE); on earlier days the date
//!   shows the AM monthly (see [`Expiration::last_trading_date`]).
//! - **Past and present.** Expirations before the trade date are never listed; a PM expiration
//!   on the trade date itself is (0DTE).
//!
//! ```
//! use chrono::NaiveDate;
//! use optics_compute::time::NyseCalendar;
//! use optics_ingest::simulator::listing::{ExpirationFamily, expirations, strike_grid};
//! use optics_ingest::simulator::universe::Universe;
//!
//! let universe = Universe::real();
//! let spy = universe.get("SPY").unwrap();
//! let trade_date = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(); // a monthly Friday
//! let listed = expirations(spy, trade_date, &NyseCalendar);
//! assert_eq!(listed[0].date, trade_date); // the 0DTE
//! assert_eq!(listed[0].family, ExpirationFamily::Monthly);
//! let strikes = strike_grid(spy, 680.0, trade_date, &listed[0]);
//! assert!(strikes.contains(&680.0) && strikes.contains(&681.0));
//! ```
//!
//! # Strikes
//!
//! See [`StrikeGrid`]: increments that widen with the price level, the distance from spot and
//! the time to expiry; a range of about ±5 σ√T around spot; strikes built as integer multiples
//! of their increment, so they carry no floating-point dust.

use chrono::{Datelike, Months, NaiveDate, TimeDelta, Weekday};
use optics_compute::time::{DAYS_PER_YEAR, NyseCalendar};
pub use optics_schemas::SettlementStyle;

use super::universe::Underlying;

/// How far ahead daily (non-Friday) expirations are listed, in calendar days. SPX and SPY list
/// their Monday–Thursday series a few weeks out; beyond that only the weekly Fridays exist.
pub const DAILY_HORIZON_DAYS: i64 = 28;

/// Which expiration family a listed expiration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExpirationFamily {
    /// A short-dated series on a day other than the weekly expiration day (SPX Monday–Thursday).
    Daily,
    /// The weekly series (Fridays; Wednesdays for VIX) that are not monthly expirations.
    Weekly,
    /// The standard monthly expiration (third Friday; VIX: its Wednesday rule).
    Monthly,
    /// The end-of-quarter series of index products (last trading day of the quarter).
    Quarterly,
    /// Long-term January expirations beyond the monthly listing horizon.
    Leaps,
}

impl ExpirationFamily {
    /// A lower-case code: `daily`, `weekly`, `monthly`, `quarterly`, `leaps`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
            Self::Quarterly => "quarterly",
            Self::Leaps => "leaps",
        }
    }

    /// True for the standard series (monthly and LEAPS): the ones traded under the
    /// underlying's own option root and, for cash indices, AM-settled.
    pub fn is_standard(self) -> bool {
        matches!(self, Self::Monthly | Self::Leaps)
    }

    /// Which family wins when two land on the same date (higher wins).
    fn precedence(self) -> u8 {
        match self {
            Self::Daily => 0,
            Self::Weekly => 1,
            Self::Quarterly => 2,
            Self::Monthly | Self::Leaps => 3,
        }
    }
}

/// Which days carry daily expirations, besides the weekly day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DailyExpirations {
    /// No dailies: weeklies (if any) and the longer families only.
    None,
    /// Monday and Wednesday series next to the Friday weekly (IWM, NDX and RUT have had
    /// Monday/Wednesday/Friday expirations; the newer Tuesday/Thursday programmes are left out
    /// here for simplicity).
    MondayWednesday,
    /// Every trading day (SPX, SPY, QQQ): a 0DTE series exists every session.
    EveryTradingDay,
}

/// The day the monthly and weekly cycles are anchored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpirationCycle {
    /// Equity, ETF and index options: monthlies on the third Friday, weeklies on Fridays.
    ThirdFriday,
    /// VIX options: the monthly expires on the Wednesday 30 days before the third Friday of the
    /// following month (the SPX expiration whose 30-day options the settlement VIX measures);
    /// weeklies on Wednesdays.
    VixWednesday,
}

/// Which expiration families an underlying lists and how they settle: part of the universe's
/// static configuration ([`Underlying::listing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListingRules {
    /// Daily expirations besides the weekly day.
    pub dailies: DailyExpirations,
    /// Consecutive weekly expirations listed, counting the current week (0: no weeklies).
    pub weeklies: u8,
    /// Consecutive standard monthly expirations listed, counting the current month's if it has
    /// not passed.
    pub monthlies: u8,
    /// End-of-quarter expirations listed (0: none).
    pub quarterlies: u8,
    /// Whether January LEAPS are listed for the next three calendar years.
    pub leaps: bool,
    /// The anchor day of the monthly and weekly cycles.
    pub cycle: ExpirationCycle,
    /// Settlement of the standard series (monthly and LEAPS).
    pub standard_settlement: SettlementStyle,
    /// Settlement of the other series (daily, weekly, quarterly).
    pub short_dated_settlement: SettlementStyle,
    /// The option root of the non-standard series when it differs from the symbol (`SPXW`,
    /// `NDXP`, `RUTW`, `VIXW`).
    pub short_dated_root: Option<&'static str>,
}

impl ListingRules {
    /// A single stock or ETF with monthlies only (plus LEAPS when `leaps`).
    pub const fn monthly_only(leaps: bool) -> Self {
        Self {
            dailies: DailyExpirations::None,
            weeklies: 0,
            monthlies: 9,
            quarterlies: 0,
            leaps,
            cycle: ExpirationCycle::ThirdFriday,
            standard_settlement: SettlementStyle::Pm,
            short_dated_settlement: SettlementStyle::Pm,
            short_dated_root: None,
        }
    }

    /// A liquid single stock or ETF: six weeklies, nine monthlies, LEAPS.
    pub const fn with_weeklies() -> Self {
        Self {
            weeklies: 6,
            ..Self::monthly_only(true)
        }
    }

    /// An index ETF (SPY, QQQ, IWM, DIA): eight weeklies, twelve monthlies, four quarterlies,
    /// LEAPS, and the given dailies.
    pub const fn index_etf(dailies: DailyExpirations) -> Self {
        Self {
            dailies,
            weeklies: 8,
            monthlies: 12,
            quarterlies: 4,
            ..Self::monthly_only(true)
        }
    }

    /// A cash index with AM-settled standard monthlies and PM-settled short-dated series
    /// under `short_dated_root` (SPX/SPXW, NDX/NDXP, RUT/RUTW).
    pub const fn cash_index(dailies: DailyExpirations, short_dated_root: &'static str) -> Self {
        Self {
            standard_settlement: SettlementStyle::Am,
            short_dated_root: Some(short_dated_root),
            ..Self::index_etf(dailies)
        }
    }

    /// VIX options: Wednesday cycle, six weeklies, eight monthlies, everything AM-settled.
    pub const fn vix() -> Self {
        Self {
            dailies: DailyExpirations::None,
            weeklies: 6,
            monthlies: 8,
            quarterlies: 0,
            leaps: false,
            cycle: ExpirationCycle::VixWednesday,
            standard_settlement: SettlementStyle::Am,
            short_dated_settlement: SettlementStyle::Am,
            short_dated_root: Some("VIXW"),
        }
    }

    fn settlement(&self, family: ExpirationFamily) -> SettlementStyle {
        if family.is_standard() {
            self.standard_settlement
        } else {
            self.short_dated_settlement
        }
    }

    fn weekly_day(&self) -> Weekday {
        match self.cycle {
            ExpirationCycle::ThirdFriday => Weekday::Fri,
            ExpirationCycle::VixWednesday => Weekday::Wed,
        }
    }
}

/// One listed expiration of an underlying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Expiration {
    /// The expiration date (always a trading day).
    pub date: NaiveDate,
    /// The family it is listed under.
    pub family: ExpirationFamily,
    /// How it settles.
    pub settlement: SettlementStyle,
}

impl Expiration {
    /// The last day the series trades: the expiration date for PM settlement, the trading day
    /// before it for AM settlement (the settlement value comes from the expiration day's
    /// opening prints).
    pub fn last_trading_date(&self, calendar: &NyseCalendar) -> NaiveDate {
        match self.settlement {
            SettlementStyle::Pm => self.date,
            SettlementStyle::Am => calendar.previous_trading_day(self.date),
        }
    }
}

/// The third Friday of `month` in `year` (the unadjusted standard monthly expiration day), or
/// `None` when chrono cannot represent it.
pub fn third_friday(year: i32, month: u32) -> Option<NaiveDate> {
    NaiveDate::from_weekday_of_month_opt(year, month, Weekday::Fri, 3)
}

/// `date` if it is a trading day, else the trading day before it: how listed options move an
/// expiration off an exchange holiday.
fn on_or_before_trading_day(date: NaiveDate, calendar: &NyseCalendar) -> NaiveDate {
    if calendar.is_trading_day(date) {
        date
    } else {
        calendar.previous_trading_day(date)
    }
}

/// The standard monthly expiration of `month` in `year` under `cycle`, moved off holidays.
///
/// - Third Friday: the third Friday, or the trading day before it when it is a holiday.
/// - VIX: the Wednesday 30 days before the third Friday of the following month; when that
///   Friday is a holiday, 30 days before the trading day preceding it; when the resulting day
///   is itself a holiday, the trading day before (Cboe's VIX settlement rule).
pub fn monthly_expiration(
    year: i32,
    month: u32,
    cycle: ExpirationCycle,
    calendar: &NyseCalendar,
) -> Option<NaiveDate> {
    match cycle {
        ExpirationCycle::ThirdFriday => Some(on_or_before_trading_day(
            third_friday(year, month)?,
            calendar,
        )),
        ExpirationCycle::VixWednesday => {
            let first =
                NaiveDate::from_ymd_opt(year, month, 1)?.checked_add_months(Months::new(1))?;
            let spx_expiration =
                on_or_before_trading_day(third_friday(first.year(), first.month())?, calendar);
            let wednesday = spx_expiration.checked_sub_signed(TimeDelta::days(30))?;
            Some(on_or_before_trading_day(wednesday, calendar))
        }
    }
}

/// The last trading day of `month` in `year`: the quarterly expiration when `month` ends a
/// quarter.
pub fn last_trading_day_of_month(
    year: i32,
    month: u32,
    calendar: &NyseCalendar,
) -> Option<NaiveDate> {
    let last = NaiveDate::from_ymd_opt(year, month, 1)?
        .checked_add_months(Months::new(1))?
        .pred_opt()?;
    Some(on_or_before_trading_day(last, calendar))
}

/// Year and month `offset` months after `date`'s month.
fn add_months(date: NaiveDate, offset: u32) -> Option<(i32, u32)> {
    let first = date.with_day(1)?.checked_add_months(Months::new(offset))?;
    Some((first.year(), first.month()))
}

/// The expirations `underlying` lists on `trade_date`, sorted by date, one per date.
///
/// Rules (see the [module documentation](self) for the table): dailies on every trading day or
/// on Mondays and Wednesdays within [`DAILY_HORIZON_DAYS`]; weeklies for
/// [`ListingRules::weeklies`] consecutive weeks; [`ListingRules::monthlies`] consecutive
/// monthlies; [`ListingRules::quarterlies`] quarter ends; January LEAPS of the next three
/// calendar years. Holidays move an expiration to the previous trading day (dailies on a
/// holiday are not listed). Dates before `trade_date` are never listed; a PM expiration on
/// `trade_date` is (0DTE); an AM expiration on `trade_date` is not (it stopped trading the day
/// before). Every date returned is a trading day.
///
/// `trade_date` is normally a trading day; on a weekend or holiday the listing is that of the
/// calendar, from the next trading day on.
pub fn expirations(
    underlying: &Underlying,
    trade_date: NaiveDate,
    calendar: &NyseCalendar,
) -> Vec<Expiration> {
    let rules = &underlying.listing;
    let mut candidates: Vec<Expiration> = Vec::with_capacity(64);
    // Lists `date` under `family` unless it is past (or today, for AM settlement) or not a
    // trading day; says whether it did.
    let mut push = |date: NaiveDate, family: ExpirationFamily| {
        let settlement = rules.settlement(family);
        let listed = match settlement {
            SettlementStyle::Pm => date >= trade_date,
            SettlementStyle::Am => date > trade_date,
        } && calendar.is_trading_day(date);
        if listed {
            candidates.push(Expiration {
                date,
                family,
                settlement,
            });
        }
        listed
    };

    // Monthlies: consecutive months from the trade date's month, counting only the listed ones.
    // The last one listed bounds the LEAPS below.
    let mut last_monthly = trade_date;
    let mut listed_monthlies = 0;
    for offset in 0..u32::from(rules.monthlies) + 2 {
        if listed_monthlies == rules.monthlies {
            break;
        }
        let Some(date) = add_months(trade_date, offset)
            .and_then(|(y, m)| monthly_expiration(y, m, rules.cycle, calendar))
        else {
            break;
        };
        if push(date, ExpirationFamily::Monthly) {
            last_monthly = date;
            listed_monthlies += 1;
        }
    }

    // LEAPS: the January monthlies of the next three calendar years that lie beyond the monthly
    // horizon. Real exchanges add a new LEAPS year each autumn; "the next three years" keeps the
    // longest one between about two and three years away.
    if rules.leaps && rules.cycle == ExpirationCycle::ThirdFriday {
        for year in trade_date.year()..=trade_date.year() + 3 {
            if let Some(date) = monthly_expiration(year, 1, rules.cycle, calendar)
                && date > last_monthly
            {
                push(date, ExpirationFamily::Leaps);
            }
        }
    }

    // Quarterlies: the last trading day of each quarter's final month.
    if rules.quarterlies > 0 {
        let mut listed = 0;
        for offset in 0..u32::from(rules.quarterlies) * 3 + 3 {
            if listed == rules.quarterlies {
                break;
            }
            let Some((year, month)) = add_months(trade_date, offset) else {
                break;
            };
            if month % 3 != 0 {
                continue;
            }
            if let Some(date) = last_trading_day_of_month(year, month, calendar)
                && push(date, ExpirationFamily::Quarterly)
            {
                listed += 1;
            }
        }
    }

    // Weeklies: the weekly day of this week and the following ones. The week "slots" are
    // counted from the first weekly day on or after the trade date; a holiday moves the slot's
    // expiration to the trading day before (Good Friday → Thursday).
    if rules.weeklies > 0 {
        let weekday = rules.weekly_day();
        let ahead =
            (7 + weekday.num_days_from_monday() - trade_date.weekday().num_days_from_monday()) % 7;
        for week in 0..i64::from(rules.weeklies) {
            let Some(slot) =
                trade_date.checked_add_signed(TimeDelta::days(i64::from(ahead) + 7 * week))
            else {
                break;
            };
            push(
                on_or_before_trading_day(slot, calendar),
                ExpirationFamily::Weekly,
            );
        }
    }

    // Dailies: trading days within the horizon (not moved: a holiday has no daily series).
    if rules.dailies != DailyExpirations::None {
        let horizon = trade_date
            .checked_add_signed(TimeDelta::days(DAILY_HORIZON_DAYS))
            .unwrap_or(NaiveDate::MAX);
        for date in calendar.trading_days(trade_date, horizon) {
            let listed = match rules.dailies {
                DailyExpirations::EveryTradingDay => true,
                DailyExpirations::MondayWednesday => {
                    matches!(date.weekday(), Weekday::Mon | Weekday::Wed)
                }
                DailyExpirations::None => false,
            };
            if listed {
                push(date, ExpirationFamily::Daily);
            }
        }
    }

    // One per date, the most standard family first.
    candidates.sort_by(|a, b| {
        a.date
            .cmp(&b.date)
            .then(b.family.precedence().cmp(&a.family.precedence()))
    });
    candidates.dedup_by_key(|e| e.date);
    candidates
}

/// How the strike increments of an underlying scale with its price level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrikeStyle {
    /// Single stocks: $0.50 below $25, $1 below $200, $2.50 below $500, $5 below $1000, $10
    /// above (near the money, short-dated), then $25, $50, $100 further out.
    Equity,
    /// ETFs: $0.50 below $100, $1 below $1000, $5 above, then the equity ladder further out.
    Etf,
    /// Cash indices (SPX, NDX, RUT): 5 points near the money (25 above 10 000 points), then 25,
    /// 50, 100, 250, 500 further out.
    Index,
    /// Volatility indices (VIX): 1 point near the money, then 2.5, 5, 10.
    Volatility,
}

/// Strike increments in cents, finest first, for stocks, ETFs and VIX.
const EQUITY_LADDER: &[i64] = &[50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000];
/// Strike increments in cents for cash indices. SPX-style grids jump from 5 to 25 points.
const INDEX_LADDER: &[i64] = &[500, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000];

/// Zone boundaries, in units of σ√T of relative distance |K − S| / S: within the first the
/// near-the-money increment applies, each further zone steps one rung up the ladder.
const ZONE_SIGMAS: [f64; 3] = [1.5, 3.0, 4.5];
/// Half-width of the listed range in σ√T (price terms): strikes cover S·(1 ± k·σ√T).
const RANGE_SIGMAS: f64 = 5.0;
/// No strike below this fraction of spot (deep wings that never trade are not listed).
const LOWER_FLOOR: f64 = 0.1;
/// No strike above this multiple of spot.
const UPPER_CAP: f64 = 3.0;
/// Series are listed weeks before they expire and keep their strikes as expiration nears (the
/// exchanges add strikes, they do not delist them): the range of a near-dated expiration is
/// that of a one-month one.
const MIN_LISTING_YEARS: f64 = 30.0 / DAYS_PER_YEAR;
/// Expiries further out than these (years) list one and two rungs coarser.
const COARSER_AFTER_YEARS: [f64; 2] = [0.35, 1.0];
/// The near-the-money zone spans at least this many near increments on each side, so the grid
/// always brackets spot.
const MIN_NEAR_STEPS: f64 = 2.0;
/// Vol floor for the range (a zero or tiny vol would list a single strike).
const MIN_VOL: f64 = 0.05;

/// The strike listing rules for one expiration: which increment applies where, and the range.
///
/// - **Price level.** The near-the-money increment grows with spot ([`StrikeStyle`]).
/// - **Time.** Expirations more than about four months out list one rung coarser, more than a
///   year out two rungs (LEAPS trade in $5/$10 strikes where weeklies have $1/$2.50).
/// - **Distance.** With s = σ·√T (T floored at 30 days: a series keeps the strikes it was
///   listed with):
///   within 1.5 s of spot (relative distance) the near increment, each further 1.5 s one rung
///   coarser, for at most three rungs. Exchanges add fine strikes around the money and coarse
///   ones in the wings in the same way.
/// - **Range.** S·(1 − 5 s) to S·(1 + 5 s), floored at 10 % and capped at 3× spot, and always
///   at least two near increments each side of spot. The near increment is at most spot / 4,
///   so the grid brackets spot whenever spot is at least the finest increment ($0.50).
/// - **Exactness.** Strikes are integer multiples of their increment computed in cents and
///   converted once, so `strike / increment` is an exact integer. Sorted, no duplicates, all
///   positive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrikeGrid {
    spot: f64,
    ladder: &'static [i64],
    near_rung: usize,
    /// Relative-distance boundaries of zones 0..3 (the last zone is unbounded).
    zone_bounds: [f64; 3],
    lower_cents: i64,
    upper_cents: i64,
}

impl StrikeGrid {
    /// The grid for an underlying of `style` at `spot`, an expiration `years_to_expiry` away
    /// and a volatility level `vol` (decimal). `None` when `spot` is not a positive finite
    /// number. A non-finite or tiny `vol` is floored at 5 %.
    pub fn new(style: StrikeStyle, spot: f64, years_to_expiry: f64, vol: f64) -> Option<Self> {
        if !(spot.is_finite() && spot > 0.0) {
            return None;
        }
        let vol = if vol.is_finite() {
            vol.max(MIN_VOL)
        } else {
            MIN_VOL
        };
        let years = if years_to_expiry.is_finite() {
            years_to_expiry.max(MIN_LISTING_YEARS)
        } else {
            MIN_LISTING_YEARS
        };
        let (ladder, level_rung) = match style {
            StrikeStyle::Equity => (
                EQUITY_LADDER,
                match spot {
                    s if s < 25.0 => 0,
                    s if s < 200.0 => 1,
                    s if s < 500.0 => 2,
                    s if s < 1_000.0 => 3,
                    _ => 4,
                },
            ),
            StrikeStyle::Etf => (
                EQUITY_LADDER,
                match spot {
                    s if s < 100.0 => 0,
                    s if s < 1_000.0 => 1,
                    _ => 3,
                },
            ),
            // An "index" quoted below 100 points is better served by dollar-style strikes.
            StrikeStyle::Index if spot < 100.0 => (EQUITY_LADDER, 1),
            StrikeStyle::Index => (INDEX_LADDER, if spot < 10_000.0 { 0 } else { 1 }),
            StrikeStyle::Volatility => (EQUITY_LADDER, 1),
        };
        let time_rungs = COARSER_AFTER_YEARS.iter().filter(|&&t| years > t).count();
        let mut near_rung = (level_rung + time_rungs).min(ladder.len() - 1);
        // Never an at-the-money increment above a quarter of spot (a $3 "index", a $4 stock in
        // a LEAPS): step down the ladder so the grid still brackets spot.
        while near_rung > 0 && ladder[near_rung] as f64 / 100.0 > spot / 4.0 {
            near_rung -= 1;
        }
        let near_increment = ladder[near_rung] as f64 / 100.0;

        let s = vol * years.sqrt();
        let min_near = MIN_NEAR_STEPS * near_increment / spot;
        let mut zone_bounds = ZONE_SIGMAS.map(|z| z * s);
        zone_bounds[0] = zone_bounds[0].max(min_near);
        for i in 1..zone_bounds.len() {
            zone_bounds[i] = zone_bounds[i].max(zone_bounds[i - 1]);
        }
        let half_width = RANGE_SIGMAS * s;
        let lower = (spot * (1.0 - half_width))
            .max(spot * LOWER_FLOOR)
            .min(spot - MIN_NEAR_STEPS * near_increment)
            .max(0.01);
        let upper = (spot * (1.0 + half_width))
            .min(spot * UPPER_CAP)
            .max(spot + MIN_NEAR_STEPS * near_increment);
        Some(Self {
            spot,
            ladder,
            near_rung,
            zone_bounds,
            lower_cents: to_cents_ceil(lower),
            upper_cents: to_cents_floor(upper),
        })
    }

    /// The grid of `expiration` for `underlying` on `trade_date` at `spot`: calendar days to
    /// expiry / 365 and the underlying's base implied vol.
    pub fn for_expiration(
        underlying: &Underlying,
        spot: f64,
        trade_date: NaiveDate,
        expiration: &Expiration,
    ) -> Option<Self> {
        let days = expiration.date.signed_duration_since(trade_date).num_days();
        Self::new(
            underlying.strike_style,
            spot,
            days as f64 / DAYS_PER_YEAR,
            underlying.base_iv,
        )
    }

    /// The increment at the money (the finest of this grid), in dollars (index points).
    pub fn near_increment(&self) -> f64 {
        self.ladder[self.near_rung] as f64 / 100.0
    }

    /// The increment that applies at `strike`, in dollars (index points): every listed strike
    /// is an exact integer multiple of its increment.
    pub fn increment_at(&self, strike: f64) -> f64 {
        self.increment_cents(self.zone(strike)) as f64 / 100.0
    }

    /// The lowest and highest strike the range allows (listed strikes lie within).
    pub fn range(&self) -> (f64, f64) {
        (
            self.lower_cents as f64 / 100.0,
            self.upper_cents as f64 / 100.0,
        )
    }

    /// The listed strikes, ascending, unique, positive.
    pub fn strikes(&self) -> Vec<f64> {
        let mut cents: Vec<i64> = Vec::new();
        for zone in 0..=self.zone_bounds.len() {
            let increment = self.increment_cents(zone);
            // Every multiple of this zone's increment inside the range that falls in the zone.
            // Zones are nested intervals around spot, so scanning the whole span up to the
            // zone's outer bound costs at most a few coarse steps more than it emits.
            let outer = self.zone_bounds.get(zone).copied().unwrap_or(f64::INFINITY);
            let low = to_cents_ceil(self.spot * (1.0 - outer)).max(self.lower_cents);
            let high = to_cents_floor(self.spot * (1.0 + outer)).min(self.upper_cents);
            let first = (low.max(1) + increment - 1).div_euclid(increment);
            let last = high.div_euclid(increment);
            for multiple in first..=last {
                let strike_cents = multiple * increment;
                if self.zone(strike_cents as f64 / 100.0) == zone {
                    cents.push(strike_cents);
                }
            }
        }
        cents.sort_unstable();
        cents.dedup();
        cents.into_iter().map(|c| c as f64 / 100.0).collect()
    }

    fn zone(&self, strike: f64) -> usize {
        let distance = (strike - self.spot).abs() / self.spot;
        self.zone_bounds
            .iter()
            .position(|&bound| distance <= bound)
            .unwrap_or(self.zone_bounds.len())
    }

    fn increment_cents(&self, zone: usize) -> i64 {
        self.ladder[(self.near_rung + zone).min(self.ladder.len() - 1)]
    }
}

fn to_cents_ceil(price: f64) -> i64 {
    // Saturating float → int conversion; prices are far inside i64 in cents.
    (price * 100.0 - 1e-6).ceil() as i64
}

fn to_cents_floor(price: f64) -> i64 {
    (price * 100.0 + 1e-6).floor() as i64
}

/// The strikes `underlying` lists for `expiration` on `trade_date` with the underlying at
/// `spot` ([`StrikeGrid::for_expiration`]); empty when `spot` is not a positive finite number.
///
/// For cash indices priced on the forward the grid is centred on `spot` all the same: the
/// exchange lists strikes around the index level.
pub fn strike_grid(
    underlying: &Underlying,
    spot: f64,
    trade_date: NaiveDate,
    expiration: &Expiration,
) -> Vec<f64> {
    StrikeGrid::for_expiration(underlying, spot, trade_date, expiration)
        .map(|grid| grid.strikes())
        .unwrap_or_default()
}
