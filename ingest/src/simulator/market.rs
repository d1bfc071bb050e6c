//! The underlying paths: daily opens and closes from a seeded model with stochastic volatility, jumps,
//! a common market factor and earnings gaps.
//!
//! # Model (one step = one trading day, Δ = 1/252)
//! - **Market factor** ([`MarketFactor`]): a variance *ratio* `x` (mean 1) following a
//!   discretised Heston square-root process with full truncation,
//!   `x' = x + κ(1 − x)Δ + ξ√(x⁺Δ)·z_v` (κ = 4, ξ = 1, floored at 0.05), whose shock is
//!   correlated −0.7 with the market's return shock `z_m` (the leverage effect: vol rises as the
//!   market falls); and Poisson market jumps (2 a year, log size N(−2.5 %, 2 %)).
//! - **An underlying** with base IV σ, correlation ρ and beta β to SPY: a log return of
//!   `(μ − q − σ_t²/2)Δ + σ_t√Δ·(ρ z_m + √(1−ρ²) z_i) + β·J_m + J_i + E`, where
//!   `σ_t² = σ_d² · x_t · s_t`; `s` is the underlying's own variance ratio (the same Heston form,
//!   κ = 3, ξ = 0.6, independent shocks); `J_i` are idiosyncratic jumps (1 a year, N(0, 3 daily sigmas)); `E` the
//!   earnings gap on an earnings reaction day, N(0, σ_e²) with σ_e = 3σ/√252 (the
//!   [`EarningsVariance::typical`] move the surface prices); μ = 6 % a year. Underlyings with
//!   |ρ| ≥ 0.99 (SPY, SPX) have neither own variance nor own jumps: they move with the market.
//! - **Calibration**: realised volatility runs below implied (the variance risk premium), so
//!   the total annual variance targets `(0.9 σ)²`; the diffusive `σ_d²` is that target less the
//!   expected annual variance of market jumps (β²·λ·E(J²)), idiosyncratic jumps and the four
//!   earnings gaps, floored at a quarter of the target.
//! - **Volatility indices** (VIX): not a random walk but the market's vol level,
//!   `start_price · √x_t · e^{0.03 z}` ([`vix_level`]: the universe's level at `x = 1`).
//! - **Opens**: the earnings gap lands at the open; of the diffusive move `d` of a day, the
//!   overnight part is the Brownian bridge at variance time `f` ([`OVERNIGHT_VARIANCE_SHARE`],
//!   15 %): `f·d + √(f(1−f))·σ_t√Δ·z` (a separate stream, so closes do not depend on it).
//!   Jumps land intraday ([`super::intraday`]).
//!
//! # The tape
//! A [`MarketTape`] is the factor and every path from a fixed first day ([`EPOCH`], 2010-01-04)
//! through the date asked for, each path scaled so that its close on [`ANCHOR_DATE`]
//! (2025-12-31) is the universe's `start_price`. A date's prices therefore depend only on the
//! seed and the universe, never on how much history was asked for, and the history generator
//! and the live session read the same tape.
//!
//! Earnings dates ([`earnings_events`]) follow the underlying's cadence: the typical day of each
//! report month jittered by up to ±3 days (seeded per symbol and quarter) and moved to the next
//! trading day; the gap lands on the report day for before-open reports and on the next
//! trading day for after-close ones.
//!
//! Determinism: every draw comes from SplitMix64 streams derived from the seed (the market's
//! from the seed alone, an underlying's from the seed and its symbol), so the same seed and
//! dates give identical paths.

use chrono::{Datelike, NaiveDate, TimeDelta};
use optics_compute::time::NyseCalendar;
use optics_schemas::EarningsTiming;
use rayon::prelude::*;

use super::listing::StrikeStyle;
use super::rng::{SplitMix64, derive_seed};
use super::surface::EarningsVariance;
use super::universe::{Underlying, Universe};

/// Trading days per year of the daily step.
pub const TRADING_DAYS_PER_YEAR: f64 = 252.0;
/// Realised over implied: the total variance of a path targets `(REALISED_TO_IMPLIED · σ)²`.
pub const REALISED_TO_IMPLIED: f64 = 0.9;

