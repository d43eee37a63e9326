//! Leagues: tiers with promotion and demotion ratios, brackets of a fixed size, seasons
//! of a calendar period, rewards by final rank; and what a season's close does to one
//! bracket, computed from its final ranking alone.
//!
//! Ratios are exact thousandths ([`Milli`]): a bracket of `n` players promotes
//! ⌊promote × n⌋ and demotes ⌊demote × n⌋, in integers.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::Invalid;
use super::code::Code;
use super::ids::LeagueSlug;
use super::limit::{Dimension, Missing, RateRule, RuleSpec, Window};
use super::period::{Bucket, Period};
use super::score::Milli;
use super::webhook;

/// Most tiers a league has.
pub const TIERS_MAX: usize = 20;
/// The largest bracket.
pub const BRACKET_SIZE_MAX: i64 = 10_000;
/// Most rewards a league lists.
pub const REWARDS_MAX: usize = 100;
/// Longest reward text, in bytes.
pub const NAME_MAX: usize = 64;
/// Longest tier name: it is part of a bracket's id (`gold-3`) in URLs.
pub const TIER_NAME_MAX: usize = 32;
/// The largest score a player may reach, in magnitude: every integer up to it is exact
/// in a sorted set's double.
pub const SCORE_MAX: i64 = (1 << 53) - 1;
/// Digits of the join sequence in front of a player's member in a bracket's sorted set
/// (inverted, zero-padded: on equal scores the sorted set's reverse order puts the
/// earlier join first).
pub const JOIN_SEQ_DIGITS: usize = 15;

/// What a score write does to a player's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreOp {
    /// Adds the value (negative takes points away): `delta`, or `op: incr`.
    Incr(i64),
    /// Makes the value the score (seed 003's `zadd`).
    Set(i64),
    /// Keeps the higher of the score and the value (a personal best).
    Best(i64),
}

impl ScoreOp {
    /// `op` (`set`, `best` or `incr`) with `value`, within ±[`SCORE_MAX`].
    pub fn parse(op: &str, value: i64) -> Result<Self, Invalid> {
        if !(-SCORE_MAX..=SCORE_MAX).contains(&value) {
            return Err(Invalid::new(
                Code::InvalidValue,
                "value must be a whole number within ±(2^53 - 1)",
            ));
        }
        match op {
            "incr" => Ok(Self::Incr(value)),
            "set" => Ok(Self::Set(value)),
            "best" => Ok(Self::Best(value)),
            other => Err(Invalid::new(
                Code::InvalidOp,
                format!("op {other:?} is not one of set, best, incr"),
            )),
        }
    }

    /// The op's name and value.
    pub fn parts(self) -> (&'static str, i64) {
        match self {
            Self::Incr(v) => ("incr", v),
            Self::Set(v) => ("set", v),
            Self::Best(v) => ("best", v),
        }
    }
}

fn is_tier_name(name: &str) -> bool {
    (1..=TIER_NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The player a bracket's sorted-set member stands for.
pub fn player_of(member: &str) -> &str {
    member.get(JOIN_SEQ_DIGITS..).unwrap_or("")
}

/// Most score limits a league has.
pub const LIMITS_MAX: usize = 5;

/// A score limit's `per` names: `player`, `ip`.
fn limit_per(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Member => "player",
        other => other.as_str(),
    }
}

/// What a score limit counts per, by name: `["player"]`, `["ip", "player"]`.
pub fn limit_pers(rule: &RateRule) -> Vec<&'static str> {
    rule.spec.dimensions.iter().map(|d| limit_per(*d)).collect()
}

