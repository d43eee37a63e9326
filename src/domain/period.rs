//! Period arithmetic: which bucket of which period a moment falls in, in a board's timezone.
//!
//! This is the only place that turns instants into bucket labels and back. Buckets are
//! local: a day starts at local midnight, an hour at the top of the local hour, a week on
//! the ISO Monday, a month on the 1st. Around DST changes:
//! - a day is 23 or 25 hours long, from one local midnight to the next;
//! - when a local hour repeats (clocks fall back), the two different hours get different
//!   labels: both carry their UTC offset, `2024-11-03T01-04:00` then `2024-11-03T01-05:00`;
//!   a plain `2024-11-03T01` is then refused as ambiguous;
//! - a local hour skipped by clocks springing forward has no bucket.
//!
//! Hour buckets are one hour long and start at the local hour's top in the offset in force;
//! zones whose DST shift is not a whole hour (only Australia/Lord_Howe today) get hour
//! buckets that overlap by the shift around a change.

use std::cell::RefCell;
use std::fmt;
use std::sync::LazyLock;

use crate::domain::code::Code;
use chrono::{
    DateTime, Datelike, Days, Duration, FixedOffset, LocalResult, Months, NaiveDate, NaiveDateTime,
    NaiveTime, Offset, TimeZone, Timelike, Utc, Weekday,
};
use chrono_tz::Tz;

use super::Invalid;

/// A kind of leaderboard period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Hour,
    Day,
    Week,
    Month,
    All,
    /// A window that slides: no buckets, no resets (see [`Rolling`]).
    Rolling(Rolling),
    /// Scores that decay: no buckets, no resets, a vote's weight halves every half-life
    /// (see [`HalfLife`]).
    Trending(HalfLife),
}

impl Period {
    /// The period a read uses when the request names none: `all` when the board keeps
    /// it, else the board's shortest period.
    pub fn default_of(periods: &[Period]) -> Period {
        if periods.contains(&Period::All) {
            Period::All
        } else {
            periods.first().copied().unwrap_or(Period::All)
        }
    }

    /// The calendar periods and `all`, shortest first: what a board keeps by default.
    pub const CALENDAR: [Period; 5] = [
        Period::Hour,
        Period::Day,
        Period::Week,
        Period::Month,
        Period::All,
    ];

    /// Every kind of period: the calendar ones, then rolling windows of each unit, then a
    /// trending period.
    pub const EVERY: [Period; 8] = [
        Period::Hour,
        Period::Day,
        Period::Week,
        Period::Month,
        Period::All,
        Period::Rolling(Rolling::HOURS_24),
        Period::Rolling(Rolling::DAYS_7),
        Period::Trending(HalfLife::HOURS_24),
    ];

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "hour" => Ok(Self::Hour),
            "day" => Ok(Self::Day),
            "week" => Ok(Self::Week),
            "month" => Ok(Self::Month),
            "all" => Ok(Self::All),
            rolling if rolling.starts_with("rolling:") => {
                Rolling::parse(rolling).map(Self::Rolling)
            }
            trending if trending.starts_with("trending:") => {
                HalfLife::parse(trending).map(Self::Trending)
            }
            _ => Err(Invalid::new(
                Code::InvalidPeriod,
                format!(
                    "unknown period {raw:?} (want hour, day, week, month, all, rolling:Nh, rolling:Nd or trending:Nh)"
                ),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::All => "all",
            Self::Rolling(window) => window.as_str(),
            Self::Trending(half_life) => half_life.as_str(),
        }
    }

    /// Whether the period has buckets that end: the calendar periods (not `all`, not a
    /// rolling window).
    pub fn is_periodic(self) -> bool {
        matches!(self, Self::Hour | Self::Day | Self::Week | Self::Month)
    }

    /// The rolling window this period is, if it is one.
    pub fn rolling(self) -> Option<Rolling> {
        match self {
            Self::Rolling(window) => Some(window),
            _ => None,
        }
    }

    /// The half-life of this trending period, if it is one.
    pub fn trending(self) -> Option<HalfLife> {
        match self {
            Self::Trending(half_life) => Some(half_life),
            _ => None,
        }
    }

    /// Whether the period's rankings are buckets of exact scores (the calendar periods
    /// and `all`), not a rolling window's or a trending period's.
    pub fn is_bucketed(self) -> bool {
        !matches!(self, Self::Rolling(_) | Self::Trending(_))
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many calendar buckets each thread keeps (see [`Bucket::containing`]): a vote's
/// buckets and the next ones its carry-over goes to, for a few periods and timezones.
const BUCKETS_KEPT: usize = 16;

thread_local! {
    /// The calendar buckets this thread found last (with their timezone), and where the
    /// next one goes: the oldest's place once they are [`BUCKETS_KEPT`].
    static LAST_BUCKETS: RefCell<(Vec<(Tz, Bucket)>, usize)> =
        const { RefCell::new((Vec::new(), 0)) };
}

/// One bucket of a period: its label and the instants it spans (`None` for `all`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub period: Period,
    pub label: String,
    pub start: Option<DateTime<Utc>>,
    /// Exclusive end: when the bucket resets.
    pub end: Option<DateTime<Utc>>,
}

impl Bucket {
    /// The all-time bucket.
    pub fn all() -> Self {
        Self {
            period: Period::All,
            label: "all".to_owned(),
            start: None,
            end: None,
        }
    }

    /// A trending period's one bucket: it has no start and no end.
    pub fn trending(half_life: HalfLife) -> Self {
        Self {
            period: Period::Trending(half_life),
            label: half_life.as_str().to_owned(),
            start: None,
            end: None,
        }
    }

    /// The bucket of `period` that holds the instant `at`, in timezone `tz`.
    ///
    /// Every step is checked arithmetic: an instant outside the supported range (see
    /// [`check_supported`]), or a bucket that would end past it, is `invalid_bucket`.
    pub fn containing(period: Period, tz: Tz, at: DateTime<Utc>) -> Result<Self, Invalid> {
        check_supported(at).map_err(|_| out_of_range(period, &at.to_rfc3339()))?;
        if !period.is_periodic() {
            return Self::compute(period, tz, at);
        }
        // A calendar bucket holds every instant from its start to its end: the writes of
        // one moment find theirs (and the next ones) among the buckets found last.
        let found = LAST_BUCKETS.with_borrow(|(kept, _)| {
            kept.iter()
                .find(|(z, b)| b.period == period && *z == tz && b.holds(at))
                .map(|(_, b)| b.clone())
        });
        if let Some(bucket) = found {
            return Ok(bucket);
        }
        let bucket = Self::compute(period, tz, at)?;
        LAST_BUCKETS.with_borrow_mut(|(kept, oldest)| {
            let entry = (tz, bucket.clone());
            if kept.len() < BUCKETS_KEPT {
                kept.push(entry);
            } else {
                kept[*oldest] = entry;
                *oldest = (*oldest + 1) % BUCKETS_KEPT;
            }
        });
        Ok(bucket)
    }

    /// Whether `at` falls in this bucket: from its start, before its end.
    fn holds(&self, at: DateTime<Utc>) -> bool {
        self.start.is_some_and(|s| s <= at) && self.end.is_some_and(|e| at < e)
    }

