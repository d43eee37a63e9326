//! An operator's reason for changing what was counted (an adjustment, a revocation): the
//! ledger keeps it beside the change, so it is never blank and never over [`MAX`] bytes.

use super::Invalid;
use super::code::Code;
use super::ids::is_plain;

/// The most a reason may hold, in bytes.
pub const MAX: usize = 2000;

/// Checks a reason: 1 to [`MAX`] bytes, not only blanks, plain text as a voter id is
/// (no control or bidirectional-override character: see [`is_plain`]), so the audit
/// trail shows what was stored on every SQL backend.
pub fn check(reason: &str) -> Result<(), Invalid> {
    if reason.trim().is_empty() || reason.len() > MAX {
        return Err(Invalid::new(
            Code::InvalidField,
            format!("reason: 1 to {MAX} bytes saying why"),
        ));
    }
    if !is_plain(reason) {
        return Err(Invalid::new(
            Code::InvalidField,
            "reason: no control characters (C0, DEL, C1, line breaks included) and no \
             bidirectional embeddings, overrides or isolates",
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
            "\u{0}evil\u{202e}".to_owned(),
            "line\nbreak".to_owned(),
            "tab\there".to_owned(),
            "del\u{7f}".to_owned(),
            "c1\u{85}".to_owned(),
            "\u{202a}embedded".to_owned(),
            "isolate\u{2066}d".to_owned(),
        ] {
            assert_eq!(
                check(&bad).map_err(|e| e.code),
                Err(Code::InvalidField),
                "{bad:?}"
            );
        }
    }
}