/// A score limit from its parts: `per` names `player` and/or `ip`; `window` a calendar
/// unit or `rolling:<n><unit>`.
pub fn parse_limit(
    id: i64,
    name: &str,
    per: &[String],
    window: &str,
    limit: i64,
) -> Result<RateRule, Invalid> {
    let mut dimensions = per
        .iter()
        .map(|p| match p.as_str() {
            "player" => Ok(Dimension::Member),
            "ip" => Ok(Dimension::Ip),
            other => Err(invalid(
                Code::InvalidDimension,
                format!("a score limit counts per player or ip, not {other:?}"),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    dimensions.sort();
    dimensions.dedup();
    Ok(RateRule {
        id,
        spec: RuleSpec {
            name: name.to_owned(),
            dimensions,
            window: Window::parse(window)?,
            limit,
            overrides: Vec::new(),
            missing: Missing::Refuse,
        },
    })
}

#[derive(Serialize, Deserialize)]
struct LimitJson {
    name: String,
    per: Vec<String>,
    window: String,
    limit: i64,
}

/// Score limits as stored: JSON, ids from their order.
pub fn limits_to_json(limits: &[RateRule]) -> String {
    let rows: Vec<LimitJson> = limits
        .iter()
        .map(|r| LimitJson {
            name: r.spec.name.clone(),
            per: limit_pers(r).into_iter().map(str::to_owned).collect(),
            window: r.spec.window.code(),
            limit: r.spec.limit,
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_default()
}

/// Reads [`limits_to_json`]'s text.
pub fn limits_from_json(text: &str) -> Result<Vec<RateRule>, String> {
    let rows: Vec<LimitJson> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    rows.into_iter()
        .enumerate()
        .map(|(i, l)| {
            parse_limit(i as i64 + 1, &l.name, &l.per, &l.window, l.limit).map_err(|e| e.message)
        })
        .collect()
}

/// One bracket of a season: the `number`th (from 1) of tier `tier` (index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BracketRef {
    pub tier: usize,
    pub number: i64,
}

impl BracketRef {
    /// Its id, `<tier name>-<number>`: `gold-3`.
    pub fn id(&self, rules: &SeasonRules) -> String {
        format!("{}-{}", rules.tier_name(self.tier), self.number)
    }

    /// Reads an id made by [`id`](Self::id).
    pub fn parse(raw: &str, rules: &SeasonRules) -> Result<Self, Invalid> {
        let bad = || {
            invalid(
                Code::InvalidBracket,
                format!("a bracket is <tier>-<number>, like gold-3, not {raw:?}"),
            )
        };
        let (name, number) = raw.rsplit_once('-').ok_or_else(bad)?;
        if number.starts_with('0') || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let number: i64 = number.parse().map_err(|_| bad())?;
        let tier = rules.tier_index(name).ok_or_else(|| {
            invalid(
                Code::UnknownTier,
                format!("the season has no tier {name:?}"),
            )
        })?;
        Ok(Self { tier, number })
    }
}

#[derive(Serialize, Deserialize)]
struct TierJson {
    name: String,
    promote: i64,
    demote: i64,
}

#[derive(Serialize, Deserialize)]
struct RewardJson {
    tier: String,
    first: i64,
    last: i64,
    reward: String,
}

/// Tiers as stored (SQL and a season's record in Redis): JSON, ratios in thousandths.
pub fn tiers_to_json(tiers: &[Tier]) -> String {
    let rows: Vec<TierJson> = tiers
        .iter()
        .map(|t| TierJson {
            name: t.name.clone(),
            promote: t.promote.thousandths(),
            demote: t.demote.thousandths(),
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_default()
}

/// Reads [`tiers_to_json`]'s text.
pub fn tiers_from_json(text: &str) -> Result<Vec<Tier>, String> {
    let rows: Vec<TierJson> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|t| Tier {
            name: t.name,
            promote: Milli::from_thousandths(t.promote),
            demote: Milli::from_thousandths(t.demote),
        })
        .collect())
}

/// Rewards as stored: JSON.
pub fn rewards_to_json(rewards: &[Reward]) -> String {
    let rows: Vec<RewardJson> = rewards
        .iter()
        .map(|r| RewardJson {
            tier: r.tier.clone(),
            first: r.first,
            last: r.last,
            reward: r.reward.clone(),
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_default()
}

/// Reads [`rewards_to_json`]'s text.
pub fn rewards_from_json(text: &str) -> Result<Vec<Reward>, String> {
    let rows: Vec<RewardJson> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|r| Reward {
            tier: r.tier,
            first: r.first,
            last: r.last,
            reward: r.reward,
        })
        .collect())
}

#[derive(Serialize, Deserialize)]
struct RulesJson {
    tiers: Vec<TierJson>,
    bracket_size: i64,
    rewards: Vec<RewardJson>,
}

impl SeasonRules {
    /// As stored with a season: `{"tiers", "bracket_size", "rewards"}`.
    pub fn to_json(&self) -> String {
        let tiers = serde_json::from_str(&tiers_to_json(&self.tiers)).unwrap_or_default();
        let rewards = serde_json::from_str(&rewards_to_json(&self.rewards)).unwrap_or_default();
        serde_json::to_string(&RulesJson {
            tiers,
            bracket_size: self.bracket_size,
            rewards,
        })
        .unwrap_or_default()
    }

    /// Reads [`to_json`](Self::to_json)'s text.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let rules: RulesJson = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let tiers = serde_json::to_string(&rules.tiers).map_err(|e| e.to_string())?;
        let rewards = serde_json::to_string(&rules.rewards).map_err(|e| e.to_string())?;
        Ok(Self {
            tiers: tiers_from_json(&tiers)?,
            bracket_size: rules.bracket_size,
            rewards: rewards_from_json(&rewards)?,
        })
    }
}

/// When a season of `settings` that is running at `at` ends: the end of the calendar
/// bucket of its length holding `at`, in the league's timezone.
pub fn season_end(settings: &LeagueSettings, at: DateTime<Utc>) -> Result<DateTime<Utc>, Invalid> {
    Bucket::containing(settings.season, settings.timezone, at)?
        .end
        .ok_or_else(|| invalid(Code::InvalidSeason, "a season has an end"))
}

/// One tier, lowest first in a league.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tier {
    pub name: String,
    /// Share of a bracket that moves one tier up (0 in the highest tier).
    pub promote: Milli,
    /// Share of a bracket that moves one tier down (0 in the lowest tier).
    pub demote: Milli,
}

/// What players of one tier win for final ranks `first..=last` of their bracket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reward {
    pub tier: String,
    pub first: i64,
    pub last: i64,
    pub reward: String,
}

/// A league as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct League {
    pub id: i64,
    pub slug: LeagueSlug,
    pub settings: LeagueSettings,
    /// Signs webhook deliveries (HMAC-SHA256); made at creation, replaced by a rotation.
    pub webhook_secret: String,
    /// The secret the last rotation replaced, and when: deliveries carry its signature
    /// too for a day after.
    pub previous_secret: Option<(String, DateTime<Utc>)>,
}

/// A league's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LeagueSettings {
    pub title: String,
    /// Lowest first.
    pub tiers: Vec<Tier>,
    pub bracket_size: i64,
    /// `day`, `week` or `month`: a season is one bucket of it.
    pub season: Period,
    pub timezone: Tz,
    pub rewards: Vec<Reward>,
    pub webhook_url: Option<String>,
    /// Score limits: rate-limit rules every score write passes (counted per player, per
    /// IP address, or both), in effect at once; ids from 1 in order.
    pub limits: Vec<RateRule>,
}

