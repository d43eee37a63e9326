//! Adjustments: operations staff change one member's score in one bucket of one period
//! (seed 000: "直接通过后台修改某个选项的投票数量", editing a member's count in the back
//! office), in the real view, the display view or both, always with a reason. In the
//! ledger an adjustment is an entry naming its bucket (`Entry::adjusts`), so a recount or
//! a rebuild counts it in that bucket alone.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::Invalid;
use super::code::Code;
use super::period::{Bucket, Period};
use super::reason;
use super::score::View;

/// The largest change one adjustment makes, in votes either way.
pub const DELTA_MAX: i64 = 1_000_000_000;

/// Which views an adjustment changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Views {
    Real,
    Display,
    Both,
}

impl Views {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "real" => Ok(Self::Real),
            "display" => Ok(Self::Display),
            "both" => Ok(Self::Both),
            _ => Err(Invalid::new(
                Code::InvalidView,
                format!("unknown view {raw:?} (want real, display or both)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Real => "real",
            Self::Display => "display",
            Self::Both => "both",
        }
    }

    pub fn includes(self, view: View) -> bool {
        matches!(
            (self, view),
            (Self::Both, _) | (Self::Real, View::Real) | (Self::Display, View::Display)
        )
    }
}

/// An adjustment asked for, checked against the board's periods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjustment {
    pub bucket: Bucket,
    pub views: Views,
    /// Votes added (negative: taken off); never 0.
    pub delta: i64,
    pub reason: String,
}

/// What an adjustment request says, as sent.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub period: &'a str,
    /// A bucket label or an RFC 3339 instant; may be left out for `all`.
    pub at: Option<&'a str>,
    pub view: &'a str,
    pub delta: i64,
    pub reason: &'a str,
}

impl Adjustment {
    /// Checks `asked` on a board keeping `periods` in `tz`: a calendar period or `all`
    /// the board keeps (a rolling window has no bucket to change), a bucket of that
    /// period that has begun by `now`, a delta of 1 to [`DELTA_MAX`] votes either way and
    /// a reason (see [`reason::check`]).
    pub fn new(
        periods: &[Period],
        tz: Tz,
        asked: Asked<'_>,
        now: DateTime<Utc>,
    ) -> Result<Self, Invalid> {
        let period = Period::parse(asked.period)?;
        if period.rolling().is_some() {
            return Err(Invalid::new(
                Code::InvalidPeriod,
                format!("{period} slides over the votes it holds: it has no bucket to adjust"),
            ));
        }
        if period.trending().is_some() {
            return Err(Invalid::new(
                Code::InvalidPeriod,
                format!("{period} decays the votes it holds: it has no bucket to adjust"),
            ));
        }
        if !periods.contains(&period) {
            return Err(Invalid::new(
                Code::PeriodNotEnabled,
                format!("the board does not keep period {period}"),
            ));
        }
        let bucket = match (period, asked.at) {
            (Period::All, None) => Bucket::all(),
            (_, Some(at)) => Bucket::parse(period, tz, at)?,
            (_, None) => {
                return Err(Invalid::new(
                    Code::InvalidBucket,
                    format!("name the {period} bucket to adjust in `at`"),
                ));
            }
        };
        if bucket.start.is_some_and(|start| start > now) {
            return Err(Invalid::new(
                Code::InvalidBucket,
                format!("{period} {} has not begun", bucket.label),
            ));
        }
        let views = Views::parse(asked.view)?;
        if asked.delta == 0 || asked.delta.unsigned_abs() > DELTA_MAX.unsigned_abs() {
            return Err(Invalid::new(
                Code::InvalidDelta,
                format!("delta: a whole number of votes from -{DELTA_MAX} to {DELTA_MAX}, not 0"),
            ));
        }
        reason::check(asked.reason)?;
        Ok(Self {
            bucket,
            views,
            delta: asked.delta,
            reason: asked.reason.to_owned(),
        })
    }

