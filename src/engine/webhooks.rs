//! The webhook outboxes: a season's close writes its delivery in the close's
//! transaction, a board webhook's watcher (`engine::board_webhooks`) one per change of
//! its top; every instance runs a delivery task of its own, apart from both, which sends
//! the deliveries of either outbox that are due.
//!
//! An instance claims a delivery for one attempt (moving its next attempt forward, a
//! compare-and-set in SQL), so two instances do not send it at once. At most
//! [`CONCURRENCY`] attempts run at a time, each bounded by [`ATTEMPT_TIMEOUT`], so a
//! receiver that hangs holds one slot for ten seconds and delays nothing else. A
//! delivery is retried, the delay doubling from 1 s up to an hour, until the receiver
//! answers 2xx, and given up three days after it was made (the dashboard can send it
//! again).
//!
//! Guards: redirects are not followed (a 3xx is a failed attempt with its status), no
//! proxy from the environment is used, and a delivery connects only to public addresses
//! unless `OVATION_WEBHOOK_ALLOW_PRIVATE` is set (`engine::outbound`).

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use tokio::sync::Semaphore;

use super::outbound;
use super::state::AppState;
use crate::domain::board_webhook::BoardDelivery;
use crate::domain::league::Delivery;
use crate::domain::webhook::{self, Outcome, PREVIOUS_SECRET_GRACE};
use crate::store::sql;

/// The header carrying `t=<unix>,v1=<hex>` (see [`webhook::signature`]).
pub const SIGNATURE_HEADER: &str = "X-Ovation-Signature";
/// The header carrying the delivery's id (the same on every retry).
pub const DELIVERY_HEADER: &str = "X-Ovation-Delivery";
/// How long an attempt may take, connecting included.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts one instance runs at once.
pub const CONCURRENCY: usize = 8;
/// How long a claim keeps other instances off a delivery: past it, the attempt is
/// taken to have died with its instance and the delivery is due again.
const CLAIM: TimeDelta = TimeDelta::seconds(30);

/// Sends due deliveries every `check` until the process ends.
pub async fn run(state: AppState, check: Duration) {
    let client = outbound::client(
        state.settings.webhook_allow_private,
        CONNECT_TIMEOUT,
        ATTEMPT_TIMEOUT,
    );
    let slots = Arc::new(Semaphore::new(CONCURRENCY));
    let mut ticks = tokio::time::interval(check);
    loop {
        ticks.tick().await;
        let free = slots.available_permits();
        if free == 0 {
            continue;
        }
        let due = match due(&state, free as u64).await {
            Ok(due) => due,
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the webhook outbox");
                continue;
            }
        };
        for delivery in due {
            let claim_until = Utc::now() + CLAIM;
            let claimed = match &delivery {
                Due::Season(d) => sql::leagues::claim_delivery(&state.db, d, claim_until).await,
                Due::Board(d) => sql::board_webhooks::claim(&state.db, d, claim_until).await,
            };
            match claimed {
                Ok(true) => {
                    let Ok(slot) = slots.clone().acquire_owned().await else {
                        return;
                    };
                    let (state, client) = (state.clone(), client.clone());
                    tokio::spawn(async move {
                        attempt(&state, &client, &delivery).await;
                        drop(slot);
                    });
                }
                Ok(false) => {}
                Err(err) => tracing::debug!(error = %err, "cannot claim a webhook delivery"),
            }
        }
    }
}

/// A due delivery of either outbox.
enum Due {
    Season(Delivery),
    Board(BoardDelivery),
}

/// Up to `limit` due deliveries: seasons' first, then boards'.
async fn due(state: &AppState, limit: u64) -> Result<Vec<Due>, sql::SqlError> {
    let now = Utc::now();
    let mut due: Vec<Due> = sql::leagues::due_deliveries(&state.db, now, limit)
        .await?
        .into_iter()
        .map(Due::Season)
        .collect();
    let left = limit.saturating_sub(due.len() as u64);
    if left > 0 {
        due.extend(
            sql::board_webhooks::due(&state.db, now, left)
                .await?
                .into_iter()
                .map(Due::Board),
        );
    }
    Ok(due)
}

