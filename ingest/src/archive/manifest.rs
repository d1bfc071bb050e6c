//! The names and contents of an import's objects: its parts, its per-session manifests and its
//! commit record (see the [module documentation](super) for the protocol).
//!
//! Manifests and commit records are a few lines of plain text (`key value…`), not JSON: the
//! archive needs no serializer for them, and a person can read one with `cat`.

use object_store::path::Path;

use super::ArchiveError;

/// The first line of a manifest.
const MANIFEST_HEADER: &str = "optics quote-archive manifest v1";
/// The first line of a commit record.
const COMMIT_HEADER: &str = "optics quote-archive commit v1";
/// The commit record's file name inside the import's directory.
pub(crate) const COMMIT_FILE: &str = "_committed";

/// Whether `id` can name an import: 1–64 characters of `[A-Za-z0-9._-]`, not `.` or `..`.
pub(crate) fn valid_import_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `part-00000042.parquet`: an appended part, or an imported part inside its import's
/// directory.
pub(crate) fn part_file_name(seq: u32) -> String {
    format!("part-{seq:08}.parquet")
}

/// The sequence number of a `part-<seq>.parquet` name.
pub(crate) fn parse_part_file_name(name: &str) -> Option<u32> {
    parse_seq(name.strip_prefix("part-")?.strip_suffix(".parquet")?)
}

/// `part-00000042.import-<id>.manifest`: the manifest of import `id` in a session, taking the
/// session's sequence number `seq`.
pub(crate) fn manifest_file_name(seq: u32, import_id: &str) -> String {
    format!("part-{seq:08}.import-{import_id}.manifest")
}

/// The sequence number and import id of a manifest name.
pub(crate) fn parse_manifest_file_name(name: &str) -> Option<(u32, String)> {
    let rest = name.strip_prefix("part-")?.strip_suffix(".manifest")?;
    let (digits, id) = rest.split_once(".import-")?;
    let seq = parse_seq(digits)?;
    valid_import_id(id).then(|| (seq, id.to_owned()))
}

fn parse_seq(digits: &str) -> Option<u32> {
    (digits.len() >= 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// One part an import holds in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ManifestEntry {
    /// The part's number inside the import.
    pub(crate) number: u32,
    /// Rows in the part.
    pub(crate) rows: u64,
    /// The part's size in bytes.
    pub(crate) bytes: u64,
}

/// The text of a manifest.
pub(crate) fn encode_manifest(import_id: &str, entries: &[ManifestEntry]) -> String {
    let mut text = format!("{MANIFEST_HEADER}\nimport {import_id}\n");
    for e in entries {
        text.push_str(&format!("part {} {} {}\n", e.number, e.rows, e.bytes));
    }
    text
}

/// The entries of a manifest's text, checked against the import id its name gives.
pub(crate) fn decode_manifest(
    path: &Path,
    import_id: &str,
    text: &str,
) -> Result<Vec<ManifestEntry>, ArchiveError> {
    let bad = |reason: String| ArchiveError::BadManifest {
        path: path.to_string(),
        reason,
    };
    let mut lines = text.lines();
    if lines.next() != Some(MANIFEST_HEADER) {
        return Err(bad(format!("the first line is not {MANIFEST_HEADER:?}")));
    }
    match lines.next().and_then(|l| l.strip_prefix("import ")) {
        Some(id) if id == import_id => {}
        other => {
            return Err(bad(format!(
                "import line {other:?}, expected {import_id:?}"
            )));
        }
    }
    let mut entries = Vec::new();
    for (i, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let entry = match fields.as_slice() {
            ["part", number, rows, bytes] => (|| {
                Some(ManifestEntry {
                    number: number.parse().ok()?,
                    rows: rows.parse().ok()?,
                    bytes: bytes.parse().ok()?,
                })
            })(),
            _ => None,
        };
        entries.push(entry.ok_or_else(|| bad(format!("line {}: {line:?}", i + 3)))?);
    }
    if entries.is_empty() {
        return Err(bad("no parts".to_owned()));
    }
    Ok(entries)
}

/// The text of a commit record: the manifests the import wrote (for people and audits;
/// readers only test that the record exists).
pub(crate) fn encode_commit(manifests: &[Path]) -> String {
    let mut text = format!("{COMMIT_HEADER}\n");
    for m in manifests {
        text.push_str(&format!("manifest {m}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(part_file_name(42), "part-00000042.parquet");
        assert_eq!(parse_part_file_name("part-00000042.parquet"), Some(42));
        assert_eq!(parse_part_file_name("part-42.parquet"), None);
        assert_eq!(parse_part_file_name("part-0000004x.parquet"), None);
        assert_eq!(parse_part_file_name("00000042.parquet"), None);
        let name = manifest_file_name(7, "20261120T1530.5-12-0");
        assert_eq!(name, "part-00000007.import-20261120T1530.5-12-0.manifest");
        assert_eq!(
            parse_manifest_file_name(&name),
            Some((7, "20261120T1530.5-12-0".to_owned()))
        );
        assert_eq!(parse_part_file_name(&name), None);
        assert_eq!(parse_manifest_file_name("part-00000007.parquet"), None);
        assert_eq!(parse_manifest_file_name("part-7.import-a.manifest"), None);
        assert_eq!(
            parse_manifest_file_name("part-00000007.import-a b.manifest"),
            None
        );
    }

    #[test]
    fn manifests_round_trip_and_refuse_damage() {
        let path = Path::from("m");
        let entries = [
            ManifestEntry {
                number: 0,
                rows: 10,
                bytes: 1234,
            },
            ManifestEntry {
                number: 3,
                rows: 1,
                bytes: 99,
            },
        ];
        let text = encode_manifest("imp-1", &entries);
        assert_eq!(decode_manifest(&path, "imp-1", &text).unwrap(), entries);
        assert!(decode_manifest(&path, "imp-2", &text).is_err());
        assert!(decode_manifest(&path, "imp-1", &text.replace("part 3", "part x")).is_err());
        assert!(decode_manifest(&path, "imp-1", "").is_err());
        assert!(decode_manifest(&path, "imp-1", &encode_manifest("imp-1", &[])).is_err());
    }
}