    /// [`Self::containing`] worked out, for an instant in the supported range.
    fn compute(period: Period, tz: Tz, at: DateTime<Utc>) -> Result<Self, Invalid> {
        let overflow = || out_of_range(period, &at.to_rfc3339());
        let local = at.with_timezone(&tz);
        let naive = local.naive_local();
        let date = naive.date();
        let (label, start, end) = match period {
            Period::All => return Ok(Self::all()),
            Period::Trending(half_life) => return Ok(Self::trending(half_life)),
            Period::Rolling(window) => {
                let (from, _) = window.span(tz, at).ok_or_else(overflow)?;
                return Ok(Self {
                    period,
                    label: window.as_str().to_owned(),
                    start: Some(from),
                    end: None,
                });
            }
            Period::Hour => {
                let offset = local.offset().fix();
                let top = date.and_time(NaiveTime::MIN) + Duration::hours(i64::from(naive.hour()));
                let from = top
                    .checked_sub_signed(Duration::seconds(offset.local_minus_utc().into()))
                    .map(|t| Utc.from_utc_datetime(&t))
                    .ok_or_else(overflow)?;
                let (start, end) = hour_edges(tz, (date, naive.hour(), offset), from, at);
                let mut label = format!("{}T{:02}", day_label(date), naive.hour());
                // The same local hour at two offsets (clocks set back, by a whole hour or
                // by half of one) is two buckets: the label says which.
                let repeated = (0..60).any(|m| {
                    matches!(
                        tz.from_local_datetime(&(top + Duration::minutes(m))),
                        LocalResult::Ambiguous(..)
                    )
                });
                if repeated {
                    label.push_str(&offset.to_string());
                }
                (label, Some(start), end)
            }
            Period::Day => (
                day_label(date),
                day_start(tz, date),
                date.succ_opt()
                    .and_then(|next| day_start(tz, next))
                    .ok_or_else(overflow)?,
            ),
            Period::Week => {
                let monday = date
                    .checked_sub_days(Days::new(date.weekday().num_days_from_monday().into()))
                    .ok_or_else(overflow)?;
                let week = date.iso_week();
                (
                    format!("{:04}-W{:02}", week.year(), week.week()),
                    day_start(tz, monday),
                    monday
                        .checked_add_days(Days::new(7))
                        .and_then(|next| day_start(tz, next))
                        .ok_or_else(overflow)?,
                )
            }
            Period::Month => {
                let first = date.with_day(1).ok_or_else(overflow)?;
                (
                    format!("{:04}-{:02}", date.year(), date.month()),
                    day_start(tz, first),
                    first
                        .checked_add_months(Months::new(1))
                        .and_then(|next| day_start(tz, next))
                        .ok_or_else(overflow)?,
                )
            }
        };
        let start = start.ok_or_else(overflow)?;
        // The end is shown as `resets_at`: it must keep a four-digit year too.
        if end >= latest() {
            return Err(overflow());
        }
        Ok(Self {
            period,
            label,
            start: Some(start),
            end: Some(end),
        })
    }

    /// The bucket right after this one (`None` for `all`, or past the supported range).
    pub fn next(&self, tz: Tz) -> Option<Self> {
        self.end
            .and_then(|end| Self::containing(self.period, tz, end).ok())
    }

    /// The bucket right before this one (`None` for `all` and rolling windows, or before
    /// the supported range).
    pub fn previous(&self, tz: Tz) -> Option<Self> {
        if !self.period.is_periodic() {
            return None;
        }
        self.start
            .and_then(|start| start.checked_sub_signed(Duration::seconds(1)))
            .and_then(|before| Self::containing(self.period, tz, before).ok())
    }

    /// Reads `at` as either a bucket label of `period` (`2019-03-17`, `2019-W12`, …) or an
    /// RFC 3339 timestamp, and answers the bucket it names.
    pub fn parse(period: Period, tz: Tz, at: &str) -> Result<Self, Invalid> {
        if let Period::Rolling(window) = period {
            return Err(Invalid::new(
                Code::InvalidBucket,
                format!("{window} has no buckets: it always ends now, so leave out `at`"),
            ));
        }
        if let Period::Trending(half_life) = period {
            return Err(Invalid::new(
                Code::InvalidBucket,
                format!(
                    "{half_life} has no buckets: it is read as it decays now, so leave out `at`"
                ),
            ));
        }
        if let Some(bucket) = Self::parse_label(period, tz, at)? {
            return Ok(bucket);
        }
        let instant = parse_instant(at).map_err(|e| {
            let message = if DateTime::parse_from_rfc3339(at).is_ok() {
                e.message
            } else {
                format!("{at:?} is neither a {period} bucket label nor an RFC 3339 timestamp")
            };
            Invalid::new(Code::InvalidBucket, message)
        })?;
        Self::containing(period, tz, instant)
    }

    /// A label answers `Ok(Some)`; something that is not shaped like a label of this
    /// period answers `Ok(None)`; a label-shaped string naming no bucket, or one outside
    /// the supported years, is an error.
    fn parse_label(period: Period, tz: Tz, label: &str) -> Result<Option<Self>, Invalid> {
        let start = match period {
            Period::All => return Ok((label == "all").then(Self::all)),
            Period::Rolling(_) | Period::Trending(_) => return Ok(None),
            Period::Hour => {
                let Some(hour) = label.get(..13).and_then(|h| {
                    NaiveDateTime::parse_from_str(&format!("{h}:00"), "%Y-%m-%dT%H:%M").ok()
                }) else {
                    return Ok(None);
                };
                check_label_year(period, label, hour.year())?;
                let suffix = &label[13..];
                if suffix.is_empty() {
                    match tz.from_local_datetime(&hour) {
                        LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
                        LocalResult::Ambiguous(a, b) => {
                            let first = Self::containing(period, tz, a.with_timezone(&Utc))?;
                            let second = Self::containing(period, tz, b.with_timezone(&Utc))?;
                            return Err(Invalid::new(
                                Code::AmbiguousBucket,
                                format!(
                                    "local hour {label} happens twice in {tz}: say {} or {}",
                                    first.label, second.label
                                ),
                            ));
                        }
                        LocalResult::None => {
                            return Err(Invalid::new(
                                Code::InvalidBucket,
                                format!("local hour {label} does not exist in {tz}"),
                            ));
                        }
                    }
                } else {
                    let Ok(offset) = suffix.parse::<FixedOffset>() else {
                        return Ok(None);
                    };
                    hour.checked_sub_signed(Duration::seconds(offset.local_minus_utc().into()))
                        .map(|t| Utc.from_utc_datetime(&t))
                }
            }
            Period::Day => match NaiveDate::parse_from_str(label, "%Y-%m-%d") {
                Ok(date) if label.len() == 10 => {
                    check_label_year(period, label, date.year())?;
                    day_start(tz, date)
                }
                _ => return Ok(None),
            },
            Period::Week => {
                let Some((year, week)) = label.split_once("-W") else {
                    return Ok(None);
                };
                let (Ok(year), Ok(week)) = (year.parse::<i32>(), week.parse::<u32>()) else {
                    return Ok(None);
                };
                check_label_year(period, label, year)?;
                match NaiveDate::from_isoywd_opt(year, week, Weekday::Mon) {
                    Some(monday) => day_start(tz, monday),
                    None => return Err(no_such_bucket(period, label)),
                }
            }
            Period::Month => {
                let Some((year, month)) = label.split_once('-') else {
                    return Ok(None);
                };
                let (Ok(year), Ok(month)) = (year.parse::<i32>(), month.parse::<u32>()) else {
                    return Ok(None);
                };
                check_label_year(period, label, year)?;
                match NaiveDate::from_ymd_opt(year, month, 1) {
                    Some(first) => day_start(tz, first),
                    None => return Err(no_such_bucket(period, label)),
                }
            }
        };
        let start = start.ok_or_else(|| out_of_range(period, label))?;
        let bucket =
            Self::containing(period, tz, start).map_err(|_| out_of_range(period, label))?;
        if bucket.label == label {
            Ok(Some(bucket))
        } else {
            Err(no_such_bucket(period, label))
        }
    }
}

fn check_label_year(period: Period, label: &str, year: i32) -> Result<(), Invalid> {
    if (FIRST_YEAR..=LAST_YEAR).contains(&year) {
        Ok(())
    } else {
        Err(out_of_range(period, label))
    }
}

/// A calendar unit a rate-limit window is aligned to, in a board's timezone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Calendar {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
}

