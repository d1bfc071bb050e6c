//! OCC option symbols (the Options Symbology Initiative form).
//!
//! A symbol is the option root, the expiration as `YYMMDD`, `C` or `P`, and the strike times
//! 1000 as eight digits: `SPXW261120C05000000` is the SPXW call expiring 2026-11-20 with strike
//! 5000. OCC's own 21-character form pads the root with spaces to six characters
//! (`SPXW  261120C05000000`); [`OccSymbol::parse`] reads both, [`fmt::Display`] writes the
//! compact form used by most market-data APIs and by the `option_symbol` column, and
//! [`OccSymbol::to_padded`] writes OCC's.
//!
//! The root is not always the underlying's ticker: SPX weeklies trade as `SPXW`, and options
//! adjusted after a corporate action get roots such as `AAPL1`. The datasets therefore carry the
//! underlying separately and check only that the symbol's expiration, type and strike agree with
//! the row's columns.

use std::fmt;

use chrono::{Datelike, NaiveDate};

use crate::enums::OptionType;
use crate::error::SchemaError;

/// Longest root OCC allows.
pub const MAX_ROOT_LEN: usize = 6;
/// Length of the part after the root: `YYMMDD` + `C`/`P` + eight strike digits.
const TAIL_LEN: usize = 15;
/// The largest strike the eight digits hold, in thousandths of a dollar (99 999.999 dollars).
pub const MAX_STRIKE_THOUSANDTHS: u32 = 99_999_999;

/// The parts of an OCC option symbol; `root` borrows from the parsed text, so parsing does not
/// allocate (it runs once per quote during validation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OccSymbol<'a> {
    /// Option root, 1–6 upper-case ASCII letters or digits, starting with a letter.
    pub root: &'a str,
    /// Expiration date (years 2000–2099: the symbol holds two digits).
    pub expiration: NaiveDate,
    /// Call or put.
    pub option_type: OptionType,
    /// Strike in thousandths of a dollar (the symbol's eight digits).
    pub strike_thousandths: u32,
}

fn invalid(symbol: &str, reason: impl Into<String>) -> SchemaError {
    SchemaError::InvalidOccSymbol {
        symbol: symbol.to_owned(),
        reason: reason.into(),
    }
}

fn check_root(symbol: &str, root: &str) -> Result<(), SchemaError> {
    if root.is_empty() || root.len() > MAX_ROOT_LEN {
        return Err(invalid(symbol, "the root must have 1 to 6 characters"));
    }
    let mut chars = root.bytes();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_uppercase());
    if !first_is_letter
        || !root
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
    {
        return Err(invalid(
            symbol,
            "the root must be upper-case ASCII letters and digits, starting with a letter",
        ));
    }
    Ok(())
}

fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

impl<'a> OccSymbol<'a> {
    /// The symbol of a contract. The strike, in dollars, must be positive, a multiple of 0.001
    /// and below 100 000; the expiration must lie in 2000–2099.
    pub fn new(
        root: &'a str,
        expiration: NaiveDate,
        option_type: OptionType,
        strike: f64,
    ) -> Result<Self, SchemaError> {
        let describe = || format!("{root} {expiration} {option_type} {strike}");
        check_root(&describe(), root)?;
        if !(2000..=2099).contains(&expiration.year()) {
            return Err(invalid(
                &describe(),
                "the expiration year must be 2000–2099",
            ));
        }
        let thousandths = strike * 1000.0;
        let rounded = thousandths.round();
        if !(rounded >= 1.0 && rounded <= f64::from(MAX_STRIKE_THOUSANDTHS)) {
            return Err(invalid(
                &describe(),
                "the strike must be in (0, 100000) dollars",
            ));
        }
        if (thousandths - rounded).abs() > 1e-6 {
            return Err(invalid(
                &describe(),
                "the strike must be a multiple of 0.001",
            ));
        }
        Ok(Self {
            root,
            expiration,
            option_type,
            // In range by the check above.
            strike_thousandths: rounded as u32,
        })
    }

    /// Reads a compact (`SPXW261120C05000000`) or space-padded (`SPXW  261120C05000000`)
    /// symbol. Never panics, whatever the input.
    pub fn parse(symbol: &'a str) -> Result<Self, SchemaError> {
        // ASCII only, so every byte offset below is a char boundary.
        if !symbol.is_ascii() {
            return Err(invalid(symbol, "not ASCII"));
        }
        if symbol.len() < TAIL_LEN + 1 || symbol.len() > TAIL_LEN + MAX_ROOT_LEN {
            return Err(invalid(symbol, "length must be 16 to 21 characters"));
        }
        let (root, tail) = symbol.split_at(symbol.len() - TAIL_LEN);
        let root = root.trim_end_matches(' ');
        check_root(symbol, root)?;
        let tail = tail.as_bytes();
        let date = digits(&tail[0..2])
            .zip(digits(&tail[2..4]))
            .zip(digits(&tail[4..6]))
            .and_then(|((yy, mm), dd)| NaiveDate::from_ymd_opt(2000 + yy as i32, mm, dd))
            .ok_or_else(|| invalid(symbol, "the expiration must be a valid YYMMDD date"))?;
        let option_type = match tail[6] {
            b'C' => OptionType::Call,
            b'P' => OptionType::Put,
            _ => return Err(invalid(symbol, "the type letter must be C or P")),
        };
        let strike_thousandths = digits(&tail[7..15])
            .filter(|&k| k > 0)
            .ok_or_else(|| invalid(symbol, "the strike must be eight digits, not all zero"))?;
        Ok(Self {
            root,
            expiration: date,
            option_type,
            strike_thousandths,
        })
    }

