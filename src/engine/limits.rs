//! Rate limits: which counters a vote must pass, and how much of each a visitor has used.
//!
//! A vote's rules become [`RuleCheck`]s here; `vote.lua` checks and consumes them in the
//! same atomic run that moves the scores. Counter keys expire on their own: a calendar
//! counter a minute after its window ends, a rolling log a minute after its newest vote
//! leaves the window, a campaign counter a day after the campaign ends.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};

use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::MemberId;
use crate::domain::limit::{
    Change, Dimension, Missing, RateRule, RuleSpec, Span, VoteValues, Window,
};
use crate::domain::period::Tenths;
use crate::domain::watch::{Watch, WatchDimension};
use crate::engine::boards::BoardRef;
use crate::engine::config::BoardConfig;
use crate::i18n::Lang;
use crate::store::redis::{Counter, CounterOf, Owner, RuleCheck};

/// How long a counter outlives its window, so that an instance whose clock is a little
/// behind still finds the count.
const GRACE: Duration = Duration::minutes(1);
/// How long a campaign counter outlives the campaign's end.
const CAMPAIGN_GRACE: Duration = Duration::days(1);
/// How long a campaign counter lives after its last vote when the board sets no end
/// (an instance's lives as long as the instance).
pub const CAMPAIGN_IDLE: Duration = Duration::days(400);

/// The rule as a refusal or an error names it: the limit is the one for this vote.
pub fn rule_json(rule: &RateRule, limit: i64) -> Value {
    json!({
        "id": rule.id,
        "name": rule.spec.name,
        "dimensions": rule.spec.dimensions.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
        "window": rule.spec.window.code(),
        "limit": limit,
    })
}

/// Whose rules a write passes: a board's, or a league's score limits.
#[derive(Debug, Clone, Copy)]
pub struct RuleScope<'a> {
    pub rules: &'a [RateRule],
    /// Cuts calendar windows.
    pub timezone: Tz,
    /// When campaign counters may go (a board's `ends_at`).
    pub campaign_end: Option<DateTime<Utc>>,
    /// How long a campaign counter lives after its last write when there is no end:
    /// [`CAMPAIGN_IDLE`], or an instance's TTL (its campaign is its life).
    pub campaign_idle: Duration,
    /// The longest any counter lives after its last write: an instance's TTL, so its
    /// counters expire with it (they are written by every write that counts in them); no
    /// bound on a plain board.
    pub lifetime: Option<Duration>,
}

impl BoardRef {
    /// The board's rules and the clock they count by.
    pub fn rule_scope(&self) -> RuleScope<'_> {
        let settings = self.settings();
        let lifetime = match (&self.instance, settings.instances) {
            (Some(_), Some(family)) => Some(Duration::seconds(family.ttl_s)),
            _ => None,
        };
        RuleScope {
            rules: &self.config.rules,
            timezone: settings.timezone,
            campaign_end: settings.ends_at,
            campaign_idle: lifetime.unwrap_or(CAMPAIGN_IDLE),
            lifetime,
        }
    }

    /// The family's rules of rooms opened, counted in the family's own keys, for as long
    /// as their windows say.
    pub fn opening_scope(&self) -> RuleScope<'_> {
        let settings = self.settings();
        RuleScope {
            rules: &self.config.opening_rules,
            timezone: settings.timezone,
            campaign_end: settings.ends_at,
            campaign_idle: CAMPAIGN_IDLE,
            lifetime: None,
        }
    }
}

