//! The vote ledger's entry: one accepted write, as its script records it in Redis and
//! the drain moves it to SQL, where it gets its place (`seq`, per board, gapless).

use std::borrow::Cow;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Invalid;
use super::adjustment::target_period;
use super::code::Code;
use super::ids::VoterId;
use super::period::Period;
use super::reason;
use super::scoring::Op;

/// One accepted write. A vote carries its `count` and the units it added to the display
/// view and carried into the next bucket; a score write its operator and value (units),
/// with `count` 1. `id` is unique per write (chosen at random when the write is
/// prepared): the drain knows by it which entries SQL already holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: i64,
    /// The write's time (ms since the epoch): a backfill's `at`, else when it arrived.
    pub at: i64,
    /// When the write arrived (ms since the epoch).
    pub recorded: i64,
    pub member: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    pub count: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    /// Display units the write added (millionths; 0 for a score write).
    #[serde(default)]
    pub display: i64,
    /// Display units it carried into the next bucket (millionths; 0 for none).
    #[serde(default)]
    pub carry: i64,
    /// An adjustment's bucket (`<period>:<label>`, see `domain::adjustment`): it counts
    /// there alone, its `at` inside it; `None` for a write, which counts in every period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusts: Option<String>,
    /// The end user's address (as the write gave it), recorded on a board with watches:
    /// a held vote's review shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Set on a vote a watch held for review (see `domain::watch`): it counts nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
    /// A held vote released by a review: the held entry's id. This entry counts it, at
    /// the held vote's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releases: Option<i64>,
}

/// Which watch held a vote, and the subject it counted the vote under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub watch: i64,
    pub subject: String,
}

impl Entry {
    /// The entry as its script stores it in Redis.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// An entry as Redis holds it; `None` when it is not one.
    pub fn decode(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// The id of an entry as Redis holds it, read where [`Entry::encode`] puts it (first)
    /// without reading the rest; `None` when the text does not begin as an entry does.
    pub fn id_in(text: &str) -> Option<i64> {
        let rest = text.strip_prefix("{\"id\":")?;
        rest[..rest.find(',')?].parse().ok()
    }

    /// Whether an entry as Redis holds it carries a watch's mark (see `domain::watch`):
    /// its text holds the field. A quote inside a string is escaped in the text, so no
    /// member, voter or subject can spell the field out.
    pub fn held_in(text: &str) -> bool {
        text.contains(",\"held\":{")
    }

    /// Whether it counts at all: a held vote does not.
    pub fn counts(&self) -> bool {
        self.held.is_none()
    }

    /// Whether it counts in `period`'s buckets: a write in every period's, an adjustment
    /// in its own period's only; a held vote in none.
    pub fn counts_in(&self, period: Period) -> bool {
        self.counts()
            && self
                .adjusts
                .as_deref()
                .is_none_or(|target| target_period(target) == Some(period))
    }
}

/// What PostgreSQL's and MariaDB's drain read of an entry as Redis holds it, for the
/// columns beside it: its time and voter, borrowed from the text where they need no
/// unescaping (SQLite reads them from the JSON itself).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EntryHead<'a> {
    pub at: i64,
    #[serde(default, borrow)]
    pub voter: Option<Cow<'a, str>>,
}

impl<'a> EntryHead<'a> {
    /// An entry's head, as Redis holds the entry; `None` when it is not one.
    pub fn decode(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

/// An entry in SQL: its place in the board's ledger and, once revoked, the revocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub seq: i64,
    pub entry: Entry,
    pub revoked: Option<i64>,
}

/// A voter's votes struck out of a board: those accepted in `[from, to)` (open ends:
/// from the first, up to the revocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    pub id: i64,
    pub voter: String,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub reason: String,
    pub actor: String,
    pub created_at: DateTime<Utc>,
    /// Votes struck out (their counts summed), and per member.
    pub votes: i64,
    pub by_member: BTreeMap<String, i64>,
}

/// A revocation asked for, checked: a voter, a time range whose start comes before its
/// end, and a reason (see [`reason::check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevocationRequest {
    pub voter: VoterId,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub reason: String,
}

impl RevocationRequest {
    pub fn new(
        voter: VoterId,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        reason: String,
    ) -> Result<Self, Invalid> {
        if let (Some(from), Some(to)) = (from, to)
            && from >= to
        {
            return Err(Invalid::new(Code::InvalidWindow, "from must be before to"));
        }
        reason::check(&reason)?;
        Ok(Self {
            voter,
            from,
            to,
            reason,
        })
    }

