use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Whether an Ovation webhook delivery is genuine and fresh: `signature` is its
/// X-Ovation-Signature header (`t=<unix>,v1=<hex>[,v1=<hex>]`), `delivery` its
/// X-Ovation-Delivery header, `body` the raw request body, `now` the Unix time.
pub fn verify_ovation(
    secret: &str,
    signature: &str,
    delivery: &str,
    body: &[u8],
    now: i64,
    tolerance_s: i64,
) -> bool {
    let parts: Vec<(&str, &str)> = signature
        .split(',')
        .filter_map(|p| p.split_once('='))
        .collect();
    let Some(t) = parts
        .iter()
        .find(|(k, _)| *k == "t")
        .and_then(|(_, v)| v.parse::<i64>().ok())
    else {
        return false;
    };
    if (now - t).abs() > tolerance_s {
        return false;
    }
    parts.iter().filter(|(k, _)| *k == "v1").any(|(_, v)| {
        let Ok(given) = hex::decode(v) else {
            return false;
        };
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
        mac.update(format!("{t}.{delivery}.").as_bytes());
        mac.update(body);
        // `verify_slice` compares in constant time.
        mac.verify_slice(&given).is_ok()
    })
}
