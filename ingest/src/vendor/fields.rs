//! Header binding (columns found by name) and cell parsing shared by the formats.
//!
//! Header names are matched after normalising both sides: surrounding whitespace and a UTF-8
//! byte-order mark dropped, ASCII case folded, `_`, `-` and spaces removed. So `callBidPrice`,
//! `CALL_BID_PRICE` and `call bid price` are the same column, and Yahoo-style `Adj Close` is
//! `adj_close`. Columns may come in any order; unknown columns are ignored.

use chrono::NaiveDate;
use csv::StringRecord;

use super::error::Reason;

fn normalise(name: &str) -> String {
    name.trim_start_matches('\u{feff}')
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The header of a file, normalised.
#[derive(Debug)]
pub(crate) struct Header {
    names: Vec<String>,
}

impl Header {
    pub(crate) fn new(record: &StringRecord) -> Result<Self, Reason> {
        let names: Vec<String> = record.iter().map(normalise).collect();
        for (i, name) in names.iter().enumerate() {
            if !name.is_empty() && names[..i].contains(name) {
                return Err(Reason::DuplicateColumn(record[i].trim().to_owned()));
            }
        }
        Ok(Self { names })
    }

    /// The index of a required column.
    pub(crate) fn required(&self, name: &'static str) -> Result<Col, Reason> {
        self.optional(name).ok_or(Reason::MissingColumn(name))
    }

    /// The index of an optional column.
    pub(crate) fn optional(&self, name: &'static str) -> Option<Col> {
        let wanted = normalise(name);
        self.names
            .iter()
            .position(|n| *n == wanted)
            .map(|index| Col { name, index })
    }
}

/// A bound column: its canonical vendor name (for messages) and its index on a line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Col {
    pub(crate) name: &'static str,
    index: usize,
}

/// Typed access to the cells of one line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cells<'a>(pub(crate) &'a StringRecord);

impl<'a> Cells<'a> {
    /// The trimmed text of a column ("" if absent).
    pub(crate) fn raw(&self, col: Col) -> &'a str {
        self.0.get(col.index).unwrap_or("").trim()
    }

    /// Non-empty text.
    pub(crate) fn text(&self, col: Col) -> Result<&'a str, Reason> {
        let s = self.raw(col);
        if s.is_empty() {
            Err(Reason::Empty(col.name))
        } else {
            Ok(s)
        }
    }

    /// A finite number.
    pub(crate) fn f64(&self, col: Col) -> Result<f64, Reason> {
        let s = self.text(col)?;
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad_number(col, s))
    }

    /// A finite number, `None` when the cell is empty.
    pub(crate) fn f64_opt(&self, col: Col) -> Result<Option<f64>, Reason> {
        if self.raw(col).is_empty() {
            Ok(None)
        } else {
            self.f64(col).map(Some)
        }
    }

    /// A price: finite and ≥ 0.
    pub(crate) fn price(&self, col: Col) -> Result<f64, Reason> {
        let v = self.f64(col)?;
        if v < 0.0 {
            return Err(Reason::Invalid {
                column: col.name,
                reason: format!("price {v} is negative"),
            });
        }
        Ok(v)
    }

    /// A price that must exist: finite and > 0.
    pub(crate) fn positive(&self, col: Col) -> Result<f64, Reason> {
        let v = self.f64(col)?;
        if !(v > 0.0) {
            return Err(Reason::Invalid {
                column: col.name,
                reason: format!("{v} is not > 0"),
            });
        }
        Ok(v)
    }

    /// A count (size, volume, open interest): a non-negative integer; `12.0` is accepted as 12
    /// (some exports write counts as floats), `12.5` is not.
    pub(crate) fn count(&self, col: Col) -> Result<u64, Reason> {
        let s = self.text(col)?;
        if let Ok(v) = s.parse::<u64>() {
            return Ok(v);
        }
        match s.parse::<f64>() {
            // 2^53: every integer below is exact in an f64.
            Ok(v) if v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0 => Ok(v as u64),
            _ => Err(bad_number(col, s)),
        }
    }

    /// A count that fits 32 bits (quote sizes).
    pub(crate) fn count_u32(&self, col: Col) -> Result<u32, Reason> {
        let v = self.count(col)?;
        u32::try_from(v).map_err(|_| bad_number(col, self.raw(col)))
    }

    /// A date, `YYYY-MM-DD` or `MM/DD/YYYY` (one-digit month and day accepted).
    pub(crate) fn date(&self, col: Col) -> Result<NaiveDate, Reason> {
        let s = self.text(col)?;
        parse_date(s).ok_or_else(|| Reason::BadDate {
            column: col.name,
            value: s.to_owned(),
        })
    }
}

fn bad_number(col: Col, s: &str) -> Reason {
    Reason::BadNumber {
        column: col.name,
        value: s.to_owned(),
    }
}

/// `YYYY-MM-DD` or `MM/DD/YYYY`; anything else (including a time part) is `None`.
pub(crate) fn parse_date(s: &str) -> Option<NaiveDate> {
    fn num(part: &str, max_len: usize) -> Option<u32> {
        (!part.is_empty() && part.len() <= max_len && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    }
    let (y, m, d) = if s.contains('-') {
        let mut parts = s.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 {
            return None;
        }
        (num(y, 4)?, num(m, 2)?, num(d, 2)?)
    } else {
        let mut parts = s.split('/');
        let (m, d, y) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 {
            return None;
        }
        (num(y, 4)?, num(m, 2)?, num(d, 2)?)
    };
    NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d)
}

/// Rejects a bid above its ask, naming the vendor columns.
pub(crate) fn check_bid_ask(bid_col: Col, bid: f64, ask_col: Col, ask: f64) -> Result<(), Reason> {
    if bid > ask {
        return Err(Reason::BidAboveAsk {
            bid_column: bid_col.name,
            bid,
            ask_column: ask_col.name,
            ask,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let d = NaiveDate::from_ymd_opt(2024, 3, 15).unwrap();
        assert_eq!(parse_date("2024-03-15"), Some(d));
        assert_eq!(parse_date("03/15/2024"), Some(d));
        assert_eq!(parse_date("3/15/2024"), Some(d));
        for bad in [
            "",
            "2024-02-30",
            "15/03/2024",
            "2024/03/15",
            "24-03-15",
            "2024-03-15T16:00",
            "2024-03-15-1",
            "03/15/24",
            "+2024-03-15",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_normalisation() {
        let h = Header::new(&StringRecord::from(vec![
            "\u{feff}Date",
            "Adj Close",
            "VOLUME",
        ]))
        .unwrap();
        assert!(h.required("date").is_ok());
        assert!(h.required("adj_close").is_ok());
        assert!(h.required("volume").is_ok());
        assert!(matches!(
            h.required("open"),
            Err(Reason::MissingColumn("open"))
        ));
        assert!(Header::new(&StringRecord::from(vec!["date", "Date"])).is_err());
    }
}
