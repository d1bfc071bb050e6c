use super::*;
use crate::registry::endpoint;

fn parse(slug: &str, query: &str) -> Result<QueryParams, ApiError> {
    QueryParams::parse(endpoint(slug).unwrap(), Some(query))
}

fn bad_request(result: Result<impl std::fmt::Debug, ApiError>) -> String {
    match result {
        Err(ApiError::BadRequest(reason)) => reason,
        other => panic!("expected a 400, got {other:?}"),
    }
}

#[test]
fn whole_numbers_default_and_clamp_visibly() {
    let params = parse("chain", "").unwrap();
    let n = params.int("num_expirations").unwrap();
    assert_eq!((n.value, n.was_clamped()), (1, false));
    assert!(params.clamp_notices().is_empty());

    let params = parse("chain", "num_expirations=50&strikes_around=-3").unwrap();
    let n = params.int("num_expirations").unwrap();
    assert_eq!((n.value, n.requested), (10, 50));
    assert!(n.was_clamped());
    let s = params.int("strikes_around").unwrap();
    assert_eq!((s.value, s.requested), (0, -3));
    let notices = params.clamp_notices();
    assert_eq!(notices.len(), 2);
    assert_eq!(notices[0].parameter, "num_expirations");
    assert_eq!(notices[0].requested, "50");
    assert_eq!(notices[0].used, serde_json::json!(10));
    assert_eq!(notices[0].min, serde_json::json!(1));
    assert_eq!(notices[0].max, serde_json::json!(10));

    // In range: untouched.
    let params = parse("chain", "num_expirations=+7").unwrap();
    assert_eq!(params.int("num_expirations").unwrap().value, 7);
    assert!(params.clamp_notices().is_empty());
}

#[test]
fn beyond_i64_still_clamps() {
    let params = parse("chain", "num_expirations=99999999999999999999999").unwrap();
    assert_eq!(params.int("num_expirations").unwrap().value, 10);
    let params = parse("chain", "num_expirations=-99999999999999999999999").unwrap();
    assert_eq!(params.int("num_expirations").unwrap().value, 1);
}

#[test]
fn non_integers_are_400_with_the_reason() {
    for raw in ["1.5", "1e3", "ten", "0x10", "--1", "1 0", "-"] {
        let query = format!("num_expirations={}", raw.replace(' ', "%20"));
        let reason = bad_request(parse("chain", &query).unwrap().int("num_expirations"));
        assert!(
            reason.contains("num_expirations must be a whole number"),
            "{raw}: {reason}"
        );
        assert!(reason.contains(raw), "{raw}: {reason}");
    }
}

#[test]
fn empty_value_means_absent() {
    let params = parse("chain", "num_expirations=&strikes_around=").unwrap();
    assert_eq!(params.int("num_expirations").unwrap().value, 1);
    assert_eq!(params.int("strikes_around").unwrap().value, 20);
}

#[test]
fn a_blank_value_is_not_an_empty_one() {
    for query in ["num_expirations=%09", "strikes_around=%20%20"] {
        let reason = bad_request(parse("chain", query));
        assert!(reason.contains("is blank"), "{query}: {reason}");
    }
}

#[test]
fn numbers_are_finite_and_clamped() {
    let params = parse("options-by-delta", "delta=1.5").unwrap();
    let d = params.float("delta").unwrap();
    assert_eq!((d.value, d.requested), (0.99, 1.5));
    assert_eq!(params.clamp_notices()[0].used, serde_json::json!(0.99));
    let params = parse("options-by-delta", "").unwrap();
    assert_eq!(params.float("delta").unwrap().value, 0.3);
    for raw in ["NaN", "inf", "-infinity", "abc"] {
        let reason = bad_request(
            parse("options-by-delta", &format!("delta={raw}"))
                .unwrap()
                .float("delta"),
        );
        assert!(reason.contains("finite number"), "{raw}: {reason}");
    }
}

#[test]
fn choices_are_case_insensitive_and_list_the_allowed_values() {
    let params = parse("options-by-delta", "option_type=PUT").unwrap();
    assert_eq!(params.choice("option_type").unwrap(), Some("put"));
    let params = parse("options-by-delta", "").unwrap();
    assert_eq!(params.choice("option_type").unwrap(), Some("call"));
    let reason = bad_request(
        parse("options-by-delta", "option_type=straddle")
            .unwrap()
            .choice("option_type"),
    );
    assert!(reason.contains("allowed: call, put"), "{reason}");
    // gex's detail default is prose ("full for REST, compact for MCP clients"): no value.
    assert_eq!(parse("gex", "").unwrap().choice("detail").unwrap(), None);
}

#[test]
fn dates_are_strict_yyyy_mm_dd() {
    let params = parse("chain", "expiration=2026-12-18").unwrap();
    assert_eq!(
        params.date("expiration").unwrap(),
        NaiveDate::from_ymd_opt(2026, 12, 18)
    );
    assert_eq!(
        parse("chain", "").unwrap().date("expiration").unwrap(),
        None
    );
    for raw in [
        "2026-2-30",
        "2026-02-30",
        "18-12-2026",
        "2026/12/18",
        "2026-12-18T00:00",
        "tomorrow",
    ] {
        let reason = bad_request(
            parse("chain", &format!("expiration={raw}"))
                .unwrap()
                .date("expiration"),
        );
        assert!(reason.contains("YYYY-MM-DD"), "{raw}: {reason}");
    }
}

