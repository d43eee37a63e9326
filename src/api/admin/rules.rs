//! Rate-limit rule administration.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::code::Code;
use crate::domain::limit::{
    Change, Missing, Override, RateRule, RuleSpec, Window, parse_dimensions, parse_match,
};
use crate::engine::admin as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// A rule's settings; on create `name`, `dimensions`, `window` and `limit` are required,
/// on update every field is optional and `overrides` replaces the list.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}))]
pub struct RuleRequest {
    pub name: Option<String>,
    /// A non-empty set of voter, member, channel, terminal, ip: the rule counts per
    /// combination of their values. On a family, `["creator"]` alone makes a rule of
    /// rooms opened: it counts the rooms each creator (a voting page's visitor by its
    /// address, an API client by its key) opens across the family.
    pub dimensions: Option<Vec<String>>,
    /// second, minute, hour, day, week, month (in the board's timezone), campaign, or
    /// rolling:<n><s|m|h|d> (at most 31 days).
    pub window: Option<String>,
    /// Votes allowed per window (a vote with count 3 uses 3).
    pub limit: Option<i64>,
    /// The first override whose `match` fits the vote changes its limit: sets it
    /// (`limit`; 0 blocks the values) or adds to it (`add`).
    pub overrides: Option<Vec<OverrideBody>>,
    /// refuse (default; the vote gets `<dimension>_required`) or skip (the rule does not
    /// apply) when a vote lacks a value the rule counts on.
    pub missing: Option<String>,
}

/// A different limit for votes whose values match: exactly one of `limit` and `add`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"match": {"channel": "partner-a"}, "add": 5}))]
pub struct OverrideBody {
    /// Dimension -> value, e.g. `{"channel": "partner-a"}`; every pair must match.
    #[serde(rename = "match")]
    pub when: BTreeMap<String, String>,
    /// The limit for these values instead of the rule's (0 to the window's bound); 0
    /// blocks them: their votes are refused (`rate_limited`, no `Retry-After`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Votes these values get on top of the rule's limit (at least 1; the sum stays
    /// within the window's bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add: Option<i64>,
}

impl OverrideBody {
    fn change(&self) -> Result<Change, crate::domain::Invalid> {
        match (self.limit, self.add) {
            (Some(limit), None) => Ok(Change::Limit(limit)),
            (None, Some(add)) => Ok(Change::Add(add)),
            _ => Err(crate::domain::Invalid::new(
                Code::InvalidOverride,
                "an override has exactly one of limit and add",
            )),
        }
    }
}

impl From<&Override> for OverrideBody {
    fn from(o: &Override) -> Self {
        let (limit, add) = match o.change {
            Change::Limit(limit) => (Some(limit), None),
            Change::Add(add) => (None, Some(add)),
        };
        Self {
            when: o
                .when
                .iter()
                .map(|(d, v)| (d.to_string(), v.clone()))
                .collect(),
            limit,
            add,
        }
    }
}

impl RuleRequest {
    fn apply(&self, spec: &mut RuleSpec) -> Result<(), ApiError> {
        if let Some(name) = &self.name {
            spec.name = name.clone();
        }
        if let Some(dims) = &self.dimensions {
            spec.dimensions = parse_dimensions(dims)?;
        }
        if let Some(window) = &self.window {
            spec.window = Window::parse(window)?;
        }
        if let Some(limit) = self.limit {
            spec.limit = limit;
        }
        if let Some(overrides) = &self.overrides {
            spec.overrides = overrides
                .iter()
                .map(|o| {
                    Ok(Override {
                        when: parse_match(&o.when)?,
                        change: o.change()?,
                    })
                })
                .collect::<Result<_, crate::domain::Invalid>>()?;
        }
        if let Some(missing) = &self.missing {
            spec.missing = Missing::parse(missing)?;
        }
        Ok(())
    }

    /// A new rule's settings: the required fields must be there.
    fn create(&self) -> Result<RuleSpec, ApiError> {
        let required =
            |code: Code, field: &str| ApiError::invalid(code, format!("{field} is required"));
        let mut spec = RuleSpec {
            name: self
                .name
                .clone()
                .ok_or_else(|| required(Code::InvalidName, "name"))?,
            dimensions: parse_dimensions(
                self.dimensions
                    .as_deref()
                    .ok_or_else(|| required(Code::EmptyDimensions, "dimensions"))?,
            )?,
            window: Window::parse(
                self.window
                    .as_deref()
                    .ok_or_else(|| required(Code::InvalidWindow, "window"))?,
            )?,
            limit: self
                .limit
                .ok_or_else(|| required(Code::InvalidLimit, "limit"))?,
            overrides: Vec::new(),
            missing: Missing::Refuse,
        };
        self.apply(&mut spec)?;
        Ok(spec)
    }
}

