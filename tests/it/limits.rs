//! Rate-limit rules: exact under concurrency, calendar windows in the board's timezone,
//! rolling windows without boundary bursts, overrides, refusals, quota and key expiry.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{
    DAY, MASTER_KEY, Options, RawRedis, TestApp, clear_of_the_turn, hourly_total, num,
    refused_total,
};

/// Creates a closed board with members m1..m4 and the given rules; answers rule ids.
async fn board_with_rules(app: &TestApp, slug: &str, settings: Value, rules: &[Value]) -> Vec<i64> {
    let mut board = json!({"slug": slug, "title": "Limits"});
    if let (Some(b), Some(extra)) = (board.as_object_mut(), settings.as_object()) {
        b.extend(extra.clone());
    }
    app.board(board).await;
    app.members(slug, &["m1", "m2", "m3", "m4"]).await;
    let mut ids = Vec::new();
    for rule in rules {
        let (status, body) = app
            .post(&format!("/api/v1/admin/boards/{slug}/rules"), rule.clone())
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        ids.push(body["id"].as_i64().unwrap());
    }
    ids
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Casts a vote and answers status, Retry-After header and body.
async fn vote_with_headers(
    app: &TestApp,
    board: &str,
    key: &str,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let resp = app
        .client
        .post(format!("{}/api/v1/boards/{board}/votes", app.base))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, resp.json().await.unwrap())
}

async fn expect_ok(app: &TestApp, board: &str, body: Value) {
    let (status, reply) = app.vote(board, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body} -> {reply}");
}

async fn expect_limited(app: &TestApp, board: &str, body: Value) -> Value {
    let (status, reply) = app.vote(board, body.clone()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body} -> {reply}");
    assert_eq!(reply["error"]["code"], "rate_limited", "{reply}");
    reply["error"].clone()
}

async fn real_score(app: &TestApp, board: &str, member: &str) -> f64 {
    let (status, body) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/{member}?period=all&view=real"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    num(&body["score"])
}

