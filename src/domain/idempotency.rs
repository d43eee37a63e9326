//! Idempotent writes: a client's key makes a write count once.
//!
//! A key belongs to the caller that sent it (an API key, the master key or a voting-page
//! visitor) and to its board, so two clients cannot collide. The first request's
//! fingerprint is stored with its answer: a retry carries the same fingerprint and gets
//! the first answer back; a different request reusing the key is refused.

use sha2::{Digest, Sha256};

use super::ids::IdempotencyKey;

/// A write's idempotency key and the fingerprint of the request that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: IdempotencyKey,
    /// 32 hex digits (128 bits of SHA-256) over the request's fields.
    pub fingerprint: String,
}

impl Idempotency {
    /// `fields` are the request's values, named and in a fixed order, already normalised
    /// (defaults filled in, times in UTC) so that two spellings of one request match.
    pub fn new(key: IdempotencyKey, fields: &[(&str, Option<&str>)]) -> Self {
        let mut hash = Sha256::new();
        let mut number = itoa::Buffer::new();
        for (name, value) in fields {
            // Length prefixes keep `("a", "bc")` and `("ab", "c")` apart: `<len>:<name>`,
            // then `=<len>:<value>;` or `-;`.
            hash.update(number.format(name.len()));
            hash.update(b":");
            hash.update(name);
            match value {
                Some(v) => {
                    hash.update(b"=");
                    hash.update(number.format(v.len()));
                    hash.update(b":");
                    hash.update(v);
                    hash.update(b";");
                }
                None => hash.update(b"-;"),
            }
        }
        let digest = hash.finalize();
        Self {
            key,
            fingerprint: hex::encode(&digest[..16]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> IdempotencyKey {
        IdempotencyKey::parse("k1").unwrap()
    }

    #[test]
    fn equal_fields_match_and_any_difference_does_not() {
        let a = Idempotency::new(key(), &[("member", Some("m1")), ("voter", None)]);
        let b = Idempotency::new(key(), &[("member", Some("m1")), ("voter", None)]);
        assert_eq!(a, b);
        assert_eq!(a.fingerprint.len(), 32);
        for other in [
            vec![("member", Some("m2")), ("voter", None)],
            vec![("member", Some("m1")), ("voter", Some(""))],
            vec![("member", Some("m1v")), ("oter", None)],
            vec![("member", Some("m1"))],
        ] {
            assert_ne!(a.fingerprint, Idempotency::new(key(), &other).fingerprint);
        }
    }

    // Stored records carry the fingerprint, so a retry after an upgrade must compute the
    // same one: the digest of these fields is fixed.
    #[test]
    fn a_fingerprint_is_the_same_in_every_version() {
        let fields = [
            ("member", Some("m1")),
            ("voter", None),
            ("channel", Some("app")),
            ("note", Some("é;=:")),
        ];
        assert_eq!(
            Idempotency::new(key(), &fields).fingerprint,
            "4950a366e3b0af7dcd18cd07bb2756c4"
        );
    }
}
