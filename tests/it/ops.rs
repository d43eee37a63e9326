//! Health, readiness, the OpenAPI document and the offline docs page.

use reqwest::{Method, StatusCode};

use crate::harness::TestApp;

#[tokio::test(flavor = "multi_thread")]
async fn health_and_readiness_answer_without_a_key() {
    let app = TestApp::spawn().await;
    let (status, body) = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let (status, body) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (body["redis"].as_str(), body["sql"].as_str()),
        (Some("ok"), Some("ok"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_lists_every_endpoint_and_docs_are_served_offline() {
    let app = TestApp::spawn().await;
    let (status, doc) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/v1/boards/{board}/votes",
        "/api/v1/votes",
        "/api/v1/boards/{board}/top",
        "/api/v1/boards/{board}/members/{member}",
        "/api/v1/boards/{board}/members/{member}/around",
        "/api/v1/ranks",
        "/api/v1/tops",
        "/api/v1/boards/{board}/stats",
        "/api/v1/admin/boards",
        "/api/v1/admin/boards/{board}/members/import",
        "/api/v1/admin/api-keys",
        "/api/v1/admin/boards/{board}/rules",
        "/api/v1/admin/boards/{board}/rules/{id}",
        "/api/v1/boards/{board}/quota",
    ] {
        assert!(
            paths.contains_key(path),
            "{path} missing from the OpenAPI document"
        );
    }
    let refusal = &doc["paths"]["/api/v1/boards/{board}/votes"]["post"]["responses"]["429"];
    assert_eq!(
        refusal["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RateLimitedBody"
    );
    // Every API operation documents the errors any request can meet, with the error body.
    for (path, item) in paths.iter().filter(|(p, _)| p.starts_with("/api/v1/")) {
        for (method, op) in item.as_object().unwrap() {
            for status in ["400", "401", "403", "404", "503"] {
                assert_eq!(
                    op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                        .as_str()
                        .map(|r| r.ends_with("Body")),
                    Some(true),
                    "{method} {path} documents {status}"
                );
            }
            if op.get("requestBody").is_some() {
                assert!(op["responses"]["413"].is_object(), "{method} {path} 413");
                assert!(op["responses"]["422"].is_object(), "{method} {path} 422");
            }
        }
    }
    let vote_503 =
        doc["paths"]["/api/v1/boards/{board}/votes"]["post"]["responses"]["503"]["description"]
            .as_str()
            .unwrap();
    assert!(vote_503.contains("same idempotency key"), "{vote_503}");
    let overview = doc["info"]["description"].as_str().unwrap();
    assert!(overview.contains("idempotency_key_reused"), "{overview}");
    assert!(overview.contains("outcome"), "{overview}");
    let resp = app
        .client
        .get(format!("{}/docs/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.text().await.unwrap().contains("swagger-ui"));
}