impl Calendar {
    pub fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "second" => Self::Second,
            "minute" => Self::Minute,
            "hour" => Self::Hour,
            "day" => Self::Day,
            "week" => Self::Week,
            "month" => Self::Month,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Second => "second",
            Self::Minute => "minute",
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
        }
    }

    /// The window `[start, end)` of this unit that holds `at`. Hours, days, weeks and
    /// months are the leaderboard buckets of the same name; seconds and minutes are the
    /// same in every zone in use today (all offsets are whole minutes).
    pub fn span(
        self,
        tz: Tz,
        at: DateTime<Utc>,
    ) -> Result<(DateTime<Utc>, DateTime<Utc>), Invalid> {
        let period = match self {
            Self::Second | Self::Minute => {
                let len = if self == Self::Second { 1 } else { 60 };
                let secs = check_supported(at)?.timestamp();
                let start = DateTime::from_timestamp(secs - secs.rem_euclid(len), 0);
                let end = start.and_then(|s| s.checked_add_signed(Duration::seconds(len)));
                return start
                    .zip(end)
                    .ok_or_else(|| out_of_range(Period::Hour, &at.to_rfc3339()));
            }
            Self::Hour => Period::Hour,
            Self::Day => Period::Day,
            Self::Week => Period::Week,
            Self::Month => Period::Month,
        };
        let bucket = Bucket::containing(period, tz, at)?;
        bucket
            .start
            .zip(bucket.end)
            .ok_or_else(|| out_of_range(period, &at.to_rfc3339()))
    }
}

fn no_such_bucket(period: Period, label: &str) -> Invalid {
    Invalid::new(
        Code::InvalidBucket,
        format!("{label:?} names no {period} bucket"),
    )
}

/// Parses an RFC 3339 timestamp such as `2019-03-17T12:33:00+08:00`.
/// Times outside the supported years 1970–9999 are refused as well.
pub fn parse_instant(raw: &str) -> Result<DateTime<Utc>, Invalid> {
    let at = DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            Invalid::new(
                Code::InvalidTimestamp,
                format!("{raw:?} is not an RFC 3339 timestamp: {e}"),
            )
        })?;
    check_supported(at)
}

/// Parses an IANA timezone name such as `Asia/Shanghai`.
pub fn parse_timezone(raw: &str) -> Result<Tz, Invalid> {
    raw.parse::<Tz>().map_err(|_| {
        Invalid::new(
            Code::InvalidTimezone,
            format!("unknown IANA timezone {raw:?}"),
        )
    })
}

/// `2019-03-17`, written directly: chrono's `format` parses its pattern on every call, and
/// labels are made several times per vote.
fn day_label(date: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

/// The instants of one local hour at one offset, `hour` (its date, hour and offset), that
/// `at` falls in: from `from` (the hour's top at that offset) for an hour, unless the
/// offset changes within it — by half an hour, or 45 minutes — which moves an edge to the
/// change. The edges are found to the second (offsets change on whole seconds).
fn hour_edges(
    tz: Tz,
    hour: (NaiveDate, u32, FixedOffset),
    from: DateTime<Utc>,
    at: DateTime<Utc>,
) -> (DateTime<Utc>, DateTime<Utc>) {
    let within = |t: i64| {
        DateTime::from_timestamp(t, 0).is_some_and(|t| {
            let local = t.with_timezone(&tz);
            (local.date_naive(), local.hour(), local.offset().fix()) == hour
        })
    };
    let (from, at) = (from.timestamp(), at.timestamp());
    let start = if within(from) {
        from
    } else {
        first_second(from, at, within)
    };
    let end = if within(start + 3599) && !within(start + 3600) {
        start + 3600
    } else {
        first_second(start, from + 3600, |t| !within(t))
    };
    let instant = |t: i64| DateTime::from_timestamp(t, 0).unwrap_or(DateTime::<Utc>::MIN_UTC);
    (instant(start), instant(end))
}

/// The first second in `(lo, hi]` where `holds` is true, given that it is false at `lo`,
/// true at `hi`, and stays true once it is.
fn first_second(mut lo: i64, mut hi: i64, holds: impl Fn(i64) -> bool) -> i64 {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The first instant of a local date: local midnight, or the first moment after a DST gap
/// that swallows midnight (as in zones that spring forward at 00:00). `None` only at the
/// edge of chrono's range.
fn day_start(tz: Tz, date: NaiveDate) -> Option<DateTime<Utc>> {
    let mut local = date.and_time(NaiveTime::MIN);
    // DST gaps are at most a few hours long; step through one a minute at a time.
    for _ in 0..=24 * 60 {
        if let Some(t) = tz.from_local_datetime(&local).earliest() {
            return Some(t.with_timezone(&Utc));
        }
        local = local.checked_add_signed(Duration::minutes(1))?;
    }
    Some(Utc.from_utc_datetime(&date.and_time(NaiveTime::MIN)))
}

/// The first year Ovation accepts in a time or a bucket label.
pub const FIRST_YEAR: i32 = 1970;
/// The last year Ovation accepts: every time it shows keeps a four-digit year, as RFC 3339
/// requires.
pub const LAST_YEAR: i32 = 9999;

/// The end of the supported range (exclusive): 10000-01-01T00:00:00Z. A bucket must end
/// before it, so the last day with a bucket is 9999-12-30.
fn latest() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(LAST_YEAR, 12, 31)
        .map(|d| Utc.from_utc_datetime(&d.and_time(NaiveTime::MIN)) + Duration::days(1))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Refuses instants before 1970-01-01T00:00:00Z or from year 10000 on.
pub fn check_supported(at: DateTime<Utc>) -> Result<DateTime<Utc>, Invalid> {
    if (FIRST_YEAR..=LAST_YEAR).contains(&at.year()) {
        Ok(at)
    } else {
        Err(Invalid::new(
            Code::InvalidTimestamp,
            format!(
                "{} lies outside the supported years {FIRST_YEAR}–{LAST_YEAR}",
                at.to_rfc3339()
            ),
        ))
    }
}

fn out_of_range(period: Period, what: &str) -> Invalid {
    Invalid::new(
        Code::InvalidBucket,
        format!(
            "the {period} bucket of {what} lies outside the supported years {FIRST_YEAR}–{LAST_YEAR}"
        ),
    )
}

/// A watch's rolling window, counted in tenths of its length (its slots, epoch-aligned):
/// a vote counts from its time until its slot's start plus the length, for between 0.9
/// and 1 times the length. A subject's slots are one counter (`store/redis/ring.lua`)
/// kept in a hash per period of the window's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tenths {
    length_ms: i64,
}

impl Tenths {
    pub const COUNT: i64 = 10;

    /// The slots of a window `length_s` seconds long (a whole number of seconds, so a
    /// slot is a whole number of ms).
    pub fn of_seconds(length_s: i64) -> Self {
        Self {
            length_ms: length_s * 1000,
        }
    }

    pub fn length_ms(&self) -> i64 {
        self.length_ms
    }

    /// The slot a vote at `at_ms` counts in.
    pub fn slot_of(&self, at_ms: i64) -> i64 {
        at_ms.div_euclid(self.length_ms / Self::COUNT)
    }

    /// The start (ms since the epoch) of the oldest slot in the window of a vote at
    /// `at_ms`.
    pub fn window_start_ms(&self, at_ms: i64) -> i64 {
        (self.slot_of(at_ms) - (Self::COUNT - 1)) * (self.length_ms / Self::COUNT)
    }

    /// The start (ms since the epoch) of the window-long period holding `at_ms`.
    pub fn period_of(&self, at_ms: i64) -> i64 {
        at_ms.div_euclid(self.length_ms) * self.length_ms
    }
}

/// A rolling window: the current, partial slot and the slots before it, `slots()` in
/// all. `rolling:Nh` (N = 1 – 168) has one-hour slots (UTC hours); `rolling:Nd` (N = 1 –
/// 90) one-day slots (local days of the board's timezone, so 23 or 25 hours across a DST
/// change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rolling {
    unit: SlotUnit,
    /// How many slots: within the unit's bounds (see [`Rolling::new`]).
    slots: u16,
}