#[test]
fn required_parameters_are_enforced_when_parsing() {
    let reason = bad_request(parse("chain-at-time", "expiration=2026-12-18"));
    assert!(
        reason.contains("Missing required parameter trade_date"),
        "{reason}"
    );
    assert!(
        parse(
            "chain-at-time",
            "expiration=2026-12-18&trade_date=2026-11-20"
        )
        .is_ok()
    );
}

#[test]
fn booleans() {
    assert!(parse("gex", "").unwrap().bool("aggregate").unwrap());
    assert!(
        !parse("gex", "aggregate=FALSE")
            .unwrap()
            .bool("aggregate")
            .unwrap()
    );
    assert!(
        parse("gex", "aggregate=1")
            .unwrap()
            .bool("aggregate")
            .unwrap()
    );
    let reason = bad_request(parse("gex", "aggregate=maybe").unwrap().bool("aggregate"));
    assert!(reason.contains("true or false"), "{reason}");
}

#[test]
fn symbol_lists() {
    let tickers = parse("cross-index-gex", "")
        .unwrap()
        .symbols("tickers")
        .unwrap();
    let names: Vec<&str> = tickers.iter().map(Ticker::as_str).collect();
    assert_eq!(names, ["SPY", "QQQ", "IWM", "DIA"]);
    let tickers = parse("cross-index-gex", "tickers=spy,%20qqq,SPY,")
        .unwrap()
        .symbols("tickers")
        .unwrap();
    let names: Vec<&str> = tickers.iter().map(Ticker::as_str).collect();
    assert_eq!(names, ["SPY", "QQQ"]);
    let too_many: Vec<String> = (0..26).map(|i| format!("T{i}")).collect();
    let reason = bad_request(
        parse("gex-batch", &format!("tickers={}", too_many.join(",")))
            .unwrap()
            .symbols("tickers"),
    );
    assert!(reason.contains("at most 25"), "{reason}");
    let reason = bad_request(
        parse("gex-batch", "tickers=SPY,S$Y")
            .unwrap()
            .symbols("tickers"),
    );
    assert!(reason.contains("Invalid ticker"), "{reason}");
}

#[test]
fn whole_number_lists_clamp_each_value() {
    let params = parse("volatility-cone", "").unwrap();
    let periods: Vec<i64> = params
        .int_list("periods")
        .unwrap()
        .iter()
        .map(|c| c.value)
        .collect();
    assert_eq!(periods, [10, 20, 30, 60, 90]);
    let params = parse("volatility-cone", "periods=1,30,400").unwrap();
    let periods: Vec<i64> = params
        .int_list("periods")
        .unwrap()
        .iter()
        .map(|c| c.value)
        .collect();
    assert_eq!(periods, [2, 30, 252]);
    assert_eq!(params.clamp_notices().len(), 2);
    let reason = bad_request(
        parse("volatility-cone", "periods=1,2,3,4,5,6,7,8,9")
            .unwrap()
            .int_list("periods"),
    );
    assert!(reason.contains("at most 8"), "{reason}");
    let reason = bad_request(
        parse("volatility-cone", "periods=10,x")
            .unwrap()
            .int_list("periods"),
    );
    assert!(reason.contains("whole number"), "{reason}");
}

#[test]
fn unknown_duplicate_and_misplaced_parameters_are_400() {
    let reason = bad_request(parse("chain", "strike_around=5"));
    assert!(
        reason.contains("Unknown query parameter \"strike_around\""),
        "{reason}"
    );
    assert!(reason.contains("Did you mean strikes_around?"), "{reason}");
    assert!(
        reason.contains("Accepted: expiration, num_expirations, strikes_around"),
        "{reason}"
    );
    let reason = bad_request(parse("chain", "num_expirations=1&num_expirations=2"));
    assert!(reason.contains("more than once"), "{reason}");
    let reason = bad_request(parse("chain", "ticker=SPY"));
    assert!(reason.contains("path parameter"), "{reason}");
    let reason = bad_request(parse("expirations", "x=1"));
    assert!(reason.contains("Accepted: none"), "{reason}");
    // A value without a name is refused, not skipped; empty segments are nothing at all.
    let reason = bad_request(parse("chain", "num_expirations=1&=5"));
    assert!(reason.contains("has no name (=5)"), "{reason}");
    assert!(parse("chain", "num_expirations=1&&").is_ok());
}

#[test]
fn asking_for_an_undeclared_parameter_is_an_internal_error() {
    let params = parse("chain", "").unwrap();
    assert!(matches!(
        params.int("limit"),
        Err(ApiError::Internal { .. })
    ));
    assert!(matches!(
        params.date("num_expirations"),
        Err(ApiError::Internal { .. })
    ));
}
