//! Webhooks: which URLs a webhook may name, which addresses a delivery may connect to,
//! how a delivery is signed, and how long it is retried.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use url::Url;

use super::Invalid;
use super::code::Code;

/// The longest webhook URL, in bytes.
pub const URL_MAX: usize = 2048;
/// The longest wait between two attempts.
pub const MAX_DELAY: TimeDelta = TimeDelta::hours(1);
/// A delivery still failing this long after it was made is given up (dead-lettered).
pub const GIVE_UP_AFTER: TimeDelta = TimeDelta::days(3);
/// How long deliveries are also signed with the secret a rotation replaced, so receivers
/// can switch to the new one without missing any.
pub const PREVIOUS_SECRET_GRACE: TimeDelta = TimeDelta::hours(24);

/// Checks a webhook URL: `http` or `https`, with a host, at most [`URL_MAX`] bytes, no
/// user name or password.
pub fn check_url(raw: &str) -> Result<(), Invalid> {
    let bad = |why: &str| Invalid::new(Code::InvalidWebhook, format!("webhook_url {why}"));
    if raw.len() > URL_MAX {
        return Err(bad(&format!("must be at most {URL_MAX} bytes")));
    }
    let url = Url::parse(raw).map_err(|_| bad("must be an http:// or https:// URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad("must be an http:// or https:// URL"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry a user name or password"));
    }
    Ok(())
}

/// Refuses a webhook URL whose host is a literal address a delivery may not connect to
/// (loopback, private, link-local, unspecified and the other ranges [`not_public`]
/// names), so an operator learns of the mistake when adding it rather than at the first
/// delivery; `allow_private` (`OVATION_WEBHOOK_ALLOW_PRIVATE`) lets them through. A host
/// name is not resolved here: deliveries check the address they connect to.
pub fn check_url_host(raw: &str, allow_private: bool) -> Result<(), Invalid> {
    check_url(raw)?;
    if allow_private {
        return Ok(());
    }
    let ip = match Url::parse(raw)
        .ok()
        .and_then(|u| u.host().map(|h| h.to_owned()))
    {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    match not_public(ip) {
        Some(kind) => Err(Invalid::new(
            Code::InvalidWebhook,
            format!(
                "webhook_url names {ip}, a {kind} address, which deliveries never reach \
                 (set OVATION_WEBHOOK_ALLOW_PRIVATE=true to allow private addresses)"
            ),
        )),
        None => Ok(()),
    }
}

/// Why a delivery may not connect to `ip` unless private addresses are allowed, or
/// `None` when it is a public address: loopback, private, link-local, unspecified,
/// shared (carrier-grade NAT), multicast, broadcast, documentation and reserved ranges,
/// and IPv6 addresses that carry such an IPv4 address.
pub fn not_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => not_public_v4(v4),
        IpAddr::V6(v6) => not_public_v6(v6),
    }
}

fn not_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast, broadcast or reserved")
    } else if ip.is_documentation() || (a == 198 && (18..20).contains(&b)) {
        Some("documentation or benchmarking")
    } else if a == 192 && b == 0 && c == 0 {
        Some("reserved for protocol assignments")
    } else {
        None
    }
}

fn not_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    if ip.is_loopback() {
        return Some("loopback");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return not_public_v4(v4);
    }
    // IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses
    // reach an IPv4 address.
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if segments[..6] == [0; 6] {
        return not_public_v4(embedded(segments[6], segments[7]));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return not_public_v4(embedded(segments[6], segments[7]));
    }
    if segments[0] == 0x2002 {
        return not_public_v4(embedded(segments[1], segments[2]));
    }
    match segments[0] {
        s if s & 0xfe00 == 0xfc00 => Some("private (unique local)"),
        s if s & 0xffc0 == 0xfe80 || s & 0xffc0 == 0xfec0 => Some("link-local"),
        s if s & 0xff00 == 0xff00 => Some("multicast"),
        0x2001 if segments[1] == 0x0db8 => Some("documentation"),
        _ => None,
    }
}

/// The `X-Ovation-Signature` value of a delivery sent at `t` (unix seconds):
/// `t=<t>,v1=<hex>`, one `v1` per secret (the current one first, then one a rotation
/// replaced within [`PREVIOUS_SECRET_GRACE`]); each is the hex HMAC-SHA256, keyed by the
/// secret, of `<t>.<delivery id>.<body>`. A receiver recomputes it with its secret,
/// compares in constant time and refuses an old `t`, so a captured delivery can be
/// neither altered nor replayed later.
pub fn signature(secrets: &[&str], t: i64, delivery: i64, body: &str) -> String {
    let mut header = format!("t={t}");
    for secret in secrets {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(format!("{t}.{delivery}.").as_bytes());
        mac.update(body.as_bytes());
        header.push_str(",v1=");
        header.push_str(&hex::encode(mac.finalize().into_bytes()));
    }
    header
}

