//! Watches: what makes a vote look like a vote farm's. A watch counts a board's votes per
//! subject (the vote's values for its dimensions, an address by its network where the
//! watch says so) over a window, as a rate-limit rule counts them; a vote that takes its
//! subject's count past the threshold is held for review instead of counted, and so is
//! every later vote of that subject while its count stays past it (held votes count too,
//! so a calendar window holds the rest of the subject's votes in it).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::Invalid;
use super::code::Code;
use super::limit::{VoteValues, Window, check_name, subject_of, subject_values};

/// Bounds on watches, in one place.
pub mod bounds {
    /// Watches per board: each one costs every vote a counter.
    pub const WATCHES_PER_BOARD: usize = 5;
    pub const THRESHOLD_MAX: i64 = 1_000_000_000;
}

/// What a watch counts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatchDimension {
    Voter,
    Member,
    Channel,
    Terminal,
    /// An address as the `ip` rule dimension counts it: IPv4 whole, IPv6 by its /64.
    Ip,
    /// `ip/N`: `ip` with one family's addresses grouped by a wider network. N below 32
    /// groups IPv4 addresses by /N (IPv6 ones stay by /64); N from 33 to 63 groups IPv6
    /// addresses by /N (IPv4 ones stay whole).
    IpPrefix(u8),
}

impl WatchDimension {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let bad = || {
            Invalid::new(
                Code::InvalidDimension,
                format!(
                    "unknown watch dimension {raw:?} (want voter, member, channel, terminal, \
                     ip, or ip/N: N from 8 to 31 for an IPv4 network, 33 to 63 for IPv6)"
                ),
            )
        };
        Ok(match raw {
            "voter" => Self::Voter,
            "member" => Self::Member,
            "channel" => Self::Channel,
            "terminal" => Self::Terminal,
            "ip" => Self::Ip,
            _ => {
                let digits = raw.strip_prefix("ip/").ok_or_else(bad)?;
                if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                match digits.parse::<u8>() {
                    Ok(n @ (8..=31 | 33..=63)) => Self::IpPrefix(n),
                    _ => return Err(bad()),
                }
            }
        })
    }

    pub fn code(self) -> String {
        match self {
            Self::Voter => "voter".into(),
            Self::Member => "member".into(),
            Self::Channel => "channel".into(),
            Self::Terminal => "terminal".into(),
            Self::Ip => "ip".into(),
            Self::IpPrefix(n) => format!("ip/{n}"),
        }
    }

    /// A vote's value for this dimension, in canonical form; `None` when it has none.
    fn value(self, values: &VoteValues, ip: Option<IpAddr>) -> Option<String> {
        match self {
            Self::Voter => values.voter.clone(),
            Self::Member => values.member.clone(),
            Self::Channel => values.channel.clone(),
            Self::Terminal => values.terminal.clone(),
            Self::Ip => values.ip.clone(),
            Self::IpPrefix(n) => ip.map(|ip| network(ip, n)),
        }
    }
}

impl fmt::Display for WatchDimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

/// `ip`'s network under `ip/n` (see [`WatchDimension::IpPrefix`]).
fn network(ip: IpAddr, n: u8) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) if n < 32 => {
            let bits = u32::from(v4) & (u32::MAX << (32 - u32::from(n)));
            format!("{}/{n}", Ipv4Addr::from(bits))
        }
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let n = if n > 32 { n } else { 64 };
            let bits = u128::from(v6) & (u128::MAX << (128 - u32::from(n)));
            format!("{}/{n}", Ipv6Addr::from(bits))
        }
    }
}

/// Parses a list of watch dimensions: at least one; repeats are merged.
pub fn parse_dimensions<S: AsRef<str>>(raw: &[S]) -> Result<Vec<WatchDimension>, Invalid> {
    let mut dims = raw
        .iter()
        .map(|d| WatchDimension::parse(d.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    dims.sort();
    dims.dedup();
    if dims.is_empty() {
        return Err(Invalid::new(
            Code::EmptyDimensions,
            "a watch's dimensions must name at least one of voter, member, channel, \
             terminal, ip, ip/N",
        ));
    }
    Ok(dims)
}

/// A watch's settings, valid as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchSpec {
    pub name: String,
    /// Sorted, no repeats, never empty.
    pub dimensions: Vec<WatchDimension>,
    pub window: Window,
    /// Votes a subject may cast in a window before its next one is held.
    pub threshold: i64,
}

/// A stored watch of a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub id: i64,
    pub spec: WatchSpec,
}

impl WatchSpec {
    /// Checks the rules that span fields.
    pub fn check(&self) -> Result<(), Invalid> {
        check_name(&self.name)?;
        if self.dimensions.is_empty() {
            return Err(Invalid::new(
                Code::EmptyDimensions,
                "dimensions must name at least one dimension",
            ));
        }
        let max = bounds::THRESHOLD_MAX;
        if !(1..=max).contains(&self.threshold) {
            return Err(Invalid::new(
                Code::InvalidThreshold,
                format!("threshold must be between 1 and {max}"),
            ));
        }
        Ok(())
    }