pub(crate) const DT: f64 = 1.0 / TRADING_DAYS_PER_YEAR;
const MARKET_KAPPA: f64 = 4.0;
pub(crate) const MARKET_XI: f64 = 1.0;
pub(crate) const LEVERAGE: f64 = -0.7;
const MARKET_JUMPS_PER_YEAR: f64 = 2.0;
const MARKET_JUMP_MEAN: f64 = -0.025;
const MARKET_JUMP_SD: f64 = 0.02;
const OWN_KAPPA: f64 = 3.0;
const OWN_XI: f64 = 0.6;
const OWN_JUMPS_PER_YEAR: f64 = 1.0;
const OWN_JUMP_DAILY_SIGMAS: f64 = 3.0;
const DRIFT: f64 = 0.06;
pub(crate) const VARIANCE_FLOOR: f64 = 0.05;

/// The common market factor over a range of trading days.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketFactor {
    /// The trading days, ascending.
    pub dates: Vec<NaiveDate>,
    /// The market variance ratio `x` in force on the step into each day (mean about 1).
    pub variance_ratio: Vec<f64>,
    /// The market variance ratio at each day's close, after that day's shock (what a
    /// volatility index quotes).
    pub close_ratio: Vec<f64>,
    /// The market's standard normal return shock of the step into each day (0 on day 0).
    pub shock: Vec<f64>,
    /// The market's jump log size on each day (0 when none).
    pub jump: Vec<f64>,
}

impl MarketFactor {
    /// The factor over the trading days of `[start, end]`, from `seed`.
    pub fn simulate(seed: u64, start: NaiveDate, end: NaiveDate, calendar: &NyseCalendar) -> Self {
        let dates: Vec<NaiveDate> = calendar.trading_days(start, end).collect();
        let mut rng = SplitMix64::new(derive_seed(seed, 0x4D41_524B_4554)); // "MARKET"
        let n = dates.len();
        let (mut variance_ratio, mut close_ratio, mut shock, mut jump) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut x = 1.0_f64;
        for i in 0..n {
            let z_m = normal(&mut rng);
            let z_other = normal(&mut rng);
            let jumped = rng.chance(MARKET_JUMPS_PER_YEAR * DT);
            let size = MARKET_JUMP_MEAN + MARKET_JUMP_SD * normal(&mut rng);
            if i == 0 {
                variance_ratio.push(x);
                close_ratio.push(x);
                shock.push(0.0);
                jump.push(0.0);
                continue;
            }
            variance_ratio.push(x);
            shock.push(z_m);
            jump.push(if jumped { size } else { 0.0 });
            let z_v = LEVERAGE * z_m + (1.0 - LEVERAGE * LEVERAGE).sqrt() * z_other;
            x = (x + MARKET_KAPPA * (1.0 - x) * DT + MARKET_XI * (x.max(0.0) * DT).sqrt() * z_v)
                .max(VARIANCE_FLOOR);
            close_ratio.push(x);
        }
        Self {
            dates,
            variance_ratio,
            close_ratio,
            shock,
            jump,
        }
    }

    /// Number of days.
    pub fn len(&self) -> usize {
        self.dates.len()
    }

    /// True when the range holds no trading day.
    pub fn is_empty(&self) -> bool {
        self.dates.is_empty()
    }
}

/// One earnings report of a simulated path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EarningsEvent {
    /// The day the report is published (a trading day).
    pub report_date: NaiveDate,
    /// Before the open or after the close.
    pub timing: EarningsTiming,
    /// The first session that trades on the news: the report day (before the open) or the
    /// next trading day (after the close).
    pub reaction_date: NaiveDate,
}

/// The earnings reports of `underlying` whose report date lies in `[start, end]` (none for an
/// underlying without an earnings cadence).
pub fn earnings_events(
    underlying: &Underlying,
    seed: u64,
    start: NaiveDate,
    end: NaiveDate,
    calendar: &NyseCalendar,
) -> Vec<EarningsEvent> {
    let Some(cadence) = underlying.earnings else {
        return Vec::new();
    };
    let symbol_seed = derive_seed(seed, fnv1a(underlying.symbol.as_bytes()));
    let mut out = Vec::new();
    for year in start.year()..=end.year() {
        for month in cadence.report_months() {
            let quarter_seed = derive_seed(symbol_seed, (year as u64) * 16 + u64::from(month));
            let mut rng = SplitMix64::new(quarter_seed);
            let jitter = rng.below(7) as i64 - 3;
            let day = (i64::from(cadence.typical_day) + jitter).clamp(1, 28) as u32;
            let Some(mut report) = NaiveDate::from_ymd_opt(year, month, day) else {
                continue;
            };
            while !calendar.is_trading_day(report) {
                report = report.succ_opt().unwrap_or(report);
            }
            if report < start || report > end {
                continue;
            }
            let reaction_date = match cadence.timing {
                EarningsTiming::AfterClose => calendar.next_trading_day(report),
                _ => report,
            };
            out.push(EarningsEvent {
                report_date: report,
                timing: cadence.timing,
                reaction_date,
            });
        }
    }
    out.sort_by_key(|e| e.report_date);
    out
}

