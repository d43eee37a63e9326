//! The `ClientIp` extractor: the end user's address, for rules that count per IP.
//!
//! The connection's peer is the client, unless the peer is a trusted proxy
//! (`OVATION_TRUSTED_PROXIES`); then `X-Forwarded-For` is read from the right, skipping
//! trusted hops, and the first untrusted address is the client. Anyone can write that
//! header, so it is never read from an untrusted peer.

use std::future::{Ready, ready};
use std::net::IpAddr;

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use ipnet::IpNet;

use crate::engine::state::AppState;
use crate::error::ApiError;

/// The client's address, when the connection has one.
pub struct ClientIp(pub Option<IpAddr>);

impl ClientIp {
    /// The client's address for `req` (what the extractor answers).
    pub fn of(req: &HttpRequest) -> Option<IpAddr> {
        let trusted = req
            .app_data::<web::Data<AppState>>()
            .map(|s| s.settings.trusted_proxies.as_slice())
            .unwrap_or_default();
        let forwarded: Vec<&str> = req
            .headers()
            .get_all("x-forwarded-for")
            .filter_map(|v| v.to_str().ok())
            .collect();
        req.peer_addr()
            .map(|a| client_ip(a.ip(), &forwarded, trusted))
    }
}

impl FromRequest for ClientIp {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self(Self::of(req))))
    }
}

/// The client behind `peer`, given the `X-Forwarded-For` headers in order.
fn client_ip(peer: IpAddr, forwarded: &[&str], trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(&ip.to_canonical()));
    let mut client = peer;
    if !is_trusted(&client) {
        return client;
    }
    let hops = forwarded.iter().flat_map(|h| h.split(',')).map(str::trim);
    for hop in hops.collect::<Vec<_>>().into_iter().rev() {
        // A hop that is not an address ends the walk: the last trusted proxy is all that
        // can be vouched for.
        let Ok(ip) = hop.parse::<IpAddr>() else {
            break;
        };
        client = ip;
        if !is_trusted(&ip) {
            break;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(
            client_ip(ip("203.0.113.7"), &["198.51.100.1"], &trusted),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn a_trusted_proxy_names_the_first_untrusted_hop_from_the_right() {
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(
            client_ip(
                ip("10.0.0.2"),
                &["1.1.1.1, 198.51.100.1", "10.0.0.9"],
                &trusted
            ),
            ip("198.51.100.1")
        );
        assert_eq!(client_ip(ip("10.0.0.2"), &[], &trusted), ip("10.0.0.2"));
        assert_eq!(
            client_ip(ip("10.0.0.2"), &["garbage, 10.0.0.3"], &trusted),
            ip("10.0.0.3")
        );
        assert_eq!(
            client_ip(ip("::ffff:10.0.0.2"), &["2001:db8::1"], &trusted),
            ip("2001:db8::1")
        );
    }
}