fn invalid(code: Code, message: impl Into<String>) -> Invalid {
    Invalid::new(code, message)
}

/// Parses a promotion or demotion ratio in [0, 1], up to three decimals.
pub fn parse_ratio(value: f64, field: &str) -> Result<Milli, Invalid> {
    Milli::parse(value, 0.0, 1.0, field).map_err(|e| invalid(Code::InvalidRatio, e.message))
}

/// Parses a season length: `day`, `week` or `month`.
pub fn parse_season(raw: &str) -> Result<Period, Invalid> {
    match raw {
        "day" => Ok(Period::Day),
        "week" => Ok(Period::Week),
        "month" => Ok(Period::Month),
        _ => Err(invalid(
            Code::InvalidSeason,
            format!("season must be day, week or month, not {raw:?}"),
        )),
    }
}

impl LeagueSettings {
    /// Checks the rules that span fields.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.title.trim().is_empty() || self.title.len() > 200 {
            return Err(invalid(Code::InvalidTitle, "title must be 1 to 200 bytes"));
        }
        if self.tiers.is_empty() || self.tiers.len() > TIERS_MAX {
            return Err(invalid(
                Code::InvalidTiers,
                format!("a league has 1 to {TIERS_MAX} tiers, lowest first"),
            ));
        }
        let last = self.tiers.len() - 1;
        for (i, tier) in self.tiers.iter().enumerate() {
            if !is_tier_name(&tier.name) || self.tiers[..i].iter().any(|t| t.name == tier.name) {
                return Err(invalid(
                    Code::InvalidTiers,
                    format!(
                        "tier names are unique, 1 to {TIER_NAME_MAX} lowercase letters, digits and _; {:?} is not",
                        tier.name
                    ),
                ));
            }
            if tier.promote.thousandths() + tier.demote.thousandths() > 1000 {
                return Err(invalid(
                    Code::InvalidRatio,
                    format!("tier {}: promote + demote must be at most 1", tier.name),
                ));
            }
            if i == last && tier.promote != Milli::ZERO {
                return Err(invalid(
                    Code::InvalidRatio,
                    format!(
                        "tier {} is the highest: it promotes nobody (promote 0)",
                        tier.name
                    ),
                ));
            }
            if i == 0 && tier.demote != Milli::ZERO {
                return Err(invalid(
                    Code::InvalidRatio,
                    format!(
                        "tier {} is the lowest: it demotes nobody (demote 0)",
                        tier.name
                    ),
                ));
            }
        }
        if !(2..=BRACKET_SIZE_MAX).contains(&self.bracket_size) {
            return Err(invalid(
                Code::InvalidBracketSize,
                format!("bracket_size must be 2 to {BRACKET_SIZE_MAX}"),
            ));
        }
        if !matches!(self.season, Period::Day | Period::Week | Period::Month) {
            return Err(invalid(
                Code::InvalidSeason,
                "season must be day, week or month",
            ));
        }
        if self.rewards.len() > REWARDS_MAX {
            return Err(invalid(
                Code::InvalidReward,
                format!("at most {REWARDS_MAX} rewards"),
            ));
        }
        for (i, r) in self.rewards.iter().enumerate() {
            if !self.tiers.iter().any(|t| t.name == r.tier) {
                return Err(invalid(
                    Code::UnknownTier,
                    format!(
                        "a reward names tier {:?}, which the league does not have",
                        r.tier
                    ),
                ));
            }
            if !(1 <= r.first && r.first <= r.last && r.last <= self.bracket_size) {
                return Err(invalid(
                    Code::InvalidReward,
                    format!(
                        "reward ranks must be an inclusive range within 1 to {} (the bracket size)",
                        self.bracket_size
                    ),
                ));
            }
            if r.reward.is_empty() || r.reward.len() > NAME_MAX {
                return Err(invalid(
                    Code::InvalidReward,
                    format!("a reward is 1 to {NAME_MAX} bytes"),
                ));
            }
            if self.rewards[..i]
                .iter()
                .any(|o| o.tier == r.tier && o.first <= r.last && r.first <= o.last)
            {
                return Err(invalid(
                    Code::InvalidReward,
                    format!("rewards of tier {} overlap", r.tier),
                ));
            }
        }
        if self.limits.len() > LIMITS_MAX {
            return Err(invalid(
                Code::TooManyRules,
                format!("a league has at most {LIMITS_MAX} score limits"),
            ));
        }
        for rule in &self.limits {
            rule.spec.check()?;
            if rule.spec.window == Window::Campaign {
                return Err(invalid(
                    Code::InvalidWindow,
                    "a score limit counts over a calendar window (second to month) or a rolling one, not a campaign",
                ));
            }
        }
        if let Some(url) = &self.webhook_url {
            webhook::check_url(url)?;
        }
        Ok(())
    }

    /// What a season started now runs with.
    pub fn rules(&self) -> SeasonRules {
        SeasonRules {
            tiers: self.tiers.clone(),
            bracket_size: self.bracket_size,
            rewards: self.rewards.clone(),
        }
    }
}

