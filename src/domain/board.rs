//! Boards and members as the rest of the code sees them, with their invariants.

use crate::domain::code::Code;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::Invalid;
use super::identity::{PROVIDERS_PER_BOARD_MAX, Voters};
use super::ids::{BoardSlug, MemberId};
use super::period::{Bucket, Period};
use super::retention::{ARCHIVE_TOP_DEFAULT, Retention};
use super::score::Milli;
use super::scoring::{Scoring, Storage};

/// Who may receive votes on a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// Only registered members; a vote for anyone else is refused.
    Closed,
    /// Any well-formed member id.
    Open,
}

impl Membership {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "closed" => Ok(Self::Closed),
            "open" => Ok(Self::Open),
            _ => Err(Invalid::new(
                Code::InvalidMembership,
                format!("unknown membership {raw:?} (want open or closed)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
        }
    }
}

/// Reads a web origin, `https://shop.example` or `http://localhost:3000`: a scheme, a
/// host and an optional port, nothing else; answers it lower case, as browsers send it.
pub fn parse_origin(raw: &str) -> Result<String, Invalid> {
    let bad = || {
        Invalid::new(
            Code::InvalidOrigin,
            format!(
                "{raw:?} is not an origin like https://shop.example (scheme, host, optional port)"
            ),
        )
    };
    let origin = raw.trim().to_ascii_lowercase();
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(bad)?;
    let (host, port) = rest.rsplit_once(':').unwrap_or((rest, ""));
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'));
    let port_ok = port.is_empty() || port.parse::<u16>().is_ok_and(|p| p > 0);
    if host_ok && port_ok {
        Ok(origin)
    } else {
        Err(bad())
    }
}

/// Bounds on board and member numbers, in one place.
pub mod bounds {
    pub const MULTIPLIER_MIN: f64 = 0.001;
    pub const MULTIPLIER_MAX: f64 = 1_000_000.0;
    pub const INITIAL_VOTES_MAX: i64 = 1_000_000_000;
    pub const MAX_COUNT_MAX: i64 = 1_000_000;
    pub const DEFAULT_MAX_COUNT: i64 = 1000;
    pub const DISPLAY_DECIMALS_MAX: u8 = 6;
    pub const EMBED_ORIGINS_MAX: usize = 20;
    pub const TITLE_MAX: usize = 200;
    pub const DESCRIPTION_MAX: usize = 4000;
    pub const NAME_MAX: usize = 200;
    pub const URL_MAX: usize = 2048;
    /// A family's instances live at most a year past their last write.
    pub const INSTANCE_TTL_MAX_S: i64 = 31_536_000;
    /// Live instances a family holds at once by default: about 270 MB of Redis at the
    /// 2.7 KB a small room costs.
    pub const MAX_LIVE_DEFAULT: i64 = 100_000;
    /// The most live instances a family may be set to hold.
    pub const MAX_LIVE_MAX: i64 = 10_000_000;
    /// Days an expired instance's ledger stays in SQL by default.
    pub const INSTANCE_LEDGER_DAYS_DEFAULT: i64 = 90;
    /// The longest late grace: an hour.
    pub const LATE_GRACE_MAX_S: i64 = 3_600;
    /// The most rolling windows one board keeps: each is a part of every vote.
    pub const ROLLING_WINDOWS_MAX: usize = 4;
    /// The most trending periods one board keeps: each is a part of every vote.
    pub const TRENDING_PERIODS_MAX: usize = 4;
}

/// A board's settings, valid as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardSettings {
    pub title: String,
    pub description: String,
    pub membership: Membership,
    /// Sorted shortest first, no repeats, never empty.
    pub periods: Vec<Period>,
    pub timezone: Tz,
    pub multiplier: Milli,
    pub carry_over: Milli,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub public_page: bool,
    /// The largest `count` one vote may carry.
    pub max_count: i64,
    /// Decimals pages show of a score (rounded); the API shows exact values.
    pub display_decimals: u8,
    /// Sites (origins) that may show the voting page in a frame (`/embed/b/<slug>`).
    pub embed_origins: Vec<String>,
    /// Votes or scores; fixed at creation.
    pub scoring: Scoring,
    /// How the buckets are kept in Redis; fixed at creation.
    pub storage: Storage,
    /// How long closed buckets stay in Redis after they are archived.
    pub retention: Retention,
    /// Entries of each view the archive keeps per bucket.
    pub archive_top: i64,
    /// `Some` for a family: a template whose instances come into being with their first
    /// write; fixed at creation.
    pub instances: Option<Instances>,
    /// Whether every accepted write is recorded in the board's ledger (on by default for
    /// `votes` boards, off for `scores` boards and families; see `domain::ledger`).
    pub ledger: bool,
    /// How long after `ends_at` (seconds, 0 to [`bounds::LATE_GRACE_MAX_S`]) a write
    /// stamped before it is still taken: gateways that queue votes sent before the
    /// cut-off deliver them late. A caller without the backfill scope may then send `at`
    /// up to this long in the past.
    pub late_grace_s: i64,
    /// Whether a vote a watch holds answers "held for review" (`held: true`) rather than
    /// as an accepted vote does (see `domain::watch`).
    pub tell_held: bool,
    /// Who may vote on the board's public page: anyone, or only visitors signed in with
    /// one of `providers`.
    pub voters: Voters,
    /// The names of the identity providers whose tokens the board takes (at most
    /// [`PROVIDERS_PER_BOARD_MAX`], no repeats); that each exists is the engine's check.
    pub providers: Vec<String>,
}