/// The daily path of one underlying, with the parts of each day's move that the intraday
/// simulation ([`super::intraday`]) and the history generator need.
#[derive(Debug, Clone, PartialEq)]
pub struct PricePath {
    /// The underlying's symbol.
    pub symbol: String,
    /// The trading days (those of the market factor).
    pub dates: Vec<NaiveDate>,
    /// The close of each day, dollars (index points); `closes[0]` is the start price.
    pub closes: Vec<f64>,
    /// The open of each day, dollars: the previous close moved by the day's earnings gap and
    /// the overnight share of the day's diffusive move (see [`OVERNIGHT_VARIANCE_SHARE`]).
    /// `opens[0]` is the start price.
    pub opens: Vec<f64>,
    /// The annualised diffusive vol in force on the step into each day, decimal; divided by
    /// the underlying's base IV it is a natural [`super::surface::SurfaceInputs::vol_level`].
    pub vols: Vec<f64>,
    /// The underlying's own variance ratio `s` on the step into each day (1 for underlyings
    /// that move with the market only).
    pub own_ratio: Vec<f64>,
    /// The diffusive log move of each day (drift included; 0 on day 0).
    pub diffusive: Vec<f64>,
    /// The log move of the market jump each day (β·J_m; 0 when none), which lands intraday at
    /// the market's jump time.
    pub market_jump: Vec<f64>,
    /// The log move of the underlying's own jump each day (0 when none).
    pub own_jump: Vec<f64>,
    /// The earnings gap of each day (log; non-zero only on reaction days), taken at the open.
    pub gap: Vec<f64>,
    /// The gap in units of its standard deviation (0 on days without a gap): how good the
    /// news was, which the history generator turns into an EPS surprise.
    pub gap_z: Vec<f64>,
    /// The earnings reports within the range.
    pub earnings: Vec<EarningsEvent>,
}

impl PricePath {
    /// The position of `date` in [`dates`](Self::dates).
    pub fn index_of(&self, date: NaiveDate) -> Option<usize> {
        self.dates.binary_search(&date).ok()
    }

    /// Multiplies every price by `factor` (positive and finite; otherwise nothing changes):
    /// returns, gaps and jumps are unchanged.
    pub fn rescale(&mut self, factor: f64) {
        if !(factor.is_finite() && factor > 0.0) {
            return;
        }
        for price in self.closes.iter_mut().chain(self.opens.iter_mut()) {
            *price *= factor;
        }
    }
}

/// The share of a day's diffusive variance that accrues overnight (between the previous close
/// and the open); the rest accrues during the session.
pub const OVERNIGHT_VARIANCE_SHARE: f64 = 0.15;