/// What one season runs with, fixed when it starts: a change to the league's settings
/// takes effect the season after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeasonRules {
    /// Lowest first.
    pub tiers: Vec<Tier>,
    pub bracket_size: i64,
    pub rewards: Vec<Reward>,
}

impl SeasonRules {
    /// How many of a bracket of `players` in tier `tier` (index, lowest first) move up
    /// and down at the close.
    pub fn movers(&self, tier: usize, players: i64) -> (i64, i64) {
        let Some(t) = self.tiers.get(tier) else {
            return (0, 0);
        };
        let share = |ratio: Milli| players * ratio.thousandths() / 1000;
        (share(t.promote), share(t.demote))
    }

    /// The zone of 1-based `rank` in a bracket of `players` of tier `tier`.
    pub fn zone(&self, tier: usize, rank: i64, players: i64) -> Zone {
        Zone::of(rank, players, self.movers(tier, players))
    }

    /// The tier named `name`.
    pub fn tier_index(&self, name: &str) -> Option<usize> {
        self.tiers.iter().position(|t| t.name == name)
    }

    /// The brackets `count` players of tier `tier` fill, in order, each with its
    /// players: every one holds `bracket_size` but the last (⌈count / size⌉ brackets, as
    /// `league_join.lua` fills them).
    pub fn brackets(&self, tier: usize, count: i64) -> impl Iterator<Item = (BracketRef, i64)> {
        let size = self.bracket_size.max(1);
        (1..=(count + size - 1) / size).map(move |number| {
            (
                BracketRef { tier, number },
                (count - (number - 1) * size).min(size),
            )
        })
    }

