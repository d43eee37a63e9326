//! API key scopes.

use std::fmt;

use crate::domain::code::Code;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::Invalid;
use super::ids::{BoardSlug, Channel, LeagueSlug};

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Vote,
    Read,
    Admin,
    /// Submit votes with an explicit past time (`at`).
    Backfill,
    /// Speak for end users: set a vote's `ip` (a backend relaying its users' votes).
    Trusted,
}

impl Scope {
    pub const EVERY: [Scope; 5] = [
        Scope::Vote,
        Scope::Read,
        Scope::Admin,
        Scope::Backfill,
        Scope::Trusted,
    ];

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "vote" => Ok(Self::Vote),
            "read" => Ok(Self::Read),
            "admin" => Ok(Self::Admin),
            "backfill" => Ok(Self::Backfill),
            "trusted" => Ok(Self::Trusted),
            _ => Err(Invalid::new(
                Code::InvalidScope,
                format!("unknown scope {raw:?} (want vote, read, admin, backfill or trusted)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vote => "vote",
            Self::Read => "read",
            Self::Admin => "admin",
            Self::Backfill => "backfill",
            Self::Trusted => "trusted",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a list of scope names: at least one; repeats are merged.
pub fn parse_scopes<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Scope>, Invalid> {
    let mut scopes = raw
        .iter()
        .map(|s| Scope::parse(s.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(Invalid::new(
            Code::InvalidScopes,
            "scopes must name at least one scope",
        ));
    }
    Ok(scopes)
}

/// The most boards, and the most leagues, one key may name.
pub const MAX_REACH: usize = 100;

/// The boards and leagues a key may reach; `None` is every one (also those created
/// later). A key bound to a channel — a partner's — reaches no league it does not name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reach {
    pub boards: Option<Vec<BoardSlug>>,
    pub leagues: Option<Vec<LeagueSlug>>,
}

impl Reach {
    /// Every board and league: the master key, and keys made before limits existed.
    pub const EVERYWHERE: Reach = Reach {
        boards: None,
        leagues: None,
    };

    /// The limits a new key asks for, checked: each list names at most [`MAX_REACH`]
    /// slugs (repeats merged). A key bound to a channel names its leagues or reaches none.
    pub fn parse<S: AsRef<str>>(
        boards: Option<&[S]>,
        leagues: Option<&[S]>,
        channel: Option<&Channel>,
    ) -> Result<Self, Invalid> {
        fn list<T: Ord, S: AsRef<str>>(
            raw: &[S],
            what: &str,
            code: Code,
            parse: impl Fn(&str) -> Result<T, Invalid>,
        ) -> Result<Vec<T>, Invalid> {
            let mut slugs = raw
                .iter()
                .map(|s| parse(s.as_ref()).map_err(|e| Invalid::new(code, e.message)))
                .collect::<Result<Vec<_>, _>>()?;
            slugs.sort();
            slugs.dedup();
            if slugs.len() > MAX_REACH {
                return Err(Invalid::new(
                    code,
                    format!("a key names at most {MAX_REACH} {what}"),
                ));
            }
            Ok(slugs)
        }
        let boards = boards
            .map(|b| list(b, "boards", Code::InvalidBoards, BoardSlug::parse))
            .transpose()?;
        let leagues = match leagues {
            Some(l) => Some(list(l, "leagues", Code::InvalidLeagues, LeagueSlug::parse)?),
            None if channel.is_some() => Some(Vec::new()),
            None => None,
        };
        Ok(Self { boards, leagues })
    }

    pub fn board(&self, slug: &BoardSlug) -> bool {
        self.boards.as_ref().is_none_or(|b| b.contains(slug))
    }

    pub fn league(&self, slug: &LeagueSlug) -> bool {
        self.leagues.as_ref().is_none_or(|l| l.contains(slug))
    }

    /// The boards named, or `None` for every one.
    pub fn board_names(&self) -> Option<Vec<&str>> {
        self.boards
            .as_ref()
            .map(|b| b.iter().map(BoardSlug::as_str).collect())
    }

    /// The leagues named, or `None` for every one.
    pub fn league_names(&self) -> Option<Vec<&str>> {
        self.leagues
            .as_ref()
            .map(|l| l.iter().map(LeagueSlug::as_str).collect())
    }

    pub fn is_everywhere(&self) -> bool {
        self.boards.is_none() && self.leagues.is_none()
    }
}

/// What a new key is made with, checked: the one shape the API, the dashboard and SQL
/// share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub name: String,
    pub scopes: Vec<Scope>,
    pub channel: Option<Channel>,
    pub reach: Reach,
}

impl KeySpec {
    /// Checks a key's fields as a client sends them: a name of 1 to 200 bytes, at least
    /// one scope, an optional channel, and the boards and leagues it may reach.
    pub fn parse<S: AsRef<str>>(
        name: &str,
        scopes: &[S],
        channel: Option<&str>,
        boards: Option<&[S]>,
        leagues: Option<&[S]>,
    ) -> Result<Self, Invalid> {
        let name = name.trim();
        if name.is_empty() || name.len() > 200 {
            return Err(Invalid::new(
                Code::InvalidName,
                "name must be 1 to 200 bytes",
            ));
        }
        let scopes = parse_scopes(scopes)?;
        let channel = channel.map(Channel::parse).transpose()?;
        let reach = Reach::parse(boards, leagues, channel.as_ref())?;
        Ok(Self {
            name: name.to_owned(),
            scopes,
            channel,
            reach,
        })
    }
}

/// An API key as stored: everything but the secret, which only its hash stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: i64,
    pub name: String,
    /// The key's first characters, to tell keys apart in lists.
    pub prefix: String,
    pub scopes: Vec<Scope>,
    /// When set, votes made with this key count for this channel whatever the body says.
    pub channel: Option<Channel>,
    /// The boards and leagues it may reach.
    pub reach: Reach,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The stored form of a key: SHA-256, hex. Keys are long random strings, so a fast hash
/// is enough; a slow password hash would only slow every request.
pub fn hash_key(raw: &str) -> String {
    hex::encode(Sha256::digest(raw.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_key_reaches_no_league_it_does_not_name() {
        let channel = Channel::parse("partner-a").ok();
        let none: Option<&[&str]> = None;
        let reach = Reach::parse(none, none, channel.as_ref()).unwrap();
        let arena = LeagueSlug::parse("arena").unwrap();
        let stars = BoardSlug::parse("stars").unwrap();
        assert!(!reach.league(&arena));
        assert!(reach.board(&stars));
        let named = Reach::parse(none, Some(&["arena", "arena"][..]), channel.as_ref()).unwrap();
        assert_eq!(named.leagues, Some(vec![arena.clone()]));
        assert!(named.league(&arena));
        let plain = Reach::parse(Some(&["stars"][..]), none, None).unwrap();
        assert!(plain.league(&arena) && plain.board(&stars));
        assert!(!plain.board(&BoardSlug::parse("moons").unwrap()));
        assert!(!plain.is_everywhere());
    }

    #[test]
    fn limits_name_valid_slugs_and_not_too_many() {
        let none: Option<&[&str]> = None;
        let bad = Reach::parse(Some(&["Stars"][..]), none, None).unwrap_err();
        assert_eq!(bad.code, Code::InvalidBoards);
        let many: Vec<String> = (0..=MAX_REACH).map(|i| format!("l{i}")).collect();
        let too_many = Reach::parse(None, Some(&many[..]), None).unwrap_err();
        assert_eq!(too_many.code, Code::InvalidLeagues);
    }
}
