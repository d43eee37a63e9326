//! The webhook outbox: a season's close writes its delivery in the close's transaction;
//! every instance's league task sends the deliveries that are due. An instance claims a
//! delivery for one attempt (moving its next attempt forward, a compare-and-set in SQL),
//! so two instances do not send it at once. A delivery is retried, with the delay
//! doubling from 1 s up to an hour, until the receiver answers 2xx.

use std::sync::LazyLock;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::state::AppState;
use crate::domain::league::Delivery;
use crate::store::sql;

/// The header carrying `sha256=<hex HMAC-SHA256 of the body, keyed by the league's
/// webhook secret>`.
pub const SIGNATURE_HEADER: &str = "X-Ovation-Signature";
/// The header carrying the delivery's id (the same on every retry).
pub const DELIVERY_HEADER: &str = "X-Ovation-Delivery";
/// How long an attempt may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Deliveries one check sends at most.
const BATCH: u64 = 20;
/// The longest wait between two attempts.
const MAX_DELAY_S: i64 = 3600;

static CLIENT: LazyLock<reqwest::Client> = LazyLock::new(|| {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .unwrap_or_default()
});

/// The signature a webhook delivery carries: `sha256=<hex HMAC-SHA256 of the body>`.
pub fn signature(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(body.as_bytes());
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The wait after a delivery's `attempts`th failed attempt: 1 s, 2 s, 4 s, … an hour.
pub fn backoff(attempts: i32) -> TimeDelta {
    let exp = attempts.clamp(1, 13) - 1;
    TimeDelta::seconds((1_i64 << exp).min(MAX_DELAY_S))
}

/// Sends every delivery that is due (those another instance claims first excepted).
pub async fn deliver_due(state: &AppState) {
    let due = match sql::leagues::due_deliveries(&state.db, Utc::now(), BATCH).await {
        Ok(due) => due,
        Err(err) => {
            tracing::debug!(error = %err, "cannot read the webhook outbox");
            return;
        }
    };
    for delivery in due {
        let claim_until = Utc::now() + TimeDelta::from_std(TIMEOUT * 3).unwrap_or_default();
        match sql::leagues::claim_delivery(&state.db, &delivery, claim_until).await {
            Ok(true) => attempt(state, &delivery).await,
            Ok(false) => {}
            Err(err) => tracing::debug!(error = %err, "cannot claim a webhook delivery"),
        }
    }
}

async fn attempt(state: &AppState, delivery: &Delivery) {
    let sent = CLIENT
        .post(&delivery.url)
        .header("Content-Type", "application/json")
        .header(SIGNATURE_HEADER, &delivery.signature)
        .header(DELIVERY_HEADER, delivery.id.to_string())
        .body(delivery.body.clone())
        .send()
        .await;
    let (status, error) = match sent {
        Ok(response) if response.status().is_success() => (Some(response.status()), None),
        Ok(response) => (
            Some(response.status()),
            Some(format!("answered {}", response.status())),
        ),
        Err(err) => (None, Some(err.to_string())),
    };
    let next = error
        .is_some()
        .then(|| Utc::now() + backoff(delivery.attempts + 1));
    crate::metrics::webhook_delivery(if next.is_none() {
        "delivered"
    } else {
        "failed"
    });
    let status = status.map(|s| i32::from(s.as_u16()));
    if let Err(err) = sql::leagues::record_attempt(&state.db, delivery, status, error, next).await {
        tracing::warn!(error = %err, delivery = delivery.id, "cannot record a webhook attempt");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_up_to_an_hour() {
        let delays: Vec<i64> = [1, 2, 3, 12, 13, 40]
            .into_iter()
            .map(|a| backoff(a).num_seconds())
            .collect();
        assert_eq!(delays, [1, 2, 4, 2048, 3600, 3600]);
    }
}