/// How a family's instances live: each leaves Redis `ttl_s` after its last write; at most
/// `max_live` are live at once; their voting pages are on only with `pages`; their
/// ledgers stay in SQL `ledger_days` after they expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instances {
    /// Fixed at creation.
    pub ttl_s: i64,
    /// The most instances live at once: a write that would open one more is refused.
    pub max_live: i64,
    /// Whether each instance has a public voting page (`/b/<family>:<instance>`), when
    /// the family's `public_page` is on.
    pub pages: bool,
    /// Days an instance's ledger (its entries and the drain's place in SQL) is kept
    /// after the instance expired.
    pub ledger_days: i64,
}

impl Instances {
    /// A family's settings with `ttl_s` and every other one at its default.
    pub fn new(ttl_s: i64) -> Result<Self, Invalid> {
        Self {
            ttl_s,
            max_live: bounds::MAX_LIVE_DEFAULT,
            pages: false,
            ledger_days: bounds::INSTANCE_LEDGER_DAYS_DEFAULT,
        }
        .checked()
    }

    /// The settings, when each is within its bounds.
    pub fn checked(self) -> Result<Self, Invalid> {
        if !(1..=bounds::INSTANCE_TTL_MAX_S).contains(&self.ttl_s) {
            return Err(Invalid::new(
                Code::InvalidTtl,
                format!(
                    "instances.ttl_s must be a whole number of seconds from 1 to {}",
                    bounds::INSTANCE_TTL_MAX_S
                ),
            ));
        }
        if !(1..=bounds::MAX_LIVE_MAX).contains(&self.max_live) {
            return Err(Invalid::new(
                Code::InvalidField,
                format!(
                    "instances.max_live must be a whole number from 1 to {}",
                    bounds::MAX_LIVE_MAX
                ),
            ));
        }
        if !(1..=super::retention::MAX_DAYS).contains(&self.ledger_days) {
            return Err(Invalid::new(
                Code::InvalidField,
                format!(
                    "instances.ledger_days must be a whole number of days from 1 to {}",
                    super::retention::MAX_DAYS
                ),
            ));
        }
        Ok(self)
    }
}

impl BoardSettings {
    /// Settings for a new board before the request's fields are applied.
    pub fn new(title: String) -> Self {
        Self {
            title,
            description: String::new(),
            membership: Membership::Closed,
            periods: Period::CALENDAR.to_vec(),
            timezone: Tz::UTC,
            multiplier: Milli::ONE,
            carry_over: Milli::ZERO,
            starts_at: None,
            ends_at: None,
            public_page: false,
            max_count: bounds::DEFAULT_MAX_COUNT,
            display_decimals: 0,
            embed_origins: Vec::new(),
            scoring: Scoring::Votes,
            storage: Storage::Full,
            retention: Retention::default(),
            archive_top: ARCHIVE_TOP_DEFAULT,
            instances: None,
            ledger: true,
            late_grace_s: 0,
            tell_held: false,
            voters: Voters::Anyone,
            providers: Vec::new(),
        }
    }

