//! Signed-in voters: the operator's identity providers, which boards accept them, and how
//! a token's header and claims are read once its signature holds (`engine::identity`
//! checks the signature with the `jsonwebtoken` crate; the claims are checked here, each
//! refusal with its own code).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::Invalid;
use super::code::Code;
use super::ids::{BoardSlug, Channel, Terminal, VoterId};
use super::webhook;

/// The longest token read, in bytes; a longer one is refused before it is decoded.
pub const TOKEN_MAX: usize = 8 * 1024;
/// Bounds of a provider's longest token age and clock leeway, in seconds.
pub const MAX_AGE_MAX_S: i64 = 30 * 86_400;
pub const MAX_AGE_DEFAULT_S: i64 = 86_400;
pub const LEEWAY_MAX_S: i64 = 300;
pub const LEEWAY_DEFAULT_S: i64 = 60;
/// The most providers one board accepts.
pub const PROVIDERS_PER_BOARD_MAX: usize = 10;
/// The longest issuer or audience, in bytes.
const TEXT_MAX: usize = 500;

/// A signing algorithm a provider may allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Rs256,
    Es256,
    EdDsa,
    Hs256,
}

impl Algorithm {
    /// The algorithms a `jwks` provider may allow.
    pub const JWKS: [Algorithm; 3] = [Self::Rs256, Self::Es256, Self::EdDsa];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
            Self::EdDsa => "EdDSA",
            Self::Hs256 => "HS256",
        }
    }

    /// The algorithm a token's header names, if it is one of these.
    pub fn from_header(alg: &str) -> Option<Self> {
        [Self::Rs256, Self::Es256, Self::EdDsa, Self::Hs256]
            .into_iter()
            .find(|a| a.as_str() == alg)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a provider's keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderKind {
    /// Public keys fetched from a JWKS URL; tokens signed with one of `algorithms`.
    Jwks {
        url: String,
        algorithms: Vec<Algorithm>,
    },
    /// One HS256 secret the operator's own backend signs with.
    Hmac,
}

impl ProviderKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Jwks { .. } => "jwks",
            Self::Hmac => "hmac",
        }
    }

    /// The algorithms a token may be signed with.
    pub fn algorithms(&self) -> &[Algorithm] {
        match self {
            Self::Jwks { algorithms, .. } => algorithms,
            Self::Hmac => &[Algorithm::Hs256],
        }
    }
}

/// A provider's settings, valid as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSpec {
    /// `[a-z0-9][a-z0-9-]{0,63}`, as a board's slug.
    pub name: String,
    pub kind: ProviderKind,
    /// The token's `iss` must be this.
    pub issuer: String,
    /// The token's `aud` must be or hold this.
    pub audience: String,
    /// The claim that names the voter (`sub` by default).
    pub voter_claim: String,
    /// A claim naming the vote's channel, if any.
    pub channel_claim: Option<String>,
    /// A claim naming the vote's terminal, if any.
    pub terminal_claim: Option<String>,
    /// The oldest token taken, by its `iat`, in seconds.
    pub max_age_s: i64,
    /// Clock leeway for `exp`, `nbf` and `iat`, in seconds.
    pub leeway_s: i64,
    /// Where the voting page sends a visitor to sign in (it adds `return_to`).
    pub login_url: Option<String>,
}

impl ProviderSpec {
    /// Checks every field; `allow_private` lets a JWKS URL name a private address.
    pub fn checked(self, allow_private: bool) -> Result<Self, Invalid> {
        if BoardSlug::parse(&self.name).is_err() {
            return Err(field(
                "name",
                "1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit",
            ));
        }
        for (name, value) in [("issuer", &self.issuer), ("audience", &self.audience)] {
            if value.is_empty() || value.len() > TEXT_MAX || !super::ids::is_plain(value) {
                return Err(field(
                    name,
                    &format!("1 to {TEXT_MAX} bytes of printable text"),
                ));
            }
        }
        if let ProviderKind::Jwks { url, algorithms } = &self.kind {
            webhook::check_url_host(url, allow_private).map_err(|e| {
                field(
                    "jwks_url",
                    e.message.strip_prefix("webhook_url ").unwrap_or(&e.message),
                )
            })?;
            if algorithms.is_empty() || algorithms.iter().any(|a| !Algorithm::JWKS.contains(a)) {
                return Err(field("algorithms", "one or more of RS256, ES256 and EdDSA"));
            }
        }
        let claims = [
            ("voter_claim", Some(&self.voter_claim)),
            ("channel_claim", self.channel_claim.as_ref()),
            ("terminal_claim", self.terminal_claim.as_ref()),
        ];
        for (name, claim) in claims {
            if let Some(claim) = claim
                && !is_claim_name(claim)
            {
                return Err(field(
                    name,
                    "a claim name: 1 to 100 letters, digits and _ . : -",
                ));
            }
        }
        if !(60..=MAX_AGE_MAX_S).contains(&self.max_age_s) {
            return Err(field(
                "max_age_s",
                &format!("a whole number of seconds from 60 to {MAX_AGE_MAX_S}"),
            ));
        }
        if !(0..=LEEWAY_MAX_S).contains(&self.leeway_s) {
            return Err(field(
                "leeway_s",
                &format!("a whole number of seconds from 0 to {LEEWAY_MAX_S}"),
            ));
        }
        if let Some(url) = &self.login_url {
            webhook::check_url(url).map_err(|_| {
                field(
                    "login_url",
                    "an http:// or https:// URL of at most 2048 bytes",
                )
            })?;
        }
        Ok(self)
    }
}