    /// Strike in dollars.
    pub fn strike(&self) -> f64 {
        f64::from(self.strike_thousandths) / 1000.0
    }

    /// OCC's 21-character form, the root padded with spaces to six characters.
    pub fn to_padded(&self) -> String {
        format!("{:<6}{}", self.root, self.contract_part())
    }

    /// Everything after the root: YYMMDD, C/P and the strike in thousandths over eight digits.
    fn contract_part(&self) -> String {
        format!(
            "{:02}{:02}{:02}{}{:08}",
            self.expiration.year() % 100,
            self.expiration.month(),
            self.expiration.day(),
            self.option_type.as_str(),
            self.strike_thousandths
        )
    }
}

impl fmt::Display for OccSymbol<'_> {
    /// The compact form, `SPXW261120C05000000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.root, self.contract_part())
    }
}

/// The compact OCC symbol of a contract: `occ_symbol("SPY", 2026-12-18, Put, 450.5)` is
/// `SPY261218P00450500`.
pub fn occ_symbol(
    root: &str,
    expiration: NaiveDate,
    option_type: OptionType,
    strike: f64,
) -> Result<String, SchemaError> {
    Ok(OccSymbol::new(root, expiration, option_type, strike)?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn formats_known_symbols() {
        let spxw = OccSymbol::new("SPXW", date(2026, 11, 20), OptionType::Call, 5000.0).unwrap();
        assert_eq!(spxw.to_string(), "SPXW261120C05000000");
        assert_eq!(spxw.to_padded(), "SPXW  261120C05000000");
        assert_eq!(
            occ_symbol("SPY", date(2026, 12, 18), OptionType::Put, 450.5).unwrap(),
            "SPY261218P00450500"
        );
        assert_eq!(
            occ_symbol("F", date(2027, 1, 15), OptionType::Call, 12.125).unwrap(),
            "F270115C00012125"
        );
    }

    #[test]
    fn parses_compact_and_padded() {
        for text in ["AAPL270115P00187500", "AAPL  270115P00187500"] {
            let s = OccSymbol::parse(text).unwrap();
            assert_eq!(s.root, "AAPL");
            assert_eq!(s.expiration, date(2027, 1, 15));
            assert_eq!(s.option_type, OptionType::Put);
            assert_eq!(s.strike_thousandths, 187_500);
            assert_eq!(s.strike(), 187.5);
        }
        let adjusted = OccSymbol::parse("BAC1261218C00030000").unwrap();
        assert_eq!(adjusted.root, "BAC1");
    }

    #[test]
    fn round_trips_over_a_grid() {
        let roots = ["A", "SPY", "SPXW", "BRKB", "GOOGL1", "NDXP"];
        let strikes = [0.5, 1.0, 2.5, 12.125, 99.999, 187.5, 5000.0, 99_999.999];
        let dates = [
            date(2000, 1, 1),
            date(2026, 2, 28),
            date(2028, 2, 29),
            date(2099, 12, 31),
        ];
        for root in roots {
            for &strike in &strikes {
                for &expiration in &dates {
                    for option_type in [OptionType::Call, OptionType::Put] {
                        let s = OccSymbol::new(root, expiration, option_type, strike).unwrap();
                        for text in [s.to_string(), s.to_padded()] {
                            let back = OccSymbol::parse(&text).unwrap();
                            assert_eq!(back, s, "{text}");
                            assert_eq!(back.strike(), strike);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn rejects_bad_parts() {
        let d = date(2026, 11, 20);
        assert!(OccSymbol::new("", d, OptionType::Call, 1.0).is_err());
        assert!(OccSymbol::new("TOOLONG", d, OptionType::Call, 1.0).is_err());
        assert!(OccSymbol::new("spy", d, OptionType::Call, 1.0).is_err());
        assert!(OccSymbol::new("1AB", d, OptionType::Call, 1.0).is_err());
        assert!(OccSymbol::new("SPY", d, OptionType::Call, 0.0).is_err());
        assert!(OccSymbol::new("SPY", d, OptionType::Call, -5.0).is_err());
        assert!(OccSymbol::new("SPY", d, OptionType::Call, f64::NAN).is_err());
        assert!(OccSymbol::new("SPY", d, OptionType::Call, 100_000.0).is_err());
        assert!(OccSymbol::new("SPY", d, OptionType::Call, 1.0005).is_err());
        assert!(OccSymbol::new("SPY", date(2100, 1, 1), OptionType::Call, 1.0).is_err());
    }

    #[test]
    fn rejects_bad_text() {
        for text in [
            "",
            "SPY",
            "SPY261120C0500000",      // seven strike digits
            "SPY261131C00500000",     // 31 November
            "SPY261120X00500000",     // type letter
            "SPY261120C00000000",     // zero strike
            "SPY2611a0C00500000",     // non-digit
            "spy261120C00500000",     // lower-case root
            "SPY 261120C00500000 ",   // trailing space
            " SPY261120C00500000",    // leading space
            "ÄPY261120C00500000",     // not ASCII
            "SPYSPYX261120C00500000", // root of 7
        ] {
            let err = OccSymbol::parse(text).unwrap_err();
            assert!(
                matches!(err, SchemaError::InvalidOccSymbol { .. }),
                "{text}: {err}"
            );
        }
    }
}