async fn quota(app: &TestApp, board: &str, query: &str) -> Vec<Value> {
    let (status, body) = app
        .get(&format!("/api/v1/boards/{board}/quota?{query}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["rules"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_voter_gets_exactly_five_of_1000_concurrent_attempts_a_day() {
    let app = TestApp::patient().await;
    let ids = board_with_rules(
        &app,
        "daily",
        json!({}),
        &[json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5})],
    )
    .await;
    // A day's limit: every attempt falls in one UTC day, the board's.
    clear_of_the_turn(DAY, Duration::from_secs(120)).await;
    let mut attempts = Vec::new();
    for _ in 0..1000 {
        let app = app.clone();
        attempts.push(tokio::spawn(async move {
            app.vote("daily", json!({"member": "m1", "voter": "u1"}))
                .await
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for a in attempts {
        let (status, body) = a.await.unwrap();
        match status {
            StatusCode::OK => accepted += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(body["error"]["code"], "rate_limited");
                assert_eq!(body["error"]["rule"]["id"], ids[0]);
                assert_eq!(body["error"]["rule"]["limit"], 5);
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!((accepted, refused), (5, 995));
    assert_eq!(real_score(&app, "daily", "m1").await, 5.0);

    // Every refusal is counted for its rule.
    let (_, stats) = app.get("/api/v1/boards/daily/stats").await;
    assert_eq!(hourly_total(&stats), 5, "{stats}");
    assert_eq!(
        refused_total(&stats),
        json!([{"rule": ids[0], "votes": 995}])
    );
}

/// Seed 000's "+5": an override adds to the rule's limit; one with a limit of 0 blocks
/// its values. Exact under 1,000 concurrent attempts: the partner's voter gets five and
/// five more, the blocked channel's voter none, refused for good, each refusal counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_added_override_admits_exactly_its_extra_and_a_blocking_one_none() {
    let app = TestApp::patient().await;
    let ids = board_with_rules(
        &app,
        "plus",
        json!({}),
        &[
            json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5,
                 "overrides": [{"match": {"channel": "partner-a"}, "add": 5},
                               {"match": {"channel": "spam"}, "limit": 0}]}),
        ],
    )
    .await;
    // A day's limit: every attempt falls in one UTC day, the board's.
    clear_of_the_turn(DAY, Duration::from_secs(120)).await;
    let mut attempts = Vec::new();
    for i in 0..1000 {
        let app = app.clone();
        let (voter, channel) = if i % 2 == 0 {
            ("u1", "partner-a")
        } else {
            ("u2", "spam")
        };
        attempts.push(tokio::spawn(async move {
            let body = json!({"member": "m1", "voter": voter, "channel": channel});
            (channel, app.vote("plus", body).await)
        }));
    }
    let mut accepted = std::collections::HashMap::new();
    for a in attempts {
        let (channel, (status, body)) = a.await.unwrap();
        match status {
            StatusCode::OK => *accepted.entry(channel).or_insert(0) += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(body["error"]["code"], "rate_limited", "{body}");
                assert_eq!(body["error"]["rule"]["id"], ids[0]);
                let (limit, retry) = if channel == "spam" {
                    assert_eq!(
                        body["error"]["message"],
                        "Votes like this one are not taken on this board.",
                        "{body}"
                    );
                    (json!(0), Value::Null)
                } else {
                    (json!(10), body["error"]["retry_after_s"].clone())
                };
                assert_eq!(body["error"]["rule"]["limit"], limit, "{body}");
                assert_eq!(body["error"]["retry_after_s"], retry, "{body}");
                assert!(channel == "spam" || retry.as_i64().unwrap() > 0, "{body}");
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(accepted.get("partner-a"), Some(&10));
    assert_eq!(accepted.get("spam"), None);
    assert_eq!(real_score(&app, "plus", "m1").await, 10.0);
    let (_, stats) = app.get("/api/v1/boards/plus/stats").await;
    assert_eq!(
        refused_total(&stats),
        json!([{"rule": ids[0], "votes": 990}]),
        "{stats}"
    );
    let rules = quota(&app, "plus", "voter=u2&channel=spam").await;
    assert_eq!(
        (rules[0]["limit"].clone(), rules[0]["remaining"].clone()),
        (json!(0), json!(0))
    );

    // The rule reads back as written; an override takes exactly one of limit and add, an
    // add of at least 1 that keeps the limit within the window's bound.
    let (status, rule) = app
        .get(&format!("/api/v1/admin/boards/plus/rules/{}", ids[0]))
        .await;
    assert_eq!(status, StatusCode::OK, "{rule}");
    assert_eq!(
        rule["overrides"],
        json!([{"match": {"channel": "partner-a"}, "add": 5},
               {"match": {"channel": "spam"}, "limit": 0}])
    );
    for (override_, code) in [
        (
            json!({"match": {"channel": "a"}, "limit": 3, "add": 2}),
            "invalid_override",
        ),
        (json!({"match": {"channel": "a"}}), "invalid_override"),
        (
            json!({"match": {"channel": "a"}, "add": 0}),
            "invalid_override",
        ),
        (
            json!({"match": {"channel": "a"}, "add": 1_000_000_000}),
            "invalid_limit",
        ),
        (
            json!({"match": {"channel": "a"}, "limit": -1}),
            "invalid_limit",
        ),
    ] {
        let (status, body) = app
            .post(
                "/api/v1/admin/boards/plus/rules",
                json!({"name": "bad", "dimensions": ["voter"], "window": "day", "limit": 5,
                       "overrides": [override_]}),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (StatusCode::UNPROCESSABLE_ENTITY, json!(code)),
            "{override_}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_member_takes_exactly_100_a_minute_from_300_concurrent_voters() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "anti-brush",
        json!({}),
        &[json!({"name": "member 100/min", "dimensions": ["member"], "window": "minute", "limit": 100})],
    )
    .await;
    // One fixed instant, so a minute boundary during the test cannot open a new window.
    let at = rfc3339(Utc::now() - chrono::Duration::seconds(5));
    let mut voters = Vec::new();
    for v in 0..300 {
        let (app, at) = (app.clone(), at.clone());
        voters.push(tokio::spawn(async move {
            app.vote(
                "anti-brush",
                json!({"member": "m1", "voter": format!("u{v}"), "at": at}),
            )
            .await
            .0
        }));
    }
    let mut accepted = 0;
    for v in voters {
        match v.await.unwrap() {
            StatusCode::OK => accepted += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(accepted, 100);
    assert_eq!(real_score(&app, "anti-brush", "m1").await, 100.0);
    // Other members have their own counters.
    expect_ok(
        &app,
        "anti-brush",
        json!({"member": "m2", "voter": "u1", "at": at}),
    )
    .await;
}

#[tokio::test]
async fn a_day_rule_resets_at_local_midnight_in_shanghai_not_at_utc_midnight() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "sh",
        json!({"timezone": "Asia/Shanghai"}),
        &[json!({"name": "two a day", "dimensions": ["voter"], "window": "day", "limit": 2})],
    )
    .await;
    let vote = |at: &str| json!({"member": "m1", "voter": "u1", "at": at});
    expect_ok(&app, "sh", vote("2026-11-20T23:58:00+08:00")).await;
    expect_ok(&app, "sh", vote("2026-11-20T23:58:30+08:00")).await;
    let (status, retry, body) =
        vote_with_headers(&app, "sh", MASTER_KEY, vote("2026-11-20T23:59:00+08:00")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["retry_after_s"], 60, "{body}");
    assert_eq!(retry.as_deref(), Some("60"));

    // Local midnight (16:00 UTC) opens a new day.
    expect_ok(&app, "sh", vote("2026-11-21T00:00:00+08:00")).await;
    // UTC midnight (08:00 in Shanghai) does not.
    expect_ok(&app, "sh", vote("2026-11-21T07:59:00+08:00")).await;
    let refused = expect_limited(&app, "sh", vote("2026-11-21T08:00:00+08:00")).await;
    assert_eq!(refused["retry_after_s"], 16 * 3600);
    // A vote timed within a millisecond still waits for midnight itself, and is told so.
    let refused = expect_limited(&app, "sh", vote("2026-11-21T10:00:00.9995+08:00")).await;
    assert_eq!(refused["retry_after_s"], 14 * 3600, "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("Voting opens again tomorrow 00:00 Beijing time, in 14 h"),
        "{message}"
    );
}

#[tokio::test]
async fn a_rolling_hour_admits_no_burst_across_a_clock_hour_boundary() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "roll",
        json!({}),
        &[json!({"name": "three an hour", "dimensions": ["voter"], "window": "rolling:1h", "limit": 3})],
    )
    .await;
    let vote = |at: &str| json!({"member": "m1", "voter": "u1", "at": at});
    expect_ok(&app, "roll", vote("2026-11-21T10:40:00Z")).await;
    expect_ok(&app, "roll", vote("2026-11-21T10:50:00Z")).await;
    expect_ok(&app, "roll", vote("2026-11-21T10:59:59Z")).await;
    // A new clock hour is no new window: the oldest vote leaves at 11:40:00.
    let refused = expect_limited(&app, "roll", vote("2026-11-21T11:00:01Z")).await;
    assert_eq!(refused["retry_after_s"], 39 * 60 + 59);
    assert_eq!(refused["rule"]["window"], "rolling:1h");
    expect_limited(&app, "roll", vote("2026-11-21T11:39:59.500Z")).await;
    expect_ok(&app, "roll", vote("2026-11-21T11:40:00Z")).await;
    let refused = expect_limited(&app, "roll", vote("2026-11-21T11:45:00Z")).await;
    assert_eq!(refused["retry_after_s"], 5 * 60);
    assert_eq!(real_score(&app, "roll", "m1").await, 4.0);
}

#[tokio::test]
async fn retry_after_and_quota_agree_for_a_rolling_window() {
    let app = TestApp::spawn().await;
    let ids = board_with_rules(
        &app,
        "rollq",
        json!({}),
        &[json!({"name": "two per 10 min", "dimensions": ["voter"], "window": "rolling:10m", "limit": 2})],
    )
    .await;
    let first = Utc::now() - chrono::Duration::minutes(4);
    expect_ok(
        &app,
        "rollq",
        json!({"member": "m1", "voter": "u1", "at": rfc3339(first)}),
    )
    .await;
    expect_ok(&app, "rollq", json!({"member": "m1", "voter": "u1"})).await;
    let rules = quota(&app, "rollq", "voter=u1").await;
    assert_eq!(rules[0]["id"], ids[0]);
    assert_eq!(
        (rules[0]["used"].clone(), rules[0]["remaining"].clone()),
        (json!(2), json!(0))
    );
    let resets_at: DateTime<Utc> = rules[0]["resets_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        resets_at.timestamp_millis(),
        (first + chrono::Duration::minutes(10)).timestamp_millis()
    );
    let refused = expect_limited(&app, "rollq", json!({"member": "m1", "voter": "u1"})).await;
    let retry = refused["retry_after_s"].as_i64().unwrap();
    assert!(
        (359..=361).contains(&retry),
        "the first vote leaves in 6 min, got {retry}"
    );
}

#[tokio::test]
async fn quota_reads_a_rolling_window_from_its_running_total_and_trims_what_left_it() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "rtot",
        json!({}),
        &[json!({"name": "hundred per 10 min", "dimensions": ["voter"], "window": "rolling:10m", "limit": 100})],
    )
    .await;
    let old = rfc3339(Utc::now() - chrono::Duration::minutes(20));
    for _ in 0..2 {
        expect_ok(
            &app,
            "rtot",
            json!({"member": "m1", "voter": "u1", "at": old}),
        )
        .await;
    }
    let mut conn = RawRedis::connect().await;
    let key = |part: &'static str| {
        let mut conn = conn.clone();
        let pattern = format!("{}:*:rolling:10m:{part}:*", app.prefix);
        async move {
            let keys: Vec<String> = conn.keys(&pattern).await;
            assert_eq!(keys.len(), 1, "{keys:?}");
            keys[0].clone()
        }
    };
    let (log, total) = (key("log").await, key("sum").await);
    let entries: i64 = conn.query(redis::cmd("ZCARD").arg(&log)).await;
    assert_eq!(entries, 2, "both votes are still logged");
    let rules = quota(&app, "rtot", "voter=u1").await;
    assert_eq!(
        (rules[0]["used"].clone(), rules[0]["resets_at"].clone()),
        (json!(0), Value::Null)
    );
    // The quota dropped the entries that left the window and lowered the total, keeping
    // the total's expiry.
    let entries: i64 = conn.query(redis::cmd("ZCARD").arg(&log)).await;
    let sum: String = conn.query(redis::cmd("GET").arg(&total)).await;
    let ttl: i64 = conn.query(redis::cmd("TTL").arg(&total)).await;
    assert_eq!((entries, sum.as_str()), (0, "0"));
    assert!(ttl > 0, "{ttl}");
    // Votes in the window are counted from the running total, not by reading the log.
    for _ in 0..3 {
        expect_ok(&app, "rtot", json!({"member": "m1", "voter": "u1"})).await;
    }
    let _: () = conn
        .query(redis::cmd("SET").arg(&total).arg("42").arg("KEEPTTL"))
        .await;
    let rules = quota(&app, "rtot", "voter=u1").await;
    assert_eq!(
        (rules[0]["used"].clone(), rules[0]["remaining"].clone()),
        (json!(42), json!(58))
    );
}

#[tokio::test]
async fn quota_remaining_reaches_zero_exactly_when_refusals_start() {
    let app = TestApp::spawn().await;
    let ids = board_with_rules(
        &app,
        "quota",
        json!({}),
        &[
            json!({"name": "three a day", "dimensions": ["voter"], "window": "day", "limit": 3}),
            json!({"name": "one per member", "dimensions": ["voter", "member"], "window": "campaign", "limit": 1, "missing": "skip"}),
        ],
    )
    .await;
    let rules = quota(&app, "quota", "voter=u1").await;
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0]["id"], ids[0]);
    assert_eq!(rules[0]["used"], 0);
    assert_eq!(rules[0]["remaining"], 3);
    let tomorrow = (Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%dT00:00:00Z")
        .to_string();
    assert_eq!(rules[0]["resets_at"], tomorrow);
    assert_eq!(rules[1]["needs"], json!(["member"]));
    assert_eq!(rules[1]["remaining"], Value::Null);

    for (i, member) in ["m1", "m2", "m3"].into_iter().enumerate() {
        let rules = quota(&app, "quota", "voter=u1").await;
        assert_eq!(rules[0]["remaining"], 3 - i as i64);
        expect_ok(&app, "quota", json!({"member": member, "voter": "u1"})).await;
    }
    let rules = quota(&app, "quota", "voter=u1&member=m4").await;
    assert_eq!(
        (rules[0]["used"].clone(), rules[0]["remaining"].clone()),
        (json!(3), json!(0))
    );
    assert_eq!(rules[1]["remaining"], 1);
    let refused = expect_limited(&app, "quota", json!({"member": "m4", "voter": "u1"})).await;
    assert_eq!(refused["rule"]["id"], ids[0]);
    // Another voter is untouched.
    assert_eq!(quota(&app, "quota", "voter=u2").await[0]["remaining"], 3);
}