fn field(name: &str, want: &str) -> Invalid {
    Invalid::new(Code::InvalidProvider, format!("{name} must be {want}"))
}

fn is_claim_name(s: &str) -> bool {
    (1..=100).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// A stored provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    pub id: i64,
    pub spec: ProviderSpec,
    /// An `hmac` provider's secret: its UTF-8 bytes are the HS256 key.
    pub secret: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Who may vote on a board's public page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Voters {
    /// Any visitor (a cookie names them), or a token of an accepted provider.
    #[default]
    Anyone,
    /// Only visitors signed in with an accepted provider.
    SignedIn,
}

impl Voters {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "anyone" => Ok(Self::Anyone),
            "signed_in" => Ok(Self::SignedIn),
            _ => Err(Invalid::new(
                Code::InvalidField,
                format!("voters must be anyone or signed_in, not {raw:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anyone => "anyone",
            Self::SignedIn => "signed_in",
        }
    }
}

/// Why a token is refused: its code (401 unless the engine says otherwise) and a message.
pub type Refusal = Invalid;

fn refuse(code: Code, message: impl Into<String>) -> Refusal {
    Invalid::new(code, message)
}

/// A token's parts as sent, before its signature is checked.
#[derive(Debug)]
pub struct Unverified {
    pub algorithm: Algorithm,
    pub kid: Option<String>,
    pub claims: Map<String, Value>,
}

/// Reads a token's header and claims without trusting them: what picks the provider and
/// the key. Refuses a token past [`TOKEN_MAX`], one that is not three base64url parts
/// of JSON objects, and one whose `alg` is not RS256, ES256, EdDSA or HS256 (`none`
/// included).
pub fn read_unverified(token: &str) -> Result<Unverified, Refusal> {
    if token.len() > TOKEN_MAX {
        return Err(refuse(
            Code::TokenTooLarge,
            format!("the token is longer than {TOKEN_MAX} bytes"),
        ));
    }
    let malformed = || {
        refuse(
            Code::TokenMalformed,
            "the token is not a JWT (three base64url parts: header, claims, signature)",
        )
    };
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed());
    };
    let object = |part: &str| -> Result<Map<String, Value>, Refusal> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| malformed())?;
        match serde_json::from_slice(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(malformed()),
        }
    };
    let header = object(header)?;
    let claims = object(claims)?;
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let algorithm = Algorithm::from_header(alg).ok_or_else(|| {
        refuse(
            Code::TokenAlgorithmRefused,
            format!("tokens signed with {alg:?} are not taken (RS256, ES256, EdDSA, HS256)"),
        )
    })?;
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(malformed()),
    };
    Ok(Unverified {
        algorithm,
        kid,
        claims,
    })
}

/// The token's `iss`, when it is a string.
pub fn issuer(claims: &Map<String, Value>) -> Option<&str> {
    claims.get("iss").and_then(Value::as_str)
}

/// Whether the token's `aud` (a string, or an array of them) names `audience`.
pub fn has_audience(claims: &Map<String, Value>, audience: &str) -> bool {
    match claims.get("aud") {
        Some(Value::String(aud)) => aud == audience,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(audience)),
        _ => false,
    }
}

/// The voter a token names, with the channel and terminal its provider reads from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The provider's name.
    pub provider: String,
    pub voter: VoterId,
    pub channel: Option<Channel>,
    pub terminal: Option<Terminal>,
}

