//! The cores catalog: every field of the analytics row with its unit, definition and source
//! dataset, generated from the same family parameters the computation in [`super`] reads, so
//! a name, its definition and its value cannot drift apart.

use std::collections::HashMap;
use std::sync::OnceLock;

/// One named numeric field of the cores row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreField {
    /// The vendor-style camelCase name (`iv30d`, `clsHv20d`, …).
    pub name: &'static str,
    /// The unit of the value.
    pub unit: &'static str,
    /// How the value is computed.
    pub definition: &'static str,
    /// The stored dataset(s) it is computed from.
    pub source: &'static str,
}

/// Source: the stored daily OHLCV bars.
pub const SRC_BARS: &str = "daily bars (stored OHLCV)";
/// Source: the stored daily volatility rows.
pub const SRC_VOL_DAILY: &str = "vol_daily (stored daily volatility rows)";
/// Source: the live chain, else the stored daily volatility rows, with their history.
pub const SRC_IV: &str = "chain (live snapshot) for today's value, vol_daily for the history";
/// Source: the live option chain.
pub const SRC_CHAIN: &str = "chain (live snapshot)";
/// Source: the company reference table.
pub const SRC_COMPANIES: &str = "companies (reference)";
/// Source: the earnings calendar.
pub const SRC_EARNINGS: &str = "earnings (reference calendar)";
/// Source: the earnings calendar and the live chain.
pub const SRC_EARNINGS_CHAIN: &str = "earnings (reference calendar) + chain (live snapshot)";
/// Source: the borrow-fee series.
pub const SRC_BORROW: &str = "borrow_rates (stored daily borrow fees)";
/// Source: the declared dividends.
pub const SRC_DIVIDENDS: &str = "dividends (declared) + daily bars";
/// Source: the session flow snapshot.
pub const SRC_FLOW: &str = "flow (live session snapshot)";

