//! Historical move distributions against pandas / numpy.
//!
//! `tests/data/moves_vectors.json` was written by `scripts/reference/moves_vectors.py` (pandas
//! and numpy; see that script and `scripts/reference/README.md`) from a deterministic close
//! series it stores beside the figures. Nothing in it comes from this crate.
//!
//! Tolerance: 1e-9, relative to the reference value with a floor of 1 (so 1e-9 percentage
//! points for figures below 1 %). Both sides take the same quotient per window and the same
//! order statistics; only the order of the sums differs (numpy sums pairwise), which costs
//! about 1e-15 relative on 1,500 moves. Counts and window ends are compared exactly.

mod reference_support;

use optics_compute::moves::{LARGE_MOVE_PCT, avg_abs_move_pct, move_distribution};
use serde_json::Value;

#[track_caller]
fn agree(got: f64, want: &Value, what: &str) {
    let want = want.as_f64().unwrap_or_else(|| panic!("{what}: {want}"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: got {got}, reference {want}"
    );
}

fn vectors() -> Value {
    reference_support::vectors("moves_vectors.json")
}

#[test]
fn move_distributions_match_pandas() {
    let v = vectors();
    assert_eq!(v["large_move_pct"].as_f64(), Some(LARGE_MOVE_PCT));
    let mut compared = 0;
    for case in v["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let closes: Vec<f64> = case["close"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        for h in case["horizons"].as_array().unwrap() {
            let h = h.as_u64().unwrap() as usize;
            let want = &case["moves"][h.to_string()];
            let got = move_distribution(&closes, h);
            let what = |field: &str| format!("{name} h={h} {field}");
            if want.is_null() {
                assert!(got.is_none(), "{}", what("none expected"));
                assert_eq!(avg_abs_move_pct(&closes, h), None);
                continue;
            }
            let got = got.unwrap_or_else(|| panic!("{}", what("missing")));
            assert_eq!(got.horizon as u64, want["days"].as_u64().unwrap());
            assert_eq!(
                got.sample_size as u64,
                want["sample_size"].as_u64().unwrap(),
                "{}",
                what("sample_size")
            );
            assert_eq!(
                got.first_close as u64,
                want["first_close"].as_u64().unwrap()
            );
            assert_eq!(got.last_close as u64, want["last_close"].as_u64().unwrap());
            for (field, value) in [
                ("avg_abs_move_pct", got.avg_abs_move_pct),
                ("mean_move_pct", got.mean_move_pct),
                ("median_move_pct", got.median_move_pct),
                ("p10", got.p10),
                ("p25", got.p25),
                ("p75", got.p75),
                ("p90", got.p90),
                ("max_up_move_pct", got.max_up_move_pct),
                ("max_down_move_pct", got.max_down_move_pct),
                ("pct_moves_above_5", got.pct_moves_above_5),
            ] {
                agree(value, &want[field], &what(field));
            }
            match got.std_dev_pct {
                Some(std) => agree(std, &want["std_dev_pct"], &what("std_dev_pct")),
                None => assert!(want["std_dev_pct"].is_null(), "{}", what("std_dev_pct")),
            }
            agree(
                avg_abs_move_pct(&closes, h).unwrap(),
                &want["avg_abs_move_pct"],
                &what("avg_abs_move_pct()"),
            );
            compared += 1;
        }
    }
    assert_eq!(
        compared, 11,
        "8 horizons of the full series, 3 of the short one"
    );
}
