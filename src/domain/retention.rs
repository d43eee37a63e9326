//! How long a closed bucket stays in Redis, and how much of it the archive keeps.
//!
//! `retention` gives days per period kind after a bucket closes (`None`: forever); the
//! all-time board and rolling windows have no closed buckets. A bucket's keys get their
//! expiry only when it is archived, so they never expire before it is.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use super::Invalid;
use super::code::Code;
use super::period::{Bucket, Period, voter_days};

/// The longest retention: a hundred years.
pub const MAX_DAYS: i64 = 36_500;
/// Most entries of each view the archive keeps per bucket.
pub const ARCHIVE_TOP_MAX: i64 = 10_000;
pub const ARCHIVE_TOP_DEFAULT: i64 = 1_000;

/// A write whose time is more than this before it arrives is late: its hour is marked,
/// and the archive task archives the closed buckets holding it again.
pub const LATE_AFTER: Duration = Duration::seconds(10);
/// How long after a bucket closes the archive task archives it: writes in flight at the
/// close land first, and any write after that is late (its time is before the close).
pub const ARCHIVE_AFTER: Duration = Duration::seconds(30);

/// Whether a write at `at` arriving at `now` is late.
pub fn is_late(at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now - at > LATE_AFTER
}

/// Days a closed bucket stays in Redis after it closed, per period kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub hour: Option<i64>,
    pub day: Option<i64>,
    pub week: Option<i64>,
    pub month: Option<i64>,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            hour: Some(3),
            day: Some(60),
            week: Some(400),
            month: Some(800),
        }
    }
}

impl Retention {
    /// Checks each figure: whole days from 1 to [`MAX_DAYS`], or `None` for forever.
    pub fn new(
        hour: Option<i64>,
        day: Option<i64>,
        week: Option<i64>,
        month: Option<i64>,
    ) -> Result<Self, Invalid> {
        for (name, days) in [
            ("hour", hour),
            ("day", day),
            ("week", week),
            ("month", month),
        ] {
            if days.is_some_and(|d| !(1..=MAX_DAYS).contains(&d)) {
                return Err(Invalid::new(
                    Code::InvalidRetention,
                    format!(
                        "retention.{name} must be 1 to {MAX_DAYS} days, or null to keep it forever"
                    ),
                ));
            }
        }
        Ok(Self {
            hour,
            day,
            week,
            month,
        })
    }

    /// The days of `period`; `None` for one kept forever, and for `all`, rolling windows
    /// and trending periods, which never close.
    pub fn days(&self, period: Period) -> Option<i64> {
        match period {
            Period::Hour => self.hour,
            Period::Day => self.day,
            Period::Week => self.week,
            Period::Month => self.month,
            Period::All | Period::Rolling(_) | Period::Trending(_) => None,
        }
    }

    /// When a closed bucket's rankings may leave Redis: `retention` days after it
    /// closed; `None` to keep them.
    pub fn release_at(&self, bucket: &Bucket) -> Option<DateTime<Utc>> {
        bucket
            .end?
            .checked_add_signed(Duration::days(self.days(bucket.period)?))
    }

    /// When a day's voter HyperLogLogs may leave Redis. A week's and a month's distinct
    /// voters are the union of their days', so a day's stay as long as the latest of the
    /// day, week and month holding it among `periods` (the board's); `None` to keep them.
    pub fn day_voters_release_at(
        &self,
        day: &Bucket,
        periods: &[Period],
        tz: Tz,
    ) -> Option<DateTime<Utc>> {
        let start = day.start?;
        let mut latest: Option<DateTime<Utc>> = None;
        for period in [Period::Day, Period::Week, Period::Month] {
            if period != Period::Day && !periods.contains(&period) {
                continue;
            }
            let holding = Bucket::containing(period, tz, start).ok()?;
            let at = self.release_at(&holding)?;
            latest = Some(latest.map_or(at, |l| l.max(at)));
        }
        latest
    }

