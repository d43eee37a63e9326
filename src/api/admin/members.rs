//! Member administration: bulk upsert (JSON), CSV import, edit, delete.

use actix_web::{HttpRequest, HttpResponse, delete, patch, post, put, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use super::{board_slug, nullable};
use crate::api::auth::Admin;
use crate::domain::board::{Member, parse_multiplier};
use crate::domain::code::Code;
use crate::domain::ids::MemberId;
use crate::engine::admin as engine;
use crate::engine::config::BoardConfig;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// Members per upsert or import at most.
pub const MAX_MEMBERS: usize = 100_000;
/// Largest CSV body accepted.
pub const CSV_LIMIT: usize = 16 * 1024 * 1024;

/// A member's fields; absent fields keep their current value (or the default for a new
/// member: name = id, initial_votes 0, enabled).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberFields {
    pub id: Option<String>,
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub image_url: Option<Option<String>>,
    pub initial_votes: Option<i64>,
    /// Overrides the board's multiplier; null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<f64>)]
    pub multiplier: Option<Option<f64>>,
    pub enabled: Option<bool>,
    /// Free-form details shown to clients; a JSON object (anything else is a 422
    /// `invalid_profile`).
    #[schema(value_type = Option<Object>)]
    pub profile: Option<Value>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"members": [{"id": "m1", "name": "Aria", "initial_votes": 0}, {"id": "m2", "name": "Bo"}]}))]
pub struct UpsertMembersRequest {
    pub members: Vec<MemberFields>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UpsertMembersResponse {
    /// Members written.
    pub upserted: usize,
}

/// `fields` applied to the member's current state (or a new member's defaults).
pub(crate) fn merged(
    board: &BoardConfig,
    id: MemberId,
    fields: &MemberFields,
) -> Result<Member, EngineError> {
    let mut member = board.members.get(&id).cloned().unwrap_or_else(|| Member {
        name: id.to_string(),
        id: id.clone(),
        image_url: None,
        initial_votes: 0,
        multiplier: None,
        enabled: true,
        profile: json!({}),
    });
    if let Some(name) = &fields.name {
        member.name = name.clone();
    }
    if let Some(url) = &fields.image_url {
        member.image_url = url.clone().filter(|u| !u.is_empty());
    }
    if let Some(v) = fields.initial_votes {
        member.initial_votes = v;
    }
    if let Some(m) = fields.multiplier {
        member.multiplier = m.map(parse_multiplier).transpose()?;
    }
    if let Some(e) = fields.enabled {
        member.enabled = e;
    }
    if let Some(p) = &fields.profile {
        member.profile = p.clone();
    }
    member.check()?;
    Ok(member)
}

/// Inserts or updates members by id.
#[utoipa::path(put, path = "/api/v1/admin/boards/{board}/members", tag = "admin", params(("board" = String, Path)),
    request_body = UpsertMembersRequest,
    responses(
        (status = 200, body = UpsertMembersResponse),
        (status = 404, body = crate::api::ErrorBody),
        (status = 413, description = "too_many_members", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_members: per-item errors in `errors`; nothing written", body = crate::api::ErrorBody),
    ))]
#[put("/boards/{board}/members")]
pub async fn upsert_members(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<UpsertMembersRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let slug = board_slug(&board)?;
    let config = engine::board_of(&state, &slug)?;
    if body.members.len() > MAX_MEMBERS {
        return Err(ApiError::too_large(
            Code::TooManyMembers,
            format!("at most {MAX_MEMBERS} members at once"),
        ));
    }
    let (members, errors) = validate(
        &config,
        body.members
            .iter()
            .enumerate()
            .map(|(i, f)| ("index", i, f)),
    );
    if !errors.is_empty() {
        return Err(item_errors(Code::InvalidMembers, errors).into());
    }
    let upserted = engine::upsert_members(&state, &actor, &slug, members).await?;
    Ok(HttpResponse::Ok().json(UpsertMembersResponse { upserted }))
}

/// Turns fields into members; each error names its item by `(label, position)`.
fn validate<'a>(
    board: &BoardConfig,
    items: impl Iterator<Item = (&'static str, usize, &'a MemberFields)>,
) -> (Vec<Member>, Vec<Value>) {
    let mut members = Vec::new();
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (label, position, fields) in items {
        let result = MemberId::parse(fields.id.as_deref().unwrap_or(""))
            .map_err(EngineError::from)
            .and_then(|id| {
                if !seen.insert(id.clone()) {
                    return Err(EngineError::invalid(
                        Code::DuplicateMember,
                        format!("{id} appears twice"),
                    ));
                }
                merged(board, id, fields)
            });
        match result {
            Ok(m) => members.push(m),
            Err(e) => errors.push(
                json!({label: position, "code": e.code().as_str(), "message": e.to_string()}),
            ),
        }
    }
    (members, errors)
}

fn item_errors(code: Code, errors: Vec<Value>) -> EngineError {
    let mut details = Map::new();
    let count = errors.len();
    details.insert("errors".into(), Value::Array(errors));
    EngineError::invalid_with(
        code,
        format!("{count} item(s) are invalid; nothing was written"),
        details,
    )
}

/// The CSV columns, in the header's order.
const CSV_COLUMNS: [&str; 5] = ["id", "name", "image_url", "initial_votes", "multiplier"];

