//! Dividend figures of one underlying: the declared yield, trailing and calendar-year totals,
//! their growth, and the dividend the option chain implies through put–call parity.
//!
//! * Declared yield = latest amount × payments per year ÷ price × 100 (percent).
//! * Trailing 12 months = the sum of the amounts whose ex-date lies in
//!   (as-of − [`TRAILING_DAYS`] days, as-of].
//! * Calendar-year totals count the complete years on record only: the years after the year of
//!   the first stored ex-date (which may be a partial year) and before the as-of year (still
//!   running). CAGR = (last ÷ first)^(1 ÷ (years − 1)) − 1, in percent; `None` below
//!   [`MIN_CAGR_YEARS`] complete years or when the first total is not positive.
//! * Growth = latest annualised amount ÷ the annualised amount of the payment nearest one year
//!   earlier (within [`GROWTH_MATCH_DAYS`] days) − 1, in percent.
//! * Implied dividend of an expiration: parity gives C − P = S·e^{−qT} − K·e^{−rT}, and the
//!   forward F it implies prices the stock net of its dividends, so the present value of the
//!   dividends paid before expiry is D = S − F·e^{−rT}, dollars per share. Its annual rate is
//!   D ÷ T. Expirations closer than [`MIN_IMPLIED_YEARS`] are skipped (the division by a tiny T
//!   magnifies quote noise); the annual implied figure is read from the expiration whose T is
//!   nearest [`IMPLIED_TARGET_YEARS`].

use chrono::{Datelike, NaiveDate, TimeDelta};

/// Days of the trailing window of the actual annual dividend.
pub const TRAILING_DAYS: i64 = 365;
/// Complete calendar years needed for a CAGR.
pub const MIN_CAGR_YEARS: usize = 2;
/// Largest gap, days, between one year before the latest ex-date and the ex-date it is
/// compared with for the growth.
pub const GROWTH_MATCH_DAYS: i64 = 45;
/// Shortest time to expiry, years (a week), the annual implied dividend is read from.
pub const MIN_IMPLIED_YEARS: f64 = 7.0 / 365.0;
/// The time to expiry, years, whose expiration gives the annual implied dividend.
pub const IMPLIED_TARGET_YEARS: f64 = 1.0;

/// One stored payment: ex-date, dollars per share, and its schedule's payments per year
/// (`None` for irregular and special dividends).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Payment {
    /// Ex-dividend date.
    pub ex_date: NaiveDate,
    /// Dollars per share.
    pub amount: f64,
    /// Regular payments per year of its schedule.
    pub per_year: Option<u32>,
}

/// The declared yield: `amount × per_year ÷ price × 100`, percent; `None` without a positive,
/// finite price.
pub fn declared_yield_pct(amount: f64, per_year: u32, price: f64) -> Option<f64> {
    (price.is_finite() && price > 0.0).then(|| amount * f64::from(per_year) / price * 100.0)
}

/// The sum of the amounts with an ex-date in `(as_of − TRAILING_DAYS, as_of]`, dollars.
pub fn trailing_annual(payments: &[Payment], as_of: NaiveDate) -> f64 {
    let from = as_of - TimeDelta::days(TRAILING_DAYS);
    payments
        .iter()
        .filter(|p| p.ex_date > from && p.ex_date <= as_of)
        .map(|p| p.amount)
        .sum()
}

/// The totals of the complete calendar years on record, oldest first, as (year, dollars): the
/// years after the first ex-date's year and before `as_of`'s year.
pub fn annual_totals(payments: &[Payment], as_of: NaiveDate) -> Vec<(i32, f64)> {
    let Some(first) = payments.iter().map(|p| p.ex_date.year()).min() else {
        return Vec::new();
    };
    ((first + 1)..as_of.year())
        .map(|year| {
            let total = payments
                .iter()
                .filter(|p| p.ex_date.year() == year)
                .map(|p| p.amount)
                .sum();
            (year, total)
        })
        .collect()
}

/// The compound annual growth of `totals` (oldest first), percent: `(last ÷ first)^(1 ÷ (n −
/// 1)) − 1`; `None` below [`MIN_CAGR_YEARS`] totals or when the first is not positive.
pub fn cagr_pct(totals: &[(i32, f64)]) -> Option<f64> {
    if totals.len() < MIN_CAGR_YEARS {
        return None;
    }
    let (first_year, first) = totals[0];
    let (last_year, last) = totals[totals.len() - 1];
    if first <= 0.0 || last < 0.0 || last_year <= first_year {
        return None;
    }
    Some(((last / first).powf(1.0 / f64::from(last_year - first_year)) - 1.0) * 100.0)
}

/// The growth of the latest payment's annualised amount over that of the payment nearest one
/// year before it (see the module documentation), percent. `payments` ascending by ex-date,
/// past ones only.
pub fn growth_pct(payments: &[Payment]) -> Option<f64> {
    let latest = payments.last()?;
    let target = latest.ex_date - TimeDelta::days(365);
    let earlier = payments
        .iter()
        .filter(|p| (p.ex_date - target).num_days().abs() <= GROWTH_MATCH_DAYS)
        .min_by_key(|p| (p.ex_date - target).num_days().abs())?;
    let now = latest.amount * f64::from(latest.per_year?);
    let then = earlier.amount * f64::from(earlier.per_year?);
    (then > 0.0).then(|| (now / then - 1.0) * 100.0)
}

/// The dividend one expiration's forward implies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImpliedDividend {
    /// Years to expiry.
    pub years: f64,
    /// Present value of the dividends before expiry, `S − F·e^{−rT}`, dollars per share.
    pub pv: f64,
    /// `pv ÷ T`, dollars per share per year.
    pub annualised: f64,
}

