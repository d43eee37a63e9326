//! The dashboard and the voting page in a real headless Chromium, driven through
//! ChromeDriver (Debian's `chromium` and `chromium-driver`, installed by `make test`).
//! Screenshots of every page land in `target/screenshots/`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::harness::{ADMIN_PASSWORD, TestApp};

/// A ChromeDriver on a free port, stopped on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver must be installed (make test installs chromium-driver)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the DevTools command `cmd` in `c`'s Chromium (ChromeDriver's `goog/cdp/execute`);
/// its answer.
async fn cdp(
    driver: &Driver,
    c: &Client,
    cmd: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    let session = c.session_id().await.unwrap().expect("a session");
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!(
            "http://127.0.0.1:{}/session/{session}/goog/cdp/execute",
            driver.port
        ))
        .json(&json!({"cmd": cmd, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["value"].clone()
}

/// A Chromium session whose requests ask for the languages `accept` (`--accept-lang`).
async fn browser(driver: &Driver, profile: &std::path::Path, accept: &str) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-quic", "--window-size=1280,1000",
                format!("--user-data-dir={}", profile.display()),
                format!("--accept-lang={accept}"),
            ]
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("chromium starts under chromedriver")
}

struct Shots {
    dir: PathBuf,
    taken: usize,
}

impl Shots {
    fn new() -> Self {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        eprintln!("screenshots: {}", dir.display());
        Self { dir, taken: 0 }
    }

    async fn take(&mut self, client: &Client, name: &str) {
        self.taken += 1;
        let png = client.screenshot().await.unwrap();
        std::fs::write(self.dir.join(format!("{:02}-{name}.png", self.taken)), png).unwrap();
    }
}

async fn fill(client: &Client, css: &str, value: &str) {
    let field = client.find(Locator::Css(css)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(value).await.unwrap();
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The property `name` of the element at `css` as text ('' when there is none), read in
/// one script: htmx may swap the element between a find and a read.
async fn property_of(client: &Client, css: &str, name: &str) -> String {
    let value = client
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e[arguments[1]] : ''",
            vec![json!(css), json!(name)],
        )
        .await
        .unwrap();
    value.as_str().unwrap_or_default().to_owned()
}

/// Whether the element at `css` is hidden (its `hidden` attribute).
async fn is_hidden(client: &Client, css: &str) -> bool {
    client
        .execute(
            "return document.querySelector(arguments[0]).hidden",
            vec![json!(css)],
        )
        .await
        .unwrap()
        .as_bool()
        .expect("the element exists")
}

/// The visible text of the element at `css`.
async fn text_of(client: &Client, css: &str) -> String {
    property_of(client, css, "innerText").await
}

/// The markup of the element at `css` (its outer HTML).
async fn html_of(client: &Client, css: &str) -> String {
    property_of(client, css, "outerHTML").await
}

/// The requests this page made (its network log) whose address contains `part`.
async fn requests_to(client: &Client, part: &str) -> Vec<String> {
    let names = client
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name)",
            vec![],
        )
        .await
        .unwrap();
    names
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains(part))
        .map(str::to_owned)
        .collect()
}