    /// The units it adds to a view (0 to a view it leaves alone).
    pub fn units(&self, view: View) -> i64 {
        if self.views.includes(view) {
            self.delta * view.units_per_vote()
        } else {
            0
        }
    }

    /// Its bucket as the ledger names it.
    pub fn target(&self) -> String {
        target(&self.bucket)
    }

    /// Its ledger entry's time: the bucket's start (within it, so a walk in time order
    /// counts it there), or `now` for `all`.
    pub fn at(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        self.bucket.start.unwrap_or(now)
    }
}

/// A bucket as a ledger entry names the one it adjusts: `<period>:<label>`.
pub fn target(bucket: &Bucket) -> String {
    format!("{}:{}", bucket.period, bucket.label)
}

/// The period a ledger entry's `adjusts` names.
pub fn target_period(target: &str) -> Option<Period> {
    target
        .split_once(':')
        .and_then(|(period, _)| Period::parse(period).ok())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn asked<'a>(period: &'a str, at: Option<&'a str>) -> Asked<'a> {
        Asked {
            period,
            at,
            view: "both",
            delta: 5,
            reason: "phone votes counted by hand",
        }
    }

    #[test]
    fn a_bucket_of_a_kept_calendar_period_that_has_begun_is_adjusted() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap();
        let periods = [Period::Hour, Period::Day, Period::All];
        let day = Adjustment::new(&periods, tz, asked("day", Some("2026-11-25")), now).unwrap();
        assert_eq!(day.target(), "day:2026-11-25");
        assert_eq!(
            day.at(now),
            Utc.with_ymd_and_hms(2026, 11, 24, 16, 0, 0).unwrap()
        );
        assert_eq!(
            (day.units(View::Real), day.units(View::Display)),
            (5, 5_000_000)
        );
        let all = Adjustment::new(&periods, tz, asked("all", None), now).unwrap();
        assert_eq!((all.target(), all.at(now)), ("all:all".to_owned(), now));
        assert_eq!(target_period("hour:2026-11-25T10"), Some(Period::Hour));
        let real = Adjustment::new(
            &periods,
            tz,
            Asked {
                view: "real",
                delta: -3,
                ..asked("day", Some("2026-11-25T03:00:00Z"))
            },
            now,
        )
        .unwrap();
        assert_eq!(real.bucket.label, "2026-11-25");
        assert_eq!((real.units(View::Real), real.units(View::Display)), (-3, 0));
    }

    #[test]
    fn everything_else_is_refused_with_its_code() {
        let tz: Tz = "UTC".parse().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap();
        let periods = [
            Period::Day,
            Period::All,
            Period::Rolling(crate::domain::period::Rolling::HOURS_24),
        ];
        let cases = [
            (asked("day", Some("2026-W48")), Code::InvalidBucket),
            (asked("day", None), Code::InvalidBucket),
            (asked("day", Some("2026-11-26")), Code::InvalidBucket),
            (asked("week", Some("2026-W48")), Code::PeriodNotEnabled),
            (asked("rolling:24h", None), Code::InvalidPeriod),
            (asked("fortnight", None), Code::InvalidPeriod),
            (
                Asked {
                    view: "shown",
                    ..asked("all", None)
                },
                Code::InvalidView,
            ),
            (
                Asked {
                    delta: 0,
                    ..asked("all", None)
                },
                Code::InvalidDelta,
            ),
            (
                Asked {
                    delta: -DELTA_MAX - 1,
                    ..asked("all", None)
                },
                Code::InvalidDelta,
            ),
            (
                Asked {
                    delta: i64::MIN,
                    ..asked("all", None)
                },
                Code::InvalidDelta,
            ),
            (
                Asked {
                    reason: "  ",
                    ..asked("all", None)
                },
                Code::InvalidField,
            ),
        ];
        for (asked, code) in cases {
            assert_eq!(
                Adjustment::new(&periods, tz, asked, now).unwrap_err().code,
                code,
                "{asked:?}"
            );
        }
    }
}