/// The counters a write of `count` at `at` must pass, or why it cannot be made at all.
pub fn checks(
    scope: RuleScope<'_>,
    values: &VoteValues,
    count: i64,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<RuleCheck>, EngineError> {
    let mut checks = Vec::with_capacity(scope.rules.len());
    for rule in scope.rules {
        let subject = match rule.spec.subject(values) {
            Ok(subject) => subject,
            Err(_) if rule.spec.missing == Missing::Skip => continue,
            Err(dim) => return Err(required(rule, dim)),
        };
        let limit = rule.spec.limit_for(values);
        // A blocked value (limit 0) is refused by the counter, as rate-limited for good,
        // and counted among the rule's refusals.
        if limit > 0 && count > limit {
            let mut details = Map::new();
            details.insert("rule".into(), rule_json(rule, limit));
            return Err(EngineError::invalid_with(
                Code::CountExceedsLimit,
                format!(
                    "a vote of {count} can never pass rule {:?}, which allows {limit}",
                    rule.spec.name
                ),
                details,
            ));
        }
        let owner = Owner::Rule(rule.id);
        let counter = counter(scope, owner, rule.spec.window, &subject, at, now)?;
        checks.push(check(rule, limit, counter));
    }
    Ok(checks)
}

/// The counters of `watches` a vote of `count` at `at` moves, after its rules: a watch
/// whose dimensions the vote lacks a value of does not watch it.
pub fn watch_checks(
    scope: RuleScope<'_>,
    watches: &[Watch],
    values: &VoteValues,
    ip: Option<IpAddr>,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<RuleCheck>, EngineError> {
    let mut checks = Vec::with_capacity(watches.len());
    for watch in watches {
        let Some(subject) = watch.spec.subject(values, ip) else {
            continue;
        };
        let owner = Owner::Watch(watch.id);
        let dims = &watch.spec.dimensions;
        checks.push(RuleCheck {
            rule: watch.id,
            per_member: dims.contains(&WatchDimension::Member),
            per_voter: dims.contains(&WatchDimension::Voter),
            limit: watch.spec.threshold,
            counter: counter(scope, owner, watch.spec.window, &subject, at, now)?,
        });
    }
    Ok(checks)
}

/// What the store needs of `rule` for one write: its limit and counter, and whether it
/// counts per member or voter (which decides where a sharded board keeps its counter).
fn check(rule: &RateRule, limit: i64, counter: Counter) -> RuleCheck {
    RuleCheck {
        rule: rule.id,
        per_member: rule.spec.dimensions.contains(&Dimension::Member),
        per_voter: rule.spec.dimensions.contains(&Dimension::Voter),
        limit,
        counter,
    }
}

fn required(rule: &RateRule, dim: Dimension) -> EngineError {
    EngineError::invalid(
        dim.required_code(),
        format!(
            "rule {:?} counts votes per {dim}, and this vote names no {dim}",
            rule.spec.name
        ),
    )
}

/// Where a rule or watch (`owner`) counts a vote at `at` by `subject` over `window`.
fn counter(
    scope: RuleScope<'_>,
    owner: Owner,
    window: Window,
    subject: &str,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Counter, EngineError> {
    let of = CounterOf {
        owner,
        window: window.code(),
        subject: subject.to_owned(),
    };
    let ttl = |window: Duration| {
        let lived = scope.lifetime.map_or(window, |life| window.min(life));
        seconds_ceil(lived)
    };
    Ok(match window.span(scope.timezone, at)? {
        Span::Calendar { start, end } => Counter::Fixed {
            of,
            start: Some(start.timestamp()),
            ttl_s: ttl((end - now).max(Duration::zero()) + GRACE),
            ends_ms: Some(end.timestamp_millis()),
        },
        // A watch's rolling window counts in slots; its hash of a period is read in the
        // next one too.
        Span::Rolling { length, .. } if matches!(owner, Owner::Watch(_)) => {
            let slots = Tenths::of_seconds(length.num_seconds());
            let at_ms = at.timestamp_millis();
            let next = slots.period_of(at_ms) + 2 * slots.length_ms();
            Counter::Slotted {
                of,
                slots,
                slot: slots.slot_of(at_ms),
                ttl_s: ttl(Duration::milliseconds(next - now.timestamp_millis())
                    .max(Duration::zero())
                    + GRACE),
            }
        }
        Span::Rolling { since, length } => Counter::Rolling {
            of,
            ttl_s: ttl(length + GRACE),
            horizon_ms: since.timestamp_millis(),
        },
        Span::Campaign => Counter::Fixed {
            of,
            start: None,
            ttl_s: ttl(match scope.campaign_end {
                Some(end) => (end - now).max(Duration::zero()) + CAMPAIGN_GRACE,
                None => scope.campaign_idle,
            }),
            ends_ms: None,
        },
    })
}

fn seconds_ceil(d: Duration) -> i64 {
    (d.num_milliseconds() + 999).div_euclid(1000).max(1)
}

/// A refusal: 429 naming the rule that keeps refusing longest, with the plain-words
/// message [`explain`] makes (in English: the API speaks English).
pub fn refusal(
    board: &BoardConfig,
    rule: &RateRule,
    limit: i64,
    member: &MemberId,
    retry_ms: Option<i64>,
    now: DateTime<Utc>,
) -> EngineError {
    let retry_after_s = retry_ms.map(|ms| (ms.max(1) + 999) / 1000);
    EngineError::RateLimited {
        message: explain(Lang::En, board, rule, limit, member, retry_after_s, now),
        rule: rule_json(rule, limit),
        retry_after_s,
    }
}

/// A league score write refused by score limit `rule`: 429 with the rule (its
/// dimensions named as a limit's `per`: `player`, `ip`) and, when it admits again, the
/// wait.
pub fn score_refusal(rule: &RateRule, limit: i64, retry_ms: Option<i64>) -> EngineError {
    let retry_after_s = retry_ms.map(|ms| (ms.max(1) + 999) / 1000);
    let per = crate::domain::league::limit_pers(rule);
    let wait = retry_after_s.map_or_else(String::new, |s| format!("; try again in {s} s"));
    EngineError::RateLimited {
        message: format!(
            "score limit {:?} allows {limit} writes {} per {}{wait}",
            rule.spec.name,
            window_words(Lang::En, rule.spec.window),
            per.join(" and ")
        ),
        rule: json!({
            "id": rule.id,
            "name": rule.spec.name,
            "dimensions": per,
            "window": rule.spec.window.code(),
            "limit": limit,
        }),
        retry_after_s,
    }
}

/// Why `rule` refused a vote for `member`, about whom, and when voting opens again, in
/// plain words: "You have given Zed 2 votes today, the most one voter may. Voting opens
/// again tomorrow 00:00 Beijing time, in 7 h 14 min."
pub fn explain(
    lang: Lang,
    board: &BoardConfig,
    rule: &RateRule,
    limit: i64,
    member: &MemberId,
    retry_after_s: Option<i64>,
    now: DateTime<Utc>,
) -> String {
    if limit == 0 {
        // An override blocks these values: no wait would help.
        return lang.t("refused-blocked");
    }
    let dims = &rule.spec.dimensions;
    let name = board
        .members
        .get(member)
        .map_or_else(|| member.to_string(), |m| m.name.clone());
    let window = window_words(lang, rule.spec.window);
    let key = match (
        rule.spec.opens_rooms(),
        dims.contains(&Dimension::Voter),
        dims.contains(&Dimension::Member),
    ) {
        (true, _, _) => "refused-rooms",
        (false, true, true) => "refused-voter-member",
        (false, true, false) => "refused-voter",
        (false, false, true) => "refused-member",
        (false, false, false) => "refused-other",
    };
    let refused = lang.tr(
        key,
        &[
            ("name", name.into()),
            ("limit", limit.into()),
            ("window", window.into()),
        ],
    );
    let opens = match retry_after_s {
        Some(s) => {
            let tz = board.board.settings.timezone;
            let wait = Duration::seconds(s);
            lang.tr(
                "opens-again",
                &[
                    ("when", lang.when(now + wait, tz, now).into()),
                    ("zone", lang.zone(tz).into()),
                    ("within", lang.within(wait).into()),
                ],
            )
        }
        None => lang.t("opens-never"),
    };
    lang.sentences(&[refused, opens])
}

/// "today", "this week", "in any 10m", "in this campaign" in `lang`.
pub fn window_words(lang: Lang, window: Window) -> String {
    match window {
        Window::Calendar(unit) => lang.t(&format!("window-{}", unit.as_str())),
        Window::Campaign => lang.t("window-campaign"),
        Window::Rolling(_) => lang.tr(
            "window-rolling",
            &[(
                "span",
                window
                    .code()
                    .trim_start_matches("rolling:")
                    .to_owned()
                    .into(),
            )],
        ),
    }
}

/// A rule in plain words, as the dashboard and the audit log show it: "each voter, 5
/// per day — channel partner-a: 10" (overrides keep their codes).
pub fn describe(lang: Lang, rule: &RuleSpec) -> String {
    let who: Vec<String> = rule
        .dimensions
        .iter()
        .map(|d| lang.t(&format!("rule-who-{d}")))
        .collect();
    let per = match rule.window {
        Window::Calendar(unit) => lang.t(&format!("rule-per-{}", unit.as_str())),
        Window::Campaign => lang.t("rule-per-campaign"),
        Window::Rolling(_) => lang.tr(
            "rule-per-rolling",
            &[(
                "span",
                rule.window
                    .code()
                    .trim_start_matches("rolling:")
                    .to_owned()
                    .into(),
            )],
        ),
    };
    let mut text = lang.tr(
        if rule.opens_rooms() {
            "rule-words-rooms"
        } else {
            "rule-words"
        },
        &[
            ("who", who.join(&lang.t("rule-for")).into()),
            ("limit", rule.limit.into()),
            ("per", per.into()),
        ],
    );
    if !rule.overrides.is_empty() {
        let overrides: Vec<String> = rule
            .overrides
            .iter()
            .map(|o| {
                let when: Vec<String> = o.when.iter().map(|(d, v)| format!("{d} {v}")).collect();
                let change = match o.change {
                    Change::Limit(0) => lang.t("rule-blocked"),
                    change => change.text(),
                };
                format!("{}: {change}", when.join(" + "))
            })
            .collect();
        text.push_str(" — ");
        text.push_str(&overrides.join("; "));
    }
    if rule.missing == Missing::Skip {
        text.push_str(&lang.t("rule-skips"));
    }
    text
}

/// One rule's standing for a visitor, as the voting page shows it.
#[derive(Debug, Clone)]
pub struct QuotaRule {
    pub id: i64,
    pub name: String,
    pub dimensions: Vec<String>,
    pub window: String,
    /// The limit for these values (overrides applied).
    pub limit: i64,
    /// Votes counted in the current window; null when the query lacks a value the rule
    /// counts on (see `needs`).
    pub used: Option<i64>,
    pub remaining: Option<i64>,
    /// When more votes open up: the end of a calendar window, the moment the oldest vote
    /// leaves a rolling one; null for the campaign or an unused rolling window.
    pub resets_at: Option<DateTime<Utc>>,
    /// Dimensions the rule counts on that the query did not give.
    pub needs: Vec<String>,
}

/// Every rule of the board, with what `values` have used of it at `now`.
pub async fn quota(
    state: &AppState,
    board: &BoardRef,
    values: &VoteValues,
    now: DateTime<Utc>,
) -> Result<Vec<QuotaRule>, EngineError> {
    let (redis, config) = (&state.redis, &*board.config);
    let mut rules: Vec<QuotaRule> = Vec::with_capacity(config.rules.len());
    let mut counted = Vec::new();
    let mut spans = Vec::new();
    for rule in &config.rules {
        let spec = &rule.spec;
        let needs: Vec<String> = spec
            .dimensions
            .iter()
            .filter(|d| values.get(**d).is_none())
            .map(|d| d.as_str().to_owned())
            .collect();
        if let Ok(subject) = spec.subject(values) {
            let counter = counter(
                board.rule_scope(),
                Owner::Rule(rule.id),
                rule.spec.window,
                &subject,
                now,
                now,
            )?;
            counted.push(check(rule, spec.limit_for(values), counter));
            spans.push((
                rules.len(),
                spec.window.span(config.board.settings.timezone, now)?,
            ));
        }
        rules.push(QuotaRule {
            id: rule.id,
            name: spec.name.clone(),
            dimensions: spec
                .dimensions
                .iter()
                .map(|d| d.as_str().to_owned())
                .collect(),
            window: spec.window.code(),
            limit: spec.limit_for(values),
            used: None,
            remaining: None,
            resets_at: None,
            needs,
        });
    }
    let usage = if counted.is_empty() {
        Vec::new()
    } else {
        let (member, voter) = (values.member.as_deref(), values.voter.as_deref());
        redis
            .rule_usage(&board.keys, member, voter, &counted)
            .await?
    };
    for ((index, span), usage) in spans.into_iter().zip(usage) {
        let rule = &mut rules[index];
        rule.used = Some(usage.used);
        rule.remaining = Some((rule.limit - usage.used).max(0));
        rule.resets_at = match span {
            Span::Calendar { end, .. } => Some(end),
            Span::Rolling { length, .. } => usage
                .oldest_ms
                .and_then(DateTime::from_timestamp_millis)
                .map(|oldest| oldest + length),
            Span::Campaign => None,
        };
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limit::{Override, parse_dimensions, parse_match};

    fn spec(dims: &[&str], window: &str, limit: i64) -> RuleSpec {
        RuleSpec {
            name: "r".into(),
            dimensions: parse_dimensions(dims).unwrap(),
            window: Window::parse(window).unwrap(),
            limit,
            overrides: Vec::new(),
            missing: Missing::Refuse,
        }
    }

    #[test]
    fn rules_read_as_plain_words_in_both_languages() {
        let mut rule = spec(&["voter"], "day", 5);
        let when = |channel: &str| {
            parse_match(&[("channel".to_owned(), channel.to_owned())].into()).unwrap()
        };
        rule.overrides = vec![
            Override {
                when: when("partner-a"),
                change: Change::Limit(10),
            },
            Override {
                when: when("partner-b"),
                change: Change::Add(5),
            },
            Override {
                when: when("spam"),
                change: Change::Limit(0),
            },
        ];
        assert_eq!(
            describe(Lang::En, &rule),
            "each voter, 5 per day — channel partner-a: 10; channel partner-b: +5; channel \
             spam: blocked"
        );
        assert_eq!(
            describe(Lang::Zh, &rule),
            "每位投票人每天最多 5 票 — channel partner-a: 10; channel partner-b: +5; channel \
             spam: 禁止"
        );
        let mut rule = spec(&["member", "voter"], "rolling:1h", 2);
        rule.missing = Missing::Skip;
        assert_eq!(
            describe(Lang::En, &rule),
            "each voter for each member, 2 in any 1h (votes without these values skip the rule)"
        );
        assert_eq!(
            describe(Lang::Zh, &rule),
            "每位投票人对每位成员任意 1h 内最多 2 票（缺少这些值的投票不受此规则限制）"
        );
        assert_eq!(
            describe(Lang::En, &spec(&["ip"], "campaign", 3)),
            "each IP address, 3 in the whole campaign"
        );
    }
}