/// Checks the claims of a token whose signature holds, at `now` (Unix seconds): `iss`
/// and `aud` are the provider's; `exp` and `iat` are present and whole numbers, `nbf`
/// too when present; the token has not expired, is valid already, and was issued no
/// longer than `max_age_s` ago (each give or take `leeway_s`); the voter claim is a
/// voter id, and the channel and terminal claims, when present, are a channel and a
/// terminal.
pub fn check_claims(
    spec: &ProviderSpec,
    claims: &Map<String, Value>,
    now: i64,
) -> Result<SignedIn, Refusal> {
    if issuer(claims) != Some(spec.issuer.as_str()) {
        return Err(refuse(
            Code::TokenWrongIssuer,
            format!("the token's iss is not {:?}", spec.issuer),
        ));
    }
    if !has_audience(claims, &spec.audience) {
        return Err(refuse(
            Code::TokenWrongAudience,
            format!("the token's aud does not name {:?}", spec.audience),
        ));
    }
    let leeway = spec.leeway_s;
    let exp = time_claim(claims, "exp")?.ok_or_else(|| missing("exp"))?;
    let iat = time_claim(claims, "iat")?.ok_or_else(|| missing("iat"))?;
    let nbf = time_claim(claims, "nbf")?;
    if now > exp.saturating_add(leeway) {
        return Err(refuse(Code::TokenExpired, "the token has expired (exp)"));
    }
    if let Some(nbf) = nbf
        && nbf > now.saturating_add(leeway)
    {
        return Err(refuse(
            Code::TokenNotYetValid,
            "the token is not valid yet (nbf)",
        ));
    }
    if iat > now.saturating_add(leeway) {
        return Err(refuse(
            Code::TokenNotYetValid,
            "the token was issued in the future (iat)",
        ));
    }
    if now.saturating_sub(iat) > spec.max_age_s.saturating_add(leeway) {
        return Err(refuse(
            Code::TokenTooOld,
            format!(
                "the token was issued more than {} s ago (iat); sign in again",
                spec.max_age_s
            ),
        ));
    }
    let text = |name: &str| -> Result<Option<&str>, Refusal> {
        match claims.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(refuse(
                Code::TokenClaimsInvalid,
                format!("the token's {name} claim must be a string"),
            )),
        }
    };
    let invalid = |name: &str, e: Invalid| {
        refuse(
            Code::TokenClaimsInvalid,
            format!("the token's {name} claim: {}", e.message),
        )
    };
    let voter = text(&spec.voter_claim)?.ok_or_else(|| missing(&spec.voter_claim))?;
    let voter = VoterId::parse(voter).map_err(|e| invalid(&spec.voter_claim, e))?;
    let channel = match &spec.channel_claim {
        Some(name) => text(name)?
            .map(Channel::parse)
            .transpose()
            .map_err(|e| invalid(name, e))?,
        None => None,
    };
    let terminal = match &spec.terminal_claim {
        Some(name) => text(name)?
            .map(Terminal::parse)
            .transpose()
            .map_err(|e| invalid(name, e))?,
        None => None,
    };
    Ok(SignedIn {
        provider: spec.name.clone(),
        voter,
        channel,
        terminal,
    })
}

fn missing(name: &str) -> Refusal {
    refuse(
        Code::TokenClaimsInvalid,
        format!("the token has no {name} claim"),
    )
}

/// A time claim: `None` when absent, a refusal unless a whole number of seconds.
fn time_claim(claims: &Map<String, Value>, name: &str) -> Result<Option<i64>, Refusal> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| {
            refuse(
                Code::TokenClaimsInvalid,
                format!("the token's {name} claim must be a whole number of seconds"),
            )
        }),
        Some(_) => Err(refuse(
            Code::TokenClaimsInvalid,
            format!("the token's {name} claim must be a number"),
        )),
    }
}