/// The secrets a delivery of `league_id` is signed with now: the league's, then the one
/// a rotation replaced less than a day ago.
fn secrets(state: &AppState, league_id: i64, now: DateTime<Utc>) -> Option<Vec<String>> {
    let config = state
        .config
        .leagues()
        .into_iter()
        .find(|l| l.league.id == league_id)?;
    let league = &config.league;
    let mut secrets = vec![league.webhook_secret.clone()];
    if let Some((previous, rotated_at)) = &league.previous_secret
        && now < *rotated_at + PREVIOUS_SECRET_GRACE
    {
        secrets.push(previous.clone());
    }
    Some(secrets)
}

/// What one attempt sends: where, what, and the secrets it is signed with.
struct Outgoing<'a> {
    id: i64,
    url: &'a str,
    body: &'a str,
    secrets: Vec<String>,
}

async fn attempt(state: &AppState, client: &reqwest::Client, delivery: &Due) {
    let now = Utc::now();
    let (outgoing, attempts, created_at) = match delivery {
        Due::Season(d) => {
            let Some(secrets) = secrets(state, d.league_id, now) else {
                return;
            };
            let outgoing = Outgoing {
                id: d.id,
                url: &d.url,
                body: &d.body,
                secrets,
            };
            (outgoing, d.attempts, d.created_at)
        }
        Due::Board(d) => {
            let hook = match sql::board_webhooks::find(&state.db, d.board_id, d.webhook_id).await {
                Ok(Some(hook)) => hook,
                // Deleted meanwhile: its deliveries went with it.
                Ok(None) => return,
                Err(err) => {
                    tracing::debug!(error = %err, "cannot read a board webhook");
                    return;
                }
            };
            let outgoing = Outgoing {
                id: d.id,
                url: &d.url,
                body: &d.body,
                secrets: vec![hook.secret],
            };
            (outgoing, d.attempts, d.created_at)
        }
    };
    let (status, error) = send(state, client, &outgoing, now).await;
    let outcome = Outcome::of(error.is_some(), attempts + 1, created_at, Utc::now());
    crate::metrics::webhook_delivery(outcome.label());
    let status = status.map(|s| i32::from(s.as_u16()));
    let recorded = match delivery {
        Due::Season(d) => sql::leagues::record_attempt(&state.db, d, status, error, outcome).await,
        Due::Board(d) => {
            sql::board_webhooks::record_attempt(&state.db, d, status, error, outcome).await
        }
    };
    if let Err(err) = recorded {
        tracing::warn!(error = %err, delivery = outgoing.id, "cannot record a webhook attempt");
    }
}

/// Sends one attempt, signed at `now`: the receiver's status, and why it failed.
async fn send(
    state: &AppState,
    client: &reqwest::Client,
    outgoing: &Outgoing<'_>,
    now: DateTime<Utc>,
) -> (Option<reqwest::StatusCode>, Option<String>) {
    if let Some(refusal) =
        outbound::literal_refusal(outgoing.url, state.settings.webhook_allow_private)
    {
        return (None, Some(refusal));
    }
    let secrets: Vec<&str> = outgoing.secrets.iter().map(String::as_str).collect();
    let sent = client
        .post(outgoing.url)
        .header("Content-Type", "application/json")
        .header(
            SIGNATURE_HEADER,
            webhook::signature(&secrets, now.timestamp(), outgoing.id, outgoing.body),
        )
        .header(DELIVERY_HEADER, outgoing.id.to_string())
        .body(outgoing.body.to_owned())
        .send()
        .await;
    match sent {
        Ok(response) if response.status().is_success() => (Some(response.status()), None),
        Ok(response) if response.status().is_redirection() => (
            Some(response.status()),
            Some(format!(
                "answered {} (redirects are not followed: set the URL it names)",
                response.status()
            )),
        ),
        Ok(response) => (
            Some(response.status()),
            Some(format!("answered {}", response.status())),
        ),
        Err(err) => (None, Some(error_chain(&err))),
    }
}

/// An error with its causes: reqwest's own message names only the outermost step.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