    /// The name of tier `tier` (`?` past the last).
    pub fn tier_name(&self, tier: usize) -> &str {
        self.tiers.get(tier).map_or("?", |t| t.name.as_str())
    }
}

/// Where a final rank puts a player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    Promote,
    Stay,
    Demote,
}

impl Zone {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Promote => "promote",
            Self::Stay => "stay",
            Self::Demote => "demote",
        }
    }

    /// The zone of 1-based `rank` in a bracket of `players` that promotes `up` and
    /// demotes `down`.
    pub fn of(rank: i64, players: i64, (up, down): (i64, i64)) -> Self {
        if rank <= up {
            Self::Promote
        } else if rank > players - down {
            Self::Demote
        } else {
            Self::Stay
        }
    }
}

/// What the close gives one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub player: String,
    pub rank: i64,
    pub zone: Zone,
    /// The tier (index) the player plays next season.
    pub next_tier: usize,
    pub rewards: Vec<String>,
}

/// A season as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Season {
    pub id: i64,
    /// 1, 2, …
    pub number: i64,
    pub starts_at: DateTime<Utc>,
    /// When it ends, or ended (earlier when closed by hand).
    pub ends_at: DateTime<Utc>,
    pub closed: bool,
    /// What it ran with (`None` for seasons recorded before this was kept).
    pub rules: Option<SeasonRules>,
}

/// A season close's webhook delivery, from the outbox. It is signed when sent, with the
/// league's secrets of that moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    pub league_id: i64,
    pub season_id: i64,
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

/// A player's final place in a closed season and what the close gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerResult {
    pub place: BracketRef,
    pub score: i64,
    pub outcome: Outcome,
}

/// A player's final place in a closed season, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedResult {
    pub player: String,
    pub place: BracketRef,
    pub rank: i64,
    pub score: i64,
    /// `promote`, `stay` or `demote`.
    pub zone: String,
    /// The tier (index) the close gave the player for the next season.
    pub next_tier: usize,
}

/// A reward a close gave, and whether (and to whom) a join handed it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedReward {
    pub player: String,
    pub reward: String,
    pub delivered_at: Option<DateTime<Utc>>,
    /// The caller a join handed it to (`master`, `key:<id>`).
    pub delivered_to: Option<String>,
}