/// A rule as stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleResponse {
    pub id: i64,
    pub name: String,
    pub dimensions: Vec<String>,
    pub window: String,
    pub limit: i64,
    pub overrides: Vec<OverrideBody>,
    pub missing: String,
}

impl From<&RateRule> for RuleResponse {
    fn from(rule: &RateRule) -> Self {
        let spec = &rule.spec;
        Self {
            id: rule.id,
            name: spec.name.clone(),
            dimensions: spec.dimensions.iter().map(|d| d.to_string()).collect(),
            window: spec.window.code(),
            limit: spec.limit,
            overrides: spec.overrides.iter().map(OverrideBody::from).collect(),
            missing: spec.missing.as_str().to_owned(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RulesResponse {
    pub rules: Vec<RuleResponse>,
}

fn rule_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(Code::RuleNotFound, format!("no rule {raw:?}")))
}

/// Adds a rule to a board.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/rules", tag = "admin",
    params(("board" = String, Path)), request_body = RuleRequest,
    responses(
        (status = 201, body = RuleResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "too_many_rules (20 per board)", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_name, invalid_dimension, empty_dimensions, invalid_window, invalid_limit, invalid_override, invalid_missing", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/rules")]
pub async fn create_rule(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<RuleRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let slug = board_slug(&board)?;
    engine::board_of(&state, &slug)?;
    let rule = engine::create_rule(&state, &actor, &slug, body.create()?).await?;
    Ok(HttpResponse::Created().json(RuleResponse::from(&rule)))
}

/// A board's rules, oldest first.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/rules", tag = "admin",
    params(("board" = String, Path)),
    responses((status = 200, body = RulesResponse), (status = 404, body = crate::api::ErrorBody)))]
#[get("/boards/{board}/rules")]
pub async fn list_rules(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let board = engine::board_of(&state, &board_slug(&board)?)?;
    let rules = board.all_rules().map(RuleResponse::from).collect();
    Ok(HttpResponse::Ok().json(RulesResponse { rules }))
}

/// One rule.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/rules/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)),
    responses((status = 200, body = RuleResponse), (status = 404, description = "board_not_found, rule_not_found", body = crate::api::ErrorBody)))]
#[get("/boards/{board}/rules/{id}")]
pub async fn get_rule(
    state: web::Data<AppState>,
    _admin: Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (board, id) = path.into_inner();
    let board = engine::board_of(&state, &board_slug(&board)?)?;
    let rule = engine::rule_of(&board, rule_id(&id)?)?;
    Ok(HttpResponse::Ok().json(RuleResponse::from(&rule)))
}

/// Changes some settings of a rule.
#[utoipa::path(patch, path = "/api/v1/admin/boards/{board}/rules/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)), request_body = RuleRequest,
    responses((status = 200, body = RuleResponse), (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
#[patch("/boards/{board}/rules/{id}")]
pub async fn update_rule(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
    body: web::Json<RuleRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let (board, id) = path.into_inner();
    let slug = board_slug(&board)?;
    let current = engine::board_of(&state, &slug)?;
    let mut rule = engine::rule_of(&current, rule_id(&id)?)?;
    body.apply(&mut rule.spec)?;
    let rule = engine::update_rule(&state, &actor, &slug, rule).await?;
    Ok(HttpResponse::Ok().json(RuleResponse::from(&rule)))
}

/// Deletes a rule.
#[utoipa::path(delete, path = "/api/v1/admin/boards/{board}/rules/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)),
    responses((status = 204), (status = 404, description = "board_not_found, rule_not_found", body = crate::api::ErrorBody)))]
#[delete("/boards/{board}/rules/{id}")]
pub async fn delete_rule(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let (board, id) = path.into_inner();
    engine::delete_rule(&state, &actor, &board_slug(&board)?, rule_id(&id)?).await?;
    Ok(HttpResponse::NoContent().finish())
}
