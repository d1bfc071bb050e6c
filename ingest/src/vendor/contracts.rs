//! Contract terms the vendor files do not carry: option root, settlement and exercise style.
//!
//! - Cash-settled index options (SPX, NDX, RUT, XSP, MRUT, DJX, VIX) are European. Their standard series (the
//!   third-Friday monthlies, root = the index: `SPX`, `NDX`, `RUT`) settle AM; the short-dated
//!   series trade under another root (`SPXW`, `NDXP`, `RUTW`) and settle PM. All VIX options
//!   (`VIX`, `VIXW`) settle AM. `XSP` and `MRUT` settle PM.
//! - Everything else (stocks, ETFs) is American and PM-settled, with the ticker as root
//!   (non-alphanumeric characters dropped: `BRK.B` → `BRKB`).
//!
//! When the file names the root (Cboe), the root decides. When it does not (ORATS: one ticker
//! for all series), a cash index's expiration that is the standard monthly expiration of its
//! month (third Friday, or the trading day before when that is a holiday; VIX: the Wednesday
//! rule) gets the standard root and AM settlement, every other date the short-dated root.

use chrono::{Datelike, NaiveDate};
use optics_compute::time::NyseCalendar;
use optics_schemas::{ExerciseStyle, SettlementStyle};

use crate::simulator::listing::{ExpirationCycle, monthly_expiration};

/// One cash-settled index option family.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexFamily {
    /// The index symbol (the `underlying` column).
    underlying: &'static str,
    /// Root of the standard monthly series.
    standard_root: &'static str,
    standard_settlement: SettlementStyle,
    /// Root of the short-dated series.
    short_root: &'static str,
    short_settlement: SettlementStyle,
    cycle: ExpirationCycle,
}

const fn family(
    underlying: &'static str,
    standard_root: &'static str,
    standard_settlement: SettlementStyle,
    short_root: &'static str,
    short_settlement: SettlementStyle,
) -> IndexFamily {
    IndexFamily {
        underlying,
        standard_root,
        standard_settlement,
        short_root,
        short_settlement,
        cycle: ExpirationCycle::ThirdFriday,
    }
}

use SettlementStyle::{Am, Pm};

/// The cash-settled (European) index option families known to the importers.
pub(crate) const CASH_INDICES: &[IndexFamily] = &[
    family("SPX", "SPX", Am, "SPXW", Pm),
    family("NDX", "NDX", Am, "NDXP", Pm),
    family("RUT", "RUT", Am, "RUTW", Pm),
    family("XSP", "XSP", Pm, "XSP", Pm),
    family("MRUT", "MRUT", Pm, "MRUT", Pm),
    family("DJX", "DJX", Am, "DJX", Am),
    IndexFamily {
        cycle: ExpirationCycle::VixWednesday,
        ..family("VIX", "VIX", Am, "VIXW", Am)
    },
];

/// The terms of one contract series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Terms {
    pub(crate) underlying: String,
    pub(crate) root: String,
    pub(crate) settlement: SettlementStyle,
    pub(crate) exercise_style: ExerciseStyle,
}

/// The OCC root of an equity ticker: letters and digits only, upper case.
fn equity_root(ticker: &str) -> String {
    ticker
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Terms from the underlying symbol and the root given by the file (Cboe).
pub(crate) fn terms_for_root(underlying: &str, root: &str) -> Terms {
    for f in CASH_INDICES {
        if root == f.standard_root || root == f.short_root {
            let settlement = if root == f.standard_root {
                f.standard_settlement
            } else {
                f.short_settlement
            };
            return Terms {
                underlying: f.underlying.to_owned(),
                root: root.to_owned(),
                settlement,
                exercise_style: ExerciseStyle::European,
            };
        }
    }
    Terms {
        underlying: underlying.to_owned(),
        root: root.to_owned(),
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
    }
}

/// Terms from the ticker and expiration alone (ORATS).
pub(crate) fn terms_for_ticker(ticker: &str, expiration: NaiveDate) -> Terms {
    let Some(f) = CASH_INDICES
        .iter()
        .find(|f| ticker == f.underlying || ticker == f.short_root)
    else {
        return Terms {
            underlying: ticker.to_owned(),
            root: equity_root(ticker),
            settlement: SettlementStyle::Pm,
            exercise_style: ExerciseStyle::American,
        };
    };
    let standard = monthly_expiration(
        expiration.year(),
        expiration.month(),
        f.cycle,
        &NyseCalendar,
    ) == Some(expiration);
    let (root, settlement) = if standard {
        (f.standard_root, f.standard_settlement)
    } else {
        (f.short_root, f.short_settlement)
    };
    Terms {
        underlying: f.underlying.to_owned(),
        root: root.to_owned(),
        settlement,
        exercise_style: ExerciseStyle::European,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn spx_monthly_vs_weekly() {
        let monthly = terms_for_ticker("SPX", d(2024, 3, 15));
        assert_eq!(monthly.root, "SPX");
        assert_eq!(monthly.settlement, Am);
        assert_eq!(monthly.exercise_style, ExerciseStyle::European);
        let weekly = terms_for_ticker("SPX", d(2024, 3, 22));
        assert_eq!(weekly.root, "SPXW");
        assert_eq!(weekly.settlement, Pm);
        let stock = terms_for_ticker("BRK.B", d(2024, 3, 15));
        assert_eq!(stock.root, "BRKB");
        assert_eq!(stock.underlying, "BRK.B");
        assert_eq!(stock.exercise_style, ExerciseStyle::American);
        let cboe = terms_for_root("^SPX", "SPXW");
        assert_eq!(cboe.underlying, "SPX");
        assert_eq!(cboe.settlement, Pm);
    }
}