/// What a rolling window's slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlotUnit {
    /// UTC hours.
    Hour,
    /// Local days of the board's timezone.
    Day,
}

impl SlotUnit {
    /// The most slots a window of this unit may have: a week of hours, about a quarter
    /// of days.
    pub const fn max_slots(self) -> u16 {
        match self {
            Self::Hour => 168,
            Self::Day => 90,
        }
    }

    const fn suffix(self) -> char {
        match self {
            Self::Hour => 'h',
            Self::Day => 'd',
        }
    }
}

impl fmt::Display for Rolling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Rolling {
    /// The last 24 hours.
    pub const HOURS_24: Self = Self {
        unit: SlotUnit::Hour,
        slots: 24,
    };
    /// The last 7 days.
    pub const DAYS_7: Self = Self {
        unit: SlotUnit::Day,
        slots: 7,
    };

    /// A window of `slots` slots of `unit`, if the unit allows that many.
    pub fn new(unit: SlotUnit, slots: u16) -> Option<Self> {
        (1..=unit.max_slots())
            .contains(&slots)
            .then_some(Self { unit, slots })
    }

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let invalid = || {
            Invalid::new(
                Code::InvalidPeriod,
                format!(
                    "unknown rolling window {raw:?} (want rolling:Nh with N from 1 to {}, or rolling:Nd with N from 1 to {})",
                    SlotUnit::Hour.max_slots(),
                    SlotUnit::Day.max_slots()
                ),
            )
        };
        let spec = raw.strip_prefix("rolling:").ok_or_else(invalid)?;
        let (digits, unit) = match spec.as_bytes().last() {
            Some(b'h') => (&spec[..spec.len() - 1], SlotUnit::Hour),
            Some(b'd') => (&spec[..spec.len() - 1], SlotUnit::Day),
            _ => return Err(invalid()),
        };
        spelled_count(digits)
            .and_then(|n| Self::new(unit, n))
            .ok_or_else(invalid)
    }

    /// Every window there is: hours, then days, shortest first.
    pub fn every() -> impl Iterator<Item = Self> {
        [SlotUnit::Hour, SlotUnit::Day]
            .into_iter()
            .flat_map(|unit| (1..=unit.max_slots()).map(move |slots| Self { unit, slots }))
    }

    /// Its name, `rolling:24h` (one string per window, made once).
    pub fn as_str(self) -> &'static str {
        static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
            Rolling::every()
                .map(|w| format!("rolling:{}{}", w.slots, w.unit.suffix()))
                .collect()
        });
        let at = match self.unit {
            SlotUnit::Hour => 0,
            SlotUnit::Day => usize::from(SlotUnit::Hour.max_slots()),
        } + usize::from(self.slots)
            - 1;
        NAMES.get(at).map_or("rolling", String::as_str)
    }

    pub fn unit(self) -> SlotUnit {
        self.unit
    }

    /// How many slots the window spans.
    pub fn slots(self) -> i64 {
        i64::from(self.slots)
    }

    /// The slot holding `at`: hours since the epoch, or days since 1970-01-01 counted in
    /// `tz`'s local dates.
    pub fn slot(self, tz: Tz, at: DateTime<Utc>) -> i64 {
        match self.unit {
            SlotUnit::Hour => at.timestamp().div_euclid(3600),
            SlotUnit::Day => {
                let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
                at.with_timezone(&tz)
                    .date_naive()
                    .signed_duration_since(epoch)
                    .num_days()
            }
        }
    }

    /// The longest a slot's votes are needed: the window's slots and the current one,
    /// each at its longest (a local day lasts 25 hours across a DST change), in ms.
    pub fn max_span_ms(self) -> i64 {
        let slot_ms = match self.unit {
            SlotUnit::Hour => 3_600_000,
            SlotUnit::Day => 25 * 3_600_000,
        };
        (self.slots() + 1) * slot_ms
    }

    /// When slot `slot` starts.
    pub fn slot_start(self, tz: Tz, slot: i64) -> Option<DateTime<Utc>> {
        match self.unit {
            SlotUnit::Hour => DateTime::from_timestamp(slot.checked_mul(3600)?, 0),
            SlotUnit::Day => {
                let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
                let date = epoch.checked_add_signed(Duration::days(slot))?;
                day_start(tz, date)
            }
        }
    }

    /// What a read at `now` covers: from the start of the oldest slot counted to `now`.
    pub fn span(self, tz: Tz, now: DateTime<Utc>) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let oldest = self.slot(tz, now) - (self.slots() - 1);
        Some((self.slot_start(tz, oldest)?, now))
    }
}

/// The count in a period's name: digits only, no leading zero, so each period has one
/// spelling.
fn spelled_count(digits: &str) -> Option<u16> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A trending period's half-life, `trending:Nh` (N = 1 – 720 hours): a write at time t
/// adds its increment × 2^((t − t0)/N h) to one sorted set per view, t0 being the
/// period's origin (kept in Redis, moved forward by a rescale); a read at `now` answers
/// what is stored × 2^((t0 − now)/N h), so a vote N hours old weighs half of one now.
/// Forward decay: a write touches only its own member, and reads rank by the stored
/// scores, which a common factor does not reorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HalfLife {
    hours: u16,
}

impl HalfLife {
    /// A day.
    pub const HOURS_24: Self = Self { hours: 24 };

    /// The longest half-life, in hours (30 days).
    pub const MAX_HOURS: u16 = 720;

    /// How many half-lives a write may be past the origin before the write moves the
    /// origin to its own time, multiplying every stored score by 2^((t0 − t)/N h): a
    /// weight stays below 2^64 (scores below 10^30 units), far from a double's range, and
    /// a board that trends over hours rescales once every few days.
    pub const RESCALE_AFTER: i64 = 64;

