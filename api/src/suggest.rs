//! `did_you_mean`: the mounted endpoints nearest an unknown path.
//!
//! Distance is an edit distance over **path segments** (Levenshtein on the sequence of
//! segments): substituting one segment for another costs the character edit distance between
//! them, except that a template segment (`{ticker}`) matches any value at no cost; inserting or
//! deleting a literal segment costs its length, a template segment 1. So `/gexx/SPY` is 1 from
//! `/gex/{ticker}`, `/chain` is 1 from `/chain/{ticker}`, and `/chian/SPY` is 2 from it.
//!
//! The nearest [`MAX_SUGGESTIONS`] paths within a cutoff are suggested: at most
//! `max(3, ¾ of the characters in the requested path's segments)`, so a near-miss
//! (`/openapi` for `/openapi.json`) gets its endpoint and an unrelated path gets no noise (the
//! 404 still carries the index and docs).

use crate::registry::{DATA_PREFIX, EndpointSpec};

/// Most entries in `did_you_mean`.
pub const MAX_SUGGESTIONS: usize = 3;

/// Character edit distance (insert, delete, substitute, each 1), over Unicode scalar values.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b_chars: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b_chars.len()).collect();
    let mut current = vec![0; b_chars.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b_chars.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b_chars.len()]
}

fn is_template(segment: &str) -> bool {
    segment.starts_with('{') && segment.ends_with('}')
}

fn indel_cost(segment: &str) -> usize {
    if is_template(segment) {
        1
    } else {
        segment.chars().count().max(1)
    }
}

fn substitution_cost(requested: &str, template: &str) -> usize {
    if is_template(template) {
        0
    } else {
        levenshtein(&requested.to_ascii_lowercase(), template)
    }
}

/// Segment edit distance between a requested path and a route template (both relative to the
/// data prefix, e.g. `gexx/SPY` and `/gex/{ticker}`).
pub fn path_distance(requested: &str, template: &str) -> usize {
    let req: Vec<&str> = segments(requested);
    let tpl: Vec<&str> = segments(template);
    let mut previous: Vec<usize> = Vec::with_capacity(tpl.len() + 1);
    previous.push(0);
    for t in &tpl {
        let last = previous.last().copied().unwrap_or(0);
        previous.push(last + indel_cost(t));
    }
    let mut current = vec![0; tpl.len() + 1];
    for r in &req {
        current[0] = previous[0] + indel_cost(r);
        for (j, t) in tpl.iter().enumerate() {
            let substitute = previous[j] + substitution_cost(r, t);
            let delete = previous[j + 1] + indel_cost(r);
            let insert = current[j] + indel_cost(t);
            current[j + 1] = substitute.min(delete).min(insert);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[tpl.len()]
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Longest request path, in bytes, that gets suggestions: every mounted path is far shorter,
/// and the edit distances grow with the product of the lengths, so a longer (unauthenticated)
/// path is answered without any.
pub const MAX_SUGGESTED_PATH_BYTES: usize = 256;
/// Most path segments that get suggestions (the longest mounted path has five).
pub const MAX_SUGGESTED_SEGMENTS: usize = 12;

/// The mounted endpoints nearest `requested_path` (a full request path), best first; none for
/// a path beyond [`MAX_SUGGESTED_PATH_BYTES`] or [`MAX_SUGGESTED_SEGMENTS`].
pub fn nearest<'a>(
    requested_path: &str,
    mounted: &'a [&'static EndpointSpec],
) -> Vec<&'a EndpointSpec> {
    let relative = requested_path
        .strip_prefix(DATA_PREFIX)
        .unwrap_or(requested_path);
    if relative.len() > MAX_SUGGESTED_PATH_BYTES
        || relative.split('/').filter(|s| !s.is_empty()).count() > MAX_SUGGESTED_SEGMENTS
    {
        return Vec::new();
    }
    let requested_len: usize = segments(relative).iter().map(|s| s.chars().count()).sum();
    let cutoff = (requested_len * 3).div_ceil(4).max(3);
    let mut scored: Vec<(usize, &EndpointSpec)> = mounted
        .iter()
        .map(|e| (path_distance(relative, e.path), *e))
        .filter(|(distance, _)| *distance <= cutoff)
        .collect();
    scored.sort_by(|(da, a), (db, b)| da.cmp(db).then_with(|| a.path.cmp(b.path)));
    scored.dedup_by(|(_, a), (_, b)| a.path == b.path);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, e)| e)
        .collect()
}

/// True when `requested` (relative to the prefix) matches `template` segment by segment,
/// a template segment matching any one non-empty value.
pub fn matches_template(requested: &str, template: &str) -> bool {
    let req = segments(requested);
    let tpl = segments(template);
    req.len() == tpl.len() && req.iter().zip(&tpl).all(|(r, t)| is_template(t) || r == t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_known_values() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("gex", "gex"), 0);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("chian", "chain"), 2);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
    }

    #[test]
    fn segment_distance_treats_templates_as_wildcards() {
        assert_eq!(path_distance("/gex/SPY", "/gex/{ticker}"), 0);
        assert_eq!(path_distance("/gexx/SPY", "/gex/{ticker}"), 1);
        assert_eq!(path_distance("/chain", "/chain/{ticker}"), 1);
        assert_eq!(path_distance("/chian/SPY", "/chain/{ticker}"), 2);
        assert_eq!(path_distance("/CHAIN/spy", "/chain/{ticker}"), 0);
        assert_eq!(
            path_distance(
                "/correlation/SPY/compare",
                "/correlation/{ticker}/compare/{ticker2}"
            ),
            1
        );
        // Extra segments: delete the shortest (SPY), let {ticker} absorb "timeseries".
        assert_eq!(path_distance("/vrp/SPY/timeseries", "/vrp/{ticker}"), 3);
        assert_eq!(
            path_distance("/vrp/timeseries", "/vrp/{ticker}/timeseries"),
            1
        );
        assert_eq!(path_distance("/", "/"), 0);
    }

    #[test]
    fn template_matching() {
        assert!(matches_template("/gex/SPY", "/gex/{ticker}"));
        assert!(!matches_template("/gex", "/gex/{ticker}"));
        assert!(!matches_template("/gex/SPY/x", "/gex/{ticker}"));
        assert!(matches_template("/", "/"));
    }
}