/// The close of one bracket of tier `tier`: `ranked` are its players, best first (score
/// descending, earlier join first on equal scores).
pub fn close_bracket(rules: &SeasonRules, tier: usize, ranked: &[String]) -> Vec<Outcome> {
    let players = ranked.len() as i64;
    let movers = rules.movers(tier, players);
    let name = rules.tier_name(tier);
    ranked
        .iter()
        .enumerate()
        .map(|(i, player)| {
            let rank = i as i64 + 1;
            let zone = Zone::of(rank, players, movers);
            let next_tier = match zone {
                Zone::Promote => tier + 1,
                Zone::Demote => tier - 1,
                Zone::Stay => tier,
            };
            let rewards = rules
                .rewards
                .iter()
                .filter(|r| r.tier == name && (r.first..=r.last).contains(&rank))
                .map(|r| r.reward.clone())
                .collect();
            Outcome {
                player: player.clone(),
                rank,
                zone,
                next_tier,
                rewards,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ratio(x: f64) -> Milli {
        parse_ratio(x, "r").unwrap()
    }

    fn arena() -> LeagueSettings {
        LeagueSettings {
            title: "Arena".into(),
            tiers: vec![
                Tier {
                    name: "bronze".into(),
                    promote: ratio(0.2),
                    demote: Milli::ZERO,
                },
                Tier {
                    name: "silver".into(),
                    promote: ratio(0.15),
                    demote: ratio(0.15),
                },
                Tier {
                    name: "gold".into(),
                    promote: Milli::ZERO,
                    demote: ratio(0.2),
                },
            ],
            bracket_size: 50,
            season: Period::Week,
            timezone: Tz::UTC,
            rewards: vec![Reward {
                tier: "gold".into(),
                first: 1,
                last: 3,
                reward: "crown".into(),
            }],
            webhook_url: None,
            limits: vec![parse_limit(1, "per player", &["player".into()], "minute", 10).unwrap()],
        }
    }

    #[test]
    fn settings_are_checked() {
        assert!(arena().check().is_ok());
        let code = |f: &dyn Fn(&mut LeagueSettings)| {
            let mut s = arena();
            f(&mut s);
            s.check().unwrap_err().code
        };
        assert_eq!(code(&|s| s.bracket_size = 1), Code::InvalidBracketSize);
        assert_eq!(code(&|s| s.tiers.clear()), Code::InvalidTiers);
        assert_eq!(
            code(&|s| s.tiers[1].name = "bronze".into()),
            Code::InvalidTiers
        );
        assert_eq!(
            code(&|s| {
                s.tiers[1].promote = ratio(0.6);
                s.tiers[1].demote = ratio(0.5);
            }),
            Code::InvalidRatio
        );
        assert_eq!(
            code(&|s| s.tiers[0].demote = ratio(0.1)),
            Code::InvalidRatio
        );
        assert_eq!(
            code(&|s| s.tiers[2].promote = ratio(0.1)),
            Code::InvalidRatio
        );
        assert_eq!(
            code(&|s| s.rewards[0].tier = "iron".into()),
            Code::UnknownTier
        );
        assert_eq!(code(&|s| s.rewards[0].last = 51), Code::InvalidReward);
        assert_eq!(code(&|s| s.rewards[0].first = 4), Code::InvalidReward);
        assert_eq!(
            code(&|s| s.webhook_url = Some("ftp://x".into())),
            Code::InvalidWebhook
        );
        assert_eq!(
            parse_ratio(1.5, "promote").unwrap_err().code,
            Code::InvalidRatio
        );
        assert_eq!(
            parse_ratio(-0.1, "promote").unwrap_err().code,
            Code::InvalidRatio
        );
        assert_eq!(parse_season("year").unwrap_err().code, Code::InvalidSeason);
        assert_eq!(
            code(&|s| s.limits[0].spec.window = Window::Campaign),
            Code::InvalidWindow
        );
        assert_eq!(code(&|s| s.limits[0].spec.limit = 0), Code::InvalidLimit);
        assert_eq!(
            parse_limit(1, "x", &["voter".into()], "day", 1)
                .unwrap_err()
                .code,
            Code::InvalidDimension
        );
        let limits = arena().limits;
        assert_eq!(limits_from_json(&limits_to_json(&limits)).unwrap(), limits);
    }

    #[test]
    fn shares_round_down_and_small_brackets_move_nobody() {
        let s = arena().rules();
        assert_eq!(s.movers(1, 50), (7, 7));
        assert_eq!(s.movers(1, 6), (0, 0));
        assert_eq!(s.movers(0, 9), (1, 0));
        assert_eq!(s.movers(2, 9), (0, 1));
        let players: Vec<String> = (1..=9).map(|i| format!("p{i}")).collect();
        let gold = close_bracket(&s, 2, &players);
        assert_eq!(gold[0].rewards, ["crown"]);
        assert_eq!(gold[3].rewards, Vec::<String>::new());
        assert_eq!(
            gold.iter().map(|o| o.next_tier).collect::<Vec<_>>(),
            [2, 2, 2, 2, 2, 2, 2, 2, 1]
        );
    }

    #[test]
    fn brackets_are_named_by_tier_and_number() {
        let rules = arena().rules();
        let gold3 = BracketRef { tier: 2, number: 3 };
        assert_eq!(gold3.id(&rules), "gold-3");
        assert_eq!(BracketRef::parse("gold-3", &rules).unwrap(), gold3);
        for bad in ["gold", "gold-0", "gold-03", "gold-+3", "gold-x", "-3"] {
            let code = BracketRef::parse(bad, &rules).unwrap_err().code;
            assert!(
                matches!(code, Code::InvalidBracket | Code::UnknownTier),
                "{bad}: {code:?}"
            );
        }
        assert_eq!(
            BracketRef::parse("iron-1", &rules).unwrap_err().code,
            Code::UnknownTier
        );
        assert_eq!(player_of("999999999999998u1"), "u1");
        let filled: Vec<(i64, i64)> = rules.brackets(1, 101).map(|(b, n)| (b.number, n)).collect();
        assert_eq!(filled, [(1, 50), (2, 50), (3, 1)]);
        assert_eq!(rules.brackets(1, 0).count(), 0);
        let mut s = arena();
        s.tiers[0].name = "Bronze".into();
        assert_eq!(s.check().unwrap_err().code, Code::InvalidTiers);
        assert_eq!(tiers_from_json(&tiers_to_json(&s.tiers)).unwrap(), s.tiers);
        assert_eq!(
            rewards_from_json(&rewards_to_json(&s.rewards)).unwrap(),
            s.rewards
        );
        assert_eq!(
            SeasonRules::from_json(&s.rules().to_json()).unwrap(),
            s.rules()
        );
    }

    #[test]
    fn a_season_ends_at_its_calendar_boundary_in_the_league_zone() {
        let mut s = arena();
        s.timezone = "Europe/Paris".parse().unwrap();
        let at = "2026-11-25T12:00:00Z".parse().unwrap();
        let end = season_end(&s, at).unwrap();
        assert_eq!(end.to_rfc3339(), "2026-11-29T23:00:00+00:00");
        s.season = Period::Day;
        assert_eq!(
            season_end(&s, at).unwrap().to_rfc3339(),
            "2026-11-25T23:00:00+00:00"
        );
    }

    proptest! {
        /// Against a model: the top ⌊p·n⌋ move up, the bottom ⌊d·n⌋ down, the rest
        /// stay; nobody leaves the tiers; every rank is given once.
        #[test]
        fn a_close_moves_the_top_and_bottom_shares(
            n in 0usize..200,
            tier in 0usize..3,
            promote in 0i64..=1000,
            demote in 0i64..=1000,
        ) {
            let mut s = arena();
            let (promote, demote) = (promote.min(1000 - demote), demote);
            s.tiers[1].promote = Milli::from_thousandths(promote);
            s.tiers[1].demote = Milli::from_thousandths(demote);
            let players: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            let out = close_bracket(&s.rules(), tier, &players);
            let t = &s.tiers[tier];
            let up = (n as i64 * t.promote.thousandths() / 1000) as usize;
            let down = (n as i64 * t.demote.thousandths() / 1000) as usize;
            for (i, o) in out.iter().enumerate() {
                prop_assert_eq!(o.rank, i as i64 + 1);
                let want = if i < up { tier + 1 } else if i >= n - down { tier - 1 } else { tier };
                prop_assert_eq!(o.next_tier, want);
                prop_assert!(o.next_tier < s.tiers.len());
            }
        }
    }
}