#[tokio::test]
async fn a_partner_channel_gets_its_own_limit_even_through_a_bound_key() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "partners",
        json!({}),
        &[json!({
            "name": "two a day, partner-a four",
            "dimensions": ["voter"], "window": "day", "limit": 2,
            "overrides": [{"match": {"channel": "partner-a"}, "limit": 4}]
        })],
    )
    .await;
    let at = rfc3339(Utc::now());
    let vote = |voter: &str, channel: &str| json!({"member": "m1", "voter": voter, "channel": channel, "at": at});
    for _ in 0..4 {
        expect_ok(&app, "partners", vote("u1", "partner-a")).await;
    }
    let refused = expect_limited(&app, "partners", vote("u1", "partner-a")).await;
    assert_eq!(refused["rule"]["limit"], 4);
    for _ in 0..2 {
        expect_ok(&app, "partners", vote("u2", "app")).await;
    }
    assert_eq!(
        expect_limited(&app, "partners", vote("u2", "app")).await["rule"]["limit"],
        2
    );

    // A key bound to partner-a votes for partner-a whatever the body says.
    let bound = app.key(&["vote", "read"], Some("partner-a")).await;
    let body = json!({"member": "m1", "voter": "u3", "channel": "app"});
    for _ in 0..4 {
        let (status, _, reply) = vote_with_headers(&app, "partners", &bound, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
    }
    let (status, _, reply) = vote_with_headers(&app, "partners", &bound, body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{reply}");
    assert_eq!(reply["error"]["rule"]["limit"], 4);
    let (_, q) = app
        .call(
            reqwest::Method::GET,
            "/api/v1/boards/partners/quota?voter=u3&channel=app",
            Some(&bound),
            None,
        )
        .await;
    assert_eq!(q["rules"][0]["limit"], 4, "{q}");
    assert_eq!(q["rules"][0]["remaining"], 0, "{q}");
}

#[tokio::test]
async fn pc_and_mobile_quotas_of_one_voter_are_separate() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "devices",
        json!({}),
        &[json!({"name": "two per device", "dimensions": ["voter", "terminal"], "window": "day", "limit": 2})],
    )
    .await;
    let at = rfc3339(Utc::now());
    let vote =
        |terminal: &str| json!({"member": "m1", "voter": "u1", "terminal": terminal, "at": at});
    expect_ok(&app, "devices", vote("pc")).await;
    expect_ok(&app, "devices", vote("pc")).await;
    expect_limited(&app, "devices", vote("pc")).await;
    expect_ok(&app, "devices", vote("mobile")).await;
    expect_ok(&app, "devices", vote("mobile")).await;
    expect_limited(&app, "devices", vote("mobile")).await;
    // A vote without a terminal is refused by a `refuse` rule.
    let (status, body) = app
        .vote("devices", json!({"member": "m1", "voter": "u1"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "terminal_required");
    assert_eq!(real_score(&app, "devices", "m1").await, 4.0);
}

#[tokio::test]
async fn a_refusal_by_one_rule_consumes_nothing_from_the_others() {
    let app = TestApp::spawn().await;
    let ids = board_with_rules(
        &app,
        "several",
        json!({}),
        &[
            json!({"name": "three a day", "dimensions": ["voter"], "window": "day", "limit": 3}),
            json!({"name": "once per member", "dimensions": ["voter", "member"], "window": "day", "limit": 1}),
        ],
    )
    .await;
    let at = rfc3339(Utc::now());
    let vote = |member: &str| json!({"member": member, "voter": "u1", "at": at});
    expect_ok(&app, "several", vote("m1")).await;
    for _ in 0..5 {
        let refused = expect_limited(&app, "several", vote("m1")).await;
        assert_eq!(refused["rule"]["id"], ids[1]);
    }
    assert_eq!(quota(&app, "several", "voter=u1").await[0]["used"], 1);
    expect_ok(&app, "several", vote("m2")).await;
    expect_ok(&app, "several", vote("m3")).await;
    let refused = expect_limited(&app, "several", vote("m4")).await;
    assert_eq!(refused["rule"]["id"], ids[0]);
    assert_eq!(real_score(&app, "several", "m4").await, 0.0);
    assert_eq!(real_score(&app, "several", "m1").await, 1.0);
}

#[tokio::test]
async fn a_campaign_rule_spans_days_and_months_and_never_says_when_to_retry() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "camp",
        json!({"starts_at": "2026-09-01T00:00:00Z", "ends_at": "2027-01-01T00:00:00Z"}),
        &[json!({"name": "three in all", "dimensions": ["voter"], "window": "campaign", "limit": 3})],
    )
    .await;
    let vote = |at: &str| json!({"member": "m1", "voter": "u1", "at": at});
    expect_ok(&app, "camp", vote("2026-09-30T12:00:00Z")).await;
    expect_ok(&app, "camp", vote("2026-10-15T12:00:00Z")).await;
    expect_ok(&app, "camp", vote("2026-11-01T12:00:00Z")).await;
    let (status, retry, body) =
        vote_with_headers(&app, "camp", MASTER_KEY, vote("2026-11-20T12:00:00Z")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["retry_after_s"], Value::Null);
    assert_eq!(retry, None);
    let rules = quota(&app, "camp", "voter=u1").await;
    assert_eq!(rules[0]["remaining"], 0);
    assert_eq!(rules[0]["resets_at"], Value::Null);
}

