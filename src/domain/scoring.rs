//! How a board scores and stores its rankings: `votes` or `scores` boards, the operators a
//! score write may use, exact decimal values, and the storage layouts of score boards.

use super::Invalid;
use super::code::Code;
use super::score::MAX_UNITS;

/// Decimals a score board may keep at most.
pub const DECIMALS_MAX: u8 = 6;

/// What a board ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoring {
    /// Votes: two views, multiplier, carry-over, initial votes.
    Votes,
    /// Scores written by operators, one view, exact to `decimals` places.
    Scores { decimals: u8 },
}

impl Scoring {
    pub fn parse(raw: &str, decimals: Option<i64>) -> Result<Self, Invalid> {
        match raw {
            "votes" if decimals.is_none_or(|d| d == 0) => Ok(Self::Votes),
            "votes" => Err(Invalid::new(
                Code::InvalidField,
                "decimals: only a scores board keeps decimals",
            )),
            "scores" => {
                let decimals = decimals.unwrap_or(0);
                u8::try_from(decimals)
                    .ok()
                    .filter(|d| *d <= DECIMALS_MAX)
                    .map(|decimals| Self::Scores { decimals })
                    .ok_or_else(|| {
                        Invalid::new(
                            Code::InvalidNumber,
                            format!("decimals must be between 0 and {DECIMALS_MAX}"),
                        )
                    })
            }
            _ => Err(Invalid::new(
                Code::InvalidScoring,
                format!("unknown scoring {raw:?} (want votes or scores)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Votes => "votes",
            Self::Scores { .. } => "scores",
        }
    }

    pub fn decimals(self) -> u8 {
        match self {
            Self::Votes => 0,
            Self::Scores { decimals } => decimals,
        }
    }

    pub fn is_scores(self) -> bool {
        matches!(self, Self::Scores { .. })
    }
}

/// Bounds of the storage layouts.
pub mod bounds {
    pub const RETAIN_MAX: i64 = 100_000;
    pub const TRIM_AT_MAX: i64 = 1_000_000;
    pub const SHARDS_MIN: i64 = 2;
    pub const SHARDS_MAX: i64 = 256;
}

/// How a board's buckets are kept in Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// One sorted set per bucket.
    Full,
    /// Every member's exact score in a hash; the sorted set holds the best `retain` and
    /// is trimmed back to `retain` when it passes `trim_at`.
    TopN { retain: i64, trim_at: i64 },
    /// Members spread by a hash of their id over `shards` sorted sets per bucket, each
    /// shard in the Redis Cluster slot its `placement` gives it.
    Sharded { shards: i64, placement: Placement },
}

/// Where a sharded board's shards sit in Redis Cluster's slot range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Each shard's hash tag names the board and the shard alone, and falls where its
    /// hash puts it: boards made before 2026-11-28 keep their keys this way.
    Hashed,
    /// Shard `i` of `n` sits in the middle slot of the `i`-th `n`-th of the slot range,
    /// so shards spread evenly over masters that own contiguous ranges
    /// (`store::redis::slots`). Every board made since.
    Even,
}

impl Placement {
    /// The placement of a sharded layout as its SQL column ends: "" or `:even`.
    fn suffix(self) -> &'static str {
        match self {
            Self::Hashed => "",
            Self::Even => ":even",
        }
    }
}

impl Storage {
    /// `shards` shards placed as a board made today has them ([`Placement::Even`]).
    pub fn sharded(shards: i64) -> Self {
        Self::Sharded {
            shards,
            placement: Placement::Even,
        }
    }

