//! Dashboard sessions: what a session's cookie names, and how long a session lives.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long dashboard sessions live: `idle` after the last request, `absolute` at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionPolicy {
    pub idle: Duration,
    pub absolute: Duration,
}

/// A dashboard session: its random id and when it started (seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTicket {
    pub user: String,
    pub id: String,
    pub started: i64,
}

impl SessionPolicy {
    /// Seconds the session may live from `now` without a request: the idle timeout,
    /// cut short by the absolute end. Zero or less means it has ended.
    pub fn ttl_s(&self, ticket: &SessionTicket, now: i64) -> i64 {
        let left = ticket.started + self.absolute.as_secs() as i64 - now;
        left.min(self.idle.as_secs() as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_lives_the_idle_timeout_until_its_absolute_end_cuts_it_short() {
        let policy = SessionPolicy {
            idle: Duration::from_secs(600),
            absolute: Duration::from_secs(3_600),
        };
        let ticket = SessionTicket {
            user: "ops".into(),
            id: "x".into(),
            started: 1_000,
        };
        assert_eq!(policy.ttl_s(&ticket, 1_000), 600);
        assert_eq!(policy.ttl_s(&ticket, 4_000), 600);
        assert_eq!(policy.ttl_s(&ticket, 4_300), 300);
        assert_eq!(policy.ttl_s(&ticket, 4_600), 0);
        assert_eq!(policy.ttl_s(&ticket, 5_000), -400);
    }
}