    /// Whether a vote at `at_ms` falls in the range.
    pub fn covers(&self, at_ms: i64) -> bool {
        self.from.is_none_or(|f| f.timestamp_millis() <= at_ms)
            && self.to.is_none_or(|t| at_ms < t.timestamp_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_as_written() {
        let vote = Entry {
            id: -7,
            at: 1_764_000_000_000,
            recorded: 1_764_000_000_123,
            member: "m1".into(),
            voter: Some("用户 7|x".into()),
            channel: Some("app".into()),
            terminal: None,
            count: 3,
            op: None,
            value: None,
            display: 4_500_000,
            carry: 450_000,
            adjusts: None,
            ip: None,
            held: None,
            releases: None,
        };
        assert_eq!(Entry::decode(&vote.encode()), Some(vote.clone()));
        let score = Entry {
            op: Some(Op::Best),
            value: Some(12_345),
            count: 1,
            display: 0,
            carry: 0,
            ..vote.clone()
        };
        assert_eq!(Entry::decode(&score.encode()), Some(score));
        let text = vote.encode();
        let head = EntryHead::decode(&text).unwrap();
        assert_eq!(head.at, 1_764_000_000_000);
        assert_eq!(Entry::id_in(&text), Some(-7));
        assert!(!Entry::held_in(&text));
        assert_eq!(head.voter.as_deref(), Some("用户 7|x"));
        let escaped = Entry {
            voter: Some("a\"b\\c".into()),
            ..vote.clone()
        }
        .encode();
        assert_eq!(
            EntryHead::decode(&escaped).unwrap().voter.as_deref(),
            Some("a\"b\\c")
        );
        let adjustment = Entry {
            voter: None,
            count: 5,
            display: 0,
            adjusts: Some("day:2026-11-25".into()),
            ip: None,
            held: None,
            releases: None,
            ..vote.clone()
        };
        assert_eq!(
            Entry::decode(&adjustment.encode()),
            Some(adjustment.clone())
        );
        assert_eq!(EntryHead::decode(&adjustment.encode()).unwrap().voter, None);
        assert!(vote.counts_in(Period::Week) && vote.counts_in(Period::All));
        assert!(adjustment.counts_in(Period::Day));
        assert!(!adjustment.counts_in(Period::Week) && !adjustment.counts_in(Period::All));
        assert_eq!(Entry::decode("not json"), None);
        assert_eq!(Entry::id_in("not json"), None);
        assert_eq!(Entry::id_in("{\"id\":x,"), None);
        let spelled = Entry {
            voter: Some(",\"held\":{".into()),
            member: "m,\"held\":{\"watch\":1}".into(),
            ..vote.clone()
        };
        assert!(!Entry::held_in(&spelled.encode()));
        let held = Entry {
            held: Some(Held {
                watch: 3,
                subject: "10.0.0.0/24".into(),
            }),
            ..spelled
        };
        assert!(Entry::held_in(&held.encode()));
        // As the vote's script marks it: the field added at the end.
        let marked = format!(
            "{},\"held\":{{\"watch\":3,\"subject\":\"x\"}}}}",
            vote.encode().strip_suffix('}').unwrap()
        );
        assert!(Entry::held_in(&marked));
        assert_eq!(Entry::decode(&marked).unwrap().held.unwrap().watch, 3);
    }

    #[test]
    fn a_revocation_needs_a_reason_and_a_range_that_runs_forward() {
        let voter = VoterId::parse("bot-1").unwrap();
        let at = |s: &str| Some(s.parse::<DateTime<Utc>>().unwrap());
        let ok = RevocationRequest::new(
            voter.clone(),
            at("2026-11-24T00:00:00Z"),
            at("2026-11-25T00:00:00Z"),
            "bought votes".into(),
        )
        .unwrap();
        let ms = |s: &str| at(s).unwrap().timestamp_millis();
        assert!(ok.covers(ms("2026-11-24T00:00:00Z")));
        assert!(!ok.covers(ms("2026-11-25T00:00:00Z")));
        assert!(!ok.covers(ms("2026-11-23T23:59:59Z")));
        let open = RevocationRequest::new(voter.clone(), None, None, "x".into()).unwrap();
        assert!(open.covers(0) && open.covers(i64::MAX));
        for (from, to, reason, code) in [
            (
                at("2026-11-25T00:00:00Z"),
                at("2026-11-25T00:00:00Z"),
                "x",
                Code::InvalidWindow,
            ),
            (None, None, " ", Code::InvalidField),
        ] {
            assert_eq!(
                RevocationRequest::new(voter.clone(), from, to, reason.into())
                    .unwrap_err()
                    .code,
                code
            );
        }
    }
}
