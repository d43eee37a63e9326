//! The vote ledger's entry: one accepted write, as its script records it in Redis and
//! the drain moves it to SQL, where it gets its place (`seq`, per board, gapless).

use serde::{Deserialize, Serialize};

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
}

/// An entry in SQL: its place in the board's ledger and, once revoked, the revocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub seq: i64,
    pub entry: Entry,
    pub revoked: Option<i64>,
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
        };
        assert_eq!(Entry::decode(&vote.encode()), Some(vote.clone()));
        let score = Entry {
            op: Some(Op::Best),
            value: Some(12_345),
            count: 1,
            display: 0,
            carry: 0,
            ..vote
        };
        assert_eq!(Entry::decode(&score.encode()), Some(score));
        assert_eq!(Entry::decode("not json"), None);
    }
}