    /// Whether a board created with these settings keeps a ledger when the request does
    /// not say: a plain `votes` board does.
    pub fn ledger_by_default(&self) -> bool {
        self.scoring == Scoring::Votes && self.instances.is_none()
    }

    /// Checks the rules that span fields.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.title.trim().is_empty() || self.title.len() > bounds::TITLE_MAX {
            return Err(Invalid::new(
                Code::InvalidTitle,
                format!("title must be 1 to {} bytes", bounds::TITLE_MAX),
            ));
        }
        if self.description.len() > bounds::DESCRIPTION_MAX {
            return Err(Invalid::new(
                Code::InvalidDescription,
                format!(
                    "description must be at most {} bytes",
                    bounds::DESCRIPTION_MAX
                ),
            ));
        }
        if !(1..=bounds::MAX_COUNT_MAX).contains(&self.max_count) {
            return Err(Invalid::new(
                Code::InvalidMaxCount,
                format!("max_count must be between 1 and {}", bounds::MAX_COUNT_MAX),
            ));
        }
        if self.embed_origins.len() > bounds::EMBED_ORIGINS_MAX {
            return Err(Invalid::new(
                Code::InvalidOrigin,
                format!("at most {} embed origins", bounds::EMBED_ORIGINS_MAX),
            ));
        }
        if self.display_decimals > bounds::DISPLAY_DECIMALS_MAX {
            return Err(Invalid::new(
                Code::InvalidDisplayDecimals,
                format!(
                    "display_decimals must be between 0 and {}",
                    bounds::DISPLAY_DECIMALS_MAX
                ),
            ));
        }
        self.check_scoring()?;
        if !(0..=bounds::LATE_GRACE_MAX_S).contains(&self.late_grace_s) {
            return Err(Invalid::new(
                Code::InvalidField,
                format!(
                    "late_grace_s must be a whole number of seconds from 0 to {}",
                    bounds::LATE_GRACE_MAX_S
                ),
            ));
        }
        let mut providers = self.providers.clone();
        providers.sort();
        providers.dedup();
        if self.providers.len() > PROVIDERS_PER_BOARD_MAX || providers.len() != self.providers.len()
        {
            return Err(Invalid::new(
                Code::InvalidField,
                format!("identity_providers: at most {PROVIDERS_PER_BOARD_MAX} names, each once"),
            ));
        }
        if self.voters == Voters::SignedIn && self.providers.is_empty() {
            return Err(Invalid::new(
                Code::InvalidField,
                "voters: signed_in needs at least one of identity_providers",
            ));
        }
        if let (Some(start), Some(end)) = (self.starts_at, self.ends_at)
            && start >= end
        {
            return Err(Invalid::new(
                Code::InvalidWindow,
                "starts_at must be before ends_at",
            ));
        }
        Ok(())
    }

    /// A scores board has no multiplier or carry-over, and keeps rolling windows only when
    /// stored `full`; a votes board is stored `full` or `sharded` (by voter), and a
    /// sharded one keeps calendar periods.
    fn check_scoring(&self) -> Result<(), Invalid> {
        let field = |m: &str| Err(Invalid::new(Code::InvalidField, m));
        match self.scoring {
            Scoring::Votes if self.storage.is_top_n() => {
                field("storage: a votes board is stored full or sharded")
            }
            Scoring::Votes
                if self.storage.is_sharded() && self.periods.iter().any(|p| !p.is_bucketed()) =>
            {
                field(
                    "periods: a sharded votes board keeps calendar periods, not rolling windows \
                     or trending periods",
                )
            }
            Scoring::Votes => Ok(()),
            Scoring::Scores { .. } if self.multiplier != Milli::ONE => {
                field("multiplier: a scores board has no multiplier (leave it 1)")
            }
            Scoring::Scores { .. } if self.carry_over != Milli::ZERO => {
                field("carry_over: a scores board has no carry-over (leave it 0)")
            }
            Scoring::Scores { .. }
                if !matches!(self.storage, Storage::Full)
                    && self.periods.iter().any(|p| !p.is_bucketed()) =>
            {
                field(
                    "periods: a scores board keeps rolling windows and trending periods only \
                     when stored full",
                )
            }
            Scoring::Scores { .. } => Ok(()),
        }
    }

    /// Checks a member against the board: a scores board's members have no initial
    /// votes and no multiplier.
    pub fn admits_member(&self, member: &Member) -> Result<(), Invalid> {
        if self.instances.is_some() && member.initial_votes != 0 {
            return Err(Invalid::new(
                Code::InvalidInitialVotes,
                "initial_votes: a family's members start from nothing in each of its boards \
                 (leave it 0)",
            ));
        }
        if self.scoring.is_scores() {
            if member.initial_votes != 0 {
                return Err(Invalid::new(
                    Code::InvalidField,
                    "initial_votes: a scores board's members have none (leave it 0)",
                ));
            }
            if member.multiplier.is_some() {
                return Err(Invalid::new(
                    Code::InvalidField,
                    "multiplier: a scores board's members have none (leave it null)",
                ));
            }
        }
        Ok(())
    }

    /// Refuses a change of what is fixed at creation: scoring, decimals, storage,
    /// whether the board is a family and its instances' TTL.
    pub fn check_change(&self, new: &Self) -> Result<(), Invalid> {
        if self.scoring != new.scoring
            || self.storage != new.storage
            || self.instances.map(|i| i.ttl_s) != new.instances.map(|i| i.ttl_s)
        {
            return Err(Invalid::new(
                Code::InvalidField,
                "scoring, decimals, storage, instances and instances.ttl_s are fixed when a \
                 board is created (a family's max_live, pages and ledger_days may change)",
            ));
        }
        Ok(())
    }

    /// Whether votes are accepted at `at`.
    pub fn window_admits(&self, at: DateTime<Utc>) -> Result<(), Invalid> {
        if let Some(start) = self.starts_at
            && at < start
        {
            return Err(Invalid::new(
                Code::CampaignNotStarted,
                format!("voting opens at {}", start.to_rfc3339()),
            ));
        }
        if let Some(end) = self.ends_at
            && at >= end
        {
            return Err(Invalid::new(
                Code::CampaignEnded,
                format!("voting closed at {}", end.to_rfc3339()),
            ));
        }
        Ok(())
    }
}