    /// The voter HyperLogLogs whose expiry an archived `bucket` sets, each (the bucket
    /// whose keys they are, when they may go): an hour's own; a day's, for as long as its
    /// week and month last; a week's or month's days when the board keeps no `day` (a
    /// kept day sets its own). Those kept forever are left out.
    pub fn voter_releases(
        &self,
        bucket: &Bucket,
        periods: &[Period],
        tz: Tz,
    ) -> Vec<(Bucket, DateTime<Utc>)> {
        let days = match bucket.period {
            Period::Hour => {
                return self
                    .release_at(bucket)
                    .map(|at| vec![(bucket.clone(), at)])
                    .unwrap_or_default();
            }
            Period::Day => vec![bucket.clone()],
            Period::Week | Period::Month if !periods.contains(&Period::Day) => {
                voter_days(bucket, tz)
            }
            _ => Vec::new(),
        };
        days.into_iter()
            .filter_map(|day| {
                let at = self.day_voters_release_at(&day, periods, tz)?;
                Some((day, at))
            })
            .collect()
    }

    /// As stored in SQL: `hour,day,week,month`, `-` for forever.
    pub fn encode(&self) -> String {
        [self.hour, self.day, self.week, self.month]
            .iter()
            .map(|d| d.map_or_else(|| "-".to_owned(), |d| d.to_string()))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn decode(raw: &str) -> Result<Self, Invalid> {
        let bad = || Invalid::new(Code::InvalidRetention, format!("bad retention {raw:?}"));
        let days: Vec<Option<i64>> = raw
            .split(',')
            .map(|d| match d {
                "-" => Ok(None),
                d => d.parse().map(Some).map_err(|_| bad()),
            })
            .collect::<Result<_, _>>()?;
        let [hour, day, week, month] = days[..] else {
            return Err(bad());
        };
        Self::new(hour, day, week, month)
    }
}

/// Checks `archive_top`: 1 to [`ARCHIVE_TOP_MAX`].
pub fn check_archive_top(n: i64) -> Result<i64, Invalid> {
    if (1..=ARCHIVE_TOP_MAX).contains(&n) {
        Ok(n)
    } else {
        Err(Invalid::new(
            Code::InvalidArchiveTop,
            format!("archive_top must be 1 to {ARCHIVE_TOP_MAX}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::period::parse_instant;

    fn day(tz: Tz, at: &str) -> Bucket {
        Bucket::containing(Period::Day, tz, parse_instant(at).unwrap()).unwrap()
    }

    #[test]
    fn figures_are_checked_and_stored_as_text() {
        let r = Retention::default();
        assert_eq!(r.encode(), "3,60,400,800");
        assert_eq!(Retention::decode("3,60,400,800").unwrap(), r);
        let forever = Retention::new(Some(1), None, None, Some(36_500)).unwrap();
        assert_eq!(Retention::decode(&forever.encode()).unwrap(), forever);
        for bad in [(Some(0), None), (Some(-1), None), (None, Some(36_501))] {
            let err = Retention::new(bad.0, bad.1, None, None).unwrap_err();
            assert_eq!(err.code, Code::InvalidRetention);
        }
        assert_eq!(
            Retention::decode("3,60,400").unwrap_err().code,
            Code::InvalidRetention
        );
        assert_eq!(
            check_archive_top(0).unwrap_err().code,
            Code::InvalidArchiveTop
        );
        assert_eq!(check_archive_top(10_000).unwrap(), 10_000);
    }

    #[test]
    fn a_bucket_leaves_retention_days_after_it_closed_and_days_voters_with_their_month() {
        let r = Retention::default();
        let tz = Tz::UTC;
        let d = day(tz, "2026-11-10T12:00:00Z");
        assert_eq!(
            r.release_at(&d),
            Some(parse_instant("2027-01-10T00:00:00Z").unwrap())
        );
        assert_eq!(r.release_at(&Bucket::all()), None);
        // November closes on 2026-12-01; 800 days later.
        assert_eq!(
            r.day_voters_release_at(&d, &[Period::Day, Period::Month], tz),
            Some(parse_instant("2029-02-08T00:00:00Z").unwrap())
        );
        assert_eq!(
            r.day_voters_release_at(&d, &[Period::Day], tz),
            r.release_at(&d)
        );
        let forever_month = Retention::new(Some(3), Some(60), Some(400), None).unwrap();
        assert_eq!(
            forever_month.day_voters_release_at(&d, &[Period::Day, Period::Month], tz),
            None
        );
    }
}
