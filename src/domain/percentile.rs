//! Where a member stands among all: its percentile (the share of members with a strictly
//! lower score) and the top share of a ranking (`/top?percent=`), in whole hundredths so
//! that no float rounding moves a boundary.

use super::Invalid;
use super::code::Code;

/// 100 × `lower` / `total`, rounded to two decimals (half up); `None` without members.
pub fn percentile(lower: i64, total: i64) -> Option<f64> {
    if total <= 0 {
        return None;
    }
    let lower = i128::from(lower.clamp(0, total));
    let total = i128::from(total);
    // Hundredths of a percent: 10,000 × lower / total, rounded half up.
    let hundredths = (20_000 * lower + total) / (2 * total);
    Some(hundredths as f64 / 100.0)
}

/// A share of a ranking, in hundredths of a percent (1 = 0.01 %, 10,000 = 100 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percent(i64);

impl Percent {
    /// `raw` percent: above 0, at most 100, at most two decimals.
    pub fn parse(raw: f64) -> Result<Self, Invalid> {
        let hundredths = (raw * 100.0).round();
        if !raw.is_finite()
            || !(1.0..=10_000.0).contains(&hundredths)
            || (raw * 100.0 - hundredths).abs() > 1e-6
        {
            return Err(Invalid::new(
                Code::InvalidField,
                "percent must be above 0 and at most 100, with at most two decimals",
            ));
        }
        Ok(Self(hundredths as i64))
    }

    /// How many of `total` members the share holds: ⌈share × total⌉.
    pub fn of(self, total: i64) -> i64 {
        let total = i128::from(total.max(0));
        ((i128::from(self.0) * total + 9_999) / 10_000) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_round_half_up_to_two_decimals() {
        assert_eq!(percentile(0, 0), None);
        assert_eq!(percentile(0, 5), Some(0.0));
        assert_eq!(percentile(2, 3), Some(66.67));
        assert_eq!(percentile(1, 3), Some(33.33));
        assert_eq!(percentile(1, 8), Some(12.5));
        // 1/20000 = 0.005 %: half a hundredth rounds up; a quarter rounds down.
        assert_eq!(percentile(1, 20_000), Some(0.01));
        assert_eq!(percentile(1, 40_000), Some(0.0));
        assert_eq!(percentile(4, 5), Some(80.0));
    }

    #[test]
    fn a_share_is_the_ceiling_of_its_members() {
        let one = Percent::parse(1.0).unwrap();
        assert_eq!(one.of(300), 3);
        assert_eq!(one.of(301), 4);
        assert_eq!(one.of(1), 1);
        assert_eq!(one.of(0), 0);
        assert_eq!(Percent::parse(0.01).unwrap().of(10_000), 1);
        assert_eq!(Percent::parse(33.33).unwrap().of(3), 1);
        assert_eq!(Percent::parse(100.0).unwrap().of(7), 7);
        for bad in [0.0, -1.0, 100.01, 1.005, f64::NAN] {
            assert_eq!(
                Percent::parse(bad).unwrap_err().code,
                Code::InvalidField,
                "{bad}"
            );
        }
    }
}