    /// Reads a storage object's fields: `kind`, with `retain` and `trim_at` for `top_n`
    /// (trim_at defaults to 1.2 × retain) and `shards` for `sharded`.
    pub fn parse(
        kind: &str,
        retain: Option<i64>,
        trim_at: Option<i64>,
        shards: Option<i64>,
    ) -> Result<Self, Invalid> {
        let bad = |m: String| Invalid::new(Code::InvalidStorage, m);
        let storage = match kind {
            "full" => Self::Full,
            "top_n" => {
                let retain = retain.ok_or_else(|| bad("top_n needs retain".into()))?;
                Self::TopN {
                    retain,
                    trim_at: trim_at.unwrap_or(retain + (retain + 4) / 5),
                }
            }
            "sharded" => Self::sharded(shards.ok_or_else(|| bad("sharded needs shards".into()))?),
            _ => {
                return Err(bad(format!(
                    "unknown storage kind {kind:?} (want full, top_n or sharded)"
                )));
            }
        };
        let stray = match storage {
            Self::Full => retain.is_some() || trim_at.is_some() || shards.is_some(),
            Self::TopN { .. } => shards.is_some(),
            Self::Sharded { .. } => retain.is_some() || trim_at.is_some(),
        };
        if stray {
            return Err(bad(format!("{kind} storage takes other fields")));
        }
        storage.check()?;
        Ok(storage)
    }

    fn check(self) -> Result<(), Invalid> {
        let bad = |m: String| Err(Invalid::new(Code::InvalidStorage, m));
        match self {
            Self::Full => Ok(()),
            Self::TopN { retain, trim_at } => {
                if !(1..=bounds::RETAIN_MAX).contains(&retain) {
                    return bad(format!(
                        "retain must be between 1 and {}",
                        bounds::RETAIN_MAX
                    ));
                }
                if !(retain + 1..=bounds::TRIM_AT_MAX).contains(&trim_at) {
                    return bad(format!(
                        "trim_at must be above retain ({retain}) and at most {}",
                        bounds::TRIM_AT_MAX
                    ));
                }
                Ok(())
            }
            Self::Sharded { shards, .. } => {
                if !(bounds::SHARDS_MIN..=bounds::SHARDS_MAX).contains(&shards) {
                    return bad(format!(
                        "shards must be between {} and {}",
                        bounds::SHARDS_MIN,
                        bounds::SHARDS_MAX
                    ));
                }
                Ok(())
            }
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::TopN { .. } => "top_n",
            Self::Sharded { .. } => "sharded",
        }
    }

    /// The layout as one SQL column: `full`, `top_n:<retain>:<trim_at>`,
    /// `sharded:<n>:even`, or `sharded:<n>` for [`Placement::Hashed`].
    pub fn encode(self) -> String {
        match self {
            Self::Full => "full".to_owned(),
            Self::TopN { retain, trim_at } => format!("top_n:{retain}:{trim_at}"),
            Self::Sharded { shards, placement } => {
                format!("sharded:{shards}{}", placement.suffix())
            }
        }
    }

    pub fn decode(raw: &str) -> Result<Self, Invalid> {
        if let Some(layout) = raw.strip_suffix(Placement::Even.suffix())
            && let Ok(Self::Sharded { shards, .. }) = Self::decode(layout)
        {
            return Ok(Self::Sharded {
                shards,
                placement: Placement::Even,
            });
        }
        let mut parts = raw.split(':');
        let kind = parts.next().unwrap_or("");
        let numbers: Vec<i64> = parts
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| Invalid::new(Code::InvalidStorage, format!("bad storage {raw:?}")))?;
        match (kind, numbers.as_slice()) {
            ("full", []) => Self::parse("full", None, None, None),
            ("top_n", [retain, trim_at]) => {
                Self::parse("top_n", Some(*retain), Some(*trim_at), None)
            }
            ("sharded", [shards]) => {
                let storage = Self::Sharded {
                    shards: *shards,
                    placement: Placement::Hashed,
                };
                storage.check()?;
                Ok(storage)
            }
            _ => Err(Invalid::new(
                Code::InvalidStorage,
                format!("bad storage {raw:?}"),
            )),
        }
    }

    /// Whether the layout ranks only the best members (so a score may not go down).
    pub fn is_top_n(self) -> bool {
        matches!(self, Self::TopN { .. })
    }

    pub fn is_sharded(self) -> bool {
        matches!(self, Self::Sharded { .. })
    }

    /// `self` (as a request gives it) for a board kept in `current`: a sharded layout of
    /// the same count keeps `current`'s placement, so sending a board's storage again
    /// changes nothing.
    pub fn placed_as(self, current: Self) -> Self {
        match (self, current) {
            (
                Self::Sharded { shards, .. },
                Self::Sharded {
                    shards: now,
                    placement,
                },
            ) if shards == now => Self::Sharded { shards, placement },
            _ => self,
        }
    }
}