/// What an attempt leaves a delivery in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// Failed; due again at this time.
    Retry(DateTime<Utc>),
    /// Failed for the last time: given up, until someone sends it again.
    GaveUp,
}

impl Outcome {
    /// What an attempt that ended with `failed` (or not) leaves a delivery made at
    /// `created_at` after `attempts` attempts in, at `now`.
    pub fn of(failed: bool, attempts: i32, created_at: DateTime<Utc>, now: DateTime<Utc>) -> Self {
        if !failed {
            Self::Delivered
        } else if now >= created_at + GIVE_UP_AFTER {
            Self::GaveUp
        } else {
            Self::Retry(now + backoff(attempts))
        }
    }

    /// The metrics label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retry(_) => "failed",
            Self::GaveUp => "gave_up",
        }
    }
}

/// The wait after a delivery's `attempts`th failed attempt: 1 s, 2 s, 4 s, … an hour.
pub fn backoff(attempts: i32) -> TimeDelta {
    let exp = attempts.clamp(1, 13) - 1;
    TimeDelta::seconds(1_i64 << exp).min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_up_to_an_hour() {
        let delays: Vec<i64> = [1, 2, 3, 12, 13, 40]
            .into_iter()
            .map(|a| backoff(a).num_seconds())
            .collect();
        assert_eq!(delays, [1, 2, 4, 2048, 3600, 3600]);
    }

    #[test]
    fn a_url_naming_a_private_address_is_refused_unless_private_addresses_are_allowed() {
        for refused in [
            "http://127.0.0.1/hook",
            "https://10.0.0.7:8443/x",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://0.0.0.0/",
            "http://[fe80::1]/",
            "http://[::ffff:192.168.1.1]/",
        ] {
            let err = check_url_host(refused, false).unwrap_err();
            assert_eq!(err.code, Code::InvalidWebhook, "{refused}");
            assert!(
                err.message.contains("OVATION_WEBHOOK_ALLOW_PRIVATE"),
                "{refused}: {}",
                err.message
            );
            assert_eq!(check_url_host(refused, true), Ok(()), "{refused}");
        }
        for taken in [
            "https://hooks.example.com/x",
            "http://203.0.114.9/",
            "http://localhost/",
        ] {
            assert_eq!(check_url_host(taken, false), Ok(()), "{taken}");
        }
        assert_eq!(
            check_url_host("ftp://8.8.8.8/", true).unwrap_err().code,
            Code::InvalidWebhook
        );
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2001:db8::1",
        ] {
            let ip: IpAddr = private.parse().unwrap();
            assert!(not_public(ip).is_some(), "{private}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(not_public(ip), None, "{public}");
        }
    }

    #[test]
    fn webhook_urls_are_http_with_a_host_and_bounded() {
        assert!(check_url("https://hooks.example/close?x=1").is_ok());
        assert!(
            check_url("http://10.0.0.1:8080/").is_ok(),
            "checked when sent"
        );
        for bad in [
            "ftp://x",
            "https://",
            "not a url",
            "https://user:pw@hooks.example/",
            &format!("https://hooks.example/{}", "a".repeat(URL_MAX)),
        ] {
            assert_eq!(
                check_url(bad).unwrap_err().code,
                Code::InvalidWebhook,
                "{bad}"
            );
        }
    }

    #[test]
    fn a_signature_covers_time_delivery_and_body_with_each_secret() {
        let one = signature(&["s1"], 1_700_000_000, 7, "{}");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"s1").unwrap();
        mac.update(b"1700000000.7.{}");
        assert_eq!(
            one,
            format!(
                "t=1700000000,v1={}",
                hex::encode(mac.finalize().into_bytes())
            )
        );
        assert_ne!(one, signature(&["s1"], 1_700_000_000, 8, "{}"));
        assert_ne!(one, signature(&["s1"], 1_700_000_001, 7, "{}"));
        let two = signature(&["s2", "s1"], 1_700_000_000, 7, "{}");
        assert!(
            two.ends_with(one.trim_start_matches("t=1700000000")),
            "{two}"
        );
        assert_eq!(two.matches(",v1=").count(), 2);
    }
}
