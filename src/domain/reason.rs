//! An operator's reason for changing what was counted (an adjustment, a revocation): the
//! ledger keeps it beside the change, so it is never blank and never over [`MAX`] bytes.

use super::Invalid;
use super::code::Code;

/// The most a reason may hold, in bytes.
pub const MAX: usize = 2000;

/// Checks a reason: 1 to [`MAX`] bytes, not only blanks.
pub fn check(reason: &str) -> Result<(), Invalid> {
    if reason.trim().is_empty() || reason.len() > MAX {
        return Err(Invalid::new(
            Code::InvalidField,
            format!("reason: 1 to {MAX} bytes saying why"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_says_something_within_its_bytes() {
        assert_eq!(check("counted by hand"), Ok(()));
        assert_eq!(check(&"é".repeat(MAX / 2)), Ok(()));
        for bad in [
            String::new(),
            " \t\n".to_owned(),
            "x".repeat(MAX + 1),
            "é".repeat(MAX / 2 + 1),
        ] {
            assert_eq!(
                check(&bad).map_err(|e| e.code),
                Err(Code::InvalidField),
                "{bad:?}"
            );
        }
    }
}