/// What a score write does to the member's score in each bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Add the value.
    Incr,
    /// Subtract the value.
    Decr,
    /// Replace the score with the value.
    Set,
    /// Keep the higher of the score and the value.
    Best,
}

impl Op {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "incr" => Ok(Self::Incr),
            "decr" => Ok(Self::Decr),
            "set" => Ok(Self::Set),
            "best" => Ok(Self::Best),
            _ => Err(Invalid::new(
                Code::InvalidOp,
                format!("unknown op {raw:?} (want incr, decr, set or best)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Incr => "incr",
            Self::Decr => "decr",
            Self::Set => "set",
            Self::Best => "best",
        }
    }

    /// The new score from the old one (units).
    pub fn apply(self, old: i64, value: i64) -> i64 {
        match self {
            Self::Incr => old + value,
            Self::Decr => old - value,
            Self::Set => value,
            Self::Best => old.max(value),
        }
    }
}

/// Units of a score board per whole point: 10^decimals.
pub fn units_per_point(decimals: u8) -> i64 {
    10_i64.pow(u32::from(decimals))
}

/// Reads a score value, a non-negative JSON number with at most `decimals` decimals, as
/// exact integer units (value × 10^decimals), at most 2^53 units. The number is read
/// from its decimal text, so `0.1` is exactly one tenth.
pub fn parse_value(number: &serde_json::Number, decimals: u8) -> Result<i64, Invalid> {
    let bad = |m: String| Invalid::new(Code::InvalidValue, m);
    let text = number.to_string();
    // A fraction arrives as a double: its shortest text is what the client wrote as long
    // as that had at most 15 significant digits (an integer is read exactly).
    if number.is_f64() {
        let significant = text
            .split(['e', 'E'])
            .next()
            .unwrap_or("")
            .bytes()
            .filter(u8::is_ascii_digit)
            .skip_while(|&d| d == b'0')
            .count();
        if significant > 15 {
            return Err(bad(format!(
                "value {text} has more than 15 significant digits; send fewer, or an integer"
            )));
        }
    }
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (
            m,
            e.parse::<i32>()
                .map_err(|_| bad(format!("value {text} is not a plain number")))?,
        ),
        None => (text.as_str(), 0),
    };
    if mantissa.starts_with('-') {
        return Err(bad(format!("value must not be negative, got {text}")));
    }
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    // value = digits × 10^(exponent − fraction digits); units = value × 10^decimals.
    let mut shift = exponent - fraction.len() as i32 + i32::from(decimals);
    let mut digits = digits.to_owned();
    while shift < 0 && digits.ends_with('0') {
        digits.pop();
        shift += 1;
    }
    if shift < 0 && !digits.is_empty() {
        return Err(bad(format!(
            "value {text} has more than {decimals} decimals, the most this board keeps"
        )));
    }
    let too_large = || bad(format!("value {text} is beyond 2^53 units"));
    if digits.is_empty() {
        return Ok(0);
    }
    if digits.len() + shift.max(0) as usize > 17 {
        return Err(too_large());
    }
    let units = digits.parse::<i64>().map_err(|_| too_large())? * 10_i64.pow(shift.max(0) as u32);
    if units > MAX_UNITS {
        return Err(too_large());
    }
    Ok(units)
}

