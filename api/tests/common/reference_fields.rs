//! The reference records' documented field names, walked against a served payload: a test
//! fails on any documented field an endpoint does not produce.

use serde_json::Value;

/// The documented field names of `slug` in the reference records, as key paths: `a.b[].c`
/// with `<…>` / `{…}` for any key; `x, y` lists and `p10 to p90` ranges expanded.
pub fn documented_fields(slug: &str) -> Vec<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/reference-records.json");
    let records: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let endpoint = records["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == slug)
        .unwrap_or_else(|| panic!("{slug} is not in the reference records"));
    let mut out = Vec::new();
    for field in endpoint["fields"].as_array().unwrap() {
        let spec = field[0].as_str().unwrap();
        // `prefix.first, second, third`: the names after the first share its prefix.
        let mut parts = spec.split(',').map(str::trim);
        let first = parts.next().unwrap();
        let (prefix, head) = match first.rfind('.') {
            Some(i) => (&first[..=i], &first[i + 1..]),
            None => ("", first),
        };
        for name in std::iter::once(head).chain(parts) {
            for name in expand_range(name) {
                out.push(
                    format!("{prefix}{name}")
                        .split('.')
                        .map(str::to_owned)
                        .collect(),
                );
            }
        }
    }
    out
}

/// `p10 to p90` → the cone's percentiles, `clsHv5d to clsHv252d` → the nine standard
/// windows; any other name as it is.
fn expand_range(name: &str) -> Vec<String> {
    match name {
        "p10 to p90" => ["p10", "p25", "p50", "p75", "p90"]
            .map(String::from)
            .to_vec(),
        "clsHv5d to clsHv252d" => [5, 10, 20, 30, 60, 90, 120, 180, 252]
            .map(|w| format!("clsHv{w}d"))
            .to_vec(),
        other => vec![other.to_owned()],
    }
}

/// Whether `value` has the key path (`[]` walks every element, `<…>`/`{…}` every key).
pub fn has_path(value: &Value, path: &[String]) -> bool {
    let Some((head, rest)) = path.split_first() else {
        return true;
    };
    let (key, each) = match head.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (head.as_str(), false),
    };
    let any_key = key.starts_with('<') || key.starts_with('{');
    let children: Vec<&Value> = match value {
        Value::Object(map) if any_key => map.values().collect(),
        Value::Object(map) => map.get(key).into_iter().collect(),
        _ => Vec::new(),
    };
    !children.is_empty()
        && children.iter().all(|child| {
            if each {
                child.as_array().is_some_and(|items| {
                    !items.is_empty() && items.iter().all(|i| has_path(i, rest))
                })
            } else {
                has_path(child, rest)
            }
        })
}

/// Panics naming the first field of `slug`'s reference record that `served` (the payload's
/// `data`) lacks.
pub fn assert_documented_fields_served(slug: &str, served: &Value) {
    let fields = documented_fields(slug);
    assert!(!fields.is_empty(), "{slug} documents no field");
    for path in fields {
        assert!(
            has_path(served, &path),
            "{slug}: `{}` is not served",
            path.join(".")
        );
    }
}
