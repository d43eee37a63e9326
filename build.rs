//! Puts the commit the binary is built from in `OVATION_COMMIT` (what `ovation --version`
//! and the `ovation_build_info` metric show): `git rev-parse` of the checkout, the
//! `OVATION_COMMIT` of the build's environment when set (a package or image built from a
//! tarball), else `unknown`.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=OVATION_COMMIT");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    let commit = std::env::var("OVATION_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            let out = Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()?;
            let text = String::from_utf8(out.stdout).ok()?;
            (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=OVATION_COMMIT={commit}");
}