/// Parses a list of period names: at least one, no unknown names, at most
/// [`bounds::ROLLING_WINDOWS_MAX`] rolling windows and
/// [`bounds::TRENDING_PERIODS_MAX`] trending periods; repeats are merged.
pub fn parse_periods<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Period>, Invalid> {
    let mut periods = raw
        .iter()
        .map(|p| Period::parse(p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    periods.sort();
    periods.dedup();
    if periods.is_empty() {
        return Err(Invalid::new(
            Code::InvalidPeriods,
            "periods must name at least one period",
        ));
    }
    if periods.iter().filter(|p| p.rolling().is_some()).count() > bounds::ROLLING_WINDOWS_MAX {
        return Err(Invalid::new(
            Code::InvalidPeriods,
            format!(
                "periods may name at most {} rolling windows",
                bounds::ROLLING_WINDOWS_MAX
            ),
        ));
    }
    if periods.iter().filter(|p| p.trending().is_some()).count() > bounds::TRENDING_PERIODS_MAX {
        return Err(Invalid::new(
            Code::InvalidPeriods,
            format!(
                "periods may name at most {} trending periods",
                bounds::TRENDING_PERIODS_MAX
            ),
        ));
    }
    Ok(periods)
}

/// A board: its numeric id (used in Redis key names), slug and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub id: i64,
    pub slug: BoardSlug,
    pub settings: BoardSettings,
    /// From when Redis counts each bucket's votes: a board made before the count existed
    /// has none for its earlier buckets; `None`: from the start.
    pub votes_counted_from: Option<DateTime<Utc>>,
}

impl Board {
    /// Whether `bucket`'s votes are all counted (it began when the count did, or later).
    pub fn counts_votes_of(&self, bucket: &Bucket) -> bool {
        self.votes_counted_from
            .is_none_or(|from| bucket.start.is_some_and(|start| start >= from))
    }
}

/// A registered member of a board.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub id: MemberId,
    pub name: String,
    pub image_url: Option<String>,
    pub initial_votes: i64,
    /// Overrides the board's multiplier when set.
    pub multiplier: Option<Milli>,
    pub enabled: bool,
    pub profile: serde_json::Value,
}

