//! Dashboard sessions end: when idle, at their absolute end, at logout (on the server: a
//! copied cookie stops working), and when the user's password changes or the user is
//! deleted.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, COOKIE, LOCATION, SET_COOKIE};

use crate::cli::ovation;
use crate::harness::{ADMIN_PASSWORD, Options, TestApp, client_builder};

/// A browser that keeps its cookie in plain sight, so a test can copy it.
struct Tab {
    app: TestApp,
    client: reqwest::Client,
    cookie: String,
}

impl Tab {
    fn new(app: &TestApp) -> Self {
        Self {
            app: app.clone(),
            client: client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookie: String::new(),
        }
    }

    fn keep(&mut self, resp: &reqwest::Response) {
        if let Some(set) = resp.headers().get(SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            self.cookie = pair;
        }
    }

    /// GET with the tab's cookie: status, Location, Cache-Control and body.
    async fn get(&mut self, path: &str) -> (StatusCode, String, String, String) {
        let resp = self
            .client
            .get(format!("{}{path}", self.app.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        self.keep(&resp);
        let header = |name| {
            resp.headers()
                .get(name)
                .map_or(String::new(), |v: &reqwest::header::HeaderValue| {
                    v.to_str().unwrap().to_owned()
                })
        };
        let (location, cache) = (header(LOCATION), header(CACHE_CONTROL));
        (resp.status(), location, cache, resp.text().await.unwrap())
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> StatusCode {
        let resp = self
            .client
            .post(format!("{}{path}", self.app.base))
            .header(COOKIE, &self.cookie)
            .form(form)
            .send()
            .await
            .unwrap();
        self.keep(&resp);
        resp.status()
    }

    fn csrf(body: &str) -> String {
        let marker = r#"name="_csrf" value=""#;
        let start = body.find(marker).expect("a form") + marker.len();
        body[start..].split('"').next().unwrap().to_owned()
    }

    async fn sign_in(&mut self, user: &str, password: &str) {
        let (_, _, _, body) = self.get("/admin/login").await;
        let csrf = Self::csrf(&body);
        let status = self
            .post(
                "/admin/login",
                &[("_csrf", &csrf), ("username", user), ("password", password)],
            )
            .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(self.signed_in().await, "signed in as {user}");
    }

    /// Whether the dashboard answers (200) rather than sending the tab to the login.
    async fn signed_in(&mut self) -> bool {
        match self.get("/admin/boards").await {
            (StatusCode::OK, ..) => true,
            (StatusCode::SEE_OTHER, location, ..) if location == "/admin/login" => false,
            other => panic!("unexpected answer {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn logout_ends_the_session_on_the_server_and_pages_are_not_cached() {
    let app = TestApp::spawn().await;
    let mut tab = Tab::new(&app);
    let (_, _, cache, _) = tab.get("/admin/login").await;
    assert_eq!(cache, "no-store");
    tab.sign_in("admin", ADMIN_PASSWORD).await;
    let (status, _, cache, body) = tab.get("/admin/boards").await;
    assert_eq!((status, cache.as_str()), (StatusCode::OK, "no-store"));
    let copied = tab.cookie.clone();
    let status = tab
        .post("/admin/logout", &[("_csrf", &Tab::csrf(&body))])
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(!tab.signed_in().await);
    let mut thief = Tab::new(&app);
    thief.cookie = copied;
    assert!(
        !thief.signed_in().await,
        "a copied cookie dies with the logout"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_password_change_or_deleting_the_user_ends_every_session_of_that_user() {
    let app = TestApp::spawn().await;
    let out = ovation(&app, &["user", "add", "ops"], "ops-password-1\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut laptop, mut phone, mut ops) = (Tab::new(&app), Tab::new(&app), Tab::new(&app));
    laptop.sign_in("admin", ADMIN_PASSWORD).await;
    phone.sign_in("admin", ADMIN_PASSWORD).await;
    ops.sign_in("ops", "ops-password-1").await;

    let out = ovation(&app, &["user", "passwd", "admin"], "a-new-admin-password\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ended 2 session(s)"));
    assert!(!laptop.signed_in().await);
    assert!(!phone.signed_in().await);
    assert!(ops.signed_in().await, "other users stay signed in");

    let out = ovation(&app, &["user", "delete", "ops"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ops.signed_in().await);
    let out = ovation(&app, &["user", "delete", "admin"], "");
    assert_eq!(out.status.code(), Some(1), "the last user stays");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: admin is the only user; add another before deleting it"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_end_when_idle_and_at_their_absolute_end() {
    let idle = TestApp::spawn_with(Options {
        session_idle: Duration::from_secs(2),
        ..Options::default()
    })
    .await;
    let mut tab = Tab::new(&idle);
    tab.sign_in("admin", ADMIN_PASSWORD).await;
    // Requests keep it open well past the idle timeout...
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(tab.signed_in().await);
    }
    // ...and a pause longer than it ends it.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!tab.signed_in().await);

    let absolute = TestApp::spawn_with(Options {
        session_absolute: Duration::from_secs(3),
        ..Options::default()
    })
    .await;
    let mut tab = Tab::new(&absolute);
    // Measured from before the sign-in: the session starts later, so it cannot end
    // sooner than 3 s from here, less the second its start is rounded down to.
    let started = std::time::Instant::now();
    tab.sign_in("admin", ADMIN_PASSWORD).await;
    while tab.signed_in().await {
        assert!(started.elapsed() < Duration::from_secs(10), "still open");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "not before its end"
    );
}