    /// A half-life of `hours`, if within 1 – [`Self::MAX_HOURS`].
    pub fn new(hours: u16) -> Option<Self> {
        (1..=Self::MAX_HOURS)
            .contains(&hours)
            .then_some(Self { hours })
    }

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let invalid = || {
            Invalid::new(
                Code::InvalidPeriod,
                format!(
                    "unknown trending period {raw:?} (want trending:Nh with N from 1 to {})",
                    Self::MAX_HOURS
                ),
            )
        };
        raw.strip_prefix("trending:")
            .and_then(|spec| spec.strip_suffix('h'))
            .and_then(spelled_count)
            .and_then(Self::new)
            .ok_or_else(invalid)
    }

    /// Its name, `trending:6h` (one string per half-life, made once).
    pub fn as_str(self) -> &'static str {
        static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
            (1..=HalfLife::MAX_HOURS)
                .map(|h| format!("trending:{h}h"))
                .collect()
        });
        NAMES
            .get(usize::from(self.hours) - 1)
            .map_or("trending", String::as_str)
    }

    pub fn hours(self) -> u16 {
        self.hours
    }

    /// The half-life in ms.
    pub fn ms(self) -> i64 {
        i64::from(self.hours) * 3_600_000
    }

    /// What a score stored against the origin `origin_ms` is worth at `now_ms`: the
    /// stored score × 2^((origin − now)/half-life).
    pub fn decay(self, stored: f64, origin_ms: i64, now_ms: i64) -> f64 {
        stored * ((origin_ms - now_ms) as f64 / self.ms() as f64).exp2()
    }
}

impl fmt::Display for HalfLife {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The buckets whose distinct voters a vote at `at` adds to, on a board keeping
/// `periods`: its hour, day and all-time buckets, and for week and month the day bucket,
/// since a week's or a month's voters are the union of its days' (a HyperLogLog union
/// estimates the same as one HyperLogLog fed the same voters, and a vote then adds to
/// fewer of them). Rolling windows count their voters themselves; a trending period's
/// voters are the all-time bucket's (see [`voter_days`]).
pub fn voter_buckets(
    periods: &[Period],
    tz: Tz,
    at: DateTime<Utc>,
) -> Result<Vec<Bucket>, Invalid> {
    let mut own: Vec<Period> = periods
        .iter()
        .map(|&p| match p {
            Period::Week | Period::Month => Period::Day,
            Period::Trending(_) => Period::All,
            other => other,
        })
        .filter(|p| p.rolling().is_none())
        .collect();
    own.sort();
    own.dedup();
    own.into_iter()
        .map(|p| Bucket::containing(p, tz, at))
        .collect()
}

/// The buckets whose voters' union counts `bucket`'s: the local days of a week or a
/// month, the all-time bucket for a trending period, else the bucket itself.
pub fn voter_days(bucket: &Bucket, tz: Tz) -> Vec<Bucket> {
    match (bucket.period, bucket.start, bucket.end) {
        (Period::Week | Period::Month, Some(start), Some(end)) => {
            let mut days = Vec::new();
            let mut next = Bucket::containing(Period::Day, tz, start).ok();
            while let Some(day) = next.filter(|d| d.start.is_some_and(|s| s < end)) {
                next = day.next(tz);
                days.push(day);
            }
            days
        }
        (Period::Trending(_), _, _) => vec![Bucket::all()],
        _ => vec![bucket.clone()],
    }
}

/// The stretches a chart of `bucket` steps through, oldest first: the hours of the local
/// day holding an hour or day bucket, the days of a week or month bucket or of a rolling
/// window of days, the hours of a rolling window of hours (at least the last 48), and for
/// `all` the 48 hours up to `now`. Each is an hour or day bucket of `tz`.
pub fn chart_steps(bucket: &Bucket, tz: Tz, now: DateTime<Utc>) -> Vec<Bucket> {
    let (step, from, until) = match (bucket.period, bucket.start, bucket.end) {
        (Period::Hour | Period::Day, Some(start), _) => {
            let Ok(day) = Bucket::containing(Period::Day, tz, start) else {
                return Vec::new();
            };
            (Period::Hour, day.start, day.end)
        }
        (Period::Week | Period::Month, start, end) => (Period::Day, start, end),
        (Period::Rolling(w), start, _) if w.unit() == SlotUnit::Day => (
            Period::Day,
            start,
            now.checked_add_signed(Duration::seconds(1)),
        ),
        (Period::Rolling(_), Some(start), _) => (
            Period::Hour,
            now.checked_sub_signed(Duration::hours(47))
                .map(|from| from.min(start)),
            now.checked_add_signed(Duration::seconds(1)),
        ),
        _ => (
            Period::Hour,
            now.checked_sub_signed(Duration::hours(47)),
            now.checked_add_signed(Duration::seconds(1)),
        ),
    };
    let (Some(from), Some(until)) = (from, until) else {
        return Vec::new();
    };
    let mut steps = Vec::new();
    let mut next = Bucket::containing(step, tz, from).ok();
    while let Some(b) = next.filter(|b| b.start.is_some_and(|s| s < until)) {
        next = b.next(tz);
        steps.push(b);
    }
    steps
}

/// The buckets a participants chart of `bucket` shows, oldest first, ending with it: 24
/// hours, 14 days, 12 weeks or 12 months. `all` has none of its own.
pub fn trailing_buckets(bucket: &Bucket, tz: Tz) -> Vec<Bucket> {
    let count = match bucket.period {
        Period::Hour => 24,
        Period::Day => 14,
        Period::Week | Period::Month => 12,
        Period::All | Period::Rolling(_) | Period::Trending(_) => return Vec::new(),
    };
    let mut buckets = vec![bucket.clone()];
    while buckets.len() < count {
        match buckets.last().and_then(|b| b.previous(tz)) {
            Some(before) => buckets.push(before),
            None => break,
        }
    }
    buckets.reverse();
    buckets
}

/// The epoch hours (hours since 1970, UTC) that start within `bucket`.
/// The epoch hour (hours since 1970-01-01T00 UTC) an instant falls in: how hourly
/// counters and late-write marks are keyed.
pub fn epoch_hour(at: DateTime<Utc>) -> i64 {
    at.timestamp().div_euclid(3600)
}

/// The epoch hour of an instant given in milliseconds since the epoch.
pub fn epoch_hour_of_ms(ms: i64) -> i64 {
    ms.div_euclid(3_600_000)
}

/// The first and last second of an epoch hour.
pub fn hour_span(hour: i64) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    Some((
        DateTime::from_timestamp(hour.checked_mul(3600)?, 0)?,
        DateTime::from_timestamp(hour.checked_mul(3600)? + 3599, 0)?,
    ))
}

/// The epoch hours a bucket overlaps, at either end too (a local bucket need not start
/// on a UTC hour); `None` for `all`, which has no bounds.
pub fn overlapping_hours(bucket: &Bucket) -> Option<std::ops::RangeInclusive<i64>> {
    Some(epoch_hour(bucket.start?)..=(bucket.end?.timestamp() - 1).div_euclid(3600))
}

