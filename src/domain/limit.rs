//! Rate-limit rules: what they count over, in which window, up to which limit.
//!
//! A rule counts votes (a vote with `count: 3` is three) per combination of the values of
//! its dimensions: `["voter"]` is "each voter", `["voter", "member"]` is "each voter for
//! each member". Checking and consuming happen in Redis (`vote.lua`); this module says
//! which counter a vote belongs to and what its limit is.
//!
//! On a family, a rule over `["creator"]` alone counts rooms instead: the rooms each
//! creator opens (a room's first write), across the family's rooms (see
//! [`RuleSpec::opens_rooms`]).

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use crate::domain::code::Code;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use super::Invalid;
use super::ids::{Channel, MemberId, Terminal, VoterId};
use super::period::Calendar;

/// Bounds on rules, in one place.
pub mod bounds {
    /// Rules per board: each one costs every vote a few Redis commands.
    pub const RULES_PER_BOARD: usize = 20;
    pub const OVERRIDES_PER_RULE: usize = 50;
    pub const LIMIT_MAX: i64 = 1_000_000_000;
    /// A rolling window keeps one log entry per admitted vote, so its limit bounds memory.
    pub const ROLLING_LIMIT_MAX: i64 = 100_000;
    pub const ROLLING_SPAN_MAX_S: i64 = 31 * 86_400;
    pub const NAME_MAX: usize = 200;
}

/// What a rule counts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    Voter,
    Member,
    Channel,
    Terminal,
    Ip,
    /// Who opens a family's room: a voting page's visitor by its address, an API client
    /// by its key. Counts alone, in a family's rule of rooms opened.
    Creator,
}

impl Dimension {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "voter" => Ok(Self::Voter),
            "member" => Ok(Self::Member),
            "channel" => Ok(Self::Channel),
            "terminal" => Ok(Self::Terminal),
            "ip" => Ok(Self::Ip),
            "creator" => Ok(Self::Creator),
            _ => Err(Invalid::new(
                Code::InvalidDimension,
                format!(
                    "unknown dimension {raw:?} (want voter, member, channel, terminal or ip; \
                     creator alone on a family)"
                ),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Voter => "voter",
            Self::Member => "member",
            Self::Channel => "channel",
            Self::Terminal => "terminal",
            Self::Ip => "ip",
            Self::Creator => "creator",
        }
    }

    /// The error code of a vote that lacks this dimension under a `refuse` rule.
    pub fn required_code(self) -> Code {
        match self {
            Self::Voter => Code::VoterRequired,
            Self::Member => Code::MemberRequired,
            Self::Channel => Code::ChannelRequired,
            Self::Terminal => Code::TerminalRequired,
            // A write always has a creator (its key, or the page's visitor): never asked.
            Self::Ip | Self::Creator => Code::IpRequired,
        }
    }

    /// Checks an override's value for this dimension and answers it in canonical form.
    fn parse_value(self, raw: &str) -> Result<String, Invalid> {
        Ok(match self {
            Self::Voter => VoterId::parse(raw)?.to_string(),
            Self::Member => MemberId::parse(raw)?.to_string(),
            Self::Channel => Channel::parse(raw)?.to_string(),
            Self::Terminal => Terminal::parse(raw)?.to_string(),
            Self::Ip => ip_subject(parse_ip(raw)?),
            Self::Creator => match raw.strip_prefix("ip:") {
                Some(ip) => format!("ip:{}", ip_subject(parse_ip(ip)?)),
                None => VoterId::parse(raw)?.to_string(),
            },
        })
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses an IP address as a client sends it.
pub fn parse_ip(raw: &str) -> Result<IpAddr, Invalid> {
    raw.trim()
        .parse::<IpAddr>()
        .map_err(|_| Invalid::new(Code::InvalidIp, format!("{raw:?} is not an IP address")))
}

/// The value an address counts under: an IPv4 address itself, an IPv6 address by its /64
/// network (one household or phone gets a whole /64, so counting single v6 addresses
/// would let anyone vote without limit).
pub fn ip_subject(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
            format!("{net}/64")
        }
    }
}

/// How long a rule's counter runs before it starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Aligned to the board's local clock: a day rule restarts at local midnight.
    Calendar(Calendar),
    /// Any span of this many seconds: never more than the limit in any of them.
    Rolling(i64),
    /// The whole campaign: the counter never restarts.
    Campaign,
}

