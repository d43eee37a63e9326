//! The dashboard's boards: the live view with its charts and picker, rolling windows,
//! score boards of every layout, archives and a member's history, Chinese pages.

use reqwest::StatusCode;
use serde_json::json;

use super::{Browser, card};
use crate::harness::TestApp;

#[tokio::test]
async fn the_live_view_refreshes_as_an_htmx_block_with_rank_changes_and_charts() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "live", "title": "Live", "periods": ["hour", "day", "all"]}))
        .await;
    app.members("live", &["m1", "m2"]).await;
    let at = chrono::Utc::now() - chrono::Duration::hours(1);
    let at = at.to_rfc3339();
    for (member, votes) in [("m1", 3), ("m2", 1)] {
        for _ in 0..votes {
            app.vote("live", json!({"member": member, "at": at})).await;
        }
    }
    for _ in 0..5 {
        app.vote("live", json!({"member": "m2"})).await;
    }
    app.vote("live", json!({"member": "m1"})).await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let resp = browser
        .client
        .get(format!(
            "{}/admin/boards/live/live?period=hour&view=real",
            browser.base
        ))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body = resp.text().await.unwrap();
    assert!(!body.contains("<html"), "a block, not a page");
    assert!(body.contains("<svg"), "charts are drawn");
    // m2 leads this hour after trailing last hour; m1 went the other way.
    assert!(
        body.contains(
            r#"<tr><td class="num">1</td><td class="up">▲1</td><td>Name m2 <span class="muted">m2</span></td><td class="num">5</td></tr>"#
        ),
        "{body}"
    );
    assert!(
        body.contains(
            r#"<tr><td class="num">2</td><td class="down">▼1</td><td>Name m1 <span class="muted">m1</span></td><td class="num">1</td></tr>"#
        ),
        "{body}"
    );
    // The current bucket follows the board's stream, and polls only where it is refused.
    let full = browser.get("/admin/boards/live?period=hour").await;
    assert!(
        full.body.contains(
            r#"<div id="live" hx-ext="sse" sse-connect="/admin/boards/live/stream?period=hour&amp;view=display" sse-swap="live" hx-swap="innerHTML" data-poll="/admin/boards/live/live?period=hour&amp;view=display" data-poll-ms="2000">"#
        ),
        "{}",
        full.body
    );
    assert!(!full.body.contains("hx-trigger"), "{}", full.body);
    let open = |path: &'static str| {
        let (client, base) = (browser.client.clone(), browser.base.clone());
        async move { client.get(format!("{base}{path}")).send().await.unwrap() }
    };
    let mut stream =
        crate::events::Events::of(open("/admin/boards/live/stream?period=hour&view=real").await);
    let (name, first) = stream
        .next_text(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(name, "live");
    assert!(
        first.contains(
            r#"<tr><td class="num">1</td><td class="up">▲1</td><td>Name m2 <span class="muted">m2</span></td><td class="num">5</td></tr>"#
        ),
        "{first}"
    );
    for _ in 0..5 {
        app.vote("live", json!({"member": "m1"})).await;
    }
    // The stream may push a state between the five votes: read on to the one after all.
    let row = r#"<tr><td class="num">1</td><td class="">=</td><td>Name m1 <span class="muted">m1</span></td><td class="num">6</td></tr>"#;
    let mut pushed = Vec::new();
    while let Some((name, moved)) = stream.next_text(std::time::Duration::from_secs(5)).await {
        assert_eq!(name, "live");
        let done = moved.contains(row);
        pushed.push(moved);
        if done {
            break;
        }
    }
    assert!(
        pushed.last().is_some_and(|last| last.contains(row)),
        "{pushed:?}"
    );
    // Without a session there is no stream.
    let anonymous = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/admin/boards/live/stream?period=hour", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    let csv = browser
        .get("/admin/boards/live/export.csv?period=all&view=real")
        .await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,m1,Name m1,9\n2,m2,Name m2,6\n"
    );
}

#[tokio::test]
async fn the_live_view_and_export_refuse_far_future_buckets_with_a_page() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "far", "title": "Far", "periods": ["week", "month", "all"]}))
        .await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    for path in [
        "/admin/boards/far?period=month&at=262142-12",
        "/admin/boards/far?period=week&at=262142-W52",
        "/admin/boards/far/live?period=month&at=262142-12",
        "/admin/boards/far/export.csv?period=month&at=262142-12",
        "/admin/boards/far/export.csv?period=week&at=9999-W52",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert!(
            page.body.contains("supported years 1970–9999"),
            "{path}: {}",
            page.body
        );
    }
}

