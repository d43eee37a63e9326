//! Held votes under review: what a watch held (see `domain::watch`), gathered per flagged
//! subject, and what a review does with them.

use std::collections::BTreeMap;

use super::Invalid;
use super::code::Code;

/// Where a held vote stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HeldState {
    /// Waiting for review: counted nowhere.
    Held,
    /// Counted, in the buckets of its own time, as if accepted when cast.
    Released,
    /// Never counted.
    Dropped,
}

impl HeldState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Released => "released",
            Self::Dropped => "dropped",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "held" => Some(Self::Held),
            "released" => Some(Self::Released),
            "dropped" => Some(Self::Dropped),
            _ => None,
        }
    }
}

/// What a review does to a subject's held votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewAction {
    /// An operator counts them.
    Release,
    /// An operator drops them.
    Drop,
    /// Nobody reviewed them within the retention: dropped.
    Expire,
}

impl ReviewAction {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "release" => Ok(Self::Release),
            "drop" => Ok(Self::Drop),
            _ => Err(Invalid::new(
                Code::InvalidField,
                format!("unknown action {raw:?} (want release or drop)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Drop => "drop",
            Self::Expire => "expire",
        }
    }

    /// The state the reviewed votes end in.
    pub fn outcome(self) -> HeldState {
        match self {
            Self::Release => HeldState::Released,
            Self::Drop | Self::Expire => HeldState::Dropped,
        }
    }
}

/// One held vote, as the review queue keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldVote {
    /// Its place in the board's ledger.
    pub seq: i64,
    pub entry_id: i64,
    pub watch: i64,
    pub subject: String,
    pub member: String,
    pub voter: Option<String>,
    pub ip: Option<String>,
    pub at_ms: i64,
    pub votes: i64,
    pub state: HeldState,
}

/// A flagged subject: one watch's subject that has held votes, with what became of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flagged {
    pub watch: i64,
    pub subject: String,
    /// Votes (their counts summed) still held, released and dropped.
    pub held: i64,
    pub released: i64,
    pub dropped: i64,
    /// The first and last held vote's time (ms since the epoch).
    pub first_ms: i64,
    pub last_ms: i64,
    /// Votes still held, per member they went to.
    pub members: BTreeMap<String, i64>,
    /// A few of the held votes' voters and addresses.
    pub voters: Vec<String>,
    pub ips: Vec<String>,
}

/// A review asked for: a subject of a watch, or one member's votes among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    pub watch: i64,
    pub subject: String,
    pub member: Option<String>,
    pub action: ReviewAction,
}

/// A review done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub id: i64,
    pub request: ReviewRequest,
    pub actor: String,
    /// Votes it reviewed (their counts summed).
    pub votes: i64,
}