impl Member {
    /// Checks the fields a request sets.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.name.len() > bounds::NAME_MAX {
            return Err(Invalid::new(
                Code::InvalidName,
                format!("name must be at most {} bytes", bounds::NAME_MAX),
            ));
        }
        if let Some(url) = &self.image_url
            && (url.len() > bounds::URL_MAX
                || !(url.starts_with("https://")
                    || url.starts_with("http://")
                    || url.starts_with('/')))
        {
            return Err(Invalid::new(
                Code::InvalidImageUrl,
                "image_url must be an http(s) URL or a path starting with /",
            ));
        }
        if !(0..=bounds::INITIAL_VOTES_MAX).contains(&self.initial_votes) {
            return Err(Invalid::new(
                Code::InvalidInitialVotes,
                format!(
                    "initial_votes must be between 0 and {}",
                    bounds::INITIAL_VOTES_MAX
                ),
            ));
        }
        if !self.profile.is_object() {
            return Err(Invalid::new(
                Code::InvalidProfile,
                "profile must be a JSON object, such as {\"genre\": \"pop\"}",
            ));
        }
        Ok(())
    }
}

/// Parses a multiplier (N) in its allowed range.
pub fn parse_multiplier(value: f64) -> Result<Milli, Invalid> {
    Milli::parse(
        value,
        bounds::MULTIPLIER_MIN,
        bounds::MULTIPLIER_MAX,
        "multiplier",
    )
}

/// Parses a carry-over ratio r in [0, 1].
pub fn parse_carry_over(value: f64) -> Result<Milli, Invalid> {
    Milli::parse(value, 0.0, 1.0, "carry_over")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::period::{Rolling, SlotUnit};

    #[test]
    fn periods_are_sorted_and_deduplicated() {
        assert_eq!(
            parse_periods(&["all", "day", "day", "hour"]).unwrap(),
            vec![Period::Hour, Period::Day, Period::All]
        );
        assert_eq!(
            parse_periods::<&str>(&[]).unwrap_err().code,
            "invalid_periods"
        );
        assert_eq!(parse_periods(&["year"]).unwrap_err().code, "invalid_period");
        assert_eq!(
            parse_periods(&[
                "rolling:72h",
                "rolling:90d",
                "day",
                "rolling:1h",
                "rolling:7d"
            ])
            .unwrap(),
            [
                Period::Day,
                Period::Rolling(Rolling::new(SlotUnit::Hour, 1).unwrap()),
                Period::Rolling(Rolling::new(SlotUnit::Hour, 72).unwrap()),
                Period::Rolling(Rolling::DAYS_7),
                Period::Rolling(Rolling::new(SlotUnit::Day, 90).unwrap()),
            ]
        );
        assert_eq!(
            parse_periods(&[
                "rolling:1h",
                "rolling:2h",
                "rolling:3h",
                "rolling:4h",
                "rolling:5h"
            ])
            .unwrap_err()
            .code,
            "invalid_periods"
        );
    }

    #[test]
    fn window_is_half_open() {
        let mut s = BoardSettings::new("t".into());
        let t = |x: &str| crate::domain::period::parse_instant(x).unwrap();
        s.starts_at = Some(t("2026-01-01T00:00:00Z"));
        s.ends_at = Some(t("2026-02-01T00:00:00Z"));
        assert_eq!(
            s.window_admits(t("2025-12-31T23:59:59Z")).unwrap_err().code,
            "campaign_not_started"
        );
        assert!(s.window_admits(t("2026-01-01T00:00:00Z")).is_ok());
        assert_eq!(
            s.window_admits(t("2026-02-01T00:00:00Z")).unwrap_err().code,
            "campaign_ended"
        );
    }
}
