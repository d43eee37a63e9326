//! Signed-in voters: identity providers, votes carrying a voter's token (RSA, EC and
//! Ed25519 keys from a JWKS server this test runs on loopback, or an HS256 secret), each
//! refused token with its own code and nothing stored, key rotation, a JWKS that hangs,
//! fails or floods, CORS for a board's embed origins, and 64 clients voting as 1,000
//! signed-in voters.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::harness::{Options, TestApp, error_codes};

const ISSUER: &str = "https://id.example";
const AUDIENCE: &str = "ovation-test";

/// What the JWKS server answers.
#[derive(Clone)]
enum Jwks {
    /// This document, 200, `Cache-Control: max-age=3600`.
    Keys(String),
    /// Reads the request and never answers.
    Hang,
    /// 500.
    Fails,
    /// A 50 MB body.
    Huge,
}

/// A JWKS server on loopback: every path answers as its mode says; it counts requests.
struct JwksServer {
    base: String,
    mode: Arc<Mutex<Jwks>>,
    requests: Arc<AtomicUsize>,
}

impl JwksServer {
    async fn start(mode: Jwks) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(Mutex::new(mode));
        let requests = Arc::new(AtomicUsize::new(0));
        let (serving, counted) = (Arc::clone(&mode), Arc::clone(&requests));
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let answer = serving.lock().unwrap().clone();
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await;
                    match answer {
                        Jwks::Keys(doc) => {
                            let head = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                 cache-control: max-age=3600\r\ncontent-length: {}\r\n\
                                 connection: close\r\n\r\n",
                                doc.len()
                            );
                            let _ = socket.write_all(head.as_bytes()).await;
                            let _ = socket.write_all(doc.as_bytes()).await;
                        }
                        Jwks::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
                        Jwks::Fails => {
                            let _ = socket
                                .write_all(
                                    b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                                )
                                .await;
                        }
                        Jwks::Huge => {
                            let _ = socket
                                .write_all(
                                    b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{\"keys\": [\"",
                                )
                                .await;
                            let chunk = vec![b'a'; 1024 * 1024];
                            for _ in 0..50 {
                                if socket.write_all(&chunk).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            mode,
            requests,
        }
    }

    fn set(&self, mode: Jwks) {
        *self.mode.lock().unwrap() = mode;
    }

    fn count(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn key_file(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/keys")
            .join(name),
    )
    .unwrap()
}

/// The JWKS document holding the public keys named `kids`.
fn jwks_of(kids: &[&str]) -> String {
    let all: Value = serde_json::from_str(&key_file("jwks.json")).unwrap();
    let keys: Vec<Value> = all["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| kids.contains(&k["kid"].as_str().unwrap()))
        .cloned()
        .collect();
    json!({ "keys": keys }).to_string()
}

/// A token signed by the test key `kid` (rsa1, rsa2, ec1, ed1) with `claims`.
fn signed(kid: &str, claims: &Value) -> String {
    let pem = key_file(&format!("{kid}.pem"));
    let (alg, key) = match &kid[..2] {
        "rs" => (Algorithm::RS256, EncodingKey::from_rsa_pem(pem.as_bytes())),
        "ec" => (Algorithm::ES256, EncodingKey::from_ec_pem(pem.as_bytes())),
        _ => (Algorithm::EdDSA, EncodingKey::from_ed_pem(pem.as_bytes())),
    };
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &key.unwrap()).unwrap()
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Good claims for `voter`, with `extra` over them.
fn claims(voter: &str, extra: Value) -> Value {
    let mut c = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": voter,
                       "iat": now() - 10, "exp": now() + 600});
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

/// `token` with its header replaced by `header`: its signature no longer holds unless
/// the header is the one it was signed with.
fn with_header(token: &str, header: Value) -> String {
    let (_, rest) = token.split_once('.').unwrap();
    format!("{}.{rest}", URL_SAFE_NO_PAD.encode(header.to_string()))
}

/// A token with this header and these claims, signed with nothing (`alg: none`) or with
/// the given bytes as an HS256 key.
fn hand_made(header: Value, claims: &Value, hs256_key: Option<&[u8]>) -> String {
    let head = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = match hs256_key {
        Some(key) => {
            use hmac::Mac;
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
            mac.update(head.as_bytes());
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        }
        None => String::new(),
    };
    format!("{head}.{signature}")
}

/// An app that lets its JWKS fetches reach loopback, refetching at most every `refetch`.
async fn app(refetch: Duration) -> TestApp {
    TestApp::spawn_with(Options {
        webhook_allow_private: true,
        jwks_refetch: refetch,
        ..Options::default()
    })
    .await
}

/// Creates a `jwks` provider `name` reading `url`, with all three algorithms.
async fn jwks_provider(app: &TestApp, name: &str, url: &str, extra: Value) {
    let mut body = json!({"name": name, "kind": "jwks", "issuer": ISSUER,
        "audience": AUDIENCE, "jwks_url": url, "algorithms": ["RS256", "ES256", "EdDSA"]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let (status, created) = app.post("/api/v1/admin/identity-providers", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["secret"], Value::Null, "{created}");
}

/// An open board `slug` taking tokens of `providers`, with a rule of one vote per voter
/// per day.
async fn board(app: &TestApp, slug: &str, providers: &[&str]) {
    app.board(json!({"slug": slug, "title": slug, "membership": "open",
        "identity_providers": providers, "embed_origins": ["https://fans.example"]}))
        .await;
    let (status, rule) = app
        .post(
            &format!("/api/v1/admin/boards/{slug}/rules"),
            json!({"name": "one a day", "dimensions": ["voter"], "window": "day", "limit": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rule}");
}

/// A vote for `member` on `board` carrying `token` (no API key).
async fn vote_with(app: &TestApp, board: &str, token: &str, body: Value) -> (StatusCode, Value) {
    let mut body = body;
    body["member"] = json!("m1");
    app.call(
        reqwest::Method::POST,
        &format!("/api/v1/boards/{board}/votes"),
        Some(token),
        Some(&body),
    )
    .await
}

async fn score(app: &TestApp, board: &str) -> Value {
    let (_, m) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/m1?view=real&period=all"
        ))
        .await;
    m["score"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_of_rsa_ec_and_ed25519_keys_vote_as_their_signed_in_voter() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1", "ec1", "ed1"]))).await;
    let app = app(Duration::from_millis(200)).await;
    jwks_provider(
        &app,
        "signed",
        &format!("{}/jwks", jwks.base),
        json!({"channel_claim": "chan", "terminal_claim": "dev"}),
    )
    .await;
    board(&app, "final", &["signed"]).await;
    app.board(json!({"slug": "other", "title": "Other", "membership": "open"}))
        .await;

    let rsa = signed("rsa1", &claims("ann", json!({"chan": "app", "dev": "ios"})));
    let (status, body) = vote_with(&app, "final", &rsa, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The per-voter rule counts the signed-in voter, whichever key signed.
    let again = signed("ec1", &claims("ann", json!({})));
    let (status, body) = vote_with(&app, "final", &again, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("rate_limited")),
        "{body}"
    );
    for (kid, voter) in [("ec1", "bea"), ("ed1", "cid")] {
        let (status, body) = vote_with(
            &app,
            "final",
            &signed(kid, &claims(voter, json!({}))),
            json!({}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{kid}: {body}");
    }
    // The body may name the token's voter, never another.
    let dee = signed("rsa1", &claims("dee", json!({})));
    let (status, body) = vote_with(&app, "final", &dee, json!({"voter": "eve"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("voter_mismatch")),
        "{body}"
    );
    let (status, body) = vote_with(&app, "final", &dee, json!({"voter": "dee"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A board that does not take the provider refuses its tokens.
    let fay = signed("rsa1", &claims("fay", json!({})));
    let (status, body) = vote_with(&app, "other", &fay, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("provider_not_accepted")),
        "{body}"
    );
    assert_eq!(score(&app, "other").await, 0);
    // A token votes; it writes no scores and manages nothing.
    let (status, _) = app
        .call(
            reqwest::Method::GET,
            "/api/v1/admin/boards",
            Some(&fay),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // A batch reads the token the same way.
    let gus = signed("ed1", &claims("gus", json!({})));
    let (status, batch) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/votes",
            Some(&gus),
            Some(&json!({"votes": [
                {"board": "final", "member": "m2"},
                {"board": "final", "member": "m3"},
                {"board": "other", "member": "m1"}
            ]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{batch}");
    assert_eq!(
        error_codes(&batch),
        [
            json!(null),
            json!("rate_limited"),
            json!("provider_not_accepted")
        ],
        "{batch}"
    );

    assert_eq!(score(&app, "final").await, 4);
    let entries = crate::ledger::ledger(&app, "final", 100).await;
    let who: Vec<(&str, &str, Option<&str>, Option<&str>)> = entries
        .iter()
        .map(|e| {
            (
                e["voter"].as_str().unwrap(),
                e["member"].as_str().unwrap(),
                e["channel"].as_str(),
                e["terminal"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("ann", "m1", Some("app"), Some("ios")),
            ("bea", "m1", None, None),
            ("cid", "m1", None, None),
            ("dee", "m1", None, None),
            ("gus", "m2", None, None),
        ]
    );
    let metrics = app.metrics().await;
    assert!(
        metrics.contains(r#"ovation_token_checks_total{provider="signed",outcome="accepted"} 8"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ovation_jwks_fetches_total{provider="signed",outcome="ok"} 1"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_refused_token_has_its_own_code_and_changes_nothing() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1", "ec1"]))).await;
    let app = app(Duration::from_millis(200)).await;
    jwks_provider(
        &app,
        "refusing",
        &format!("{}/jwks", jwks.base),
        json!({"max_age_s": 3600, "leeway_s": 30}),
    )
    .await;
    board(&app, "final", &["refusing"]).await;

    let good = claims("ann", json!({}));
    // Signed by rsa2, which the set does not hold, under rsa1's kid.
    let forged = with_header(
        &signed("rsa2", &good),
        json!({"alg": "RS256", "kid": "rsa1"}),
    );
    let public_pem = key_file("rsa1.pub.pem");
    let cases: Vec<(&str, String, StatusCode, &str)> = vec![
        (
            "forged signature",
            forged,
            StatusCode::UNAUTHORIZED,
            "token_bad_signature",
        ),
        (
            "alg none",
            hand_made(json!({"alg": "none", "kid": "rsa1"}), &good, None),
            StatusCode::UNAUTHORIZED,
            "token_algorithm_refused",
        ),
        (
            "HS256 over the RSA public key",
            hand_made(
                json!({"alg": "HS256", "kid": "rsa1"}),
                &good,
                Some(public_pem.as_bytes()),
            ),
            StatusCode::UNAUTHORIZED,
            "token_algorithm_refused",
        ),
        (
            "wrong issuer",
            signed(
                "rsa1",
                &claims("ann", json!({"iss": "https://evil.example"})),
            ),
            StatusCode::UNAUTHORIZED,
            "token_wrong_issuer",
        ),
        (
            "wrong audience",
            signed("rsa1", &claims("ann", json!({"aud": "someone-else"}))),
            StatusCode::UNAUTHORIZED,
            "token_wrong_audience",
        ),
        (
            "expired",
            signed("rsa1", &claims("ann", json!({"exp": now() - 31}))),
            StatusCode::UNAUTHORIZED,
            "token_expired",
        ),
        (
            "not yet valid",
            signed("ec1", &claims("ann", json!({"nbf": now() + 120}))),
            StatusCode::UNAUTHORIZED,
            "token_not_yet_valid",
        ),
        (
            "too old",
            signed(
                "rsa1",
                &claims("ann", json!({"iat": now() - 3600 - 31 - 5})),
            ),
            StatusCode::UNAUTHORIZED,
            "token_too_old",
        ),
        (
            "exp as a string",
            signed("rsa1", &claims("ann", json!({"exp": "99999999999"}))),
            StatusCode::UNAUTHORIZED,
            "token_claims_invalid",
        ),
        (
            "nbf as a string",
            signed("rsa1", &claims("ann", json!({"nbf": "99999999999"}))),
            StatusCode::UNAUTHORIZED,
            "token_claims_invalid",
        ),
        (
            "sub as a number",
            signed("rsa1", &claims("ann", json!({"sub": 42}))),
            StatusCode::UNAUTHORIZED,
            "token_claims_invalid",
        ),
        (
            "a key the set does not hold",
            with_header(
                &signed("rsa1", &good),
                json!({"alg": "RS256", "kid": "gone"}),
            ),
            StatusCode::UNAUTHORIZED,
            "token_unknown_key",
        ),
        (
            "100 KB",
            format!(
                "{}.{}.x",
                URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#),
                "A".repeat(100 * 1024)
            ),
            StatusCode::UNAUTHORIZED,
            "token_too_large",
        ),
        (
            "not a JWT",
            "abc.def.ghi".to_owned(),
            StatusCode::UNAUTHORIZED,
            "token_malformed",
        ),
    ];
    for (what, token, status, code) in &cases {
        let (got, body) = vote_with(&app, "final", token, json!({})).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (*status, Some(*code)),
            "{what}: {body}"
        );
    }
    // The good token still counts once: nothing before it was stored or rate-limited.
    let (status, body) = vote_with(&app, "final", &signed("rsa1", &good), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(score(&app, "final").await, 1);
    assert_eq!(crate::ledger::ledger(&app, "final", 100).await.len(), 1);
    let metrics = app.metrics().await;
    // Refusals before a provider is found count under `unknown`.
    for (provider, code) in [
        ("refusing", "token_bad_signature"),
        ("refusing", "token_expired"),
        ("refusing", "token_claims_invalid"),
        ("unknown", "token_wrong_issuer"),
        ("unknown", "token_too_large"),
    ] {
        let series =
            format!(r#"ovation_token_checks_total{{provider="{provider}",outcome="{code}"}}"#);
        assert!(metrics.contains(&series), "{series}: {metrics}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_key_is_picked_up_a_removed_one_refused_and_made_up_kids_fetch_once_per_interval() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1"]))).await;
    let refetch = Duration::from_millis(1000);
    let app = app(refetch).await;
    jwks_provider(&app, "accounts", &format!("{}/jwks", jwks.base), json!({})).await;
    board(&app, "final", &["accounts"]).await;
    let (status, _) = vote_with(
        &app,
        "final",
        &signed("rsa1", &claims("a1", json!({}))),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(jwks.count(), 1);

    // Rotation: the provider now publishes rsa2 alone.
    jwks.set(Jwks::Keys(jwks_of(&["rsa2"])));
    tokio::time::sleep(refetch + Duration::from_millis(100)).await;
    let (status, body) = vote_with(
        &app,
        "final",
        &signed("rsa2", &claims("a2", json!({}))),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(jwks.count(), 2);
    let (status, body) = vote_with(
        &app,
        "final",
        &signed("rsa1", &claims("a3", json!({}))),
        json!({}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("token_unknown_key")),
        "{body}"
    );

    // 200 tokens naming made-up keys, 16 at a time.
    tokio::time::sleep(refetch + Duration::from_millis(100)).await;
    let before = jwks.count();
    let started = Instant::now();
    let claims_of = claims("a4", json!({}));
    let tokens: Vec<String> = (0..200)
        .map(|i| {
            with_header(
                &signed("rsa2", &claims_of),
                json!({"alg": "RS256", "kid": format!("made-up-{i}")}),
            )
        })
        .collect();
    for group in tokens.chunks(16) {
        let answers = futures_util::future::join_all(
            group.iter().map(|t| vote_with(&app, "final", t, json!({}))),
        )
        .await;
        for (status, body) in answers {
            assert_eq!(
                body["error"]["code"], "token_unknown_key",
                "{status} {body}"
            );
        }
    }
    let fetched = jwks.count() - before;
    let intervals = started.elapsed().as_millis() / refetch.as_millis();
    assert!(
        fetched >= 1 && fetched as u128 <= intervals + 1,
        "{fetched} fetches in {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jwks_that_hangs_fails_or_floods_is_bounded_and_the_keys_held_keep_working() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1"]))).await;
    let refetch = Duration::from_millis(200);
    let app = app(refetch).await;
    jwks_provider(&app, "hanging", &format!("{}/jwks", jwks.base), json!({})).await;
    board(&app, "final", &["hanging"]).await;
    let (status, _) = vote_with(
        &app,
        "final",
        &signed("rsa1", &claims("v0", json!({}))),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let unknown_kid = with_header(
        &signed("rsa1", &claims("x", json!({}))),
        json!({"alg": "RS256", "kid": "new"}),
    );
    for (i, mode) in [Jwks::Hang, Jwks::Fails, Jwks::Huge]
        .into_iter()
        .enumerate()
    {
        jwks.set(mode);
        tokio::time::sleep(refetch + Duration::from_millis(50)).await;
        // A token naming a key not held fetches the set, which fails within its bounds…
        let started = Instant::now();
        let refetching = vote_with(&app, "final", &unknown_kid, json!({}));
        // …while a token of a key held is checked at once.
        let held = signed("rsa1", &claims(&format!("v{}", i + 1), json!({})));
        let (held_answer, (status, body)) = tokio::join!(
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                vote_with(&app, "final", &held, json!({})).await
            },
            refetching
        );
        assert_eq!(held_answer.0, StatusCode::OK, "{}", held_answer.1);
        assert_eq!(
            body["error"]["code"], "token_unknown_key",
            "{status} {body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a fetch took {:?}",
            started.elapsed()
        );
    }
    assert_eq!(score(&app, "final").await, 4);
    let metrics = app.metrics().await;
    for outcome in ["timeout", "error", "too_large"] {
        assert!(
            metrics.contains(&format!(
                r#"ovation_jwks_fetches_total{{provider="hanging",outcome="{outcome}"}} 1"#
            )),
            "{outcome}: {metrics}"
        );
    }

    // A provider whose keys were never fetched answers 503 while its JWKS fails.
    let down = JwksServer::start(Jwks::Fails).await;
    jwks_provider(
        &app,
        "down",
        &format!("{}/jwks", down.base),
        json!({"issuer": "https://down.example"}),
    )
    .await;
    app.patch(
        "/api/v1/admin/boards/final",
        json!({"identity_providers": ["hanging", "down"]}),
    )
    .await;
    let token = signed("rsa1", &claims("w", json!({"iss": "https://down.example"})));
    let (status, body) = vote_with(&app, "final", &token, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("jwks_unavailable")),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_hmac_providers_secret_is_shown_once_and_signs_its_tokens() {
    let app = app(Duration::from_millis(200)).await;
    let (status, created) = app
        .post(
            "/api/v1/admin/identity-providers",
            json!({"name": "backend", "kind": "hmac", "issuer": "https://shop.example",
                   "audience": AUDIENCE, "max_age_s": 600}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 43, "{created}");
    assert_eq!(created["algorithms"], json!(["HS256"]));
    let (_, listed) = app.get("/api/v1/admin/identity-providers/backend").await;
    assert_eq!(listed.get("secret"), None, "{listed}");
    board(&app, "shop", &["backend"]).await;

    let claims = claims("buyer-1", json!({"iss": "https://shop.example"}));
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap();
    let (status, body) = vote_with(&app, "shop", &token, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let wrong = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(b"not the secret"),
    )
    .unwrap();
    let (status, body) = vote_with(&app, "shop", &wrong, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("token_bad_signature")),
        "{body}"
    );
    let (status, body) = vote_with(&app, "shop", &signed("rsa1", &claims), json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("token_algorithm_refused")),
        "{body}"
    );
    // An API key still votes as it always did, naming its voter.
    let (status, body) = app
        .vote("shop", json!({"member": "m1", "voter": "counter"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(score(&app, "shop").await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn providers_are_checked_and_a_provider_in_use_stays() {
    let app = app(Duration::from_millis(200)).await;
    let base = json!({"name": "ok", "kind": "jwks", "issuer": ISSUER, "audience": AUDIENCE,
                      "jwks_url": "https://id.example/jwks"});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    for (body, code) in [
        (with("name", json!("Not A Slug")), "invalid_provider"),
        (with("kind", json!("saml")), "invalid_provider"),
        (
            with("jwks_url", json!("ftp://id.example/jwks")),
            "invalid_provider",
        ),
        (with("algorithms", json!(["HS256"])), "invalid_provider"),
        (with("algorithms", json!([])), "invalid_provider"),
        (with("max_age_s", json!(10)), "invalid_provider"),
        (with("leeway_s", json!(3600)), "invalid_provider"),
        (with("voter_claim", json!("two words")), "invalid_provider"),
        (
            with("login_url", json!("javascript:alert(1)")),
            "invalid_provider",
        ),
        (with("audience", json!("")), "invalid_provider"),
    ] {
        let (status, answer) = app
            .post("/api/v1/admin/identity-providers", body.clone())
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{body}: {answer}"
        );
    }
    let (_, listed) = app.get("/api/v1/admin/identity-providers").await;
    assert_eq!(listed["identity_providers"], json!([]));

    let (status, created) = app
        .post("/api/v1/admin/identity-providers", base.clone())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        (
            created["voter_claim"].as_str(),
            created["max_age_s"].as_i64(),
            created["leeway_s"].as_i64()
        ),
        (Some("sub"), Some(86_400), Some(60))
    );
    let (status, again) = app
        .post("/api/v1/admin/identity-providers", base.clone())
        .await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("provider_exists"))
    );

    // A board names providers that exist; signed_in needs one.
    let (status, refused) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "b", "title": "B", "identity_providers": ["nope"]}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("provider_not_found")),
        "{refused}"
    );
    let (status, refused) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "b", "title": "B", "voters": "signed_in"}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")),
        "{refused}"
    );
    let created = app
        .board(
            json!({"slug": "b", "title": "B", "voters": "signed_in", "identity_providers": ["ok"]}),
        )
        .await;
    assert_eq!(
        (created["voters"].as_str(), &created["identity_providers"]),
        (Some("signed_in"), &json!(["ok"]))
    );

    let (status, changed) = app
        .patch(
            "/api/v1/admin/identity-providers/ok",
            json!({"login_url": "https://id.example/login", "max_age_s": 600}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(
        (changed["login_url"].as_str(), changed["max_age_s"].as_i64()),
        (Some("https://id.example/login"), Some(600))
    );
    let (status, refused) = app
        .patch(
            "/api/v1/admin/identity-providers/ok",
            json!({"kind": "hmac"}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_provider"))
    );

    let (status, refused) = app.delete("/api/v1/admin/identity-providers/ok").await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("provider_in_use"))
    );
    app.patch(
        "/api/v1/admin/boards/b",
        json!({"voters": "anyone", "identity_providers": []}),
    )
    .await;
    let (status, _) = app.delete("/api/v1/admin/identity-providers/ok").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, gone) = app.get("/api/v1/admin/identity-providers/ok").await;
    assert_eq!(
        (status, gone["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("provider_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn browsers_on_a_boards_embed_origins_may_post_votes() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1"]))).await;
    let app = app(Duration::from_millis(200)).await;
    jwks_provider(&app, "accounts", &format!("{}/jwks", jwks.base), json!({})).await;
    board(&app, "final", &["accounts"]).await;
    let client = crate::harness::client_builder().build().unwrap();
    let url = format!("{}/api/v1/boards/final/votes", app.base);
    let preflight = |origin: &'static str| {
        client
            .request(reqwest::Method::OPTIONS, &url)
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
    };
    let listed = preflight("https://fans.example").await.unwrap();
    assert_eq!(listed.status(), StatusCode::NO_CONTENT);
    let h = listed.headers();
    assert_eq!(h["access-control-allow-origin"], "https://fans.example");
    assert_eq!(h["access-control-allow-methods"], "POST");
    assert_eq!(
        h["access-control-allow-headers"],
        "authorization, content-type"
    );
    let other = preflight("https://elsewhere.example").await.unwrap();
    assert_eq!(other.headers().get("access-control-allow-origin"), None);

    let post = |token: String| {
        client
            .post(&url)
            .header("Origin", "https://fans.example")
            .bearer_auth(token)
            .json(&json!({"member": "m1"}))
            .send()
    };
    let ok = post(signed("rsa1", &claims("ann", json!({}))))
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://fans.example"
    );
    // A refusal carries the headers too, so the page reads its code.
    let expired = post(signed("rsa1", &claims("bea", json!({"exp": now() - 600}))))
        .await
        .unwrap();
    assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        expired.headers()["access-control-allow-origin"],
        "https://fans.example"
    );
    let body: Value = expired.json().await.unwrap();
    assert_eq!(body["error"]["code"], "token_expired");
}

#[tokio::test(flavor = "multi_thread")]
async fn sixty_four_clients_voting_as_a_thousand_signed_in_voters_keep_per_voter_rules_exact() {
    let jwks = JwksServer::start(Jwks::Keys(jwks_of(&["rsa1", "ec1", "ed1"]))).await;
    let app = app(Duration::from_millis(200)).await;
    jwks_provider(&app, "accounts", &format!("{}/jwks", jwks.base), json!({})).await;
    board(&app, "crowd", &["accounts"]).await;
    let kids = ["rsa1", "ec1", "ed1"];
    // Each of 1,000 voters tries twice; the rule takes one vote a day from each.
    let tokens: Vec<(usize, String)> = (0..2000)
        .map(|i| {
            let voter = i % 1000;
            (
                voter,
                signed(kids[i % 3], &claims(&format!("fan-{voter}"), json!({}))),
            )
        })
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(tokens);
    let accepted = Arc::new(Mutex::new(vec![0u32; 1000]));
    let clients: Vec<_> = (0..64)
        .map(|_| {
            let (next, tokens, accepted) = (
                Arc::clone(&next),
                Arc::clone(&tokens),
                Arc::clone(&accepted),
            );
            let client = crate::harness::client_builder().build().unwrap();
            let url = format!("{}/api/v1/boards/crowd/votes", app.base);
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((voter, token)) = tokens.get(i) else {
                        return;
                    };
                    // A client that follows the contract: a 503 with an unknown outcome
                    // is sent again under the same idempotency key (a busy CI host can
                    // keep Redis past the timeout), and counts once either way.
                    let body = json!({"member": format!("m{}", voter % 7),
                        "idempotency_key": format!("try-{i}")});
                    loop {
                        let resp = client
                            .post(&url)
                            .bearer_auth(token)
                            .json(&body)
                            .send()
                            .await
                            .unwrap();
                        match resp.status() {
                            StatusCode::OK => accepted.lock().unwrap()[*voter] += 1,
                            StatusCode::TOO_MANY_REQUESTS => {}
                            StatusCode::SERVICE_UNAVAILABLE => continue,
                            other => panic!("{other}: {}", resp.text().await.unwrap()),
                        }
                        break;
                    }
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
    assert!(accepted.lock().unwrap().iter().all(|&n| n == 1));
    let entries = crate::ledger::ledger(&app, "crowd", 1000).await;
    let mut voters: Vec<String> = entries
        .iter()
        .map(|e| e["voter"].as_str().unwrap().to_owned())
        .collect();
    voters.sort();
    let mut expected: Vec<String> = (0..1000).map(|v| format!("fan-{v}")).collect();
    expected.sort();
    assert_eq!(voters, expected);
    let (_, stats) = app.get("/api/v1/boards/crowd/stats?period=all").await;
    // Participants are an estimate (HyperLogLog); votes are exact.
    assert_eq!(stats["votes"], 1000, "{stats}");
}