/// The epoch hours starting in a bucket.
pub fn epoch_hours(bucket: &Bucket) -> std::ops::Range<i64> {
    match (bucket.start, bucket.end) {
        (Some(start), Some(end)) => {
            (start.timestamp() + 3599).div_euclid(3600)..(end.timestamp() + 3599).div_euclid(3600)
        }
        _ => 0..0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        parse_instant(raw).unwrap()
    }

    fn bucket(period: Period, tz: &str, t: &str) -> Bucket {
        Bucket::containing(period, parse_timezone(tz).unwrap(), at(t)).unwrap()
    }

    #[test]
    fn labels_follow_the_contract() {
        let t = "2019-03-17T12:33:00+08:00";
        assert_eq!(
            bucket(Period::Hour, "Asia/Shanghai", t).label,
            "2019-03-17T12"
        );
        assert_eq!(bucket(Period::Day, "Asia/Shanghai", t).label, "2019-03-17");
        assert_eq!(bucket(Period::Week, "Asia/Shanghai", t).label, "2019-W11");
        assert_eq!(bucket(Period::Month, "Asia/Shanghai", t).label, "2019-03");
        assert_eq!(bucket(Period::All, "Asia/Shanghai", t).label, "all");
        assert_eq!(bucket(Period::Hour, "UTC", t).label, "2019-03-17T04");
    }

    #[test]
    fn week_and_month_voters_are_counted_by_day() {
        let tz = parse_timezone("America/New_York").unwrap();
        let t = at("2024-03-10T12:00:00-04:00");
        let labels = |periods: &[Period]| -> Vec<String> {
            voter_buckets(periods, tz, t)
                .unwrap()
                .into_iter()
                .map(|b| b.label)
                .collect()
        };
        assert_eq!(
            labels(&Period::CALENDAR),
            ["2024-03-10T12", "2024-03-10", "all"]
        );
        assert_eq!(labels(&[Period::Week]), ["2024-03-10"]);
        assert_eq!(
            labels(&[Period::Month, Period::Rolling(Rolling::HOURS_24)]),
            ["2024-03-10"]
        );
        let week = bucket(
            Period::Week,
            "America/New_York",
            "2024-03-10T12:00:00-04:00",
        );
        let days: Vec<String> = voter_days(&week, tz).into_iter().map(|d| d.label).collect();
        assert_eq!(
            days,
            [
                "2024-03-04",
                "2024-03-05",
                "2024-03-06",
                "2024-03-07",
                "2024-03-08",
                "2024-03-09",
                "2024-03-10"
            ]
        );
        let february = bucket(
            Period::Month,
            "America/New_York",
            "2024-02-10T12:00:00-05:00",
        );
        assert_eq!(voter_days(&february, tz).len(), 29);
        let day = bucket(Period::Day, "America/New_York", "2024-03-10T12:00:00-04:00");
        assert_eq!(voter_days(&day, tz), vec![day.clone()]);
    }

    #[test]
    fn spring_forward_day_has_23_hours_and_skips_2am() {
        let day = bucket(Period::Day, "America/New_York", "2024-03-10T12:00:00-04:00");
        assert_eq!(day.label, "2024-03-10");
        assert_eq!(day.start, Some(at("2024-03-10T05:00:00Z")));
        assert_eq!(day.end, Some(at("2024-03-11T04:00:00Z")));
        assert_eq!((day.end.unwrap() - day.start.unwrap()).num_hours(), 23);

        let before = bucket(
            Period::Hour,
            "America/New_York",
            "2024-03-10T01:59:59-05:00",
        );
        let after = bucket(
            Period::Hour,
            "America/New_York",
            "2024-03-10T03:00:00-04:00",
        );
        assert_eq!(before.label, "2024-03-10T01");
        assert_eq!(after.label, "2024-03-10T03");
        assert_eq!(before.end, after.start);
        assert_eq!(before.next(chrono_tz::America::New_York).unwrap(), after);

        let err = Bucket::parse(Period::Hour, chrono_tz::America::New_York, "2024-03-10T02");
        assert_eq!(err.unwrap_err().code, "invalid_bucket");
    }

    #[test]
    fn fall_back_day_has_25_hours_and_two_distinct_1am_buckets() {
        let tz = chrono_tz::America::New_York;
        let day = bucket(Period::Day, "America/New_York", "2024-11-03T12:00:00-05:00");
        assert_eq!((day.end.unwrap() - day.start.unwrap()).num_hours(), 25);

        let first = bucket(
            Period::Hour,
            "America/New_York",
            "2024-11-03T01:30:00-04:00",
        );
        let second = bucket(
            Period::Hour,
            "America/New_York",
            "2024-11-03T01:30:00-05:00",
        );
        assert_eq!(first.label, "2024-11-03T01-04:00");
        assert_eq!(second.label, "2024-11-03T01-05:00");
        assert_eq!(first.start, Some(at("2024-11-03T05:00:00Z")));
        assert_eq!(first.end, second.start);
        assert_eq!(second.end, Some(at("2024-11-03T07:00:00Z")));
        assert_eq!(first.next(tz).unwrap(), second);
        assert_eq!(second.previous(tz).unwrap(), first);
        assert_eq!(second.next(tz).unwrap().label, "2024-11-03T02");

        assert_eq!(
            Bucket::parse(Period::Hour, tz, "2024-11-03T01-05:00").unwrap(),
            second
        );
        let ambiguous = Bucket::parse(Period::Hour, tz, "2024-11-03T01").unwrap_err();
        assert_eq!(ambiguous.code, "ambiguous_bucket");
        assert!(ambiguous.message.contains("2024-11-03T01-04:00"));
    }

    #[test]
    fn iso_week_years_cross_calendar_years() {
        assert_eq!(
            bucket(Period::Week, "UTC", "2021-01-03T12:00:00Z").label,
            "2020-W53"
        );
        assert_eq!(
            bucket(Period::Week, "UTC", "2024-12-30T12:00:00Z").label,
            "2025-W01"
        );
        let w = Bucket::parse(Period::Week, Tz::UTC, "2020-W53").unwrap();
        assert_eq!(w.start, Some(at("2020-12-28T00:00:00Z")));
        assert_eq!(w.end, Some(at("2021-01-04T00:00:00Z")));
        assert_eq!(w.next(Tz::UTC).unwrap().label, "2021-W01");
        assert_eq!(
            Bucket::parse(Period::Week, Tz::UTC, "2021-W53")
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
    }

    #[test]
    fn months_end_on_their_last_day() {
        let feb = bucket(Period::Month, "UTC", "2024-02-29T23:59:59Z");
        assert_eq!(feb.label, "2024-02");
        assert_eq!(feb.end, Some(at("2024-03-01T00:00:00Z")));
        let jan31 = bucket(Period::Month, "Asia/Shanghai", "2024-01-31T16:00:00Z");
        assert_eq!(jan31.label, "2024-02");
        let dec = Bucket::parse(Period::Month, Tz::UTC, "2023-12").unwrap();
        assert_eq!(dec.next(Tz::UTC).unwrap().label, "2024-01");
        assert_eq!(dec.previous(Tz::UTC).unwrap().label, "2023-11");
        assert_eq!(
            Bucket::parse(Period::Month, Tz::UTC, "2023-13")
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
    }

    #[test]
    fn half_and_quarter_hour_offsets_shift_hour_buckets() {
        let kolkata = bucket(Period::Hour, "Asia/Kolkata", "2024-06-01T05:29:59Z");
        assert_eq!(kolkata.label, "2024-06-01T10");
        assert_eq!(kolkata.start, Some(at("2024-06-01T04:30:00Z")));
        assert_eq!(kolkata.end, Some(at("2024-06-01T05:30:00Z")));
        let kathmandu = bucket(Period::Hour, "Asia/Kathmandu", "2024-06-01T05:15:00Z");
        assert_eq!(kathmandu.label, "2024-06-01T11");
        assert_eq!(kathmandu.start, Some(at("2024-06-01T05:15:00Z")));
        let day = bucket(Period::Day, "Asia/Kathmandu", "2024-06-01T18:14:59Z");
        assert_eq!(day.label, "2024-06-01");
        assert_eq!(day.end, Some(at("2024-06-01T18:15:00Z")));
    }

    #[test]
    fn labels_and_timestamps_parse_back_to_the_same_bucket() {
        let tz = chrono_tz::Asia::Shanghai;
        for period in Period::CALENDAR {
            let b = Bucket::containing(period, tz, at("2019-03-17T12:33:00+08:00")).unwrap();
            assert_eq!(Bucket::parse(period, tz, &b.label).unwrap(), b);
            assert_eq!(
                Bucket::parse(period, tz, "2019-03-17T12:33:00+08:00").unwrap(),
                b
            );
        }
        assert_eq!(
            Bucket::parse(Period::Day, tz, "yesterday")
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
        assert_eq!(
            Bucket::parse(Period::Day, tz, "2019-02-30")
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
    }

    #[test]
    fn calendar_windows_follow_the_local_clock() {
        let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
        let (start, end) = Calendar::Day
            .span(shanghai, at("2026-11-20T16:30:00Z"))
            .unwrap();
        assert_eq!(start, at("2026-11-20T16:00:00Z"));
        assert_eq!(end, at("2026-11-21T16:00:00Z"));
        let (start, end) = Calendar::Minute
            .span(shanghai, at("2026-11-20T16:30:59.900Z"))
            .unwrap();
        assert_eq!(
            (start, end),
            (at("2026-11-20T16:30:00Z"), at("2026-11-20T16:31:00Z"))
        );
        let (start, end) = Calendar::Second
            .span(Tz::UTC, at("2026-11-20T16:30:59.900Z"))
            .unwrap();
        assert_eq!(
            (start, end),
            (at("2026-11-20T16:30:59Z"), at("2026-11-20T16:31:00Z"))
        );
        let (start, _) = Calendar::Week
            .span(Tz::UTC, at("2026-11-22T10:00:00Z"))
            .unwrap();
        assert_eq!(start, at("2026-11-16T00:00:00Z"));
        assert_eq!(Calendar::parse("month"), Some(Calendar::Month));
        assert_eq!(Calendar::parse("year"), None);
    }

    #[test]
    fn buckets_outside_the_supported_years_are_refused_without_overflowing() {
        for (period, label) in [
            (Period::Month, "262142-12"),
            (Period::Week, "262142-W52"),
            (Period::Day, "262142-12-31"),
            (Period::Hour, "262142-12-31T23"),
            (Period::Month, "1969-12"),
            (Period::Day, "0000-01-01"),
            (Period::Hour, "1969-12-31T23:59:59Z"),
        ] {
            for tz in [
                Tz::UTC,
                chrono_tz::Pacific::Kiritimati,
                chrono_tz::Etc::GMTPlus12,
            ] {
                let err = Bucket::parse(period, tz, label).unwrap_err();
                assert_eq!(err.code, "invalid_bucket", "{period} {label} in {tz}");
            }
        }
        // Buckets that would end in year 10000, in UTC and west of it.
        for (period, label) in [
            (Period::Month, "9999-12"),
            (Period::Week, "9999-W52"),
            (Period::Day, "9999-12-31"),
            (Period::Hour, "9999-12-31T23"),
            (Period::Day, "9999-12-31T12:00:00Z"),
        ] {
            for tz in [Tz::UTC, chrono_tz::Etc::GMTPlus12] {
                let err = Bucket::parse(period, tz, label).unwrap_err();
                assert_eq!(err.code, "invalid_bucket", "{period} {label} in {tz}");
            }
        }
        let last = Bucket::parse(Period::Day, Tz::UTC, "9999-12-30").unwrap();
        assert_eq!(
            last.end
                .unwrap()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "9999-12-31T00:00:00Z"
        );
        assert_eq!(last.next(Tz::UTC), None);
        let first = Bucket::parse(Period::Day, Tz::UTC, "1970-01-01").unwrap();
        assert_eq!(first.previous(Tz::UTC), None);
        assert_eq!(
            parse_instant("1969-12-31T23:59:59Z").unwrap_err().code,
            "invalid_timestamp"
        );
        let month_end = at("9999-11-30T12:00:00Z");
        assert_eq!(
            Calendar::Month.span(Tz::UTC, month_end).unwrap().1,
            at("9999-12-01T00:00:00Z")
        );
        assert_eq!(
            Calendar::Month
                .span(Tz::UTC, at("9999-12-02T00:00:00Z"))
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
    }

    #[test]
    fn unknown_timezones_and_periods_are_refused() {
        assert_eq!(
            parse_timezone("Mars/Olympus").unwrap_err().code,
            "invalid_timezone"
        );
        assert_eq!(Period::parse("year").unwrap_err().code, "invalid_period");
    }

    #[test]
    fn charts_step_through_the_selected_bucket_in_local_time() {
        let ny = parse_timezone("America/New_York").unwrap();
        // The day clocks went back has 25 hours; an hour bucket charts its whole day.
        let hour = bucket(Period::Hour, "America/New_York", "2026-11-01T15:20:00Z");
        let steps = chart_steps(&hour, ny, at("2026-11-23T00:00:00Z"));
        assert_eq!(steps.len(), 25);
        assert_eq!(steps[0].start, Some(at("2026-11-01T04:00:00Z")));
        assert_eq!(steps[24].end, Some(at("2026-11-02T05:00:00Z")));
        assert!(steps.iter().all(|s| s.period == Period::Hour));
        // A month charts its days; a week its seven.
        let month = bucket(Period::Month, "Asia/Shanghai", "2026-02-10T00:00:00Z");
        let days = chart_steps(
            &month,
            parse_timezone("Asia/Shanghai").unwrap(),
            at("2026-11-23T00:00:00Z"),
        );
        assert_eq!(days.len(), 28);
        assert_eq!(days[0].label, "2026-02-01");
        assert_eq!(days[27].label, "2026-02-28");
        let week = bucket(Period::Week, "UTC", "2026-11-23T10:00:00Z");
        assert_eq!(
            chart_steps(&week, Tz::UTC, at("2026-11-23T10:00:00Z")).len(),
            7
        );
        // All time: the 48 hours up to now, ending with the current one.
        let all = chart_steps(&Bucket::all(), Tz::UTC, at("2026-11-23T10:30:00Z"));
        assert_eq!(all.len(), 48);
        assert_eq!(all[47].start, Some(at("2026-11-23T10:00:00Z")));
    }

    #[test]
    fn participants_charts_trail_the_selected_bucket() {
        let tz = Tz::UTC;
        let week = bucket(Period::Week, "UTC", "2026-11-23T10:00:00Z");
        let weeks = trailing_buckets(&week, tz);
        assert_eq!(weeks.len(), 12);
        assert_eq!(weeks[11], week);
        assert_eq!(weeks[0].label, "2026-W37");
        assert_eq!(
            trailing_buckets(&bucket(Period::Day, "UTC", "2026-11-23T10:00:00Z"), tz).len(),
            14
        );
        assert!(trailing_buckets(&Bucket::all(), tz).is_empty());
        // Near the start of the supported range there are fewer.
        let first = bucket(Period::Day, "UTC", "1970-01-03T00:00:00Z");
        assert_eq!(trailing_buckets(&first, tz).len(), 3);
    }

    #[test]
    fn epoch_hours_are_the_utc_hours_starting_in_a_bucket() {
        let india = bucket(Period::Day, "Asia/Kolkata", "2026-11-23T10:00:00Z");
        let hours = epoch_hours(&india);
        assert_eq!(hours.clone().count(), 24);
        // The day starts at 18:30 UTC the evening before; its first whole UTC hour is 19:00.
        assert_eq!(hours.start * 3600, at("2026-11-22T19:00:00Z").timestamp());
        assert_eq!(epoch_hours(&Bucket::all()), 0..0);
        // Overlapping: the half hour at each end counts too.
        let overlapping = overlapping_hours(&india).unwrap();
        assert_eq!(overlapping.clone().count(), 25);
        assert_eq!(*overlapping.start(), epoch_hour(at("2026-11-22T18:30:00Z")));
        assert_eq!(*overlapping.end(), epoch_hour(at("2026-11-23T18:29:59Z")));
        assert_eq!(overlapping_hours(&Bucket::all()), None);
        let hour = epoch_hour(at("2026-11-23T10:15:00Z"));
        assert_eq!(
            epoch_hour_of_ms(at("2026-11-23T10:59:59Z").timestamp_millis()),
            hour
        );
        assert_eq!(
            hour_span(hour),
            Some((at("2026-11-23T10:00:00Z"), at("2026-11-23T10:59:59Z")))
        );
    }

    #[test]
    fn rolling_windows_count_utc_hours_or_local_days() {
        let ny = parse_timezone("America/New_York").unwrap();
        let h = Rolling::HOURS_24;
        assert_eq!(h.slot(ny, at("1970-01-01T00:59:59Z")), 0);
        let t = at("2026-11-23T10:00:00Z");
        assert_eq!(h.slot(ny, t) * 3600, t.timestamp());
        assert_eq!(h.slot_start(ny, 5), Some(at("1970-01-01T05:00:00Z")));
        let d = Rolling::DAYS_7;
        // 2026-11-01 is the day New York's clocks go back: 25 hours long.
        let sunday = d.slot(ny, at("2026-11-01T04:00:00Z"));
        assert_eq!(d.slot(ny, at("2026-11-02T04:59:59Z")), sunday);
        assert_eq!(d.slot(ny, at("2026-11-02T05:00:00Z")), sunday + 1);
        assert_eq!(d.slot_start(ny, sunday), Some(at("2026-11-01T04:00:00Z")));
        assert_eq!(
            d.slot_start(ny, sunday + 1),
            Some(at("2026-11-02T05:00:00Z"))
        );
        // A read covers the partial slot and the six whole days before it.
        assert_eq!(
            d.span(ny, at("2026-11-02T15:00:00Z")),
            Some((at("2026-10-27T04:00:00Z"), at("2026-11-02T15:00:00Z")))
        );
    }

    #[test]
    fn rolling_windows_take_any_length_within_bounds() {
        assert_eq!(Rolling::parse("rolling:24h"), Ok(Rolling::HOURS_24));
        assert_eq!(Rolling::parse("rolling:7d"), Ok(Rolling::DAYS_7));
        let w = Rolling::parse("rolling:168h").unwrap();
        assert_eq!(
            (w.unit(), w.slots(), w.as_str()),
            (SlotUnit::Hour, 168, "rolling:168h")
        );
        let w = Rolling::parse("rolling:90d").unwrap();
        assert_eq!(
            (w.unit(), w.slots(), w.as_str()),
            (SlotUnit::Day, 90, "rolling:90d")
        );
        assert_eq!(Rolling::parse("rolling:1h").unwrap().as_str(), "rolling:1h");
        for bad in [
            "rolling:0h",
            "rolling:169h",
            "rolling:91d",
            "rolling:024h",
            "rolling:+5h",
            "rolling:h",
            "rolling:5w",
            "rolling:5",
            "rolling:",
            "rolling: 5h",
            "rolling:5H",
            "rolling:99999999999h",
        ] {
            assert_eq!(
                Rolling::parse(bad).unwrap_err().code,
                "invalid_period",
                "{bad}"
            );
        }
        // Every window's name parses back to it.
        let every: Vec<Rolling> = Rolling::every().collect();
        assert_eq!(every.len(), 168 + 90);
        for w in every {
            assert_eq!(Rolling::parse(w.as_str()), Ok(w));
        }
    }

    #[test]
    fn trending_half_lives_parse_within_bounds_and_decay() {
        for hours in 1..=HalfLife::MAX_HOURS {
            let h = HalfLife::new(hours).unwrap();
            assert_eq!(h.as_str(), format!("trending:{hours}h"));
            assert_eq!(Period::parse(h.as_str()), Ok(Period::Trending(h)));
        }
        for bad in [
            "trending:0h",
            "trending:721h",
            "trending:06h",
            "trending:6",
            "trending:6d",
            "trending:+6h",
            "trending:h",
            "trending:99999999h",
        ] {
            assert_eq!(
                Period::parse(bad).unwrap_err().code,
                "invalid_period",
                "{bad}"
            );
        }
        let h = HalfLife::new(6).unwrap();
        // Stored against an origin 6 hours before now: half; 12 hours: a quarter.
        assert_eq!(h.decay(8.0, 0, h.ms()), 4.0);
        assert_eq!(h.decay(8.0, 0, 2 * h.ms()), 2.0);
        assert_eq!(h.decay(8.0, h.ms(), 0), 16.0);
        let trending = Period::Trending(h);
        assert!(!trending.is_bucketed() && !trending.is_periodic());
        assert_eq!(
            Bucket::parse(trending, Tz::UTC, "2026-11-01")
                .unwrap_err()
                .code,
            "invalid_bucket"
        );
        assert_eq!(
            voter_buckets(&[trending], Tz::UTC, Utc::now()),
            Ok(vec![Bucket::all()])
        );
    }

    #[test]
    fn hours_tile_time_across_half_hour_and_45_minute_offset_changes() {
        // Lord Howe moves by half an hour, Chatham's changes fall at :45; each walk
        // crosses a change forward and one back.
        let walks = [
            (Tz::Australia__Lord_Howe, "2026-10-03T12:00:00Z"),
            (Tz::Australia__Lord_Howe, "2026-04-04T12:00:00Z"),
            (Tz::Pacific__Chatham, "2026-09-26T12:00:00Z"),
            (Tz::Pacific__Chatham, "2026-04-04T12:00:00Z"),
        ];
        for (tz, from) in walks {
            let mut at = DateTime::parse_from_rfc3339(from)
                .unwrap()
                .with_timezone(&Utc);
            let mut last: Option<Bucket> = None;
            let mut labels = std::collections::HashSet::new();
            for _ in 0..(8 * 60) {
                let bucket = Bucket::compute(Period::Hour, tz, at).unwrap();
                assert!(bucket.holds(at), "{tz} {at}: {bucket:?}");
                if last.as_ref() != Some(&bucket) {
                    if let Some(last) = &last {
                        assert_eq!(last.end, bucket.start, "{tz} {at}: no gap, no overlap");
                    }
                    assert!(
                        labels.insert(bucket.label.clone()),
                        "{tz}: {} twice",
                        bucket.label
                    );
                    last = Some(bucket);
                }
                at += Duration::minutes(1);
            }
        }
    }

    mod kept_buckets {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            // The buckets a thread keeps never answer for an instant they do not hold:
            // a sequence of lookups a quarter of an hour apart or a few (so many hit
            // what the last one kept, and many fall on a bucket's first instant), in
            // zones with and without DST changes and with offsets of half an hour,
            // each equals the bucket worked out afresh.
            #[test]
            fn kept_buckets_answer_as_worked_out_afresh(
                steps in proptest::collection::vec(
                    (0usize..4, 0usize..4, -8i64..=8), 1..200),
                start in 1_888_888i64..2_000_000,
            ) {
                let periods = [Period::Hour, Period::Day, Period::Week, Period::Month];
                let zones = [Tz::UTC, Tz::America__New_York, Tz::Australia__Lord_Howe,
                    Tz::Asia__Kolkata];
                const QUARTER_MS: i64 = 900_000;
                let mut ms = start * QUARTER_MS;
                for (period, zone, quarters) in steps {
                    ms += quarters * QUARTER_MS;
                    let at = DateTime::from_timestamp_millis(ms).unwrap();
                    let (period, tz) = (periods[period], zones[zone]);
                    prop_assert_eq!(
                        Bucket::containing(period, tz, at),
                        Bucket::compute(period, tz, at),
                        "{:?} {} {}", period, tz, at
                    );
                }
            }
        }
    }
}