    /// The subject a vote with these values (and this address) is counted under: its
    /// value for each dimension, length-prefixed as a rule's subject is (`2.m3|14.203.0.113.0/24`);
    /// `None` when the vote lacks one (the watch does not apply to it).
    pub fn subject(&self, values: &VoteValues, ip: Option<IpAddr>) -> Option<String> {
        let parts = self
            .dimensions
            .iter()
            .map(|dim| dim.value(values, ip))
            .collect::<Option<Vec<_>>>()?;
        Some(subject_of(parts))
    }

    /// A subject's values, one per dimension, as [`WatchSpec::subject`] wrote them;
    /// `None` when it is not one of this watch's.
    pub fn values_of(&self, subject: &str) -> Option<Vec<(WatchDimension, String)>> {
        let values = subject_values(subject, self.dimensions.len())?;
        Some(self.dimensions.iter().copied().zip(values).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limit::ip_subject;

    fn spec(dims: &[&str], window: &str, threshold: i64) -> WatchSpec {
        WatchSpec {
            name: "w".into(),
            dimensions: parse_dimensions(dims).unwrap(),
            window: Window::parse(window).unwrap(),
            threshold,
        }
    }

    #[test]
    fn dimensions_parse_with_network_prefixes() {
        assert_eq!(
            parse_dimensions(&["member", "ip/24", "member"]).unwrap(),
            vec![WatchDimension::Member, WatchDimension::IpPrefix(24)]
        );
        assert_eq!(WatchDimension::parse("ip/48").unwrap().code(), "ip/48");
        for bad in [
            "ip/", "ip/32", "ip/64", "ip/7", "ip/024", "ip/x", "creator", "ip/300",
        ] {
            assert_eq!(
                WatchDimension::parse(bad).unwrap_err().code,
                Code::InvalidDimension,
                "{bad}"
            );
        }
        assert_eq!(
            parse_dimensions::<&str>(&[]).unwrap_err().code,
            Code::EmptyDimensions
        );
    }

    #[test]
    fn a_prefix_groups_its_own_family_and_leaves_the_other_as_ip_counts_it() {
        let v4: IpAddr = "203.0.113.77".parse().unwrap();
        let v6: IpAddr = "2001:db8:abcd:12:1::9".parse().unwrap();
        let mapped: IpAddr = "::ffff:203.0.113.77".parse().unwrap();
        assert_eq!(network(v4, 24), "203.0.113.0/24");
        assert_eq!(network(mapped, 24), "203.0.113.0/24");
        assert_eq!(network(v4, 20), "203.0.112.0/20");
        assert_eq!(network(v4, 48), "203.0.113.77");
        assert_eq!(network(v6, 48), "2001:db8:abcd::/48");
        assert_eq!(network(v6, 24), ip_subject(v6));
        assert_eq!(network(v6, 24), "2001:db8:abcd:12::/64");
    }

    #[test]
    fn subjects_name_every_value_and_read_back() {
        let watch = spec(&["ip/24", "member"], "rolling:10m", 50);
        let values = VoteValues {
            member: Some("m3".into()),
            voter: Some("a|b.c".into()),
            ..VoteValues::default()
        };
        let ip: IpAddr = "203.0.113.9".parse().unwrap();
        let subject = watch.subject(&values, Some(ip)).unwrap();
        assert_eq!(subject, "2.m3|14.203.0.113.0/24");
        assert_eq!(
            watch.values_of(&subject).unwrap(),
            vec![
                (WatchDimension::Member, "m3".to_owned()),
                (WatchDimension::IpPrefix(24), "203.0.113.0/24".to_owned())
            ]
        );
        assert_eq!(watch.subject(&values, None), None);
        let by_voter = spec(&["voter"], "hour", 5);
        let subject = by_voter.subject(&values, None).unwrap();
        assert_eq!(subject, "5.a|b.c");
        assert_eq!(
            by_voter.values_of(&subject).unwrap(),
            vec![(WatchDimension::Voter, "a|b.c".to_owned())]
        );
        assert_eq!(by_voter.values_of("5.a|b.cx"), None);
    }

    #[test]
    fn thresholds_and_names_are_bounded() {
        assert_eq!(spec(&["ip"], "day", 1).check(), Ok(()));
        assert_eq!(
            spec(&["ip"], "day", 0).check().unwrap_err().code,
            Code::InvalidThreshold
        );
        assert_eq!(
            spec(&["ip"], "rolling:10m", 1_000_000_001)
                .check()
                .unwrap_err()
                .code,
            Code::InvalidThreshold
        );
        assert_eq!(spec(&["ip"], "rolling:10m", 1_000_000_000).check(), Ok(()));
        let unnamed = WatchSpec {
            name: " ".into(),
            ..spec(&["ip"], "day", 3)
        };
        assert_eq!(unnamed.check().unwrap_err().code, Code::InvalidName);
    }
}