#[tokio::test]
async fn batch_items_are_limited_one_by_one() {
    let app = TestApp::spawn().await;
    let ids = board_with_rules(
        &app,
        "batch",
        json!({}),
        &[json!({"name": "two a day", "dimensions": ["voter"], "window": "day", "limit": 2})],
    )
    .await;
    let (status, body) = app
        .post(
            "/api/v1/votes",
            json!({"voter": "u1", "votes": [
                {"board": "batch", "member": "m1"},
                {"board": "batch", "member": "m2"},
                {"board": "batch", "member": "m3"},
                {"board": "batch", "member": "m4", "count": 3},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[1]["ok"], true);
    assert_eq!(results[2]["ok"], false);
    assert_eq!(results[2]["error"]["code"], "rate_limited");
    assert_eq!(results[2]["error"]["rule"]["id"], ids[0]);
    assert!(results[2]["error"]["retry_after_s"].as_i64().unwrap() > 0);
    assert_eq!(results[3]["error"]["code"], "count_exceeds_limit");
    assert_eq!(real_score(&app, "batch", "m3").await, 0.0);
}

#[tokio::test]
async fn missing_values_refuse_or_skip_and_big_counts_count_in_full() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "missing",
        json!({}),
        &[
            json!({"name": "voters", "dimensions": ["voter"], "window": "day", "limit": 5}),
            json!({"name": "terminals", "dimensions": ["terminal"], "window": "day", "limit": 1, "missing": "skip"}),
        ],
    )
    .await;
    let (status, body) = app.vote("missing", json!({"member": "m1"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "voter_required");
    // The terminal rule skips votes without a terminal; a count of 4 uses 4 of 5.
    expect_ok(
        &app,
        "missing",
        json!({"member": "m1", "voter": "u1", "count": 4}),
    )
    .await;
    let refused = expect_limited(
        &app,
        "missing",
        json!({"member": "m1", "voter": "u1", "count": 2}),
    )
    .await;
    assert_eq!(refused["rule"]["name"], "voters");
    expect_ok(&app, "missing", json!({"member": "m1", "voter": "u1"})).await;
    let (status, body) = app
        .vote(
            "missing",
            json!({"member": "m1", "voter": "u2", "count": 6}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "count_exceeds_limit");
    assert_eq!(real_score(&app, "missing", "m1").await, 5.0);
}

#[tokio::test]
async fn skip_limits_needs_the_backfill_scope() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "skip",
        json!({}),
        &[json!({"name": "one", "dimensions": ["voter"], "window": "day", "limit": 1})],
    )
    .await;
    let voter_key = app.key(&["vote"], None).await;
    let body = json!({"member": "m1", "voter": "u1", "skip_limits": true});
    let (status, _, reply) = vote_with_headers(&app, "skip", &voter_key, body.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{reply}");
    for _ in 0..3 {
        expect_ok(&app, "skip", body.clone()).await;
    }
    // Votes that skipped the rules did not use its counter.
    expect_ok(&app, "skip", json!({"member": "m1", "voter": "u1"})).await;
    expect_limited(&app, "skip", json!({"member": "m1", "voter": "u1"})).await;
    assert_eq!(real_score(&app, "skip", "m1").await, 4.0);
}

#[tokio::test]
async fn ip_comes_from_the_connection_unless_a_trusted_proxy_forwards_it() {
    let rule = json!({"name": "two per ip", "dimensions": ["ip"], "window": "day", "limit": 2});
    let forwarded = |app: &TestApp, xff: &'static str| {
        let req = app
            .client
            .post(format!("{}/api/v1/boards/ips/votes", app.base))
            .bearer_auth(MASTER_KEY)
            .header("X-Forwarded-For", xff)
            .json(&json!({"member": "m1"}));
        async move { req.send().await.unwrap().status() }
    };

    let direct = TestApp::spawn().await;
    board_with_rules(&direct, "ips", json!({}), std::slice::from_ref(&rule)).await;
    // Without trusted proxies the header is ignored: every vote counts for 127.0.0.1.
    assert_eq!(forwarded(&direct, "198.51.100.1").await, StatusCode::OK);
    assert_eq!(forwarded(&direct, "198.51.100.2").await, StatusCode::OK);
    assert_eq!(
        forwarded(&direct, "198.51.100.3").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // A key with the trusted scope may name the end user's address; a plain vote key may
    // not, or it could defeat every ip rule with made-up addresses.
    let plain = direct.key(&["vote"], None).await;
    let (status, body) = direct
        .call(
            reqwest::Method::POST,
            "/api/v1/boards/ips/votes",
            Some(&plain),
            Some(&json!({"member": "m1", "ip": "203.0.113.9"})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, body) = direct
        .call(
            reqwest::Method::POST,
            "/api/v1/votes",
            Some(&plain),
            Some(&json!({"ip": "203.0.113.9", "votes": [{"board": "ips", "member": "m1"}]})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let trusted = direct.key(&["vote", "trusted"], None).await;
    for _ in 0..2 {
        let (status, body) = direct
            .call(
                reqwest::Method::POST,
                "/api/v1/boards/ips/votes",
                Some(&trusted),
                Some(&json!({"member": "m1", "ip": "203.0.113.5"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    assert_eq!(
        real_score(&direct, "ips", "m1").await,
        4.0,
        "2 direct + 2 for 203.0.113.5"
    );
    let (status, body) = direct
        .vote("ips", json!({"member": "m1", "ip": "nowhere"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "invalid_ip");

    let proxied = TestApp::spawn_with(Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        ..Options::default()
    })
    .await;
    board_with_rules(&proxied, "ips", json!({}), &[rule]).await;
    for _ in 0..2 {
        assert_eq!(forwarded(&proxied, "198.51.100.1").await, StatusCode::OK);
    }
    assert_eq!(
        forwarded(&proxied, "198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(forwarded(&proxied, "198.51.100.2").await, StatusCode::OK);
}

#[tokio::test]
async fn rules_are_managed_through_the_admin_api() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "admin-rules", "title": "Rules"}))
        .await;
    let path = "/api/v1/admin/boards/admin-rules/rules";
    let (status, created) = app
        .post(
            path,
            json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5,
                   "overrides": [{"match": {"channel": "partner-a"}, "limit": 10}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(
        created,
        json!({"id": id, "name": "five a day", "dimensions": ["voter"], "window": "day",
               "limit": 5, "overrides": [{"match": {"channel": "partner-a"}, "limit": 10}],
               "missing": "refuse"})
    );
    let (status, updated) = app
        .patch(
            &format!("{path}/{id}"),
            json!({"limit": 7, "window": "rolling:60m"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["limit"], 7);
    assert_eq!(updated["window"], "rolling:1h");
    assert_eq!(updated["overrides"][0]["limit"], 10);
    let (_, listed) = app.get(path).await;
    assert_eq!(listed["rules"], json!([updated]));
    let (status, _) = app.delete(&format!("{path}/{id}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.get(&format!("{path}/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "rule_not_found");
    let (status, body) = app.post("/api/v1/admin/boards/nope/rules", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::NOT_FOUND, json!("board_not_found"))
    );
}

#[tokio::test]
async fn invalid_rules_are_refused_with_clear_codes() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "bad-rules", "title": "Rules"}))
        .await;
    let path = "/api/v1/admin/boards/bad-rules/rules";
    let base = json!({"name": "r", "dimensions": ["voter"], "window": "day", "limit": 5});
    let cases = [
        (json!({"dimensions": ["user"]}), "invalid_dimension"),
        (json!({"dimensions": []}), "empty_dimensions"),
        (json!({"limit": 0}), "invalid_limit"),
        (json!({"limit": -3}), "invalid_limit"),
        (json!({"window": "fortnight"}), "invalid_window"),
        (json!({"window": "rolling:0m"}), "invalid_window"),
        (json!({"window": "rolling:1y"}), "invalid_window"),
        (json!({"missing": "ignore"}), "invalid_missing"),
        (json!({"name": ""}), "invalid_name"),
        (
            json!({"overrides": [{"match": {}, "limit": 3}]}),
            "invalid_override",
        ),
        (
            json!({"overrides": [{"match": {"planet": "mars"}, "limit": 3}]}),
            "invalid_dimension",
        ),
        (
            json!({"overrides": [{"match": {"ip": "x"}, "limit": 3}]}),
            "invalid_override",
        ),
        (
            json!({"overrides": [{"match": {"channel": "a"}, "limit": -1}]}),
            "invalid_limit",
        ),
    ];
    for (change, code) in cases {
        let mut rule = base.clone();
        rule.as_object_mut()
            .unwrap()
            .extend(change.as_object().unwrap().clone());
        let (status, body) = app.post(path, rule.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{rule} -> {body}");
        assert_eq!(body["error"]["code"], code, "{rule} -> {body}");
    }
    let (status, body) = app
        .post(path, json!({"name": "r", "window": "day", "limit": 1}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::UNPROCESSABLE_ENTITY, json!("empty_dimensions"))
    );
    let (_, listed) = app.get(path).await;
    assert_eq!(listed["rules"], json!([]));
    for i in 0..20 {
        let (status, _) = app.post(path, json!({"name": format!("r{i}"), "dimensions": ["voter"], "window": "day", "limit": 5})).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, body) = app.post(path, base).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("too_many_rules"))
    );
}

#[tokio::test]
async fn every_counter_key_expires_soon_after_its_window() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "ttl",
        json!({"ends_at": rfc3339(Utc::now() + chrono::Duration::days(10))}),
        &[
            json!({"name": "minute", "dimensions": ["voter"], "window": "minute", "limit": 5}),
            json!({"name": "rolling", "dimensions": ["voter"], "window": "rolling:2h", "limit": 5}),
            json!({"name": "campaign", "dimensions": ["voter"], "window": "campaign", "limit": 5}),
        ],
    )
    .await;
    expect_ok(&app, "ttl", json!({"member": "m1", "voter": "u1"})).await;
    // A refusal writes its hourly refusals counter, which expires too.
    board_with_rules(
        &app,
        "ttl2",
        json!({}),
        &[json!({"name": "none", "dimensions": ["voter"], "window": "day", "limit": 1})],
    )
    .await;
    expect_ok(&app, "ttl2", json!({"member": "m1", "voter": "u1"})).await;
    expect_limited(&app, "ttl2", json!({"member": "m1", "voter": "u1"})).await;

    let mut conn = RawRedis::connect().await;
    let mut keys: Vec<String> = conn.keys(&format!("{}:*:r[lf]:*", app.prefix)).await;
    keys.sort();
    let mut ttls = Vec::new();
    for key in &keys {
        let ttl: i64 = conn.query(redis::cmd("TTL").arg(key)).await;
        ttls.push((key.clone(), ttl));
    }
    let find = |part: &str| -> Vec<i64> {
        ttls.iter()
            .filter(|(k, _)| k.contains(part))
            .map(|(_, t)| *t)
            .collect()
    };
    assert_eq!(keys.len(), 6, "{ttls:?}");
    assert!(
        ttls.iter().all(|(_, t)| *t > 0),
        "every key expires: {ttls:?}"
    );
    assert!(find(":minute:").iter().all(|t| *t <= 120), "{ttls:?}");
    assert_eq!(find(":rolling:2h:").len(), 2);
    assert!(
        find(":rolling:2h:")
            .iter()
            .all(|t| (7200..=7260).contains(t)),
        "{ttls:?}"
    );
    let campaign = find(":campaign:");
    assert!(
        campaign
            .iter()
            .all(|t| (11 * 86_400 - 60..=11 * 86_400).contains(t)),
        "{ttls:?}"
    );
    assert!(find(":day:").iter().all(|t| *t <= 86_400 + 60), "{ttls:?}");
    assert!(find(":rf:").iter().all(|t| *t <= 8 * 86_400), "{ttls:?}");
}

#[tokio::test]
async fn a_replay_answers_even_when_the_limit_is_used_up_and_a_refusal_keeps_no_key() {
    let app = TestApp::spawn().await;
    board_with_rules(
        &app,
        "replay",
        json!({}),
        &[json!({"name": "one a day", "dimensions": ["voter"], "window": "day", "limit": 1})],
    )
    .await;
    let first = json!({"member": "m1", "voter": "u1", "idempotency_key": "k1"});
    expect_ok(&app, "replay", first.clone()).await;
    let (status, body) = app.vote("replay", first).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["replayed"], true);
    let second = json!({"member": "m1", "voter": "u1", "idempotency_key": "k2"});
    expect_limited(&app, "replay", second.clone()).await;
    // The refused key was not recorded: it is refused again, not replayed.
    expect_limited(&app, "replay", second).await;
    assert_eq!(real_score(&app, "replay", "m1").await, 1.0);
}