impl Window {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let bad = || {
            Invalid::new(
                Code::InvalidWindow,
                format!(
                    "unknown window {raw:?} (want second, minute, hour, day, week, month, \
                     campaign or rolling:<n><s|m|h|d> up to 31d)"
                ),
            )
        };
        if raw == "campaign" {
            return Ok(Self::Campaign);
        }
        if let Some(unit) = Calendar::parse(raw) {
            return Ok(Self::Calendar(unit));
        }
        let spec = raw.strip_prefix("rolling:").ok_or_else(bad)?;
        let (digits, unit) = spec.split_at(spec.len().saturating_sub(1));
        let scale = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(bad()),
        };
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let n: i64 = digits.parse().map_err(|_| bad())?;
        match n.checked_mul(scale) {
            Some(secs) if secs <= bounds::ROLLING_SPAN_MAX_S => Ok(Self::Rolling(secs)),
            _ => Err(bad()),
        }
    }

    /// The window as written in rules, canonical (`rolling:90m` stays `rolling:90m`,
    /// `rolling:60m` becomes `rolling:1h`).
    pub fn code(&self) -> String {
        match self {
            Self::Calendar(unit) => unit.as_str().to_owned(),
            Self::Campaign => "campaign".to_owned(),
            Self::Rolling(secs) => {
                let (n, unit) = [(86_400, 'd'), (3600, 'h'), (60, 'm')]
                    .into_iter()
                    .find(|(scale, _)| secs % scale == 0)
                    .map_or((*secs, 's'), |(scale, unit)| (secs / scale, unit));
                format!("rolling:{n}{unit}")
            }
        }
    }
}

/// What a rule does with a vote that lacks a value it counts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Refuse the vote with `<dimension>_required`.
    Refuse,
    /// Let the vote through without this rule.
    Skip,
}

impl Missing {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "refuse" => Ok(Self::Refuse),
            "skip" => Ok(Self::Skip),
            _ => Err(Invalid::new(
                Code::InvalidMissing,
                format!("unknown missing policy {raw:?} (want refuse or skip)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refuse => "refuse",
            Self::Skip => "skip",
        }
    }
}

/// A different limit for votes whose values match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Every pair must match the vote's value (canonical form).
    pub when: BTreeMap<Dimension, String>,
    pub change: Change,
}

/// What an override does to its rule's limit (seed 000: a partner channel gets five
/// votes more; a value may be blocked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// This limit instead of the rule's; 0 blocks the values (no vote passes).
    Limit(i64),
    /// The rule's limit and this many more.
    Add(i64),
}

impl Change {
    /// The limit for a rule whose own is `limit`.
    pub fn applied_to(self, limit: i64) -> i64 {
        match self {
            Self::Limit(l) => l,
            Self::Add(n) => limit.saturating_add(n),
        }
    }

    /// The change as the dashboard writes it: `10`, `+5`, or `blocked` (a limit of 0).
    pub fn text(self) -> String {
        match self {
            Self::Limit(0) => "blocked".to_owned(),
            Self::Limit(l) => l.to_string(),
            Self::Add(n) => format!("+{n}"),
        }
    }

    /// Reads [`Change::text`] (`0` blocks too); `None` when it is none of them.
    pub fn parse_text(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if raw.eq_ignore_ascii_case("blocked") {
            return Some(Self::Limit(0));
        }
        match raw.strip_prefix('+') {
            Some(n) => n.parse().ok().map(Self::Add),
            None => raw.parse().ok().map(Self::Limit),
        }
    }
}

/// A rule's settings, valid as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub name: String,
    /// Sorted, no repeats, never empty.
    pub dimensions: Vec<Dimension>,
    pub window: Window,
    pub limit: i64,
    pub overrides: Vec<Override>,
    pub missing: Missing,
}

/// A stored rule of a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRule {
    pub id: i64,
    pub spec: RuleSpec,
}