/// A new `hmac` provider's secret: 32 random bytes, base64url.
pub fn new_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ProviderSpec {
        ProviderSpec {
            name: "app".into(),
            kind: ProviderKind::Hmac,
            issuer: "https://id.example".into(),
            audience: "ovation".into(),
            voter_claim: "sub".into(),
            channel_claim: Some("chan".into()),
            terminal_claim: None,
            max_age_s: 3600,
            leeway_s: 30,
            login_url: None,
        }
    }

    fn claims(extra: Value) -> Map<String, Value> {
        let mut c = json!({"iss": "https://id.example", "aud": "ovation", "sub": "u1",
                           "iat": 1000, "exp": 2000});
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c.as_object().unwrap().clone()
    }

    fn code(extra: Value, now: i64) -> Code {
        check_claims(&spec(), &claims(extra), now).unwrap_err().code
    }

    #[test]
    fn good_claims_name_the_voter_and_the_channel() {
        let got = check_claims(&spec(), &claims(json!({"chan": "app"})), 1500).unwrap();
        assert_eq!(got.voter.as_str(), "u1");
        assert_eq!(got.channel.unwrap().as_str(), "app");
        assert_eq!(got.terminal, None);
        let aud_list = claims(json!({"aud": ["other", "ovation"]}));
        assert!(check_claims(&spec(), &aud_list, 1500).is_ok());
    }

    #[test]
    fn each_bad_claim_has_its_code() {
        assert_eq!(code(json!({"iss": "x"}), 1500), Code::TokenWrongIssuer);
        assert_eq!(code(json!({"aud": "x"}), 1500), Code::TokenWrongAudience);
        assert_eq!(code(json!({"aud": ["x"]}), 1500), Code::TokenWrongAudience);
        // exp with leeway: 2030 is the last second taken.
        assert!(check_claims(&spec(), &claims(json!({})), 2030).is_ok());
        assert_eq!(code(json!({}), 2031), Code::TokenExpired);
        assert_eq!(code(json!({"nbf": 1600}), 1500), Code::TokenNotYetValid);
        assert_eq!(code(json!({"iat": 1600}), 1500), Code::TokenNotYetValid);
        assert_eq!(
            code(json!({"iat": 100, "exp": 99_999}), 100 + 3600 + 31),
            Code::TokenTooOld
        );
        assert!(check_claims(&spec(), &claims(json!({"iat": 100, "exp": 99_999})), 3730).is_ok());
    }

    #[test]
    fn claims_of_the_wrong_types_are_refused_not_skipped() {
        for bad in [
            json!({"exp": "99999999999"}),
            json!({"exp": 2000.5}),
            json!({"nbf": "0"}),
            json!({"iat": null}),
            json!({"sub": 42}),
            json!({"sub": ""}),
            json!({"chan": ["app"]}),
            json!({"chan": "not a channel"}),
        ] {
            assert_eq!(code(bad.clone(), 1500), Code::TokenClaimsInvalid, "{bad}");
        }
        let mut no_exp = claims(json!({}));
        no_exp.remove("exp");
        assert_eq!(
            check_claims(&spec(), &no_exp, 1500).unwrap_err().code,
            Code::TokenClaimsInvalid
        );
    }

    #[test]
    fn a_token_is_read_only_when_it_is_three_parts_of_json_with_a_known_algorithm() {
        let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let token = |header: Value| format!("{}.{}.sig", part(header), part(json!({"sub": "u"})));
        let ok = read_unverified(&token(json!({"alg": "RS256", "kid": "k1"}))).unwrap();
        assert_eq!(
            (ok.algorithm, ok.kid.as_deref()),
            (Algorithm::Rs256, Some("k1"))
        );
        for alg in ["none", "None", "HS512", "PS256"] {
            assert_eq!(
                read_unverified(&token(json!({"alg": alg})))
                    .unwrap_err()
                    .code,
                Code::TokenAlgorithmRefused,
                "{alg}"
            );
        }
        for bad in [
            "a.b",
            "a.b.c.d",
            "!!.e30.x",
            &format!("{}.W10.x", part(json!({"alg": "HS256"}))),
        ] {
            assert_eq!(
                read_unverified(bad).unwrap_err().code,
                Code::TokenMalformed,
                "{bad}"
            );
        }
        let long = format!(
            "{}.{}.x",
            part(json!({"alg": "HS256"})),
            "A".repeat(TOKEN_MAX)
        );
        assert_eq!(
            read_unverified(&long).unwrap_err().code,
            Code::TokenTooLarge
        );
    }

    #[test]
    fn a_provider_is_checked_field_by_field() {
        let jwks = |url: &str, algorithms: Vec<Algorithm>| ProviderSpec {
            kind: ProviderKind::Jwks {
                url: url.into(),
                algorithms,
            },
            ..spec()
        };
        assert!(
            jwks("https://id.example/jwks", vec![Algorithm::Rs256])
                .checked(false)
                .is_ok()
        );
        assert!(
            jwks("http://127.0.0.1/jwks", vec![Algorithm::Rs256])
                .checked(false)
                .is_err()
        );
        assert!(
            jwks("http://127.0.0.1/jwks", vec![Algorithm::Rs256])
                .checked(true)
                .is_ok()
        );
        assert!(
            jwks("https://id.example/jwks", vec![])
                .checked(false)
                .is_err()
        );
        assert!(
            jwks("https://id.example/jwks", vec![Algorithm::Hs256])
                .checked(false)
                .is_err()
        );
        for bad in [
            ProviderSpec {
                name: "Bad Name".into(),
                ..spec()
            },
            ProviderSpec {
                issuer: String::new(),
                ..spec()
            },
            ProviderSpec {
                voter_claim: "a b".into(),
                ..spec()
            },
            ProviderSpec {
                max_age_s: 59,
                ..spec()
            },
            ProviderSpec {
                leeway_s: 301,
                ..spec()
            },
            ProviderSpec {
                login_url: Some("javascript:alert(1)".into()),
                ..spec()
            },
        ] {
            assert_eq!(
                bad.clone().checked(false).unwrap_err().code,
                Code::InvalidProvider,
                "{bad:?}"
            );
        }
    }
}
