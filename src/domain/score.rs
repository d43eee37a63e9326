//! Exact scores: integer units in Redis, decimals in the API.
//!
//! The real view counts votes, one unit a vote. The display view counts millionths of a
//! vote, so that a multiplier and a carry-over ratio of up to three decimals each give an
//! exact integer increment (count × multiplier‰ × ratio‰ is a whole number of millionths).
//! Integers stay exact in Redis's doubles up to 2^53; a write past that is refused.

use crate::domain::code::Code;

use super::Invalid;

/// Units of the display view per vote.
pub const DISPLAY_UNITS_PER_VOTE: i64 = 1_000_000;

/// The largest score any board may hold, in units (2^53).
pub const MAX_UNITS: i64 = 1 << 53;

/// Which scores a board shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    /// Exactly the votes cast.
    Real,
    /// Votes × multiplier, plus initial votes and carry-over.
    Display,
}

impl View {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "real" => Ok(Self::Real),
            "display" => Ok(Self::Display),
            _ => Err(Invalid::new(
                Code::InvalidView,
                format!("unknown view {raw:?} (want real or display)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Real => "real",
            Self::Display => "display",
        }
    }

    /// Units that make one vote in this view.
    pub fn units_per_vote(self) -> i64 {
        match self {
            Self::Real => 1,
            Self::Display => DISPLAY_UNITS_PER_VOTE,
        }
    }

    /// A stored score in this view, as the number the API shows: whole votes print as
    /// integers, fractions as decimals.
    pub fn to_votes(self, units: i64) -> serde_json::Number {
        let per_vote = self.units_per_vote();
        if units % per_vote == 0 {
            serde_json::Number::from(units / per_vote)
        } else {
            serde_json::Number::from_f64(units as f64 / per_vote as f64)
                .unwrap_or_else(|| serde_json::Number::from(units / per_vote))
        }
    }
}

/// A non-negative decimal with at most three decimals, held in thousandths: the display
/// multiplier N and the carry-over ratio r.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Milli(i64);

impl Milli {
    pub const ZERO: Milli = Milli(0);
    pub const ONE: Milli = Milli(1000);

    /// Parses `value`, which must lie in `[min, max]` and have at most three decimals.
    pub fn parse(value: f64, min: f64, max: f64, field: &str) -> Result<Self, Invalid> {
        let scaled = value * 1000.0;
        let rounded = scaled.round();
        if !value.is_finite() || value < min || value > max {
            return Err(Invalid::new(
                Code::InvalidNumber,
                format!("{field} must be between {min} and {max}, got {value}"),
            ));
        }
        if (scaled - rounded).abs() > 1e-6 {
            return Err(Invalid::new(
                Code::InvalidNumber,
                format!("{field} may have at most three decimals, got {value}"),
            ));
        }
        Ok(Self(rounded as i64))
    }

    pub fn from_thousandths(thousandths: i64) -> Self {
        Self(thousandths)
    }

    pub fn thousandths(self) -> i64 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

/// What one vote of `count` adds: to the real view, the display view, and the next bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Increment {
    pub real: i64,
    pub display: i64,
    pub carry: i64,
}

impl Increment {
    /// `count` votes at multiplier `multiplier` with carry-over ratio `carry_over`.
    pub fn of(count: i64, multiplier: Milli, carry_over: Milli) -> Self {
        let display = count * multiplier.thousandths() * (DISPLAY_UNITS_PER_VOTE / 1000);
        Self {
            real: count,
            display,
            carry: count * multiplier.thousandths() * carry_over.thousandths(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increments_are_exact_integers() {
        let inc = Increment::of(
            3,
            Milli::parse(2.5, 0.001, 1e6, "m").unwrap(),
            Milli::parse(0.1, 0.0, 1.0, "r").unwrap(),
        );
        assert_eq!(inc.real, 3);
        assert_eq!(inc.display, 7_500_000);
        assert_eq!(inc.carry, 750_000);
        assert_eq!(View::Display.to_votes(inc.carry).as_f64(), Some(0.75));
        assert_eq!(
            View::Display.to_votes(inc.display - 1_500_000).to_string(),
            "6"
        );
    }

    #[test]
    fn milli_refuses_excess_precision_and_range() {
        assert_eq!(
            Milli::parse(0.333, 0.0, 1.0, "r").unwrap().thousandths(),
            333
        );
        for bad in [0.3333, 1.5, f64::NAN] {
            let err = Milli::parse(bad, 0.0, 1.0, "r").unwrap_err();
            assert_eq!(err.code, Code::InvalidNumber, "{bad}");
            assert!(err.message.starts_with("r "), "{}", err.message);
        }
        assert_eq!(Milli::parse(0.1, 0.0, 1.0, "r").unwrap().thousandths(), 100);
    }
}
