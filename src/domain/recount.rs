//! Recounting a period from the ledger: a walk over a board's entries in time order that
//! answers each bucket's scores as the vote script made them — both views, and
//! carry-over into the next bucket's display view — one bucket at a time, so memory
//! holds one bucket's members per period however long the ledger.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::Invalid;
use super::code::Code;
use super::period::{Bucket, Period};

/// Member → units.
pub type Scores = HashMap<String, i64>;

/// One bucket as the ledger counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub bucket: Bucket,
    pub real: Scores,
    pub display: Scores,
}

impl Counted {
    fn new(bucket: Bucket) -> Self {
        Self {
            bucket,
            real: Scores::new(),
            display: Scores::new(),
        }
    }
}

/// One vote as the walk needs it: when it counted, for whom, and its units (real, display
/// and carried into the next bucket; see `domain::ledger::Entry`).
#[derive(Debug, Clone, Copy)]
pub struct Counting<'a> {
    pub at: DateTime<Utc>,
    pub member: &'a str,
    pub real: i64,
    pub display: i64,
    pub carry: i64,
}

/// The walk of one period (a calendar period or `all`) over votes in time order.
#[derive(Debug)]
pub struct BucketWalk {
    period: Period,
    tz: Tz,
    current: Option<Counted>,
    /// What the current bucket's votes carry into the next bucket's display view.
    carry: Scores,
}

impl BucketWalk {
    pub fn new(period: Period, tz: Tz) -> Self {
        Self {
            period,
            tz,
            current: None,
            carry: Scores::new(),
        }
    }

    /// The period it walks.
    pub fn period(&self) -> Period {
        self.period
    }

    /// Counts one vote; `vote.at` must not be before the previous vote's. Answers the
    /// buckets it closed, oldest first: the one before it and, when nothing was counted
    /// in the bucket after that, the bucket its carry-over went to.
    pub fn add(&mut self, vote: Counting<'_>) -> Result<Vec<Counted>, Invalid> {
        let mut closed = Vec::new();
        let inside = self.current.as_ref().is_some_and(|c| {
            c.bucket.start.is_none_or(|s| s <= vote.at) && c.bucket.end.is_none_or(|e| vote.at < e)
        });
        if !inside {
            let bucket = Bucket::containing(self.period, self.tz, vote.at)?;
            if let Some(current) = &self.current
                && current.bucket.start > bucket.start
            {
                return Err(Invalid::new(
                    Code::InvalidTimestamp,
                    "ledger entries must come in time order",
                ));
            }
            self.close(Some(bucket), &mut closed);
        }
        let current = self.current.as_mut().expect("a bucket is open");
        *current.real.entry(vote.member.to_owned()).or_insert(0) += vote.real;
        *current.display.entry(vote.member.to_owned()).or_insert(0) += vote.display;
        if self.period.is_periodic() && vote.carry != 0 {
            *self.carry.entry(vote.member.to_owned()).or_insert(0) += vote.carry;
        }
        Ok(closed)
    }

    /// Closes what is open: the current bucket, and the one its carry-over went to.
    pub fn finish(mut self) -> Vec<Counted> {
        let mut closed = Vec::new();
        self.close(None, &mut closed);
        closed
    }

    /// Closes the current bucket and opens `next` (none: the walk ends), with the
    /// carry-over it inherits when it directly follows.
    fn close(&mut self, next: Option<Bucket>, closed: &mut Vec<Counted>) {
        let carried = std::mem::take(&mut self.carry);
        let mut opened = next.map(Counted::new);
        if let Some(current) = self.current.take() {
            let follows = current.bucket.next(self.tz);
            closed.push(current);
            if !carried.is_empty()
                && let Some(follows) = follows
            {
                match &mut opened {
                    Some(open) if open.bucket == follows => open.display = carried,
                    _ => closed.push(Counted {
                        display: carried,
                        ..Counted::new(follows)
                    }),
                }
            }
        }
        self.current = opened;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::{Duration, TimeZone};
    use proptest::prelude::*;

    use super::*;

    /// Bucket label → member → (real, display), dropping what stayed 0.
    type Model = BTreeMap<String, BTreeMap<String, (i64, i64)>>;

    fn brute_force(period: Period, tz: Tz, votes: &[(i64, usize, i64, i64, i64)]) -> Model {
        let mut model = Model::new();
        for &(at, member, real, display, carry) in votes {
            let at = Utc.timestamp_opt(at, 0).unwrap();
            let bucket = Bucket::containing(period, tz, at).unwrap();
            let m = format!("m{member}");
            let e = model
                .entry(bucket.label.clone())
                .or_default()
                .entry(m.clone())
                .or_default();
            e.0 += real;
            e.1 += display;
            if period.is_periodic() && carry != 0 {
                let next = bucket.next(tz).unwrap();
                model.entry(next.label).or_default().entry(m).or_default().1 += carry;
            }
        }
        model
    }

    fn walked(period: Period, tz: Tz, votes: &[(i64, usize, i64, i64, i64)]) -> Model {
        let mut walk = BucketWalk::new(period, tz);
        let mut closed = Vec::new();
        for &(at, member, real, display, carry) in votes {
            let member = format!("m{member}");
            closed.extend(
                walk.add(Counting {
                    at: Utc.timestamp_opt(at, 0).unwrap(),
                    member: &member,
                    real,
                    display,
                    carry,
                })
                .unwrap(),
            );
        }
        closed.extend(walk.finish());
        let mut model = Model::new();
        let mut labels = Vec::new();
        for c in closed {
            labels.push(c.bucket.label.clone());
            let bucket = model.entry(c.bucket.label).or_default();
            for (m, units) in c.real {
                bucket.entry(m).or_default().0 += units;
            }
            for (m, units) in c.display {
                bucket.entry(m).or_default().1 += units;
            }
        }
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(unique, labels, "each bucket closes once");
        model
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Votes over six weeks around a DST change, in time order: every bucket of every
        /// period equals the brute-force sum, carry-over included.
        #[test]
        fn the_walk_counts_every_bucket_as_the_votes_sum(
            mut votes in proptest::collection::vec(
                (0i64..6 * 7 * 86_400, 0usize..4, 1i64..5, 0i64..5_000_000, 0i64..500_000),
                0..120,
            ),
            sparse in any::<bool>(),
        ) {
            let tz: Tz = "Europe/Berlin".parse().unwrap();
            let start = Utc.with_ymd_and_hms(2026, 10, 5, 0, 0, 0).unwrap().timestamp();
            for v in &mut votes {
                // Sparse: gaps of days between votes, so carry-over lands in buckets
                // nothing else was counted in.
                v.0 = start + if sparse { v.0 / 3_600 * 86_400 % (6 * 7 * 86_400) } else { v.0 };
            }
            votes.sort_by_key(|v| v.0);
            for period in [Period::Hour, Period::Day, Period::Week, Period::Month, Period::All] {
                prop_assert_eq!(walked(period, tz, &votes), brute_force(period, tz, &votes), "{}", period);
            }
        }
    }

    #[test]
    fn a_vote_before_the_last_one_is_refused() {
        let tz = Tz::UTC;
        let at = Utc.with_ymd_and_hms(2026, 11, 25, 10, 0, 0).unwrap();
        let mut walk = BucketWalk::new(Period::Hour, tz);
        let vote = |at| Counting {
            at,
            member: "m1",
            real: 1,
            display: 1,
            carry: 0,
        };
        assert!(walk.add(vote(at)).unwrap().is_empty());
        assert_eq!(
            walk.add(vote(at - Duration::hours(2))).unwrap_err().code,
            Code::InvalidTimestamp
        );
    }
}
