use super::*;
use crate::registry::endpoint;
use axum::http::HeaderValue;

/// Strikes 50, 52.5, …, 150 (41 rows), like a listed chain.
fn strikes() -> Vec<f64> {
    (0..41).map(|i| 50.0 + 2.5 * f64::from(i)).collect()
}

/// The window computed another way: filter each side, sort by distance, take N.
fn brute_force(strikes: &[f64], centre: f64, n: usize) -> Vec<f64> {
    let mut below: Vec<f64> = strikes.iter().copied().filter(|k| *k < centre).collect();
    let mut above: Vec<f64> = strikes.iter().copied().filter(|k| *k >= centre).collect();
    below.sort_by(|a, b| b.total_cmp(a));
    above.sort_by(f64::total_cmp);
    let mut kept: Vec<f64> = below
        .into_iter()
        .take(n)
        .chain(above.into_iter().take(n))
        .collect();
    kept.sort_by(f64::total_cmp);
    kept
}

#[test]
fn strike_window_keeps_n_each_side_of_the_centre() {
    let rows = strikes();
    let (range, window) = window_around_strike(&rows, |k| *k, 101.3, Some(3), Detail::Compact);
    assert_eq!(
        rows[range.clone()],
        [95.0, 97.5, 100.0, 102.5, 105.0, 107.5]
    );
    assert_eq!(
        window,
        Window {
            detail: Detail::Compact,
            rows_total: 41,
            rows_returned: 6,
            truncated: true,
            strikes_around: Some(3),
            limit: None,
        }
    );
    // A centre on a listed strike counts that strike on the upper side.
    let (range, _) = window_around_strike(&rows, |k| *k, 100.0, Some(2), Detail::Compact);
    assert_eq!(rows[range], [95.0, 97.5, 100.0, 102.5]);
}

#[test]
fn strike_window_matches_an_independent_computation() {
    let rows = strikes();
    for centre in [0.0, 49.9, 50.0, 51.0, 77.7, 100.0, 149.0, 150.0, 150.1, 1e9] {
        for n in [1, 2, 5, 20, 25, 40, 100] {
            let (range, window) =
                window_around_strike(&rows, |k| *k, centre, Some(n), Detail::Compact);
            let want = brute_force(&rows, centre, n);
            assert_eq!(rows[range.clone()], want[..], "centre {centre}, n {n}");
            assert_eq!(window.rows_returned, want.len());
            assert_eq!(window.truncated, want.len() < rows.len());
        }
    }
}

#[test]
fn no_trimming_and_degenerate_inputs() {
    let rows = strikes();
    let (range, window) = window_around_strike(&rows, |k| *k, 100.0, None, Detail::Full);
    assert_eq!(range, 0..41);
    assert!(!window.truncated);
    let empty: [f64; 0] = [];
    let (range, window) = window_around_strike(&empty, |k| *k, 100.0, Some(5), Detail::Compact);
    assert_eq!(
        (range, window.rows_total, window.truncated),
        (0..0, 0, false)
    );
    // NaN centre: no panic, the first N rows.
    let (range, _) = window_around_strike(&rows, |k| *k, f64::NAN, Some(2), Detail::Compact);
    assert_eq!(range, 0..2);
}

#[test]
fn plain_lists_keep_the_first_rows() {
    let (range, window) = window_first(100, Some(25), Detail::Compact);
    assert_eq!(range, 0..25);
    assert_eq!(
        (window.rows_total, window.rows_returned, window.truncated),
        (100, 25, true)
    );
    let (range, window) = window_first(10, Some(25), Detail::Compact);
    assert_eq!((range, window.truncated), (0..10, false));
    let (range, window) = window_first(100, None, Detail::Full);
    assert_eq!(
        (range, window.truncated, window.limit),
        (0..100, false, None)
    );
    let both = window_first(100, Some(10), Detail::Compact)
        .1
        .combine(window_first(5, Some(10), Detail::Compact).1);
    assert_eq!(
        (both.rows_total, both.rows_returned, both.truncated),
        (105, 15, true)
    );
}

fn request(headers: &[(&'static str, &'static str)], query: &str, slug: &str) -> WindowRequest {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.insert(*name, HeaderValue::from_static(value));
    }
    let params = QueryParams::parse(endpoint(slug).unwrap(), Some(query)).unwrap();
    WindowRequest::from_request(&map, &params).unwrap()
}

#[test]
fn service_clients_get_compact_unless_they_ask_for_full() {
    let rest = request(&[], "", "gex");
    assert_eq!(rest.detail, Detail::Full);
    assert_eq!(rest.strikes_per_side(GEX_STRIKES_PER_SIDE), None);

    let assistant = request(&[("x-service-client", "optics-mcp/1.0")], "", "gex");
    assert_eq!(assistant.detail, Detail::Compact);
    assert_eq!(assistant.strikes_per_side(GEX_STRIKES_PER_SIDE), Some(25));

    let legacy = request(&[("x-apexvol-client", "mcp")], "", "zero-dte");
    assert_eq!(legacy.strikes_per_side(ZERO_DTE_STRIKES_PER_SIDE), Some(30));

    let blank = request(&[("x-service-client", " ")], "", "gex");
    assert_eq!(blank.detail, Detail::Full);

    let full = request(&[("x-service-client", "mcp")], "detail=full", "gex");
    assert_eq!(full.detail, Detail::Full);
    assert_eq!(full.strikes_per_side(GEX_STRIKES_PER_SIDE), None);

    let compact = request(&[], "detail=compact&strikes_around=10", "gex");
    assert_eq!(compact.strikes_per_side(GEX_STRIKES_PER_SIDE), Some(10));

    let all = request(&[], "detail=compact&strikes_around=0", "gex");
    assert_eq!(all.strikes_per_side(GEX_STRIKES_PER_SIDE), None);

    // strikes_around beyond its documented range is clamped (0 to 500).
    let wide = request(&[], "detail=compact&strikes_around=9000", "gex");
    assert_eq!(wide.strikes_per_side(GEX_STRIKES_PER_SIDE), Some(500));

    let flow = request(&[("x-service-client", "mcp")], "limit=5", "flow");
    assert_eq!(flow.row_limit(FLOW_ALL_FLOW_ROWS), Some(5));
    assert_eq!(flow.row_limit(FLOW_TOP_ROWS), Some(5));
    let flow = request(&[("x-service-client", "mcp")], "", "flow");
    assert_eq!(flow.row_limit(FLOW_ALL_FLOW_ROWS), Some(25));
    assert_eq!(flow.row_limit(FLOW_TOP_ROWS), Some(10));
    let flow = request(&[], "limit=5", "flow");
    assert_eq!(flow.row_limit(FLOW_ALL_FLOW_ROWS), None);
}

#[test]
fn a_bad_detail_is_400() {
    let params = QueryParams::parse(endpoint("gex").unwrap(), Some("detail=summary")).unwrap();
    let err = WindowRequest::from_request(&HeaderMap::new(), &params).unwrap_err();
    assert!(matches!(err, ApiError::BadRequest(ref m) if m.contains("allowed: compact, full")));
}