/// Parses a list of dimension names: at least one; repeats are merged.
pub fn parse_dimensions<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Dimension>, Invalid> {
    let mut dims = raw
        .iter()
        .map(|d| Dimension::parse(d.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    dims.sort();
    dims.dedup();
    if dims.is_empty() {
        return Err(Invalid::new(
            Code::EmptyDimensions,
            "dimensions must name at least one of voter, member, channel, terminal, ip",
        ));
    }
    Ok(dims)
}

/// Parses an override's `match` object (dimension -> value).
pub fn parse_match(raw: &BTreeMap<String, String>) -> Result<BTreeMap<Dimension, String>, Invalid> {
    if raw.is_empty() {
        return Err(Invalid::new(
            Code::InvalidOverride,
            "an override's match must name at least one dimension",
        ));
    }
    raw.iter()
        .map(|(dim, value)| {
            let dim = Dimension::parse(dim)?;
            let value = dim.parse_value(value).map_err(|e| {
                Invalid::new(
                    Code::InvalidOverride,
                    format!("override match {dim}: {}", e.message),
                )
            })?;
            Ok((dim, value))
        })
        .collect()
}

impl RuleSpec {
    /// Whether the rule counts the rooms each creator opens in a family (its dimensions
    /// are `["creator"]`), rather than writes.
    pub fn opens_rooms(&self) -> bool {
        self.dimensions == [Dimension::Creator]
    }

    /// Checks the rules that span fields.
    pub fn check(&self) -> Result<(), Invalid> {
        check_name(&self.name)?;
        if self.dimensions.is_empty() {
            return Err(Invalid::new(
                Code::EmptyDimensions,
                "dimensions must name at least one dimension",
            ));
        }
        if self.dimensions.contains(&Dimension::Creator) && !self.opens_rooms() {
            return Err(Invalid::new(
                Code::InvalidDimension,
                "creator counts alone: a family's rule of [\"creator\"] counts the rooms each \
                 creator opens",
            ));
        }
        let max = match self.window {
            Window::Rolling(_) => bounds::ROLLING_LIMIT_MAX,
            _ => bounds::LIMIT_MAX,
        };
        let check_limit = |limit: i64, what: &str| {
            if (1..=max).contains(&limit) {
                Ok(())
            } else {
                Err(Invalid::new(
                    Code::InvalidLimit,
                    format!(
                        "{what} must be between 1 and {max} for a {} window",
                        self.window.code()
                    ),
                ))
            }
        };
        check_limit(self.limit, "limit")?;
        if self.overrides.len() > bounds::OVERRIDES_PER_RULE {
            return Err(Invalid::new(
                Code::InvalidOverride,
                format!(
                    "a rule has at most {} overrides",
                    bounds::OVERRIDES_PER_RULE
                ),
            ));
        }
        for o in &self.overrides {
            match o.change {
                // 0 blocks the values.
                Change::Limit(0) => {}
                Change::Limit(limit) => check_limit(limit, "an override's limit")?,
                Change::Add(n) => {
                    if n < 1 {
                        return Err(Invalid::new(
                            Code::InvalidOverride,
                            "an override's add must be at least 1",
                        ));
                    }
                    check_limit(
                        self.limit.saturating_add(n),
                        "the limit with an override's add",
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The limit for a vote with these values: the first matching override's change to
    /// the rule's own, else the rule's own. 0 when the override blocks the values.
    pub fn limit_for(&self, values: &VoteValues) -> i64 {
        self.overrides
            .iter()
            .find(|o| {
                o.when
                    .iter()
                    .all(|(d, v)| values.get(*d) == Some(v.as_str()))
            })
            .map_or(self.limit, |o| o.change.applied_to(self.limit))
    }

    /// Which counter of this rule a vote belongs to: its dimension values, each
    /// length-prefixed so that no two combinations share a name (`5.alice|3.ios`).
    /// `Err(dimension)` names the first value the vote lacks.
    pub fn subject(&self, values: &VoteValues) -> Result<String, Dimension> {
        let parts = self
            .dimensions
            .iter()
            .map(|&dim| values.get(dim).ok_or(dim))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(subject_of(parts))
    }
}

/// A rule's or a watch's name: 1 to [`bounds::NAME_MAX`] bytes, not only blanks.
pub fn check_name(name: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() || name.len() > bounds::NAME_MAX {
        return Err(Invalid::new(
            Code::InvalidName,
            format!("name must be 1 to {} bytes", bounds::NAME_MAX),
        ));
    }
    Ok(())
}

/// A counter's subject made of `values`, one per dimension, each length-prefixed so that
/// no two combinations share a name (`5.alice|3.ios`): rules' and watches' alike.
pub fn subject_of<S: AsRef<str>>(values: impl IntoIterator<Item = S>) -> String {
    let mut subject = String::new();
    for (i, value) in values.into_iter().enumerate() {
        let value = value.as_ref();
        if i > 0 {
            subject.push('|');
        }
        subject.push_str(&value.len().to_string());
        subject.push('.');
        subject.push_str(value);
    }
    subject
}

/// The `n` values [`subject_of`] made `subject` of; `None` when it holds another number
/// or does not read.
pub fn subject_values(subject: &str, n: usize) -> Option<Vec<String>> {
    let mut rest = subject;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 {
            rest = rest.strip_prefix('|')?;
        }
        let (len, tail) = rest.split_once('.')?;
        let len: usize = len.parse().ok()?;
        out.push(tail.get(..len)?.to_owned());
        rest = &tail[len..];
    }
    rest.is_empty().then_some(out)
}

/// A vote's value for each dimension, in canonical form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VoteValues {
    pub voter: Option<String>,
    pub member: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    /// See [`ip_subject`].
    pub ip: Option<String>,
    /// Who opens a room: `ip:<address>` (see [`ip_subject`]) for a voting page's visitor,
    /// the key (`key:<id>`, `master`) for an API client.
    pub creator: Option<String>,
}

impl VoteValues {
    pub fn get(&self, dim: Dimension) -> Option<&str> {
        match dim {
            Dimension::Voter => self.voter.as_deref(),
            Dimension::Member => self.member.as_deref(),
            Dimension::Channel => self.channel.as_deref(),
            Dimension::Terminal => self.terminal.as_deref(),
            Dimension::Ip => self.ip.as_deref(),
            Dimension::Creator => self.creator.as_deref(),
        }
    }
}

/// Where a vote at some instant stands in a rule's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// A calendar window `[start, end)`.
    Calendar {
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    },
    /// A rolling window: the votes after `since` count.
    Rolling {
        since: DateTime<Utc>,
        length: Duration,
    },
    /// The campaign: everything counts, the counter never restarts.
    Campaign,
}

impl Window {
    /// The span a vote at `at` is counted in, on a board in `tz`.
    /// `at` must lie in the supported range (`period::check_supported`).
    pub fn span(&self, tz: Tz, at: DateTime<Utc>) -> Result<Span, Invalid> {
        Ok(match *self {
            Self::Calendar(unit) => {
                let (start, end) = unit.span(tz, at)?;
                Span::Calendar { start, end }
            }
            Self::Rolling(secs) => {
                let length = Duration::seconds(secs);
                Span::Rolling {
                    since: at.checked_sub_signed(length).ok_or_else(|| {
                        Invalid::new(Code::InvalidTimestamp, format!("{at} is out of range"))
                    })?,
                    length,
                }
            }
            Self::Campaign => Span::Campaign,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn windows_parse_and_print_canonically() {
        assert_eq!(
            Window::parse("day").unwrap(),
            Window::Calendar(Calendar::Day)
        );
        assert_eq!(Window::parse("campaign").unwrap(), Window::Campaign);
        assert_eq!(Window::parse("rolling:1h").unwrap(), Window::Rolling(3600));
        assert_eq!(Window::parse("rolling:60m").unwrap().code(), "rolling:1h");
        assert_eq!(Window::parse("rolling:90s").unwrap().code(), "rolling:90s");
        assert_eq!(
            Window::parse("rolling:31d").unwrap(),
            Window::Rolling(31 * 86_400)
        );
        for bad in [
            "year",
            "rolling:",
            "rolling:0h",
            "rolling:1w",
            "rolling:h",
            "rolling:32d",
            "rolling:-1h",
            "rolling:01h",
        ] {
            assert_eq!(
                Window::parse(bad).unwrap_err().code,
                "invalid_window",
                "{bad}"
            );
        }
    }

    #[test]
    fn creator_counts_alone_and_its_values_are_canonical() {
        assert!(spec(&["creator"], "minute", 20).opens_rooms());
        assert_eq!(spec(&["creator"], "minute", 20).check(), Ok(()));
        assert!(!spec(&["voter"], "minute", 20).opens_rooms());
        assert_eq!(
            spec(&["creator", "voter"], "minute", 20)
                .check()
                .unwrap_err()
                .code,
            "invalid_dimension"
        );
        let matched = |raw: &str| {
            parse_match(&[("creator".to_owned(), raw.to_owned())].into())
                .map(|m| m[&Dimension::Creator].clone())
        };
        assert_eq!(
            matched("ip:2001:db8:1:2::9").unwrap(),
            "ip:2001:db8:1:2::/64"
        );
        assert_eq!(matched("key:12").unwrap(), "key:12");
        assert_eq!(matched("ip:nowhere").unwrap_err().code, "invalid_override");
    }

    #[test]
    fn dimensions_must_be_known_and_present() {
        assert_eq!(
            parse_dimensions(&["member", "voter", "voter"]).unwrap(),
            vec![Dimension::Voter, Dimension::Member]
        );
        assert_eq!(
            parse_dimensions::<&str>(&[]).unwrap_err().code,
            "empty_dimensions"
        );
        assert_eq!(
            parse_dimensions(&["user"]).unwrap_err().code,
            "invalid_dimension"
        );
    }

    #[test]
    fn limits_are_bounded_per_window_kind() {
        assert!(spec(&["voter"], "day", 1).check().is_ok());
        assert_eq!(
            spec(&["voter"], "day", 0).check().unwrap_err().code,
            "invalid_limit"
        );
        assert!(spec(&["voter"], "day", 1_000_000).check().is_ok());
        assert_eq!(
            spec(&["voter"], "rolling:1h", 1_000_000)
                .check()
                .unwrap_err()
                .code,
            "invalid_limit"
        );
    }

    #[test]
    fn subjects_cannot_collide() {
        let rule = spec(&["voter", "terminal"], "day", 5);
        let a = VoteValues {
            voter: Some("a|1.b".into()),
            terminal: Some("c".into()),
            ..VoteValues::default()
        };
        let b = VoteValues {
            voter: Some("a".into()),
            terminal: Some("b|1.c".into()),
            ..VoteValues::default()
        };
        assert_eq!(rule.subject(&a).unwrap(), "5.a|1.b|1.c");
        assert_ne!(rule.subject(&a).unwrap(), rule.subject(&b).unwrap());
        assert_eq!(rule.subject(&VoteValues::default()), Err(Dimension::Voter));
    }

    #[test]
    fn first_matching_override_sets_the_limit() {
        let mut rule = spec(&["voter"], "day", 5);
        let when = |pairs: &[(&str, &str)]| {
            parse_match(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
            .unwrap()
        };
        rule.overrides = vec![
            Override {
                when: when(&[("channel", "partner-a"), ("terminal", "ios")]),
                change: Change::Limit(20),
            },
            Override {
                when: when(&[("channel", "partner-a")]),
                change: Change::Limit(10),
            },
            Override {
                when: when(&[("channel", "partner-b")]),
                change: Change::Add(5),
            },
            Override {
                when: when(&[("channel", "spam")]),
                change: Change::Limit(0),
            },
        ];
        rule.check().unwrap();
        let mut v = VoteValues {
            voter: Some("u".into()),
            channel: Some("partner-a".into()),
            ..VoteValues::default()
        };
        assert_eq!(rule.limit_for(&v), 10);
        v.terminal = Some("ios".into());
        assert_eq!(rule.limit_for(&v), 20);
        v.channel = Some("app".into());
        assert_eq!(rule.limit_for(&v), 5);
        v.channel = Some("partner-b".into());
        assert_eq!(rule.limit_for(&v), 10);
        v.channel = Some("spam".into());
        assert_eq!(rule.limit_for(&v), 0);
    }

    #[test]
    fn an_override_adds_at_least_one_within_the_windows_bound_or_blocks() {
        let mut rule = spec(&["voter"], "day", 5);
        let with = |change| Override {
            when: parse_match(&[("channel".to_owned(), "p".to_owned())].into()).unwrap(),
            change,
        };
        for (change, ok) in [
            (Change::Add(1), true),
            (Change::Add(bounds::LIMIT_MAX - 5), true),
            (Change::Add(bounds::LIMIT_MAX - 4), false),
            (Change::Add(0), false),
            (Change::Add(-3), false),
            (Change::Limit(0), true),
            (Change::Limit(-1), false),
            (Change::Limit(bounds::LIMIT_MAX + 1), false),
        ] {
            rule.overrides = vec![with(change)];
            assert_eq!(rule.check().is_ok(), ok, "{change:?}");
        }
        for (text, change) in [
            ("10", Some(Change::Limit(10))),
            ("+5", Some(Change::Add(5))),
            (" blocked ", Some(Change::Limit(0))),
            ("0", Some(Change::Limit(0))),
            ("five", None),
            ("+", None),
        ] {
            assert_eq!(Change::parse_text(text), change, "{text}");
        }
        for change in [Change::Limit(10), Change::Add(5), Change::Limit(0)] {
            assert_eq!(Change::parse_text(&change.text()), Some(change));
        }
    }

    #[test]
    fn ipv6_counts_by_its_64_network() {
        assert_eq!(ip_subject(parse_ip("203.0.113.9").unwrap()), "203.0.113.9");
        assert_eq!(
            ip_subject(parse_ip("::ffff:203.0.113.9").unwrap()),
            "203.0.113.9"
        );
        assert_eq!(
            ip_subject(parse_ip("2001:db8:1:2:aaaa::1").unwrap()),
            ip_subject(parse_ip("2001:db8:1:2:bbbb::2").unwrap())
        );
        assert_eq!(
            ip_subject(parse_ip("2001:db8:1:2::1").unwrap()),
            "2001:db8:1:2::/64"
        );
        assert_eq!(parse_ip("1.2.3").unwrap_err().code, "invalid_ip");
    }
}
