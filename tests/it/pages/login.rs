//! Signing in to the dashboard: attempts counted per user name and per IP, so guesses
//! run out and an attacker elsewhere cannot lock the admin out.

use reqwest::StatusCode;

use super::{Browser, login_from};
use crate::harness::{ADMIN_PASSWORD, Options, TestApp};

#[tokio::test]
async fn logins_are_throttled_per_user() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.get("/admin/login").await.csrf();
    for _ in 0..5 {
        let page = browser
            .post(
                "/admin/login",
                &[
                    ("_csrf", &csrf),
                    ("username", "admin"),
                    ("password", "wrong-password"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
        assert!(page.body.contains("Wrong user name or password."));
    }
    let page = browser
        .post(
            "/admin/login",
            &[
                ("_csrf", &csrf),
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
            ],
        )
        .await;
    assert_eq!(
        page.status,
        StatusCode::TOO_MANY_REQUESTS,
        "the right password waits too"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_guesses_get_five_tries_and_cannot_lock_the_admin_out_elsewhere() {
    let app = TestApp::spawn_with(Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        ..Options::default()
    })
    .await;
    let attacker = Browser::new(&app);
    let csrf = attacker.get("/admin/login").await.csrf();
    let mut guesses = Vec::new();
    for i in 0..50 {
        let (client, base, csrf) = (attacker.client.clone(), attacker.base.clone(), csrf.clone());
        guesses.push(tokio::spawn(async move {
            let browser = Browser { base, client };
            login_from(
                &browser,
                &csrf,
                "198.51.100.7",
                "admin",
                &format!("guess-{i}"),
            )
            .await
        }));
    }
    let mut tried = 0;
    for guess in guesses {
        match guess.await.unwrap() {
            StatusCode::UNAUTHORIZED => tried += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(tried, 5, "exactly five guesses reach the password check");
    // The real admin, elsewhere, still signs in.
    let admin = Browser::new(&app);
    let csrf = admin.get("/admin/login").await.csrf();
    assert_eq!(
        login_from(&admin, &csrf, "203.0.113.20", "admin", ADMIN_PASSWORD).await,
        StatusCode::SEE_OTHER
    );
    // Addresses of one IPv6 /64 count as one.
    let rotating = Browser::new(&app);
    let csrf = rotating.get("/admin/login").await.csrf();
    for i in 1..=5 {
        let ip = format!("2001:db8:5:7::{i:x}");
        assert_eq!(
            login_from(&rotating, &csrf, &ip, "admin", "nope-nope").await,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        login_from(
            &rotating,
            &csrf,
            "2001:db8:5:7:ffff::1",
            "admin",
            ADMIN_PASSWORD
        )
        .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // A user name no user can have makes no key of its own, whatever its size.
    let long = "x".repeat(100_000);
    assert_eq!(
        login_from(&rotating, &csrf, "192.0.2.50", &long, "whatever").await,
        StatusCode::UNAUTHORIZED
    );
    let client = redis::Client::open(crate::harness::shared_redis().url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}:{{login:*", app.prefix))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(keys.iter().all(|k| k.len() < 200), "{keys:?}");
    assert!(
        keys.iter().any(|k| k.ends_with("{login:192.0.2.50}:any")),
        "{keys:?}"
    );
}

#[tokio::test]
async fn logins_are_throttled_per_ip_across_user_names() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.get("/admin/login").await.csrf();
    for i in 0..20 {
        let name = format!("nobody{i}");
        let page = browser
            .post(
                "/admin/login",
                &[
                    ("_csrf", &csrf),
                    ("username", &name),
                    ("password", "wrong-password"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    }
    let page = browser
        .post(
            "/admin/login",
            &[
                ("_csrf", &csrf),
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
}