#[tokio::test]
async fn live_view_charts_follow_the_bucket_with_axes_zones_a_picker_and_a_pause() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "ch", "title": "Charts", "timezone": "Asia/Shanghai",
        "periods": ["day", "week", "month", "all"]}),
    )
    .await;
    app.members("ch", &["m1", "m2"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/ch/rules",
            json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // Week 2026-W45 in Beijing: 3 votes on Tuesday morning, 2 on Thursday evening.
    for (member, at, n) in [
        ("m1", "2026-11-03T10:00:00+08:00", 3),
        ("m2", "2026-11-05T20:30:00+08:00", 2),
    ] {
        for _ in 0..n {
            let (status, body) = app
                .vote(
                    "ch",
                    json!({"member": member, "at": at, "skip_limits": true}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let week = browser
        .get("/admin/boards/ch?period=week&at=2026-W45&view=real")
        .await;
    assert_eq!(week.status, StatusCode::OK);
    let body = &week.body;
    // Votes per day across the week's seven days, each labelled, in board time.
    assert!(
        body.contains("<figcaption>Votes per day</figcaption>"),
        "{body}"
    );
    assert!(body.contains(">day, Beijing time</text>"), "{body}");
    for day in ["11/2", "11/3", "11/4", "11/5", "11/6", "11/7", "11/8"] {
        assert!(body.contains(&format!(">{day}</text>")), "{day}");
    }
    assert!(
        body.contains("<title>Tue 3 Nov Beijing time · votes: 3</title>"),
        "{body}"
    );
    assert!(body.contains("<title>Thu 5 Nov Beijing time · votes: 2</title>"));
    assert!(body.contains("<title>Wed 4 Nov Beijing time · votes: 0</title>"));
    // Participants per week, twelve weeks up to the selected one.
    assert!(body.contains("<figcaption>Participants per week</figcaption>"));
    assert!(body.contains(">W45</text>") && body.contains(">ISO week, Beijing time</text>"));
    assert_eq!(body.matches("· voters: ").count(), 12);
    // Refusals older than Redis keeps them are not drawn as zeros.
    assert!(body.contains("Refusals are kept 8 days; older ones are not drawn."));
    assert!(!body.contains("· five a day: "));
    // The top 10 names its unit; the value axis has round ticks.
    assert!(body.contains(r#"text-anchor="end">score (real)</text>"#));
    assert!(body.contains(r#"<text class="unit" x="2" y="14">votes</text>"#));
    // The picker: the selected week, with earlier and later neighbours.
    assert!(
        body.contains(r#"<option value="2026-W45" selected>2026-W45</option>"#),
        "{body}"
    );
    assert!(body.contains("at=2026-W44"), "{body}");
    assert!(body.contains("at=2026-W46"));
    assert!(body.contains(r#"hx-trigger="every 2s""#));
    // A past month charts its 31 days; all time the last 48 hours.
    let month = browser
        .get("/admin/boards/ch?period=month&at=2026-10&view=real")
        .await;
    assert_eq!(month.body.matches("Beijing time · votes: 0<").count(), 31);
    assert!(
        month
            .body
            .contains("<title>Sat 31 Oct Beijing time · votes: 0</title>")
    );
    let all = browser.get("/admin/boards/ch?period=all").await;
    assert!(all.body.contains("<figcaption>Votes per hour</figcaption>"));
    assert_eq!(all.body.matches("Beijing time · votes: ").count(), 48);
    assert!(all.body.contains(">hour, Beijing time</text>"));
    assert!(
        all.body
            .contains("<figcaption>Participants per day</figcaption>")
    );
    // Paused: no refresh until resumed.
    let paused = browser
        .get("/admin/boards/ch?period=week&at=2026-W45&paused=1")
        .await;
    assert!(!paused.body.contains("hx-trigger"), "{}", paused.body);
    assert!(paused.body.contains(r#"id="resume" href="/admin/boards/ch?period=week&amp;view=display&amp;at=2026-W45">Resume live updates</a>"#), "{}", paused.body);
    assert!(week.body.contains(r#"id="pause""#) && week.body.contains("paused=1"));
}

#[tokio::test]
async fn the_dashboard_speaks_chinese_when_asked() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "zh", "title": "星光大道", "timezone": "Asia/Shanghai"}))
        .await;
    app.members("zh", &["m1"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/zh/rules",
            json!({"name": "每天五票", "dimensions": ["voter"], "window": "day", "limit": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let get = |path: &'static str| {
        let req = browser
            .client
            .get(format!("{}{path}", browser.base))
            .header("Accept-Language", "zh-CN,zh;q=0.9,en;q=0.5");
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let boards = get("/admin/boards").await;
    assert!(boards.contains(r#"<html lang="zh-CN">"#), "{boards}");
    for text in [
        "<h1>榜单</h1>",
        ">API 密钥<",
        ">审计日志<",
        ">退出登录<",
        ">新建榜单<",
        ">今日票数<",
        ">进行中<",
        "小时、日、周、月、全部",
    ] {
        assert!(boards.contains(text), "{text} in {boards}");
    }
    let live = get("/admin/boards/zh?period=day").await;
    for text in [
        "<figcaption>每小时票数</figcaption>",
        ">小时，北京时间</text>",
        ">前 10 名<",
        ">暂停更新<",
        "位参与者",
        "更新于",
    ] {
        assert!(live.contains(text), "{text} in {live}");
    }
    let rules = get("/admin/boards/zh/rules").await;
    assert!(
        rules.contains("<td>每位投票人每天最多 5 票</td>"),
        "{rules}"
    );
    let members = get("/admin/boards/zh/members").await;
    assert!(
        members.contains(">导入 CSV<") && members.contains("日：排名 · 得分"),
        "{members}"
    );
    // The board's own words stay as written; the switch goes back to English.
    assert!(boards.contains("星光大道"));
    assert!(
        boards.contains(
            r#"<a href="/lang/en?back=/admin/boards" hreflang="en" lang="en">English</a>"#
        )
    );
    let english = browser.get("/admin/boards").await;
    assert!(english.body.contains("<h1>Boards</h1>"));
}

#[tokio::test]
async fn rolling_windows_show_on_the_dashboard_and_the_public_page() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "rw", "title": "Rolling", "public_page": true, "timezone": "Asia/Shanghai",
        "periods": ["day", "rolling:24h", "rolling:7d"]}),
    )
    .await;
    app.members("rw", &["m1", "m2"]).await;
    for member in ["m1", "m1", "m2"] {
        app.vote("rw", json!({"member": member})).await;
    }
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let live = browser
        .get("/admin/boards/rw?period=rolling:7d&view=real")
        .await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    assert!(
        live.body
            .contains(r#"class="on" aria-current="page">Last 7 days</a>"#),
        "{}",
        live.body
    );
    assert!(live.body.contains("<figcaption>Votes per day</figcaption>"));
    assert!(
        !live.body.contains(r#"<select name="at">"#),
        "no buckets to pick"
    );
    let rows = live.body.split("<tbody>").nth(1).unwrap();
    assert!(
        rows.find("m1").unwrap() < rows.find("m2").unwrap(),
        "{rows}"
    );
    let csv = browser
        .get("/admin/boards/rw/export.csv?period=rolling:24h&view=real")
        .await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,m1,Name m1,2\n2,m2,Name m2,1\n"
    );
    let form = browser.get("/admin/boards/rw/edit").await;
    assert!(
        form.body
            .contains(r#"<input name="rolling" value="24h, 7d""#),
        "{}",
        form.body
    );
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/rw?period=rolling:24h").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(">Last 24 hours</a>"), "{}", page.body);
    assert!(page.body.contains("2 votes"), "{}", page.body);

    // Any length is typed in the form; one out of bounds is refused, keeping what was typed.
    let edit = |rolling: &'static str| {
        let (browser, csrf) = (&browser, csrf.clone());
        async move {
            browser
                .post(
                    "/admin/boards/rw",
                    &[
                        ("_csrf", csrf.as_str()),
                        ("title", "Rolling"),
                        ("membership", "open"),
                        ("periods", "day"),
                        ("rolling", rolling),
                        ("timezone", "Asia/Shanghai"),
                        ("multiplier", "1"),
                        ("carry_over", "0"),
                        ("max_count", "1000"),
                        ("public_page", "on"),
                    ],
                )
                .await
        }
    };
    let refused = edit("24h, 200h").await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.body.contains("rolling:200h"), "{}", refused.body);
    assert!(
        refused
            .body
            .contains(r#"<input name="rolling" value="24h, 200h""#),
        "{}",
        refused.body
    );
    let saved = edit("72h rolling:30d,1h").await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let (_, board) = app.get("/api/v1/admin/boards/rw").await;
    let periods: Vec<&str> = board["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["day", "rolling:1h", "rolling:72h", "rolling:30d"]);
    let live = browser.get("/admin/boards/rw?period=rolling:30d").await;
    assert!(
        live.body
            .contains(r#"class="on" aria-current="page">Last 30 days</a>"#),
        "{}",
        live.body
    );
    let page = visitor.get("/b/rw?period=rolling:72h").await;
    assert!(page.body.contains(">Last 72 hours</a>"), "{}", page.body);
    assert!(page.body.contains(">Last hour</a>"), "{}", page.body);
}

#[tokio::test]
async fn score_boards_of_every_layout_are_made_in_the_form_and_shown_on_both_pages() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    for (slug, kind, retain, shards) in [
        ("s-full", "full", "", ""),
        ("s-top", "top_n", "2", ""),
        ("s-shard", "sharded", "", "4"),
    ] {
        let page = browser
            .post(
                "/admin/boards",
                &[
                    ("_csrf", csrf.as_str()),
                    ("slug", slug),
                    ("title", slug),
                    ("membership", "open"),
                    ("periods", "day"),
                    ("periods", "all"),
                    ("timezone", "UTC"),
                    ("multiplier", "1"),
                    ("carry_over", "0"),
                    ("max_count", "10"),
                    ("public_page", "on"),
                    ("scoring", "scores"),
                    ("decimals", "1"),
                    ("storage_kind", kind),
                    ("retain", retain),
                    ("trim_at", ""),
                    ("shards", shards),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        let (_, board) = app.get(&format!("/api/v1/admin/boards/{slug}")).await;
        assert_eq!(board["storage"]["kind"], kind);
        assert_eq!(board["decimals"], 1);
        for (member, value) in [("ann", 12.5), ("bob", 3.0), ("cy", 7.5)] {
            let (status, body) = app
                .post(
                    &format!("/api/v1/boards/{slug}/scores"),
                    json!({"member": member, "op": "incr", "value": value}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let public = browser.get(&format!("/b/{slug}")).await;
        assert!(
            card(&public.body, "ann").contains("12.5 points"),
            "{}",
            public.body
        );
        assert!(
            !public.body.contains("/vote\""),
            "no vote buttons on a scores board"
        );
        let edit = browser.get(&format!("/admin/boards/{slug}/edit")).await;
        assert!(
            edit.body.contains(&format!("<strong>{kind}</strong>")),
            "{}",
            edit.body
        );
        assert!(
            !edit.body.contains(r#"name="storage_kind""#),
            "fixed at creation"
        );
        let csv = browser
            .get(&format!("/admin/boards/{slug}/export.csv?period=all"))
            .await;
        assert_eq!(
            csv.body, "rank,member,name,score\n1,ann,,12.5\n2,cy,,7.5\n3,bob,,3\n",
            "{slug}"
        );
        let live = browser
            .get(&format!("/admin/boards/{slug}?period=all"))
            .await;
        assert_eq!(live.status, StatusCode::OK);
        assert!(
            live.body.contains(
                r#"<tr><td class="num">1</td><td class=""></td><td> <span class="muted">ann</span></td><td class="num">12.5</td></tr>"#
            ),
            "{}",
            live.body
        );
    }
}

/// A `votes` board sharded by voter is made in the form, takes votes on its public page
/// (with a rule counted in the voter's shard) and shows summed scores on both pages.
#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_votes_board_is_made_in_the_form_voted_on_and_shown_on_both_pages() {
    let app = TestApp::spawn().await;
    let staff = Browser::new(&app);
    let csrf = staff.sign_in().await;
    let page = staff
        .post(
            "/admin/boards",
            &[
                ("_csrf", csrf.as_str()),
                ("slug", "tv"),
                ("title", "TV final"),
                ("membership", "closed"),
                ("periods", "day"),
                ("periods", "all"),
                ("timezone", "UTC"),
                ("multiplier", "2"),
                ("carry_over", "0"),
                ("max_count", "10"),
                ("public_page", "on"),
                ("scoring", "votes"),
                ("decimals", "0"),
                ("storage_kind", "sharded"),
                ("retain", ""),
                ("trim_at", ""),
                ("shards", "4"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, board) = app.get("/api/v1/admin/boards/tv").await;
    assert_eq!(board["storage"], json!({"kind": "sharded", "shards": 4}));
    app.members("tv", &["ann", "bob"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/tv/rules",
            json!({"name": "one a day", "dimensions": ["voter"], "window": "day", "limit": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // Votes of twelve voters, spread over the shards by voter.
    for (i, member) in ["ann", "bob", "ann"].iter().cycle().take(12).enumerate() {
        let (status, body) = app
            .vote("tv", json!({"member": member, "voter": format!("u{i}")}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let visitor = Browser::new(&app);
    let public = visitor.get("/b/tv?period=all").await;
    assert!(
        public.body.contains("1 of 1 vote left today"),
        "{}",
        public.body
    );
    let voted = visitor
        .post(
            "/b/tv/vote",
            &[
                ("_csrf", &public.csrf()),
                ("member", "bob"),
                ("period", "all"),
            ],
        )
        .await;
    assert_eq!(voted.status, StatusCode::SEE_OTHER);
    let public = visitor.get("/b/tv?period=all").await;
    assert!(
        public.body.contains("0 of 1 vote left today"),
        "{}",
        public.body
    );
    assert!(
        card(&public.body, "ann").contains("16 votes<"),
        "{}",
        public.body
    );
    assert!(
        card(&public.body, "bob").contains("10 votes<"),
        "{}",
        public.body
    );
    let csv = staff.get("/admin/boards/tv/export.csv?period=all").await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,ann,Name ann,16\n2,bob,Name bob,10\n"
    );
    let live = staff.get("/admin/boards/tv?period=all&view=real").await;
    assert_eq!(live.status, StatusCode::OK);
    assert!(
        live.body.contains(r#"<td class="num">8</td>"#)
            && live.body.contains(r#"<td class="num">5</td>"#),
        "{}",
        live.body
    );
    // People and votes: 13 voters cast 13 votes.
    assert!(
        live.body.contains(
            r#"<span id="participants">13 participants</span> · <span id="votes">13 votes</span>"#
        ),
        "{}",
        live.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_archives_on_demand_and_shows_archived_buckets_and_a_members_history() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "past", "title": "Past", "membership": "open",
        "periods": ["hour", "day", "all"], "retention": {"hour": 1, "day": 1}}),
    )
    .await;
    let old = (chrono::Utc::now() - chrono::Duration::days(4))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for member in ["m1", "m1", "m2"] {
        let (status, body) = app.vote("past", json!({"member": member, "at": old})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let board = browser.get("/admin/boards/past").await;
    assert!(
        board
            .body
            .contains(r#"action="/admin/boards/past/archive""#),
        "{}",
        board.body
    );
    let page = browser
        .post("/admin/boards/past/archive", &[("_csrf", &csrf)])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/admin/boards/past");
    let board = browser.get("/admin/boards/past").await;
    assert!(
        board
            .body
            .contains("2 buckets archived, 2 released from Redis."),
        "{}",
        board.body
    );
    // The old day, read from the archive, says so.
    let (_, top) = app
        .get(&format!("/api/v1/boards/past/top?period=day&at={old}"))
        .await;
    assert_eq!(top["archived"], true, "{top}");
    let day = browser
        .get(&format!(
            "/admin/boards/past?period=day&at={}",
            top["bucket"].as_str().unwrap()
        ))
        .await;
    assert!(day.body.contains(r#"id="archived""#), "{}", day.body);
    assert!(
        day.body.contains(
            r#"<tr><td class="num">1</td><td class="up">new</td><td> <span class="muted">m1</span></td><td class="num">2</td></tr>"#
        ),
        "{}",
        day.body
    );

    let history = browser
        .get("/admin/boards/past/members/m1/history?period=day")
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    assert!(history.body.contains("<svg"), "{}", history.body);
    let rows = history.body.matches("<tr><td>").count();
    assert_eq!(rows, 30, "{}", history.body);
    assert_eq!(
        history.body.matches(">archived<").count(),
        1,
        "{}",
        history.body
    );
    let audit = browser.get("/admin/audit").await;
    assert!(audit.body.contains("board.archive"), "{}", audit.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn staff_look_a_voter_up_and_strike_out_their_votes_with_a_reason() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "rvp", "title": "Revoke page", "membership": "open"}))
        .await;
    for (voter, member) in [
        ("bot-7", "m1"),
        ("bot-7", "m1"),
        ("bot-7", "m2"),
        ("fan", "m1"),
    ] {
        app.vote("rvp", json!({"member": member, "voter": voter}))
            .await;
    }
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let board = browser.get("/admin/boards/rvp").await;
    assert!(
        board
            .body
            .contains(r#"href="/admin/boards/rvp/revocations""#),
        "the board links its revocations"
    );
    // The ledger reaches SQL within a drain or two.
    let mut page = browser
        .get("/admin/boards/rvp/revocations?voter=bot-7")
        .await;
    for _ in 0..50 {
        if page
            .body
            .contains("<tr><td>m2</td><td>1</td><td>0</td></tr>")
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        page = browser
            .get("/admin/boards/rvp/revocations?voter=bot-7")
            .await;
    }
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("<tr><td>m1</td><td>2</td><td>0</td></tr>")
            && page
                .body
                .contains("<tr><td>m2</td><td>1</td><td>0</td></tr>"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Strike out bot-7&#39;s votes now"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains(r#"<textarea name="reason" required maxlength="2000"></textarea>"#),
        "{}",
        page.body
    );
    let refused = browser
        .post(
            "/admin/boards/rvp/revocations",
            &[("_csrf", &csrf), ("voter", "bot-7"), ("reason", " ")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let done = browser
        .post(
            "/admin/boards/rvp/revocations",
            &[("_csrf", &csrf), ("voter", "bot-7"), ("reason", "bot farm")],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    let page = browser
        .get("/admin/boards/rvp/revocations?voter=bot-7")
        .await;
    assert!(
        page.body.contains("3 votes of bot-7 struck out."),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<tr><td>m1</td><td>0</td><td>2</td></tr>")
            && page.body.contains("<td>bot farm</td>"),
        "{}",
        page.body
    );
    let (_, read) = app
        .get("/api/v1/boards/rvp/members/m1?period=all&view=real")
        .await;
    assert_eq!(read["score"], 1, "only the fan's vote is left");
}

#[tokio::test]
async fn staff_add_test_and_delete_a_board_webhook_in_the_dashboard() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "hooks", "title": "Hooks", "periods": ["day", "all"]}))
        .await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let board_page = browser.get("/admin/boards/hooks").await;
    assert!(
        board_page
            .body
            .contains(r#"<a href="/admin/boards/hooks/webhooks">Webhooks</a>"#),
        "{}",
        board_page.body
    );
    let empty = browser.get("/admin/boards/hooks/webhooks").await;
    assert_eq!(empty.status, StatusCode::OK);
    assert!(empty.body.contains("No webhooks yet."));
    // Every event is offered, checked.
    assert_eq!(empty.body.matches(r#"name="events""#).count(), 3);
    assert_eq!(empty.body.matches(" checked>").count(), 3);

    // A refused form keeps what was typed and says why.
    let refused = browser
        .post(
            "/admin/boards/hooks/webhooks",
            &[
                ("_csrf", csrf.as_str()),
                ("url", "https://hooks.example/rank"),
                ("period", "day"),
                ("view", "real"),
                ("top", "0"),
                ("events", "overtook"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains("top must be between 1 and 100"),
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains(r#"value="https://hooks.example/rank""#)
    );
    assert!(refused.body.contains(r#"<option value="real" selected>"#));
    assert_eq!(refused.body.matches(" checked>").count(), 1);

    let added = browser
        .post(
            "/admin/boards/hooks/webhooks",
            &[
                ("_csrf", csrf.as_str()),
                ("url", "https://hooks.example/rank"),
                ("period", "day"),
                ("view", "display"),
                ("top", "3"),
                ("events", "entered_top"),
                ("events", "overtook"),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let (_, listed) = app.get("/api/v1/admin/boards/hooks/webhooks").await;
    let hook = &listed["webhooks"][0];
    assert_eq!(hook["url"], "https://hooks.example/rank");
    assert_eq!(hook["top"], 3);
    assert_eq!(hook["events"], json!(["entered_top", "overtook"]));
    let id = hook["id"].as_i64().unwrap();
    let page = browser.get("/admin/boards/hooks/webhooks").await;
    assert!(
        page.body.contains(&format!("Webhook {id} added.")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(&format!(
            "<td>Today · display · 3</td><td>entered_top, overtook</td><td><code>{}</code></td>",
            hook["secret"].as_str().unwrap()
        )),
        "{}",
        page.body
    );

    let tested = browser
        .post(
            &format!("/admin/boards/hooks/webhooks/{id}/test"),
            &[("_csrf", csrf.as_str())],
        )
        .await;
    assert_eq!(tested.status, StatusCode::SEE_OTHER);
    let page = browser.get("/admin/boards/hooks/webhooks").await;
    let (_, listed) = app.get("/api/v1/admin/boards/hooks/webhooks").await;
    let delivery = listed["deliveries"][0]["id"].as_i64().unwrap();
    assert!(
        page.body
            .contains(&format!("Test delivery {delivery} to webhook {id} queued."))
    );
    assert!(
        page.body
            .contains(&format!("<td>{delivery}</td><td>{id}</td>")),
        "{}",
        page.body
    );

    let deleted = browser
        .post(
            &format!("/admin/boards/hooks/webhooks/{id}/delete"),
            &[("_csrf", csrf.as_str())],
        )
        .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    let page = browser.get("/admin/boards/hooks/webhooks").await;
    assert!(page.body.contains(&format!("Webhook {id} deleted.")));
    assert!(page.body.contains("No webhooks yet."));
    assert!(page.body.contains("Nothing sent yet."));
    // The form's CSRF rule holds.
    let forged = browser
        .post(
            "/admin/boards/hooks/webhooks",
            &[("url", "https://hooks.example/x")],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn trending_periods_show_their_decayed_scores_on_the_dashboard_and_the_public_page() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "tr", "title": "Trending", "public_page": true,
        "periods": ["day", "trending:6h"]}),
    )
    .await;
    app.members("tr", &["m1", "m2"]).await;
    let six_hours_ago = (chrono::Utc::now() - chrono::Duration::hours(6)).to_rfc3339();
    app.vote(
        "tr",
        json!({"member": "m1", "count": 4, "at": six_hours_ago}),
    )
    .await;
    app.vote("tr", json!({"member": "m2", "count": 3})).await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let live = browser
        .get("/admin/boards/tr?period=trending:6h&view=real")
        .await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    assert!(
        live.body
            .contains(r#"class="on" aria-current="page">Trending 6 h</a>"#),
        "{}",
        live.body
    );
    // m1's four votes are one half-life old: 2 now, below m2's 3 (a hair less, as time
    // passes while the page is read).
    let rows = live.body.split("<tbody>").nth(1).unwrap();
    assert!(
        rows.find("m2").unwrap() < rows.find("m1").unwrap(),
        "{rows}"
    );
    assert!(
        rows.contains(">3.000<") || rows.contains(">2.999<"),
        "{rows}"
    );
    assert!(
        rows.contains(">2.000<") || rows.contains(">1.999<"),
        "{rows}"
    );
    let form = browser.get("/admin/boards/tr/edit").await;
    assert!(
        form.body.contains(r#"<input name="trending" value="6h""#),
        "{}",
        form.body
    );
    let saved = browser
        .post(
            "/admin/boards/tr",
            &[
                ("_csrf", csrf.as_str()),
                ("title", "Trending"),
                ("membership", "open"),
                ("periods", "day"),
                ("trending", "1h, trending:720h"),
                ("timezone", "UTC"),
                ("multiplier", "1"),
                ("carry_over", "0"),
                ("max_count", "1000"),
                ("public_page", "on"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let (_, board) = app.get("/api/v1/admin/boards/tr").await;
    let periods: Vec<&str> = board["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["day", "trending:1h", "trending:720h"]);
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/tr?period=trending:720h").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains(">Trending (half-life 720 hours)</a>"),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn a_public_boards_page_gives_its_overlay_address_and_embed_snippet_to_copy() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "gala", "title": "Gala \"Live\"", "public_page": true,
                     "periods": ["day", "all"], "embed_origins": ["https://fans.example"]}),
    )
    .await;
    app.board(json!({"slug": "private", "title": "Private"}))
        .await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let page = browser.get("/admin/boards/gala").await.body;
    let host = app.base.trim_start_matches("http://");
    assert!(
        page.contains(&format!(
            r#"<input id="overlay-url" readonly value="http://{host}/overlay/b/gala?period=day&#38;top=5&#38;theme=transparent">"#
        )),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "&#60;iframe src=&#34;http://{host}/embed/b/gala&#34; title=&#34;Gala &#38;quot;Live&#38;quot;&#34;"
        )),
        "{page}"
    );
    let private = browser.get("/admin/boards/private").await.body;
    assert!(!private.contains("overlay-url"), "{private}");

    // A family's room has its overlay too, when its family has room pages.
    app.board(
        json!({"slug": "fam", "title": "Rooms", "public_page": true, "membership": "open",
                     "periods": ["all"], "instances": {"ttl_s": 600, "pages": true}}),
    )
    .await;
    app.vote("fam:r1", json!({"member": "m1", "voter": "v1"}))
        .await;
    let room = browser.get("/overlay/b/fam:r1?top=3").await;
    assert_eq!(room.status, StatusCode::OK);
    assert!(
        room.body.contains(r#"<li data-member="m1">"#),
        "{}",
        room.body
    );
    assert!(
        room.body
            .contains(r#"data-stream="/api/v1/boards/fam:r1/events?period=all&#38;top=3""#),
        "{}",
        room.body
    );
    assert_eq!(
        browser.get("/overlay/b/private").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_review_queue_page_lists_flagged_subjects_and_releases_or_drops_with_csrf() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "farm", "title": "Farm", "periods": ["day", "all"]}))
        .await;
    app.members("farm", &["m1", "m2"]).await;
    let (status, watch) = app
        .post(
            "/api/v1/admin/boards/farm/watches",
            json!({"name": "one network", "dimensions": ["ip/24"], "window": "day",
                "threshold": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    for (n, member) in ["m1", "m1", "m2", "m2"].iter().enumerate() {
        app.vote(
            "farm",
            json!({"member": member, "voter": format!("bot-{n}"), "ip": format!("198.51.100.{n}")}),
        )
        .await;
    }
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let board = browser.get("/admin/boards/farm").await;
    assert!(
        board.body.contains(r#"href="/admin/boards/farm/held""#),
        "the board links its review queue"
    );
    let page = browser.get("/admin/boards/farm/held").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    for shown in [
        "<td>one network</td>",
        "<td>ip/24 = 198.51.100.0/24</td>",
        "<td>3</td><td>0</td><td>0</td>",
        "<td>m1: 1, m2: 2</td>",
        "bot-1, bot-2, bot-3",
        r#"<option value="m2">m2</option>"#,
    ] {
        assert!(page.body.contains(shown), "{shown} in {}", page.body);
    }
    let subject = "15.198.51.100.0/24";
    let watch_id = watch["id"].to_string();
    let form = |csrf: &str, member: &str, action: &str| {
        vec![
            ("_csrf".to_owned(), csrf.to_owned()),
            ("watch".to_owned(), watch_id.clone()),
            ("subject".to_owned(), subject.to_owned()),
            ("member".to_owned(), member.to_owned()),
            ("action".to_owned(), action.to_owned()),
        ]
    };
    let post = |fields: Vec<(String, String)>| {
        let browser = &browser;
        async move {
            let fields: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            browser.post("/admin/boards/farm/held", &fields).await
        }
    };
    // Without the session's CSRF token nothing is reviewed.
    let forged = post(form("forged", "m1", "release")).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    let released = post(form(&csrf, "m1", "release")).await;
    assert_eq!(released.status, StatusCode::SEE_OTHER, "{}", released.body);
    assert_eq!(released.location(), "/admin/boards/farm/held");
    let dropped = post(form(&csrf, "", "drop")).await;
    assert_eq!(dropped.status, StatusCode::SEE_OTHER, "{}", dropped.body);
    let page = browser.get("/admin/boards/farm/held").await;
    assert!(page.body.contains("2 held votes dropped."), "{}", page.body);
    assert!(
        page.body.contains("<td>0</td><td>1</td><td>2</td>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(r#"value="release""#), "{}", page.body);
    let (_, read) = app
        .get("/api/v1/boards/farm/members/m1?period=all&view=real")
        .await;
    assert_eq!(crate::harness::num(&read["score"]), 2.0, "{read}");
    let again = post(form(&csrf, "", "drop")).await;
    // A page answers a refusal as 422 with its message.
    assert_eq!(
        again.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        again.body
    );
    assert!(again.body.contains("was reviewed before"), "{}", again.body);
}
