//! Board webhooks: a receiver told of a board's rank events — a member entering or
//! leaving a top, or overtaking another — as `domain::live` computes them from two
//! consecutive tops. Sent through an outbox, signed and guarded like league webhooks
//! (`domain::webhook`).

use chrono::{DateTime, Utc};

use super::Invalid;
use super::code::Code;
use super::live::{Event, RankChange};
use super::period::Period;
use super::score::View;

/// The rank events a webhook may ask for.
pub const EVENT_KINDS: [&str; 3] = ["entered_top", "left_top", "overtook"];

/// The most webhooks one board may have.
pub const MAX_PER_BOARD: usize = 20;

/// A board's webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardWebhook {
    pub id: i64,
    pub board_id: i64,
    pub url: String,
    /// The top it watches: its period, view and size.
    pub period: Period,
    pub view: View,
    pub top: i64,
    /// The rank events it is sent, from [`EVENT_KINDS`].
    pub events: Vec<&'static str>,
    /// Signs its deliveries (HMAC-SHA256).
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

/// Rank events, in the order they happened.
pub type RankChangeList<'a> = [&'a RankChange];

impl BoardWebhook {
    /// The events of `changes` this webhook is sent, in order.
    pub fn wanted<'a>(&self, changes: &'a [Event]) -> Vec<&'a RankChange> {
        changes
            .iter()
            .filter_map(|e| match e {
                Event::Rank(change) if self.events.contains(&change.kind) => Some(change),
                _ => None,
            })
            .collect()
    }
}

/// The event kinds `raw` names (every kind when `None`): known, at least one, each once
/// (an `invalid_field` of `events` when not).
pub fn parse_events(raw: Option<&[String]>) -> Result<Vec<&'static str>, Invalid> {
    let Some(raw) = raw else {
        return Ok(EVENT_KINDS.to_vec());
    };
    let bad = |why: String| Invalid::new(Code::InvalidField, why);
    let mut events = Vec::new();
    for name in raw {
        let kind = EVENT_KINDS.iter().find(|k| **k == name).ok_or_else(|| {
            bad(format!(
                "events: {name:?} is not one of {}",
                EVENT_KINDS.join(", ")
            ))
        })?;
        if !events.contains(kind) {
            events.push(*kind);
        }
    }
    if events.is_empty() {
        return Err(bad(
            "events must name at least one of entered_top, left_top, overtook".into(),
        ));
    }
    Ok(events)
}

/// A board webhook's delivery, from its outbox; signed when sent with the webhook's
/// secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardDelivery {
    pub id: i64,
    pub webhook_id: i64,
    pub board_id: i64,
    pub url: String,
    pub body: String,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// When it was given up (failing for [`crate::domain::webhook::GIVE_UP_AFTER`]).
    pub gave_up_at: Option<DateTime<Utc>>,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_default_to_every_kind_and_must_be_known() {
        assert_eq!(parse_events(None).unwrap(), EVENT_KINDS.to_vec());
        let some = vec!["overtook".to_owned(), "overtook".to_owned()];
        assert_eq!(parse_events(Some(&some)).unwrap(), vec!["overtook"]);
        let bad = vec!["moved".to_owned()];
        assert_eq!(
            parse_events(Some(&bad)).unwrap_err().code,
            Code::InvalidField
        );
        assert_eq!(
            parse_events(Some(&[])).unwrap_err().code,
            Code::InvalidField
        );
    }
}