/// The path of `underlying` over the factor's days, starting from `start_price` (the
/// underlying's own `start_price` when `None`).
pub fn simulate_path(
    underlying: &Underlying,
    factor: &MarketFactor,
    seed: u64,
    start_price: Option<f64>,
    calendar: &NyseCalendar,
) -> PricePath {
    let n = factor.len();
    let start = start_price
        .filter(|p| p.is_finite() && *p > 0.0)
        .unwrap_or(underlying.start_price);
    let earnings = match (factor.dates.first(), factor.dates.last()) {
        (Some(&first), Some(&last)) => earnings_events(underlying, seed, first, last, calendar),
        _ => Vec::new(),
    };
    let symbol_seed = derive_seed(seed, fnv1a(underlying.symbol.as_bytes()));
    let mut rng = SplitMix64::new(derive_seed(symbol_seed, 0x5041_5448)); // "PATH"
    // A separate stream for the overnight split, so the closes do not depend on it.
    let mut overnight_rng = SplitMix64::new(derive_seed(symbol_seed, 0x4F50_454E)); // "OPEN"
    let sigma = underlying.base_iv;
    let rho = underlying.correlation.clamp(-1.0, 1.0);
    let idio = (1.0 - rho * rho).max(0.0).sqrt();
    let earnings_sigma = EarningsVariance::typical(underlying, 0.0).move_sigma;
    let daily_sigma = sigma * DT.sqrt();
    let own_jump_sd = OWN_JUMP_DAILY_SIGMAS * daily_sigma;
    let target = (REALISED_TO_IMPLIED * sigma).powi(2);
    let market_jump_var = underlying.beta.powi(2)
        * MARKET_JUMPS_PER_YEAR
        * (MARKET_JUMP_MEAN.powi(2) + MARKET_JUMP_SD.powi(2));
    let own_variance = rho.abs() < 0.99;
    let own_jump_var = if own_variance {
        OWN_JUMPS_PER_YEAR * own_jump_sd.powi(2)
    } else {
        0.0
    };
    let earnings_var = if underlying.earnings.is_some() {
        4.0 * earnings_sigma.powi(2)
    } else {
        0.0
    };
    let diffusive_var = (target - market_jump_var - own_jump_var - earnings_var).max(0.25 * target);
    let sigma_d = diffusive_var.sqrt();
    let volatility_index = underlying.strike_style == StrikeStyle::Volatility;

    let mut path = PricePath {
        symbol: underlying.symbol.clone(),
        dates: factor.dates.clone(),
        closes: Vec::with_capacity(n),
        opens: Vec::with_capacity(n),
        vols: Vec::with_capacity(n),
        own_ratio: Vec::with_capacity(n),
        diffusive: Vec::with_capacity(n),
        market_jump: Vec::with_capacity(n),
        own_jump: Vec::with_capacity(n),
        gap: Vec::with_capacity(n),
        gap_z: Vec::with_capacity(n),
        earnings,
    };
    let mut s = 1.0_f64;
    let mut log_price = start.ln();
    let mut next_earnings = path
        .earnings
        .iter()
        .map(|e| e.reaction_date)
        .collect::<Vec<_>>()
        .into_iter()
        .peekable();
    let f = OVERNIGHT_VARIANCE_SHARE;
    for i in 0..n {
        let z_i = normal(&mut rng);
        let z_s = normal(&mut rng);
        let own_jump = rng.chance(OWN_JUMPS_PER_YEAR * DT);
        let own_jump_size = own_jump_sd * normal(&mut rng);
        let gap_normal = normal(&mut rng);
        let z_overnight = normal(&mut overnight_rng);
        let x = factor.variance_ratio[i];
        let vol = sigma_d * (x * s).sqrt();
        path.vols.push(vol);
        path.own_ratio.push(s);
        if volatility_index {
            // The VIX level: the market's vol (SPY-like, 15 %) scaled to points, plus noise.
            let level = vix_level(underlying.start_price, factor.close_ratio[i], z_i);
            let previous = path.closes.last().copied().unwrap_or(start);
            path.closes.push(if i == 0 { start } else { level });
            path.opens.push(previous);
            let r = if i == 0 { 0.0 } else { (level / previous).ln() };
            path.diffusive.push(r);
            path.market_jump.push(0.0);
            path.own_jump.push(0.0);
            path.gap.push(0.0);
            path.gap_z.push(0.0);
            continue;
        }
        if i == 0 {
            path.closes.push(start);
            path.opens.push(start);
            path.diffusive.push(0.0);
            path.market_jump.push(0.0);
            path.own_jump.push(0.0);
            path.gap.push(0.0);
            path.gap_z.push(0.0);
            continue;
        }
        let d = (DRIFT - underlying.dividend_yield - 0.5 * vol * vol) * DT
            + vol * DT.sqrt() * (rho * factor.shock[i] + idio * z_i);
        let market_jump = underlying.beta * factor.jump[i];
        let own = if own_jump && own_variance {
            own_jump_size
        } else {
            0.0
        };
        while next_earnings
            .peek()
            .is_some_and(|&day| day < factor.dates[i])
        {
            next_earnings.next();
        }
        let (gap, gap_z) = if next_earnings.peek() == Some(&factor.dates[i]) {
            next_earnings.next();
            (earnings_sigma * gap_normal, gap_normal)
        } else {
            (0.0, 0.0)
        };
        // The overnight part of the diffusive move is the Brownian bridge from 0 to `d` at
        // variance time f: mean f·d, variance f(1−f)·σ²Δ.
        let overnight = f * d + (f * (1.0 - f)).sqrt() * vol * DT.sqrt() * z_overnight;
        path.opens.push((log_price + gap + overnight).exp());
        log_price += d + market_jump + own + gap;
        path.closes.push(log_price.exp());
        path.diffusive.push(d);
        path.market_jump.push(market_jump);
        path.own_jump.push(own);
        path.gap.push(gap);
        path.gap_z.push(gap_z);
        if own_variance {
            s = (s + OWN_KAPPA * (1.0 - s) * DT + OWN_XI * (s.max(0.0) * DT).sqrt() * z_s)
                .max(VARIANCE_FLOOR);
        }
    }
    path
}