/// Waits until the page's source contains `text`.
async fn wait_for_text(client: &Client, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let source = client.source().await.unwrap();
        if source.contains(text) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "page never showed {text:?}:\n{source}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn staff_set_up_a_board_and_visitors_vote_until_refused_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    let mut shots = Shots::new();
    let url = |path: &str| format!("{}{path}", app.base);

    // Log in.
    c.goto(&url("/admin/boards")).await.unwrap();
    wait_for_text(&c, "Sign in").await;
    shots.take(&c, "login").await;
    fill(&c, "input[name=username]", "admin").await;
    fill(&c, "input[name=password]", ADMIN_PASSWORD).await;
    click(&c, "form button[type=submit]").await;
    wait_for_text(&c, "New board").await;

    // Create a board with a public page.
    click(&c, "a[href='/admin/boards/new']").await;
    fill(&c, "input[name=slug]", "finals").await;
    fill(&c, "input[name=title]", "Song of the Year").await;
    fill(&c, "input[name=multiplier]", "3").await;
    click(&c, "input[name=public_page]").await;
    shots.take(&c, "board-form").await;
    click(&c, "form.stack button[type=submit]").await;
    wait_for_text(&c, "Board finals created.").await;

    // Members and a rule.
    c.goto(&url("/admin/boards/finals/members")).await.unwrap();
    for (id, name) in [("m1", "Ada Sings"), ("m2", "Lin & the Band")] {
        fill(&c, "form#edit input[name=id]", id).await;
        fill(&c, "form#edit input[name=name]", name).await;
        click(&c, "form#edit button[type=submit]").await;
        wait_for_text(&c, &format!("Member {id} saved.")).await;
    }
    shots.take(&c, "members").await;
    // A CSV file chosen in the import form lands in its text box and previews.
    let csv = profile.path().join("members.csv");
    std::fs::write(
        &csv,
        "id,name,image_url,initial_votes,multiplier\nm1,Ada Sings,,,\n",
    )
    .unwrap();
    c.find(Locator::Css("label[data-fills] input[type=file]"))
        .await
        .unwrap()
        .send_keys(csv.to_str().unwrap())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !c
        .execute("return document.getElementById('csv-text').value", vec![])
        .await
        .unwrap()
        .as_str()
        .is_some_and(|v| v.contains("m1,Ada Sings"))
    {
        assert!(
            Instant::now() < deadline,
            "the chosen file never filled the box"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    click(&c, "form[action$='/members/import'] button[type=submit]").await;
    wait_for_text(
        &c,
        "One member will be written: 0 new, 0 updated, 1 unchanged.",
    )
    .await;
    click(&c, "a.button.plain[href='/admin/boards/finals/members']").await;
    wait_for_text(&c, "Add or edit a member").await;
    c.goto(&url("/admin/boards/finals/rules")).await.unwrap();
    fill(&c, "form[action$='/rules'] input[name=name]", "two a day").await;
    fill(&c, "form[action$='/rules'] input[name=limit]", "2").await;
    click(&c, "form[action$='/rules'] button[type=submit]").await;
    wait_for_text(&c, "each voter, 2 per day").await;
    shots.take(&c, "rules").await;

    // A visitor votes until the rule refuses, without leaving the page (htmx); each
    // answer shows at the member voted for.
    let more: Vec<String> = (3..=12).map(|i| format!("m{i}")).collect();
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    app.members("finals", &more).await;
    c.goto(&url("/b/finals")).await.unwrap();
    wait_for_text(&c, "2 of 2 votes left today").await;
    shots.take(&c, "public-page").await;
    click(&c, "#m-m1 form button").await;
    wait_for_text(&c, "1 of 2 votes left today").await;
    assert!(
        text_of(&c, "#m-m1")
            .await
            .contains("Thanks — your vote for Ada Sings counts.")
    );
    // The vote moved the ranking, and the stream pushes it within an interval; the
    // answer stays on screen meanwhile.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        text_of(&c, "#m-m1")
            .await
            .contains("Thanks — your vote for Ada Sings counts."),
        "the pushed ranking replaced the answer"
    );
    click(&c, "#m-m1 form button").await;
    wait_for_text(&c, "0 of 2 votes left today").await;
    click(&c, "#m-m2 form button").await;
    wait_for_text(&c, "You have used your 2 votes today.").await;
    shots.take(&c, "public-refused").await;
    // On a phone-sized screen nothing runs off the side, and a vote from the bottom of
    // the list answers where the visitor is looking.
    c.set_window_size(390, 844).await.unwrap();
    let fits = c
        .execute(
            "return document.documentElement.scrollWidth <= window.innerWidth",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(fits, json!(true), "the page scrolls sideways on a phone");
    let last = "#ranking li:last-child";
    c.execute(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'end'})",
        vec![json!(last)],
    )
    .await
    .unwrap();
    let below_the_fold = c
        .execute("return window.scrollY > 0", vec![])
        .await
        .unwrap();
    assert_eq!(
        below_the_fold,
        json!(true),
        "the list is longer than the screen"
    );
    click(&c, &format!("{last} form button")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !text_of(&c, last)
        .await
        .contains("You have used your 2 votes today.")
    {
        assert!(Instant::now() < deadline, "no answer at the last card");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // htmx scrolls the swapped card into view as it settles (20 ms after the swap).
    let deadline = Instant::now() + Duration::from_secs(2);
    let in_view = loop {
        let in_view = c
            .execute(
                "const n = document.querySelector(arguments[0] + ' .notice'); \
                 const r = n.getBoundingClientRect(); \
                 return r.top >= 0 && r.bottom <= window.innerHeight",
                vec![json!(last)],
            )
            .await
            .unwrap();
        if in_view == json!(true) || Instant::now() > deadline {
            break in_view;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(in_view, json!(true), "the answer is on screen");
    shots.take(&c, "public-phone").await;
    // The ranking follows votes cast elsewhere, without a reload.
    for i in 0..3 {
        let (status, body) = app
            .vote(
                "finals",
                json!({"member": "m12", "voter": format!("phone-{i}")}),
            )
            .await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while !text_of(&c, "#ranking li:first-child").await.contains("m12") {
        assert!(Instant::now() < deadline, "the public ranking never moved");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        requests_to(&c, "/b/finals/ranking").await,
        Vec::<String>::new(),
        "the page moved on its stream, without polling"
    );
    c.set_window_size(1280, 1000).await.unwrap();

    // The live view shows the votes and follows new ones without a reload.
    c.goto(&url("/admin/boards/finals?period=all&view=real"))
        .await
        .unwrap();
    wait_for_text(&c, "<svg").await;
    let ranking = text_of(&c, "#ranking").await;
    assert!(ranking.contains("Ada Sings"), "{ranking}");
    assert!(ranking.contains('2'), "two votes counted: {ranking}");
    let chart_before = html_of(&c, "#live .card svg").await;
    assert!(chart_before.starts_with("<svg"), "{chart_before}");
    for i in 0..5 {
        let voter = format!("api-{i}");
        let (status, body) = app
            .vote("finals", json!({"member": "m2", "voter": voter}))
            .await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    }
    wait_for_text(&c, "Lin &amp; the Band").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let points = html_of(&c, "#live .card svg").await;
        if !points.is_empty() && points != chart_before {
            break;
        }
        assert!(Instant::now() < deadline, "the chart never changed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        requests_to(&c, "/admin/boards/finals/live").await,
        Vec::<String>::new(),
        "the live view moved on its stream, without polling"
    );
    // Pushed as the votes came: the last push counts all five.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ranking = loop {
        let ranking = text_of(&c, "#ranking").await;
        if ranking.contains("m2\t5") || Instant::now() > deadline {
            break ranking;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let rows: Vec<Vec<&str>> = ranking
        .lines()
        .skip(1)
        .map(|row| row.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["1", "Lin", "&", "the", "Band", "m2", "5"],
        "{ranking}"
    );
    assert_eq!(rows[1], ["2", "Name", "m12", "m12", "3"], "{ranking}");
    assert_eq!(rows[2], ["3", "Ada", "Sings", "m1", "2"], "{ranking}");
    shots.take(&c, "live-view").await;

    c.goto(&url("/admin/audit")).await.unwrap();
    wait_for_text(&c, "rule.create").await;
    shots.take(&c, "audit-log").await;

    // On a phone the charts' text stays legible and nothing is cut off: every label of
    // the live view's charts is drawn at least 9.5 px tall and inside its chart.
    c.set_window_size(390, 844).await.unwrap();
    c.goto(&url("/admin/boards/finals?period=day&view=real"))
        .await
        .unwrap();
    wait_for_text(&c, "<svg").await;
    let labels = c
        .execute(
            "const out = []; for (const svg of document.querySelectorAll('svg.chart')) { \
               const box = svg.getBoundingClientRect(); \
               for (const t of svg.querySelectorAll('text')) { const r = t.getBoundingClientRect(); \
                 out.push([t.textContent, r.height, r.left >= box.left - 0.5 && r.right <= box.right + 0.5]); } } \
             return out;",
            vec![],
        )
        .await
        .unwrap();
    let labels = labels.as_array().unwrap();
    assert!(labels.len() > 20, "{labels:?}");
    for label in labels {
        assert!(
            label[1].as_f64().unwrap() >= 9.5,
            "too small on a phone: {label}"
        );
        assert_eq!(label[2], json!(true), "cut off: {label}");
    }
    shots.take(&c, "live-view-phone").await;

    // The dashboard in Chinese, by its language switch; the choice sticks.
    click(&c, "header a[hreflang='zh-CN']").await;
    wait_for_text(&c, "<h1>榜单</h1>").await;
    c.goto(&url("/admin/boards/finals?period=all&view=real"))
        .await
        .unwrap();
    wait_for_text(&c, "每小时票数").await;
    c.set_window_size(1280, 1000).await.unwrap();
    shots.take(&c, "live-view-zh").await;
    c.set_window_size(390, 844).await.unwrap();
    c.goto(&url("/b/finals")).await.unwrap();
    wait_for_text(&c, "投票").await;
    shots.take(&c, "public-phone-zh").await;

    // The embedded board shows in a frame on a listed site and is refused on another.
    let listed = FramingSite::start(&url("/embed/b/finals")).await;
    let unlisted = FramingSite::start(&url("/embed/b/finals")).await;
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/finals",
            json!({"embed_origins": [listed.origin.clone()]}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    for (site, shown) in [(&listed, true), (&unlisted, false)] {
        c.goto(&site.origin).await.unwrap();
        c.find(Locator::Css("iframe")).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let inside = loop {
            c.clone().enter_frame(0).await.unwrap();
            let inside = c
                .execute(
                    "return [location.href, document.body ? document.body.innerText : '']",
                    vec![],
                )
                .await
                .unwrap();
            c.clone().enter_parent_frame().await.unwrap();
            let loaded = inside[0].as_str().is_some_and(|h| h != "about:blank");
            if loaded || Instant::now() > deadline {
                break inside;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let text = inside[1].as_str().unwrap_or_default();
        if shown {
            assert_eq!(inside[0], json!(url("/embed/b/finals")), "{inside}");
            assert!(text.contains("Song of the Year"), "{inside}");
        } else {
            // Chromium puts its own error page in a frame that frame-ancestors refuses.
            assert_eq!(
                inside[0],
                json!("chrome-error://chromewebdata/"),
                "{inside}"
            );
            assert!(!text.contains("Song of the Year"), "{inside}");
        }
    }
    c.close().await.unwrap();

    // A browser set to Chinese gets the dashboard in Chinese from its first page.
    let zh_profile = tempfile::tempdir().unwrap();
    let zh = browser(&driver, zh_profile.path(), "zh-CN,zh").await;
    zh.goto(&url("/admin/login")).await.unwrap();
    wait_for_text(&zh, "<h1>Ovation 管理后台</h1>").await;
    fill(&zh, "input[name=username]", "admin").await;
    fill(&zh, "input[name=password]", ADMIN_PASSWORD).await;
    click(&zh, "form button[type=submit]").await;
    wait_for_text(&zh, "<h1>榜单</h1>").await;
    assert!(text_of(&zh, "header").await.contains("退出登录"));
    zh.close().await.unwrap();
    assert_eq!(shots.taken, 12);
}

/// Another site on its own port (so its own origin) whose one page frames `src`.
struct FramingSite {
    origin: String,
    task: tokio::task::JoinHandle<()>,
}

impl FramingSite {
    async fn start(src: &str) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let page = format!(
            "<!doctype html><title>A shop</title><h1>A shop</h1><iframe src=\"{src}\" width=\"380\" height=\"600\"></iframe>"
        );
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let page = page.clone();
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let _ = socket.read(&mut request).await;
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                        page.len()
                    );
                    let _ = socket.write_all(response.as_bytes()).await;
                });
            }
        });
        Self { origin, task }
    }
}

impl Drop for FramingSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn where_the_stream_is_refused_the_page_polls_instead() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_max_streams: 0,
        ..Default::default()
    })
    .await;
    app.board(
        json!({"slug": "polled", "title": "Polled", "public_page": true, "periods": ["all"]}),
    )
    .await;
    app.members("polled", &["a", "b"]).await;
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    c.goto(&format!("{}/b/polled", app.base)).await.unwrap();
    wait_for_text(&c, "Polled").await;
    let (status, body) = app
        .vote("polled", json!({"member": "b", "voter": "v1"}))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !text_of(&c, "#ranking li:first-child").await.contains("b") {
        assert!(Instant::now() < deadline, "the polled ranking never moved");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let polls = requests_to(&c, "/b/polled/ranking?period=all").await;
    assert!(!polls.is_empty(), "it polled");
    // The stream was tried once and given up: the page does not do both.
    let attempts = requests_to(&c, "/b/polled/stream").await;
    assert!(attempts.len() <= 1, "{attempts:?}");
    c.close().await.unwrap();
}

