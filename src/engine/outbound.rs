//! Requests Ovation makes to addresses operators name (webhook deliveries, JWKS fetches):
//! to public addresses only unless `OVATION_WEBHOOK_ALLOW_PRIVATE` is set. The check is on
//! the addresses the connection is made to — the client's resolver ([`PublicOnly`]) drops
//! every other address a name resolves to, and a URL naming an address is checked before
//! the request ([`literal_refusal`]) — so a name that resolves to a public address when
//! the URL is saved and to an internal one when it is used (DNS rebinding) is refused
//! too. Redirects are not followed and no proxy from the environment is used.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;

use crate::domain::webhook;

/// A resolver that answers only the public addresses a name resolves to (all of them
/// when private ones are allowed), so the client never connects anywhere else.
struct PublicOnly {
    allow_private: bool,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| allow_private || webhook::not_public(a.ip()).is_none())
                .collect();
            match (allowed.is_empty(), found.first()) {
                (false, _) => Ok(Box::new(allowed.into_iter()) as Addrs),
                (true, Some(refused)) => Err(refusal(refused.ip(), &host).into()),
                (true, None) => Err(format!("{host} has no address").into()),
            }
        })
    }
}

fn refusal(ip: IpAddr, host: &str) -> String {
    format!(
        "refused to connect to {host} at {ip}: a {} address (OVATION_WEBHOOK_ALLOW_PRIVATE allows it)",
        webhook::not_public(ip).unwrap_or("private")
    )
}

/// A client with the guarded resolver, no redirects, no proxy, and bounded times.
pub fn client(allow_private: bool, connect: Duration, whole: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(PublicOnly { allow_private }))
        .redirect(Policy::none())
        .no_proxy()
        .connect_timeout(connect)
        .timeout(whole)
        .build()
        .unwrap_or_default()
}

/// Refuses a URL that names an address which is not public (a name is checked by the
/// resolver when the connection is made).
pub fn literal_refusal(url: &str, allow_private: bool) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let ip = match parsed.host()? {
        url::Host::Ipv4(v4) => IpAddr::V4(v4),
        url::Host::Ipv6(v6) => IpAddr::V6(v6),
        url::Host::Domain(_) => return None,
    };
    (!allow_private && webhook::not_public(ip).is_some()).then(|| refusal(ip, &ip.to_string()))
}