/// A score in units, as the number the API shows: integers print as integers, fractions
/// as decimals.
pub fn to_points(units: i64, decimals: u8) -> serde_json::Number {
    let per = units_per_point(decimals);
    if units % per == 0 {
        serde_json::Number::from(units / per)
    } else {
        serde_json::Number::from_f64(units as f64 / per as f64)
            .unwrap_or_else(|| serde_json::Number::from(units / per))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(raw: &str) -> serde_json::Number {
        serde_json::from_str(raw).unwrap()
    }

    #[test]
    fn values_are_exact_units() {
        assert_eq!(parse_value(&number("12.5"), 1), Ok(125));
        assert_eq!(parse_value(&number("0.1"), 6), Ok(100_000));
        assert_eq!(parse_value(&number("7"), 0), Ok(7));
        assert_eq!(parse_value(&number("7.0"), 0), Ok(7));
        assert_eq!(parse_value(&number("1e3"), 2), Ok(100_000));
        assert_eq!(parse_value(&number("0"), 3), Ok(0));
        assert_eq!(parse_value(&number("9007199254740992"), 0), Ok(MAX_UNITS));
        let code = |raw: &str, d| parse_value(&number(raw), d).unwrap_err().code;
        assert_eq!(code("12.25", 1), Code::InvalidValue);
        assert_eq!(code("-1", 0), Code::InvalidValue);
        assert_eq!(code("9007199254740993", 0), Code::InvalidValue);
        assert_eq!(code("1e300", 0), Code::InvalidValue);
        assert_eq!(code("1e-7", 6), Code::InvalidValue);
        assert_eq!(code("900719925474099.2", 1), Code::InvalidValue);
        assert_eq!(
            parse_value(&number("90071992547409.9"), 1),
            Ok(900_719_925_474_099)
        );
    }

    #[test]
    fn points_print_exactly() {
        assert_eq!(to_points(125, 1).to_string(), "12.5");
        assert_eq!(to_points(7, 0).to_string(), "7");
        assert_eq!(to_points(-30, 1).to_string(), "-3");
    }

    #[test]
    fn a_request_for_the_same_shards_keeps_the_boards_placement() {
        let hashed = Storage::decode("sharded:6").unwrap();
        let asked = Storage::parse("sharded", None, None, Some(6)).unwrap();
        assert_eq!(asked.placed_as(hashed), hashed);
        assert_eq!(asked.placed_as(Storage::Full), asked);
        let more = Storage::parse("sharded", None, None, Some(8)).unwrap();
        assert_eq!(
            more.placed_as(hashed),
            Storage::Sharded {
                shards: 8,
                placement: Placement::Even,
            }
        );
    }

    #[test]
    fn storage_round_trips_and_checks_bounds() {
        for s in [
            Storage::Full,
            Storage::TopN {
                retain: 1000,
                trim_at: 1200,
            },
            Storage::Sharded {
                shards: 16,
                placement: Placement::Hashed,
            },
            Storage::Sharded {
                shards: 16,
                placement: Placement::Even,
            },
        ] {
            assert_eq!(Storage::decode(&s.encode()), Ok(s));
        }
        // A board made before even placement keeps its keys.
        assert_eq!(
            Storage::decode("sharded:16"),
            Ok(Storage::Sharded {
                shards: 16,
                placement: Placement::Hashed,
            })
        );
        assert_eq!(
            Storage::encode(Storage::parse("sharded", None, None, Some(6)).unwrap()),
            "sharded:6:even"
        );
        assert_eq!(
            Storage::decode("sharded:1:even").unwrap_err().code,
            Code::InvalidStorage
        );
        assert_eq!(
            Storage::decode("full:even").unwrap_err().code,
            Code::InvalidStorage
        );
        let code = |kind, retain, trim_at, shards| {
            Storage::parse(kind, retain, trim_at, shards)
                .unwrap_err()
                .code
        };
        assert_eq!(code("sharded", None, None, Some(1)), Code::InvalidStorage);
        assert_eq!(code("sharded", None, None, Some(257)), Code::InvalidStorage);
        assert_eq!(
            code("top_n", Some(100), Some(100), None),
            Code::InvalidStorage
        );
        assert_eq!(code("top_n", Some(0), Some(10), None), Code::InvalidStorage);
        assert_eq!(code("heap", None, None, None), Code::InvalidStorage);
        assert_eq!(code("full", Some(3), None, None), Code::InvalidStorage);
        assert!(Storage::parse("sharded", None, None, Some(256)).is_ok());
        assert_eq!(
            Storage::parse("top_n", Some(1000), None, None),
            Ok(Storage::TopN {
                retain: 1000,
                trim_at: 1200
            })
        );
    }

    #[test]
    fn ops_apply() {
        assert_eq!(Op::Incr.apply(5, 3), 8);
        assert_eq!(Op::Decr.apply(5, 8), -3);
        assert_eq!(Op::Set.apply(5, 2), 2);
        assert_eq!(Op::Best.apply(5, 2), 5);
        assert_eq!(Op::Best.apply(5, 9), 9);
        assert_eq!(Op::parse("max").unwrap_err().code, Code::InvalidOp);
    }
}