/// The VIX level for a market variance ratio `x` and a noise draw: the market's vol
/// (SPY-like, 15 %) × 1.1 (implied above realised) in points, scaled so that `x = 1` without
/// noise gives the universe's `start_price`.
pub fn vix_level(start_price: f64, variance_ratio: f64, noise: f64) -> f64 {
    start_price * variance_ratio.max(VARIANCE_FLOOR).sqrt() * (0.03 * noise).exp()
}

/// The first trading day the simulator's paths start from. Paths are simulated from here so
/// that a date's prices do not depend on how much history was asked for.
pub const EPOCH: NaiveDate = match NaiveDate::from_ymd_opt(2010, 1, 4) {
    Some(date) => date,
    None => NaiveDate::MIN,
};

/// The date on which every path is anchored to its universe `start_price` (the universe's
/// levels are roughly late-2025 levels). Dates far from it drift away, as markets do.
pub const ANCHOR_DATE: NaiveDate = match NaiveDate::from_ymd_opt(2025, 12, 31) {
    Some(date) => date,
    None => NaiveDate::MIN,
};

/// Calendar days a [`MarketTape`] runs past the date asked for.
pub const TAPE_MARGIN_DAYS: i64 = 10;

/// The market factor and every underlying's path from [`EPOCH`] through a date: the one
/// source of truth for daily prices, shared by the history generator and the live session, so
/// that a session continues its history exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketTape {
    /// The simulator seed.
    pub seed: u64,
    /// The market factor.
    pub factor: MarketFactor,
    /// The path of each underlying, in universe order.
    pub paths: Vec<PricePath>,
}

impl optics_schemas::memory::HeapBytes for MarketTape {
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let factor = &self.factor;
        let factor_bytes = factor.dates.capacity() * size_of::<NaiveDate>()
            + (factor.variance_ratio.capacity()
                + factor.close_ratio.capacity()
                + factor.shock.capacity()
                + factor.jump.capacity())
                * size_of::<f64>();
        let path_bytes: usize = self
            .paths
            .iter()
            .map(|p| {
                p.symbol.capacity()
                    + p.dates.capacity() * size_of::<NaiveDate>()
                    + (p.closes.capacity()
                        + p.opens.capacity()
                        + p.vols.capacity()
                        + p.own_ratio.capacity()
                        + p.diffusive.capacity()
                        + p.market_jump.capacity()
                        + p.own_jump.capacity()
                        + p.gap.capacity()
                        + p.gap_z.capacity())
                        * size_of::<f64>()
                    + p.earnings.capacity() * size_of::<EarningsEvent>()
            })
            .sum();
        factor_bytes + self.paths.capacity() * size_of::<PricePath>() + path_bytes
    }
}

impl MarketTape {
    /// The tape of `universe` from [`EPOCH`] through `through` (and at least through
    /// [`ANCHOR_DATE`], where each path's close equals its `start_price`), plus
    /// [`TAPE_MARGIN_DAYS`] so that the reaction to a report published on the last day is
    /// known. Paths are simulated in parallel (rayon), each from its own seeded streams.
    ///
    /// Deterministic from `(seed, universe)`: the values of a date do not depend on
    /// `through`. `through` before [`EPOCH`] gives the tape through the anchor date.
    pub fn simulate(universe: &Universe, seed: u64, through: NaiveDate) -> Self {
        let calendar = NyseCalendar;
        let end = through.max(ANCHOR_DATE) + TimeDelta::days(TAPE_MARGIN_DAYS);
        let factor = MarketFactor::simulate(seed, EPOCH, end, &calendar);
        let anchor_index = factor
            .dates
            .partition_point(|&d| d <= ANCHOR_DATE)
            .saturating_sub(1);
        let paths = universe
            .as_slice()
            .par_iter()
            .map(|u| {
                let mut path = simulate_path(u, &factor, seed, Some(u.start_price), &calendar);
                if u.strike_style != StrikeStyle::Volatility
                    && let Some(&close) = path.closes.get(anchor_index)
                {
                    path.rescale(u.start_price / close);
                }
                path
            })
            .collect();
        Self {
            seed,
            factor,
            paths,
        }
    }

    /// The position of `date` among the tape's trading days.
    pub fn day_index(&self, date: NaiveDate) -> Option<usize> {
        self.factor.dates.binary_search(&date).ok()
    }

    /// The last date of the tape.
    pub fn last_date(&self) -> Option<NaiveDate> {
        self.factor.dates.last().copied()
    }
}

/// A standard normal draw (Box–Muller, one of the pair).
pub(crate) fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// 64-bit FNV-1a of `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash
}