/// Reads CSV text into member fields, and the lines that could not be read; errors carry
/// 1-based line numbers. A bad header is the only error then.
fn parse_csv(text: &str) -> (Vec<(usize, MemberFields)>, Vec<Value>) {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(str::to_owned).collect(),
        Err(e) => {
            let error = json!({"line": 1, "code": "invalid_csv", "message": e.to_string()});
            return (Vec::new(), vec![error]);
        }
    };
    if header != CSV_COLUMNS {
        let message = format!("the header must be {}", CSV_COLUMNS.join(","));
        return (
            Vec::new(),
            vec![json!({"line": 1, "code": "invalid_header", "message": message})],
        );
    }
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                errors.push(json!({"line": line, "code": "invalid_csv", "message": e.to_string()}));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = |i: usize| record.get(i).filter(|s| !s.is_empty());
        let initial_votes = match field(3).map(str::parse::<i64>).transpose() {
            Ok(v) => v,
            Err(_) => {
                errors.push(json!({"line": line, "code": "invalid_initial_votes", "message": "initial_votes must be a whole number"}));
                continue;
            }
        };
        let multiplier = match field(4).map(str::parse::<f64>).transpose() {
            Ok(v) => v,
            Err(_) => {
                errors.push(json!({"line": line, "code": "invalid_number", "message": "multiplier must be a number"}));
                continue;
            }
        };
        // An empty cell keeps what the member has (a new member gets the default), so a
        // re-import of names does not erase images or initial votes.
        rows.push((
            line,
            MemberFields {
                id: field(0).map(str::to_owned),
                name: field(1).map(str::to_owned),
                image_url: field(2).map(|u| Some(u.to_owned())),
                initial_votes,
                multiplier: multiplier.map(Some),
                enabled: None,
                profile: None,
            },
        ));
    }
    (rows, errors)
}

/// Reads a members CSV for `board`: the members, or every bad line (nothing is written
/// either way). Shared by the API, the dashboard's preview and `ovation import`.
pub fn read_csv(board: &BoardConfig, text: &str) -> Result<Vec<Member>, EngineError> {
    let (rows, mut errors) = parse_csv(text);
    if rows.len() > MAX_MEMBERS {
        return Err(EngineError::too_large(
            Code::TooManyMembers,
            format!("at most {MAX_MEMBERS} members at once"),
        ));
    }
    let (members, invalid) = validate(board, rows.iter().map(|(line, f)| ("line", *line, f)));
    errors.extend(invalid);
    if !errors.is_empty() {
        errors.sort_by_key(|e| e["line"].as_u64());
        return Err(item_errors(Code::InvalidCsv, errors));
    }
    Ok(members)
}

/// Imports members from CSV (`id,name,image_url,initial_votes,multiplier`); any bad line
/// imports nothing and the answer lists every bad line. An empty cell keeps the member's
/// current value (a new member gets the default).
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/members/import", tag = "admin", params(("board" = String, Path)),
    request_body(content = String, content_type = "text/csv"),
    responses(
        (status = 200, body = UpsertMembersResponse),
        (status = 422, description = "invalid_csv: per-line errors in `errors`; nothing imported", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/members/import")]
pub async fn import_members(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    req: HttpRequest,
    board: web::Path<String>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let slug = board_slug(&board)?;
    let config = engine::board_of(&state, &slug)?;
    let body = crate::api::read_text(&req, body, CSV_LIMIT).await?;
    let members = read_csv(&config, &body)?;
    let upserted = engine::upsert_members(&state, &actor, &slug, members).await?;
    Ok(HttpResponse::Ok().json(UpsertMembersResponse { upserted }))
}

/// Changes some fields of a member.
#[utoipa::path(patch, path = "/api/v1/admin/boards/{board}/members/{member}", tag = "admin",
    params(("board" = String, Path), ("member" = String, Path)),
    request_body = MemberFields,
    responses((status = 200, body = crate::api::boards::MemberInfo), (status = 404, body = crate::api::ErrorBody),
        (status = 422, description = "invalid_name, invalid_image_url, invalid_initial_votes, invalid_number, invalid_profile, member_id_immutable", body = crate::api::ErrorBody)))]
#[patch("/boards/{board}/members/{member}")]
pub async fn update_member(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
    body: web::Json<MemberFields>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let (board, member) = path.into_inner();
    let slug = board_slug(&board)?;
    let config = engine::board_of(&state, &slug)?;
    let id = MemberId::parse(&member)
        .map_err(|e| ApiError::not_found(Code::MemberNotFound, e.message))?;
    if !config.members.contains_key(&id) {
        return Err(ApiError::not_found(
            Code::MemberNotFound,
            format!("{id} is not a member of board {slug}"),
        ));
    }
    if body.id.as_deref().is_some_and(|i| i != id.as_str()) {
        return Err(ApiError::invalid(
            Code::MemberIdImmutable,
            "a member's id cannot change",
        ));
    }
    let updated = merged(&config, id, &body)?;
    engine::upsert_members(&state, &actor, &slug, vec![updated.clone()]).await?;
    Ok(HttpResponse::Ok().json(crate::api::boards::MemberInfo {
        id: updated.id.to_string(),
        name: updated.name,
        image_url: updated.image_url,
        enabled: updated.enabled,
        profile: updated.profile,
    }))
}

/// Deletes a member.
#[utoipa::path(delete, path = "/api/v1/admin/boards/{board}/members/{member}", tag = "admin",
    params(("board" = String, Path), ("member" = String, Path)),
    responses((status = 204), (status = 404, body = crate::api::ErrorBody)))]
#[delete("/boards/{board}/members/{member}")]
pub async fn delete_member(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let (board, member) = path.into_inner();
    let slug = board_slug(&board)?;
    let id = MemberId::parse(&member)
        .map_err(|e| ApiError::not_found(Code::MemberNotFound, e.message))?;
    engine::delete_member(&state, &actor, &slug, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}
