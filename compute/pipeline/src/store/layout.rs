//! Hive-style paths over object_store, shared by the snapshot store and the quote archive:
//! `key=value` directory names, percent-decoding of the characters object stores reserve, and
//! listing helpers that treat a missing directory as empty.

use chrono::NaiveDate;
use object_store::path::{Path, PathPart};
use object_store::{ObjectStore, ObjectStoreExt};

/// The directory name `trade_date=YYYY-MM-DD`.
pub fn trade_date_dir(trade_date: NaiveDate) -> String {
    format!("trade_date={}", trade_date.format("%Y-%m-%d"))
}

/// The directory name `underlying=SYM` (object_store percent-encodes reserved characters
/// when the name becomes a path part: `^VIX` → `underlying=%5EVIX`).
pub fn underlying_dir(underlying: &str) -> String {
    format!("underlying={underlying}")
}

/// The trade date of a `trade_date=YYYY-MM-DD` path's last part.
pub fn parse_trade_date_dir(dir: &Path) -> Option<NaiveDate> {
    let part = last_part(dir)?;
    let value = hive_value(&part, "trade_date")?;
    NaiveDate::parse_from_str(&value, "%Y-%m-%d").ok()
}

/// The symbol of an `underlying=SYM` path's last part, percent-decoded.
pub fn parse_underlying_dir(dir: &Path) -> Option<String> {
    hive_value(&last_part(dir)?, "underlying")
}

/// The last part of `path`, percent-decoded.
pub fn last_part(path: &Path) -> Option<String> {
    path.parts()
        .next_back()
        .map(|p: PathPart<'_>| percent_decode(p.as_ref()))
}

/// `value` of a `key=value` directory name; `None` for another key or an empty value.
pub fn hive_value(part: &str, key: &str) -> Option<String> {
    let value = part.strip_prefix(key)?.strip_prefix('=')?;
    (!value.is_empty()).then(|| value.to_owned())
}

/// Undoes object_store's percent-encoding of reserved characters (`%5E` → `^`). Text that is
/// not a valid escape is kept as written.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// The immediate "directories" (common prefixes) under `dir`; none if it does not exist.
pub async fn list_dirs(
    store: &dyn ObjectStore,
    dir: &Path,
) -> Result<Vec<Path>, object_store::Error> {
    match store.list_with_delimiter(Some(dir)).await {
        Ok(listing) => Ok(listing.common_prefixes),
        Err(object_store::Error::NotFound { .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The objects directly under `dir` (not recursive); none if it does not exist.
pub async fn list_files(
    store: &dyn ObjectStore,
    dir: &Path,
) -> Result<Vec<object_store::ObjectMeta>, object_store::Error> {
    match store.list_with_delimiter(Some(dir)).await {
        Ok(listing) => Ok(listing.objects),
        Err(object_store::Error::NotFound { .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Every object under `dir`, recursively, sorted.
pub async fn list_objects_recursive(
    store: &dyn ObjectStore,
    dir: &Path,
) -> Result<Vec<Path>, object_store::Error> {
    let mut pending = vec![dir.clone()];
    let mut found = Vec::new();
    while let Some(next) = pending.pop() {
        match store.list_with_delimiter(Some(&next)).await {
            Ok(listing) => {
                found.extend(listing.objects.into_iter().map(|m| m.location));
                pending.extend(listing.common_prefixes);
            }
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    found.sort();
    Ok(found)
}

/// Deletes `path`; a missing object is not an error.
pub async fn delete_if_present(
    store: &dyn ObjectStore,
    path: &Path,
) -> Result<(), object_store::Error> {
    match store.delete(path).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_characters_round_trip_through_paths() {
        let dir = Path::default().join(underlying_dir("^VIX"));
        assert_eq!(parse_underlying_dir(&dir).as_deref(), Some("^VIX"));
        assert_eq!(percent_decode("BRK.B"), "BRK.B");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn trade_date_dirs_round_trip() {
        let date = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let dir = Path::default().join(trade_date_dir(date));
        assert_eq!(dir.as_ref(), "trade_date=2026-11-20");
        assert_eq!(parse_trade_date_dir(&dir), Some(date));
        assert_eq!(
            parse_trade_date_dir(&Path::default().join("trade_date=2026-13-01")),
            None
        );
        assert_eq!(hive_value("underlying=", "underlying"), None);
        assert_eq!(hive_value("ticker=SPY", "underlying"), None);
    }
}
