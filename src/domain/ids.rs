//! Identifiers parsed at the edge: board slugs, member ids, voter ids and the like.

use super::code::Code;
use std::fmt;

use super::Invalid;

fn is_slug(s: &str) -> bool {
    let bytes = s.as_bytes();
    (1..=64).contains(&bytes.len())
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// `[A-Za-z0-9_.:-]{1,64}`: safe inside Redis key names and URLs.
fn is_token(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// `[A-Za-z0-9_.-]{1,64}`: a token without `:`, which parts a family from its instance.
fn is_instance(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Printable text, 1 to `max` bytes: see [`is_plain`].
fn is_printable(s: &str, max: usize) -> bool {
    (1..=max).contains(&s.len()) && is_plain(s)
}

/// Whether text holds no control character (C0, DEL, C1) and no bidirectional embedding,
/// override or isolate (U+202A–U+202E, U+2066–U+2069), which would make what a log or a
/// page shows differ from what was stored.
pub fn is_plain(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $check:expr, $code:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn parse(raw: &str) -> Result<Self, Invalid> {
                if $check(raw) {
                    Ok(Self(raw.to_owned()))
                } else {
                    Err(Invalid::new($code, format!("{:?} is not a valid {}", raw, $what)))
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(
    /// A board's slug: `[a-z0-9][a-z0-9-]{0,63}`.
    BoardSlug, is_slug, Code::InvalidBoardSlug, "board slug: 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit"
);
string_id!(
    /// One board of a family (a live room, a match): `[A-Za-z0-9_.-]{1,64}`.
    InstanceId, is_instance, Code::InvalidInstance, "instance: 1 to 64 letters, digits and _ . -"
);
string_id!(
    /// A league's slug, as a board's: lowercase letters, digits and hyphens.
    LeagueSlug, is_slug, Code::InvalidLeagueSlug, "league slug: 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit"
);
string_id!(
    /// A league player's id: `[A-Za-z0-9_.:-]{1,64}`.
    PlayerId, is_token, Code::InvalidPlayer, "player: 1 to 64 letters, digits and _ . : -"
);
string_id!(
    /// A member id: `[A-Za-z0-9_.:-]{1,64}`.
    MemberId, is_token, Code::InvalidMemberId, "member id: 1 to 64 letters, digits and _ . : -"
);
string_id!(
    /// A traffic channel such as `app` or `partner-a`: `[A-Za-z0-9_.:-]{1,64}`.
    Channel, is_token, Code::InvalidChannel, "channel: 1 to 64 letters, digits and _ . : -"
);
string_id!(
    /// A terminal (device type) such as `ios` or `pc`: `[A-Za-z0-9_.:-]{1,64}`.
    Terminal, is_token, Code::InvalidTerminal, "terminal: 1 to 64 letters, digits and _ . : -"
);
string_id!(
    /// Whoever casts a vote, as the client names them: printable, 1 to 128 bytes.
    VoterId, |s| is_printable(s, 128), Code::InvalidVoter, "voter: 1 to 128 bytes of printable text"
);
string_id!(
    /// A client-chosen key that makes a vote count once: printable, 1 to 128 bytes.
    IdempotencyKey,
    |s| is_printable(s, 128),
    Code::InvalidIdempotencyKey,
    "idempotency key: 1 to 128 bytes of printable text"
);

/// A board as a route or a batch item names it: `<slug>`, or `<slug>:<instance>` for one
/// board of a family.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoardName {
    pub slug: BoardSlug,
    pub instance: Option<InstanceId>,
}

impl BoardName {
    /// Reads `<slug>` or `<slug>:<instance>`: a bad slug is `invalid_board_slug`, a bad
    /// instance (empty, too long, another `:`, a character outside the alphabet)
    /// `invalid_instance`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let (slug, instance) = match raw.split_once(':') {
            Some((slug, instance)) => (slug, Some(instance)),
            None => (raw, None),
        };
        Ok(Self {
            slug: BoardSlug::parse(slug)?,
            instance: instance.map(InstanceId::parse).transpose()?,
        })
    }
}

impl From<BoardSlug> for BoardName {
    fn from(slug: BoardSlug) -> Self {
        Self {
            slug,
            instance: None,
        }
    }
}

impl fmt::Display for BoardName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance {
            Some(instance) => write!(f, "{}:{instance}", self.slug),
            None => write!(f, "{}", self.slug),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_name_is_a_slug_and_perhaps_an_instance() {
        let plain = BoardName::parse("stars").unwrap();
        assert_eq!((plain.slug.as_str(), plain.instance), ("stars", None));
        let room = BoardName::parse("room:8812").unwrap();
        assert_eq!(room.slug.as_str(), "room");
        assert_eq!(room.instance.as_ref().map(InstanceId::as_str), Some("8812"));
        assert_eq!(room.to_string(), "room:8812");
        let longest = format!("room:{}", "Z_.-9".repeat(12) + "abcd");
        assert_eq!(BoardName::parse(&longest).unwrap().to_string(), longest);
        for bad in [
            "room:",
            "room:a:b",
            "room:a b",
            "room:a{b}",
            "room:é",
            &format!("room:{}", "x".repeat(65)),
        ] {
            assert_eq!(
                BoardName::parse(bad).unwrap_err().code,
                Code::InvalidInstance,
                "{bad}"
            );
        }
        for bad in ["Room:1", ":1", "", "ro om"] {
            assert_eq!(
                BoardName::parse(bad).unwrap_err().code,
                Code::InvalidBoardSlug,
                "{bad}"
            );
        }
    }

    #[test]
    fn slugs_follow_the_contract() {
        assert!(BoardSlug::parse("stars").is_ok());
        assert!(BoardSlug::parse("9-lives").is_ok());
        assert!(BoardSlug::parse(&"a".repeat(64)).is_ok());
        for bad in [&"a".repeat(65), "-x", "Stars", "", "a{b}"] {
            assert_eq!(
                BoardSlug::parse(bad).unwrap_err().code,
                Code::InvalidBoardSlug,
                "{bad}"
            );
        }
    }

    #[test]
    fn member_ids_allow_the_token_alphabet_only() {
        assert!(MemberId::parse("user:42.a_b-C").is_ok());
        for bad in ["a b", "x{y}", ""] {
            assert_eq!(
                MemberId::parse(bad).unwrap_err().code,
                Code::InvalidMemberId,
                "{bad}"
            );
        }
        assert_eq!(
            MemberId::parse(&"m".repeat(65)).unwrap_err().code,
            Code::InvalidMemberId
        );
    }

    #[test]
    fn voters_are_printable_text() {
        assert!(VoterId::parse("alice@example.com").is_ok());
        assert!(VoterId::parse("用户 7").is_ok());
        for bad in [
            "a\nb",
            "",
            "\u{0}x",
            "x\u{7f}",
            "x\u{9b}",
            "evil\u{202e}",
            "a\u{2067}b",
        ] {
            assert_eq!(
                VoterId::parse(bad).unwrap_err().code,
                Code::InvalidVoter,
                "{bad:?}"
            );
        }
    }
}