/// A stand-in for an identity provider's sign-in: `GET /login?return_to=<page>` sends
/// the browser back to the page with `#token=<JWT>` for voter `fan-1`, valid for
/// `valid_s`, signed with `secret` (HS256); it counts the sign-ins.
async fn stand_in_login(
    listener: tokio::net::TcpListener,
    secret: String,
    valid_s: i64,
) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&count);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let Some(back) = url::Url::parse(&format!("http://login{target}"))
                .ok()
                .and_then(|u| {
                    u.query_pairs()
                        .find(|(k, _)| k == "return_to")
                        .map(|(_, v)| v.into_owned())
                })
            else {
                let _ = socket
                    .write_all(b"HTTP/1.1 404 No\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
                continue;
            };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let now = chrono::Utc::now().timestamp();
            let token = jsonwebtoken::encode(
                &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
                &json!({"iss": "https://login.example", "aud": "gala", "sub": "fan-1",
                        "iat": now, "exp": now + valid_s}),
                &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
            )
            .unwrap();
            let answer = format!(
                "HTTP/1.1 302 Found\r\nlocation: {back}#token={token}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    count
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_in_boards_page_signs_in_votes_as_the_account_and_signs_in_again_when_it_expires()
{
    let app = TestApp::spawn().await;
    let login = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let login_url = format!(
        "http://127.0.0.1:{}/login",
        login.local_addr().unwrap().port()
    );
    let (status, provider) = app
        .post(
            "/api/v1/admin/identity-providers",
            json!({"name": "gala-login", "kind": "hmac", "issuer": "https://login.example",
                   "audience": "gala", "login_url": login_url}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{provider}");
    let valid_s = 12;
    let sign_ins = stand_in_login(
        login,
        provider["secret"].as_str().unwrap().to_owned(),
        valid_s,
    )
    .await;
    app.board(
        json!({"slug": "gala", "title": "Gala", "public_page": true, "periods": ["all"],
                     "voters": "signed_in", "identity_providers": ["gala-login"]}),
    )
    .await;
    app.members("gala", &["a", "b"]).await;

    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    let mut shots = Shots::new();
    c.goto(&format!("{}/b/gala", app.base)).await.unwrap();
    wait_for_text(&c, "Sign in to vote").await;
    assert!(is_hidden(&c, "#signin .account").await);
    assert!(!is_hidden(&c, "#signin .signin-link").await);
    shots.take(&c, "signin-before").await;

    // Signing in comes back with the token in the fragment, which the page drops.
    click(&c, "#signin .signin-link").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while text_of(&c, "#signin .account-name").await != "fan-1" {
        assert!(
            Instant::now() < deadline,
            "the page never showed the account"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let signed_in_at = Instant::now();
    let here = c.current_url().await.unwrap();
    assert_eq!(here.fragment(), None, "{here}");
    assert_eq!(text_of(&c, "#signin .account").await, "Voting as fan-1");
    assert!(is_hidden(&c, "#signin .signin-link").await);
    shots.take(&c, "signin-account").await;

    click(&c, "#m-a button").await;
    wait_for_text(&c, "your vote for").await;
    let entries = crate::ledger::ledger(&app, "gala", 10).await;
    let voters: Vec<&str> = entries
        .iter()
        .map(|e| e["voter"].as_str().unwrap())
        .collect();
    assert_eq!(voters, ["fan-1"]);

    // Once the token expires, the page asks to sign in again, and a vote leads there.
    tokio::time::sleep(
        Duration::from_secs(valid_s as u64 + 1).saturating_sub(signed_in_at.elapsed()),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while is_hidden(&c, "#signin .signin-link").await {
        assert!(
            Instant::now() < deadline,
            "the page never asked to sign in again"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    shots.take(&c, "signin-expired").await;
    click(&c, "#m-b button").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while sign_ins.load(std::sync::atomic::Ordering::SeqCst) < 2
        || text_of(&c, "#signin .account-name").await != "fan-1"
    {
        assert!(
            Instant::now() < deadline,
            "the vote did not lead to sign-in"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The vote without a token counted nothing.
    assert_eq!(crate::ledger::ledger(&app, "gala", 10).await.len(), 1);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_embedded_signed_in_page_takes_the_token_from_the_page_that_frames_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn().await;
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let site_origin = format!("http://127.0.0.1:{}", site.local_addr().unwrap().port());
    let (status, provider) = app
        .post(
            "/api/v1/admin/identity-providers",
            json!({"name": "club", "kind": "hmac", "issuer": "https://club.example",
                   "audience": "gala"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{provider}");
    app.board(
        json!({"slug": "gala", "title": "Gala", "public_page": true, "periods": ["all"],
                     "voters": "signed_in", "identity_providers": ["club"],
                     "embed_origins": [site_origin]}),
    )
    .await;
    app.members("gala", &["a"]).await;
    let now = chrono::Utc::now().timestamp();
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"iss": "https://club.example", "aud": "gala", "sub": "member-7",
                "iat": now, "exp": now + 600}),
        &jsonwebtoken::EncodingKey::from_secret(provider["secret"].as_str().unwrap().as_bytes()),
    )
    .unwrap();
    // The operator's page: it frames the voting page and hands it the token.
    let page = format!(
        r#"<!doctype html><iframe id="f" src="{}/embed/b/gala" style="width:800px;height:600px"></iframe>
<script>
const f = document.getElementById("f");
f.addEventListener("load", () => f.contentWindow.postMessage({{type: "ovation:token", token: "{token}"}}, "{}"));
</script>"#,
        app.base, app.base
    );
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = site.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });

    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    c.goto(&format!("{site_origin}/")).await.unwrap();
    c.find(Locator::Css("#f")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        c.clone().enter_frame(0).await.unwrap();
        if text_of(&c, "#signin .account-name").await == "member-7" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the framed page never took the token"
        );
        c.clone().enter_parent_frame().await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(is_hidden(&c, "#signin .signin-link").await);
    assert!(!is_hidden(&c, "#signin .account").await);
    c.close().await.unwrap();
}

/// The overlay's members, in the order shown.
async fn overlay_order(c: &Client) -> Vec<String> {
    let order = c
        .execute(
            "return [...document.querySelectorAll('#overlay li')].map(li => li.dataset.member)",
            vec![],
        )
        .await
        .unwrap();
    order
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_overlay_is_transparent_shows_a_vote_within_two_seconds_and_moves_an_overtaker_up() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_interval: Duration::from_millis(200),
        ..Default::default()
    })
    .await;
    app.board(json!({"slug": "show", "title": "Show", "public_page": true,
                     "membership": "open", "periods": ["day", "all"]}))
        .await;
    for (member, count, voter) in [("a", 3, "v1"), ("b", 2, "v2")] {
        let (status, body) = app
            .vote(
                "show",
                json!({"member": member, "count": count, "voter": voter}),
            )
            .await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    }
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    let mut shots = Shots::new();
    c.goto(&format!(
        "{}/overlay/b/show?period=all&top=5&theme=transparent",
        app.base
    ))
    .await
    .unwrap();
    assert_eq!(overlay_order(&c).await, ["a", "b"]);
    // Every layer under a pixel of the page is transparent, up to the document.
    let layers = c
        .execute(
            "const seen = [];
             for (const [x, y] of [[3, window.innerHeight - 3], [20, 20]]) {
               for (let e = document.elementFromPoint(x, y); e; e = e.parentElement)
                 seen.push(e.tagName + ' ' + getComputedStyle(e).backgroundColor);
             }
             return seen",
            vec![],
        )
        .await
        .unwrap();
    let layers: Vec<&str> = layers
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    // A row (under 20, 20), the body and the document, none painted.
    for tag in ["LI", "BODY", "HTML"] {
        assert!(
            layers.iter().any(|l| l.starts_with(tag)),
            "{tag}: {layers:?}"
        );
    }
    assert!(
        layers.iter().all(|l| l.ends_with("rgba(0, 0, 0, 0)")),
        "{layers:?}"
    );
    // The page follows its stream (the script marks it once the stream is open).
    let deadline = Instant::now() + Duration::from_secs(10);
    while c
        .execute(
            "return document.getElementById('overlay').dataset.live ?? ''",
            vec![],
        )
        .await
        .unwrap()
        != json!("stream")
    {
        assert!(Instant::now() < deadline, "the overlay opened no stream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let voted = Instant::now();
    app.vote("show", json!({"member": "c", "voter": "v3"}))
        .await;
    while overlay_order(&c).await != ["a", "b", "c"] {
        assert!(
            voted.elapsed() < Duration::from_secs(2),
            "the vote did not show within 2 s: {:?}",
            overlay_order(&c).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // b overtakes a: they swap places.
    app.vote("show", json!({"member": "b", "count": 2, "voter": "v4"}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while overlay_order(&c).await != ["b", "a", "c"] {
        assert!(Instant::now() < deadline, "{:?}", overlay_order(&c).await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(text_of(&c, "#overlay li:first-child .score").await, "4");
    // A screenshot over no background at all (as OBS composes a browser source): a
    // pixel off the rows is fully transparent, the first row's text is painted.
    cdp(
        &driver,
        &c,
        "Emulation.setDefaultBackgroundColorOverride",
        json!({"color": {"r": 0, "g": 0, "b": 0, "a": 0}}),
    )
    .await;
    let png = cdp(
        &driver,
        &c,
        "Page.captureScreenshot",
        json!({"format": "png"}),
    )
    .await;
    let alphas = c
        .execute_async(
            "const [png, done] = arguments;
             const img = new Image();
             img.onload = () => {
               const canvas = document.createElement('canvas');
               canvas.width = img.width;
               canvas.height = img.height;
               const g = canvas.getContext('2d');
               g.drawImage(img, 0, 0);
               const row = document.querySelector('#overlay li').getBoundingClientRect();
               const painted = g.getImageData(row.x, row.y, row.width, row.height).data
                 .filter((_, i) => i % 4 === 3);
               done([g.getImageData(3, img.height - 3, 1, 1).data[3], Math.max(...painted)]);
             };
             img.src = 'data:image/png;base64,' + png;",
            vec![png["data"].clone()],
        )
        .await
        .unwrap();
    assert_eq!(
        alphas,
        json!([0, 255]),
        "alpha off the rows, and the most in a row"
    );
    shots.take(&c, "overlay-transparent").await;

    // The dark theme draws its own background; a wrong theme or size is refused.
    c.goto(&format!(
        "{}/overlay/b/show?period=all&theme=dark",
        app.base
    ))
    .await
    .unwrap();
    let dark = c
        .execute(
            "return getComputedStyle(document.body).backgroundColor",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(dark, json!("rgb(17, 20, 24)"));
    shots.take(&c, "overlay-dark").await;
    c.close().await.unwrap();
    for bad in ["theme=neon", "top=51", "top=0", "period=hour"] {
        let resp = app
            .client
            .get(format!("{}/overlay/b/show?{bad}", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status(),
            reqwest::StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn where_streams_are_off_the_overlay_polls_the_top() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_max_streams: 0,
        ..Default::default()
    })
    .await;
    app.board(
        json!({"slug": "quiet", "title": "Quiet", "public_page": true,
                     "membership": "open", "periods": ["all"]}),
    )
    .await;
    app.vote("quiet", json!({"member": "a", "voter": "v1"}))
        .await;
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path(), "en-US,en").await;
    c.goto(&format!("{}/overlay/b/quiet?top=3", app.base))
        .await
        .unwrap();
    app.vote("quiet", json!({"member": "b", "count": 2, "voter": "v2"}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while overlay_order(&c).await != ["b", "a"] {
        assert!(Instant::now() < deadline, "{:?}", overlay_order(&c).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let live = c
        .execute(
            "return document.getElementById('overlay').dataset.live",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(live, json!("poll"));
    c.close().await.unwrap();
}