/// Constant-maturity IV tenors: (name suffix, calendar days).
pub const IV_TENORS: [(&str, u32); 7] = [
    ("10d", 10),
    ("20d", 20),
    ("30d", 30),
    ("60d", 60),
    ("90d", 90),
    ("6m", 180),
    ("1yr", 365),
];
/// Trailing statistic windows: (name suffix, daily observations).
pub const STAT_WINDOWS: [(&str, usize); 3] = [("1m", 21), ("3m", 63), ("1y", 252)];
/// Fewest prior observations a trailing statistic is computed on (fewer when the window is
/// shorter).
pub const STAT_MIN_OBS: usize = 20;
/// Change horizons of a daily series: (name suffix, observations back).
pub const CHANGE_HORIZONS: [(&str, usize); 3] = [("1d", 1), ("1wk", 5), ("1m", 21)];
/// HV windows, sessions (the vol_daily windows).
pub const HV_WINDOWS: [usize; 9] = crate::vol::HV_WINDOWS;
/// Price-change horizons: (name suffix, sessions back).
pub const PRICE_HORIZONS: [(&str, usize); 7] = [
    ("1d", 1),
    ("1wk", 5),
    ("2wk", 10),
    ("1m", 21),
    ("3m", 63),
    ("6m", 126),
    ("1y", 252),
];
/// Range windows of highs and lows: (name suffix, sessions).
pub const RANGE_WINDOWS: [(&str, usize); 4] = [("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)];
/// Moving-average windows, sessions.
pub const SMA_WINDOWS: [usize; 3] = [20, 50, 200];
/// Average share-volume windows, sessions.
pub const VOLUME_WINDOWS: [usize; 5] = [5, 10, 20, 60, 252];
/// Call deltas of the delta-IV family, in delta points (0.05 … 0.95).
pub const DELTA_POINTS: [u32; 19] = [
    5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95,
];
/// Forward-vol pairs: (longer tenor, shorter tenor) by name suffix of [`IV_TENORS`].
pub const FORWARD_PAIRS: [(&str, &str); 7] = [
    ("20d", "10d"),
    ("30d", "20d"),
    ("60d", "30d"),
    ("90d", "60d"),
    ("90d", "30d"),
    ("6m", "90d"),
    ("1yr", "6m"),
];
/// Correlation and beta windows: (name suffix, shared daily log returns).
pub const CORREL_WINDOWS: [(&str, usize); 4] = [("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)];
/// Benchmarks of correlations and betas: (name code, description). `Etf` is the company's
/// sector ETF.
pub const BENCHMARKS: [(&str, &str); 4] = [
    ("Spy", "SPY"),
    ("Qqq", "QQQ"),
    ("Iwm", "IWM"),
    ("Etf", "the company's sector SPDR ETF"),
];
/// Ex-earnings IV tenors (name suffixes of [`IV_TENORS`]).
pub const EX_EARNINGS_TENORS: [&str; 3] = ["30d", "60d", "90d"];
/// The tenor whose smile fit gives `slope`, `deriv` and `error`, calendar days.
pub const SMILE_TENOR_DAYS: f64 = 30.0;
/// Borrow-fee change horizons: (name suffix, observations back).
pub const BORROW_HORIZONS: [(&str, usize); 2] = [("1wk", 5), ("1m", 21)];
/// Days a dividend history looks back for the annual figures.
pub const DIVIDEND_LOOKBACK_DAYS: i64 = 365;

/// IV statistic kinds: (name part, unit, definition fragment).
pub const IV_STATS: [(&str, &str, &str); 6] = [
    ("Mean", "IV percentage points", "mean"),
    (
        "Stdv",
        "IV percentage points",
        "sample standard deviation (n − 1)",
    ),
    ("Min", "IV percentage points", "minimum"),
    ("Max", "IV percentage points", "maximum"),
    (
        "Pctile",
        "percent, 0–100",
        "percentile of today's value: share of the observations strictly below it",
    ),
    (
        "Rank",
        "percent, 0–100",
        "rank of today's value: (today − min) / (max − min) × 100, clamped to 0–100",
    ),
];

/// HV estimators: (name prefix, definition).
pub const HV_ESTIMATORS: [(&str, &str); 4] = [
    (
        "cls",
        "close-to-close HV: sample standard deviation of the last {W} daily log returns \
         ln(close_t / close_t−1) × √252 × 100",
    ),
    (
        "or",
        "open/high/low range HV, Parkinson (1980): √(mean over the last {W} sessions of \
         ln(high/low)² / (4 ln 2)) × √252 × 100",
    ),
    (
        "gk",
        "Garman–Klass (1980) range HV over the last {W} sessions: √(mean of 0.5 ln(high/low)² \
         − (2 ln 2 − 1) ln(close/open)²) × √252 × 100",
    ),
    (
        "yz",
        "Yang–Zhang (2000) HV over the last {W} sessions: overnight, open-to-close and \
         Rogers–Satchell variances combined, × √252 × 100",
    ),
];

/// Name of the constant-maturity IV of a tenor suffix.
pub fn iv_name(tenor: &str) -> String {
    format!("iv{tenor}")
}
/// Name of a forward-vol field (`fwd60_30`: between 30 and 60 days).
pub fn fwd_name(hi: &str, lo: &str) -> String {
    format!(
        "fwd{}_{}",
        hi.trim_end_matches('d'),
        lo.trim_end_matches('d')
    )
}
/// Name of an HV field.
pub fn hv_name(estimator: &str, window: usize) -> String {
    format!("{estimator}Hv{window}d")
}
/// Name of an ex-earnings close-to-close HV field.
pub fn hv_xern_name(window: usize) -> String {
    format!("clsHv{window}dXern")
}
/// Name of a delta-IV field.
pub fn delta_iv_name(delta: u32, tenor: &str) -> String {
    format!("dlt{delta}Iv{tenor}")
}
/// Name of a correlation field.
pub fn correl_name(benchmark: &str, window: &str) -> String {
    format!("correl{benchmark}{window}")
}
/// Name of a beta field (SPY's keep the vendor's bare `beta1y`).
pub fn beta_name(benchmark: &str, window: &str) -> String {
    if benchmark == "Spy" {
        format!("beta{window}")
    } else {
        format!("beta{benchmark}{window}")
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

struct Builder(Vec<CoreField>);

impl Builder {
    fn add(&mut self, name: String, unit: &'static str, definition: String, source: &'static str) {
        self.0.push(CoreField {
            name: leak(name),
            unit,
            definition: leak(definition),
            source,
        });
    }
}

fn tenor_days(tenor: &str) -> u32 {
    IV_TENORS
        .iter()
        .find(|(t, _)| *t == tenor)
        .map_or(0, |(_, d)| *d)
}

fn build() -> Vec<CoreField> {
    let mut b = Builder(Vec::new());
    // Price.
    b.add(
        "stkPx".into(),
        "dollars",
        "close of the last stored daily bar on or before today".into(),
        SRC_BARS,
    );
    for (suffix, n) in PRICE_HORIZONS {
        b.add(
            format!("stkPxChng{suffix}"),
            "percent",
            format!("(stkPx / close {n} sessions earlier − 1) × 100"),
            SRC_BARS,
        );
    }
    for (suffix, n) in RANGE_WINDOWS {
        b.add(
            format!("stkHi{suffix}"),
            "dollars",
            format!("highest high of the last {n} daily bars"),
            SRC_BARS,
        );
        b.add(
            format!("stkLo{suffix}"),
            "dollars",
            format!("lowest low of the last {n} daily bars"),
            SRC_BARS,
        );
        b.add(
            format!("stkRngPos{suffix}"),
            "percent, 0–100",
            format!("(stkPx − stkLo{suffix}) / (stkHi{suffix} − stkLo{suffix}) × 100"),
            SRC_BARS,
        );
    }
    for n in SMA_WINDOWS {
        b.add(
            format!("stkSma{n}d"),
            "dollars",
            format!("mean close of the last {n} daily bars"),
            SRC_BARS,
        );
        b.add(
            format!("stkPxVsSma{n}d"),
            "percent",
            format!("(stkPx / stkSma{n}d − 1) × 100"),
            SRC_BARS,
        );
    }
    // Volume and size.
    b.add(
        "stkVolu".into(),
        "shares",
        "share volume of the last stored daily bar".into(),
        SRC_BARS,
    );
    for n in VOLUME_WINDOWS {
        b.add(
            format!("avgStkVolu{n}d"),
            "shares",
            format!("mean share volume of the last {n} daily bars"),
            SRC_BARS,
        );
    }
    b.add(
        "stkVoluRatio20d".into(),
        "ratio",
        "stkVolu / avgStkVolu20d".into(),
        SRC_BARS,
    );
    b.add(
        "mktCap".into(),
        "dollars",
        "market capitalisation from the company reference; null for indices and funds without one"
            .into(),
        SRC_COMPANIES,
    );
    // Constant-maturity IVs and their statistics.
    for (tenor, days) in IV_TENORS {
        let iv = iv_name(tenor);
        b.add(
            iv.clone(),
            "IV percentage points",
            format!(
                "{days}-calendar-day constant-maturity ATM (forward) IV, interpolated linearly \
                 in total variance between the bracketing expirations (flat in vol outside \
                 them): the live chain's, else the last stored vol_daily row's"
            ),
            SRC_IV,
        );
        for (h, n) in CHANGE_HORIZONS {
            b.add(
                format!("{iv}Chng{h}"),
                "IV percentage points",
                format!("{iv} minus its value {n} daily observations earlier"),
                SRC_IV,
            );
        }
        for (w, n) in STAT_WINDOWS {
            for (stat, unit, what) in IV_STATS {
                b.add(
                    format!("{iv}{stat}{w}"),
                    unit,
                    format!(
                        "{what} of {iv} over the {n} daily observations before today's (at \
                         least {} needed)",
                        STAT_MIN_OBS.min(n)
                    ),
                    SRC_IV,
                );
            }
        }
    }
    b.add(
        "ivPctile1y".into(),
        "percent, 0–100",
        "iv30dPctile1y: share of the 252 daily iv30d observations before today's strictly \
         below today's"
            .into(),
        SRC_IV,
    );
    b.add(
        "ivRank1y".into(),
        "percent, 0–100",
        "iv30dRank1y: (iv30d − min) / (max − min) × 100 over the 252 daily iv30d observations \
         before today's, clamped to 0–100"
            .into(),
        SRC_IV,
    );
    // Realized vols.
    for (prefix, what) in HV_ESTIMATORS {
        for w in HV_WINDOWS {
            b.add(
                hv_name(prefix, w),
                "percentage points, annualised",
                what.replace("{W}", &w.to_string()),
                SRC_BARS,
            );
        }
    }
    for w in HV_WINDOWS {
        b.add(
            hv_xern_name(w),
            "percentage points, annualised",
            format!(
                "clsHv{w}d without the earnings reaction sessions (the report date for a \
                 pre-open report, the next session for an after-close one) inside the same \
                 {w}-session window"
            ),
            "daily bars + earnings (reference calendar)",
        );
    }
    // Delta IVs.
    for (tenor, days) in IV_TENORS {
        for d in DELTA_POINTS {
            b.add(
                delta_iv_name(d, tenor),
                "IV percentage points",
                format!(
                    "IV at call delta 0.{d:02} of each expiration, linear in delta between the \
                     chain's out-of-the-money quotes around it (calls at or above the forward; \
                     puts below it at put delta + 1; none outside the quoted deltas), then \
                     interpolated to {days} calendar days linearly in total variance (flat in \
                     vol outside the expirations that reach the delta); {d} < 50 is upside, \
                     {d} > 50 downside"
                ),
                SRC_CHAIN,
            );
        }
    }
    // Smile and term structure.
    b.add(
        "slope".into(),
        "IV points per unit of ln(K/F)",
        format!(
            "dσ/dk at the money of the raw SVI smile fits of the two expirations bracketing \
             {SMILE_TENOR_DAYS} days (linear in years between them): the live chain's, else \
             the last stored vol_daily row's"
        ),
        SRC_IV,
    );
    b.add(
        "deriv".into(),
        "IV points per unit of ln(K/F)²",
        "d²σ/dk² at the money of the same 30-day smile fit as slope".into(),
        SRC_IV,
    );
    b.add(
        "error".into(),
        "IV percentage points",
        "fit statistic, not a failure: root-mean-square residual (market IV − fitted IV) of the \
         raw SVI smile fits behind slope, linear in years between the two bracketing \
         expirations"
            .into(),
        SRC_CHAIN,
    );
    b.add(
        "maxError".into(),
        "IV percentage points",
        "largest absolute residual of the same smile fits, interpolated as error".into(),
        SRC_CHAIN,
    );
    for (stat, unit, what) in IV_STATS {
        if matches!(stat, "Mean" | "Stdv" | "Pctile") {
            b.add(
                format!("slope{stat}1y"),
                unit,
                format!(
                    "{what} of slope over the 252 stored daily slope observations before \
                     today's"
                ),
                SRC_IV,
            );
        }
    }
    b.add(
        "contango".into(),
        "IV percentage points",
        "iv90d − iv30d (positive: the term structure slopes up)".into(),
        SRC_IV,
    );
    b.add(
        "skew25d30d".into(),
        "IV percentage points",
        "30-day 25-delta skew: put-25Δ IV − call-25Δ IV, each taken to 30 days in total \
         variance: the live chain's, else the last stored vol_daily row's"
            .into(),
        SRC_IV,
    );
    for (hi, lo) in FORWARD_PAIRS {
        b.add(
            fwd_name(hi, lo),
            "IV percentage points",
            format!(
                "forward vol between {} and {} days: √((iv{hi}² T{hi} − iv{lo}² T{lo}) / \
                 (T{hi} − T{lo})); null when the forward variance is negative",
                tenor_days(lo),
                tenor_days(hi)
            ),
            SRC_IV,
        );
    }
    // Earnings.
    b.add(
        "nextErn".into(),
        "date as a YYYYMMDD integer",
        "the next earnings report date on or after today".into(),
        SRC_EARNINGS,
    );
    b.add(
        "daysToNextErn".into(),
        "calendar days",
        "nextErn − today".into(),
        SRC_EARNINGS,
    );
    b.add(
        "lastErn".into(),
        "date as a YYYYMMDD integer",
        "the last earnings report date before today".into(),
        SRC_EARNINGS,
    );
    b.add(
        "daysSinceLastErn".into(),
        "calendar days",
        "today − lastErn".into(),
        SRC_EARNINGS,
    );
    for (name, unit, what) in EARNINGS_STATS {
        b.add(
            name.into(),
            unit,
            format!(
                "{what}, over the past reports with a measured gap (close before the report to \
                 the reaction session's open), from the last stored vol_daily row"
            ),
            SRC_VOL_DAILY,
        );
    }
    b.add(
        "impErnMv".into(),
        "percent",
        "implied earnings move: with E1 the first expiration after the next report's reaction \
         and E2 the next one, diffusive variance s² = (σ2²T2 − σ1²T1) / (T2 − T1) and event \
         variance e² = σ1²T1 − s²T1 (forward ATM IVs); impErnMv = e × √(2/π) × 100, the \
         expected absolute move; null when e² ≤ 0 or no report falls before E1"
            .into(),
        SRC_EARNINGS_CHAIN,
    );
    for tenor in EX_EARNINGS_TENORS {
        b.add(
            format!("exErnIv{tenor}"),
            "IV percentage points",
            format!(
                "iv{tenor} with the next report's event variance removed: √(max(0, \
                 iv{tenor}² T − e²) / T), e from impErnMv (e = 0 when no report falls within \
                 {} days)",
                tenor_days(tenor)
            ),
            SRC_EARNINGS_CHAIN,
        );
    }
    b.add(
        "ivHvXernRatio".into(),
        "ratio",
        "exErnIv30d / clsHv30dXern".into(),
        "chain + daily bars + earnings",
    );
    b.add(
        "ivHvRatio".into(),
        "ratio",
        "iv30d / clsHv30d".into(),
        "chain or vol_daily + daily bars",
    );
    b.add(
        "ivHvDiff".into(),
        "IV percentage points",
        "iv30d − clsHv30d".into(),
        "chain or vol_daily + daily bars",
    );
    // Borrow.
    b.add(
        "borrow30".into(),
        "percent per year",
        "the last stored stock-borrow fee on or before today × 100; null when none is stored \
         (indices)"
            .into(),
        SRC_BORROW,
    );
    for (h, n) in BORROW_HORIZONS {
        b.add(
            format!("borrowChng{h}"),
            "percent per year",
            format!("borrow30 minus the fee {n} observations earlier"),
            SRC_BORROW,
        );
    }
    for (w, n) in STAT_WINDOWS {
        if w == "3m" {
            continue;
        }
        for (stat, _, what) in IV_STATS {
            if stat == "Rank" {
                continue;
            }
            let unit = if stat == "Pctile" {
                "percent, 0–100"
            } else {
                "percent per year"
            };
            b.add(
                format!("borrow{stat}{w}"),
                unit,
                format!("{what} of borrow30 over the {n} stored fees before today's"),
                SRC_BORROW,
            );
        }
    }
    b.add(
        "htb".into(),
        "flag, 1 or 0",
        "1 when the last stored borrow fee is flagged hard to borrow".into(),
        SRC_BORROW,
    );
    // Correlations and betas.
    for (code, what) in BENCHMARKS {
        for (w, n) in CORREL_WINDOWS {
            b.add(
                correl_name(code, w),
                "correlation, −1 to 1",
                format!(
                    "Pearson correlation of daily log returns with {what} over the last {n} \
                     shared sessions"
                ),
                SRC_BARS,
            );
            b.add(
                beta_name(code, w),
                "unitless",
                format!(
                    "sample cov(ticker, {what}) / sample var({what}) of daily log returns over \
                     the last {n} shared sessions"
                ),
                SRC_BARS,
            );
        }
    }
    // Dividends.
    b.add(
        "divAmt".into(),
        "dollars per share",
        "amount of the last declared dividend with an ex-date on or before today".into(),
        SRC_DIVIDENDS,
    );
    b.add(
        "divFreq".into(),
        "payments per year",
        format!("ex-dates in the {DIVIDEND_LOOKBACK_DAYS} days up to today"),
        SRC_DIVIDENDS,
    );
    b.add(
        "annDiv".into(),
        "dollars per share",
        format!(
            "sum of the dividends with ex-dates in the {DIVIDEND_LOOKBACK_DAYS} days up to today"
        ),
        SRC_DIVIDENDS,
    );
    b.add(
        "divYield".into(),
        "percent",
        "annDiv / stkPx × 100".into(),
        SRC_DIVIDENDS,
    );
    b.add(
        "nextDiv".into(),
        "date as a YYYYMMDD integer",
        "the next declared ex-date after today".into(),
        SRC_DIVIDENDS,
    );
    b.add(
        "daysToNextDiv".into(),
        "calendar days",
        "nextDiv − today".into(),
        SRC_DIVIDENDS,
    );
    // Option activity.
    for (name, unit, what) in ACTIVITY {
        b.add(name.into(), unit, what.into(), SRC_CHAIN);
    }
    for (name, unit, what) in FLOW {
        b.add(name.into(), unit, what.into(), SRC_FLOW);
    }
    b.0
}

/// Earnings statistics copied from the last stored vol_daily row: (name, unit, definition).
pub const EARNINGS_STATS: [(&str, &str, &str); 13] = [
    ("ernCnt", "reports", "number of past reports"),
    ("ernUpCnt", "reports", "reports with a gap ≥ 0"),
    ("ernDnCnt", "reports", "reports with a gap < 0"),
    (
        "ernBeatCnt",
        "reports",
        "reports with EPS at or above the estimate",
    ),
    (
        "ernMissCnt",
        "reports",
        "reports with EPS below the estimate",
    ),
    ("avgErnMv", "percent", "mean signed gap"),
    ("absAvgErnMv", "percent", "mean absolute gap"),
    ("avgUpErnMv", "percent", "mean gap of the up reports"),
    ("avgDnErnMv", "percent", "mean gap of the down reports"),
    ("avgBeatErnMv", "percent", "mean signed gap of the beats"),
    ("avgMissErnMv", "percent", "mean signed gap of the misses"),
    ("maxUpErnMv", "percent", "largest up gap"),
    ("maxDnErnMv", "percent", "most negative gap"),
];

/// Option-activity fields of the live chain: (name, unit, definition).
pub const ACTIVITY: [(&str, &str, &str); 10] = [
    (
        "cVolu",
        "contracts",
        "call volume this session, all expirations",
    ),
    (
        "pVolu",
        "contracts",
        "put volume this session, all expirations",
    ),
    ("totVolu", "contracts", "cVolu + pVolu"),
    ("cOi", "contracts", "call open interest, all expirations"),
    ("pOi", "contracts", "put open interest, all expirations"),
    ("totOi", "contracts", "cOi + pOi"),
    ("pcVoluRatio", "ratio", "pVolu / cVolu"),
    ("pcOiRatio", "ratio", "pOi / cOi"),
    (
        "oiMaxStrike",
        "dollars",
        "strike with the largest call + put open interest over the open expirations up to and \
         including the first standard monthly one (third Friday); all open expirations when \
         none is monthly; the lower strike on a tie",
    ),
    (
        "voluMaxStrike",
        "dollars",
        "strike with the largest call + put volume over the same expirations as oiMaxStrike",
    ),
];

/// Session-flow fields: (name, unit, definition).
pub const FLOW: [(&str, &str, &str); 3] = [
    (
        "cPremFlow",
        "dollars",
        "premium traded in calls this session (volume × price × 100)",
    ),
    (
        "pPremFlow",
        "dollars",
        "premium traded in puts this session (volume × price × 100)",
    ),
    (
        "unusualCnt",
        "contracts listed",
        "contracts flagged unusual this session",
    ),
];

/// The catalog: every field of the cores row, in row order.
pub fn catalog() -> &'static [CoreField] {
    static CATALOG: OnceLock<Vec<CoreField>> = OnceLock::new();
    CATALOG.get_or_init(build)
}

/// The position of `name` in [`catalog`].
pub fn field_index(name: &str) -> Option<usize> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            catalog()
                .iter()
                .enumerate()
                .map(|(i, f)| (f.name, i))
                .collect()
        })
        .get(name)
        .copied()
}

/// The curated default subset (the fields the screens read), in response order.
pub const DEFAULT_FIELDS: &[&str] = &[
    "stkPx",
    "stkPxChng1d",
    "stkPxChng1wk",
    "stkPxChng1m",
    "mktCap",
    "stkVolu",
    "avgStkVolu20d",
    "iv30d",
    "iv60d",
    "iv90d",
    "exErnIv30d",
    "clsHv20d",
    "orHv20d",
    "clsHv30dXern",
    "ivHvXernRatio",
    "ivPctile1y",
    "ivRank1y",
    "iv30dMean1y",
    "iv30dStdv1y",
    "slope",
    "slopePctile1y",
    "deriv",
    "contango",
    "skew25d30d",
    "dlt25Iv30d",
    "dlt75Iv30d",
    "error",
    "impErnMv",
    "absAvgErnMv",
    "nextErn",
    "daysToNextErn",
    "borrow30",
    "beta1y",
    "correlSpy1m",
    "correlSpy1y",
    "cVolu",
    "pVolu",
    "cOi",
    "pOi",
    "pcVoluRatio",
    "oiMaxStrike",
    "divYield",
    "stkRngPos1y",
    "fwd60_30",
    "ivHvRatio",
];