/// The implied dividend from spot `s`, forward `f`, continuous rate `r` and `t` years;
/// `None` for a non-positive or non-finite input.
pub fn implied_dividend(s: f64, f: f64, r: f64, t: f64) -> Option<ImpliedDividend> {
    if !(s > 0.0 && f > 0.0 && t > 0.0 && r.is_finite() && s.is_finite() && f.is_finite()) {
        return None;
    }
    let pv = s - f * (-r * t).exp();
    Some(ImpliedDividend {
        years: t,
        pv,
        annualised: pv / t,
    })
}

/// Among `implied` (one per expiration), the one of at least [`MIN_IMPLIED_YEARS`] whose T is
/// nearest [`IMPLIED_TARGET_YEARS`] (the longer on a tie).
pub fn pick_annual(implied: &[ImpliedDividend]) -> Option<ImpliedDividend> {
    implied
        .iter()
        .filter(|d| d.years >= MIN_IMPLIED_YEARS)
        .copied()
        .min_by(|a, b| {
            let da = (a.years - IMPLIED_TARGET_YEARS).abs();
            let db = (b.years - IMPLIED_TARGET_YEARS).abs();
            da.total_cmp(&db).then(b.years.total_cmp(&a.years))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn quarterly(y: i32, m: u32, day: u32, amount: f64) -> Payment {
        Payment {
            ex_date: d(y, m, day),
            amount,
            per_year: Some(4),
        }
    }

    #[test]
    fn declared_yield_annualises_the_latest_amount() {
        // 0.25 a quarter on a 50-dollar stock: 1.00 / 50 = 2 %.
        assert!((declared_yield_pct(0.25, 4, 50.0).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(declared_yield_pct(0.25, 4, 0.0), None);
        assert_eq!(declared_yield_pct(0.25, 4, f64::NAN), None);
    }

    #[test]
    fn trailing_window_excludes_its_left_end() {
        let paid = [
            quarterly(2025, 11, 20, 9.0), // exactly 365 days before: out
            quarterly(2026, 2, 10, 1.0),
            quarterly(2026, 5, 10, 1.0),
            quarterly(2026, 8, 10, 1.5),
            quarterly(2026, 11, 20, 1.5), // on the as-of date: in
            quarterly(2026, 12, 1, 7.0),  // declared, future: out
        ];
        assert!((trailing_annual(&paid, d(2026, 11, 20)) - 5.0).abs() < 1e-12);
    }

    #[test]
    fn totals_drop_the_first_and_the_running_year_and_cagr_compounds() {
        let mut paid = vec![quarterly(2022, 11, 10, 0.5)];
        for (year, amount) in [(2023, 1.0), (2024, 1.1), (2025, 1.21)] {
            for month in [2, 5, 8, 11] {
                paid.push(quarterly(year, month, 10, amount));
            }
        }
        paid.push(quarterly(2026, 2, 10, 2.0));
        let totals = annual_totals(&paid, d(2026, 6, 1));
        assert_eq!(totals.len(), 3);
        assert_eq!(totals[0].0, 2023);
        assert!((totals[2].1 - 4.84).abs() < 1e-12);
        // 4.84 / 4 = 1.21 over two years: 10 % a year.
        assert!((cagr_pct(&totals).unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(cagr_pct(&totals[..1]), None);
        assert_eq!(cagr_pct(&[(2023, 0.0), (2024, 1.0)]), None);
    }

    #[test]
    fn growth_compares_with_the_payment_a_year_earlier() {
        let paid = [
            quarterly(2025, 5, 12, 1.0),
            quarterly(2025, 8, 11, 1.0),
            quarterly(2025, 11, 10, 1.0),
            quarterly(2026, 2, 9, 1.05),
            quarterly(2026, 5, 11, 1.05),
        ];
        // 2026-05-11 − 365 d = 2025-05-11: the 2025-05-12 payment, 1.05 / 1.00 − 1 = 5 %.
        assert!((growth_pct(&paid).unwrap() - 5.0).abs() < 1e-9);
        // Nothing within 45 days of a year before: no growth.
        assert_eq!(growth_pct(&paid[3..]), None);
    }

    #[test]
    fn implied_dividend_is_spot_less_the_discounted_forward() {
        // S = 100, r = 5 %, T = 0.5, F = 100·e^{0.025} − 1.0·e^{0.025}: a PV of 1.0.
        let f = 99.0 * (0.025f64).exp();
        let got = implied_dividend(100.0, f, 0.05, 0.5).unwrap();
        assert!((got.pv - 1.0).abs() < 1e-12);
        assert!((got.annualised - 2.0).abs() < 1e-12);
        assert_eq!(implied_dividend(100.0, f, 0.05, 0.0), None);
        assert_eq!(implied_dividend(-1.0, f, 0.05, 0.5), None);
    }

    #[test]
    fn annual_pick_prefers_the_expiration_nearest_a_year() {
        let at = |years: f64| ImpliedDividend {
            years,
            pv: years,
            annualised: 1.0,
        };
        let picked = pick_annual(&[at(0.01), at(0.3), at(0.9), at(1.4)]).unwrap();
        assert_eq!(picked.years, 0.9);
        // Only short ones: the longest of at least MIN_IMPLIED_YEARS.
        assert_eq!(
            pick_annual(&[at(0.01), at(0.06), at(0.1)]).unwrap().years,
            0.1
        );
        assert_eq!(pick_annual(&[at(0.01)]), None);
    }
}
