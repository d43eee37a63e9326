//! Rate-limit rule rows.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::{Map, Value, json};

use super::entities::rate_rule;
use super::{SqlError, to_naive};
use crate::domain::limit::{
    Change, Missing, Override, RateRule, RuleSpec, Window, parse_dimensions, parse_match,
};

fn overrides_json(overrides: &[Override]) -> String {
    let list: Vec<Value> = overrides
        .iter()
        .map(|o| {
            let when: Map<String, Value> = o
                .when
                .iter()
                .map(|(d, v)| (d.as_str().to_owned(), json!(v)))
                .collect();
            match o.change {
                Change::Limit(limit) => json!({"match": when, "limit": limit}),
                Change::Add(add) => json!({"match": when, "add": add}),
            }
        })
        .collect();
    Value::Array(list).to_string()
}

fn parse_overrides(text: &str) -> Option<Vec<Override>> {
    #[derive(serde::Deserialize)]
    struct Row {
        #[serde(rename = "match")]
        when: std::collections::BTreeMap<String, String>,
        limit: Option<i64>,
        add: Option<i64>,
    }
    let rows: Vec<Row> = serde_json::from_str(text).ok()?;
    rows.into_iter()
        .map(|r| {
            Some(Override {
                when: parse_match(&r.when).ok()?,
                change: match (r.limit, r.add) {
                    (Some(limit), None) => Change::Limit(limit),
                    (None, Some(add)) => Change::Add(add),
                    _ => return None,
                },
            })
        })
        .collect()
}

fn to_domain(row: rate_rule::Model) -> Result<RateRule, SqlError> {
    let corrupt = |what: &str| SqlError::Corrupt(format!("rate rule {} has a bad {what}", row.id));
    let dims: Vec<&str> = row
        .dimensions
        .split(',')
        .filter(|d| !d.is_empty())
        .collect();
    Ok(RateRule {
        id: row.id,
        spec: RuleSpec {
            dimensions: parse_dimensions(&dims).map_err(|_| corrupt("dimensions"))?,
            window: Window::parse(&row.window).map_err(|_| corrupt("window"))?,
            limit: row.vote_limit,
            overrides: parse_overrides(&row.overrides).ok_or_else(|| corrupt("overrides"))?,
            missing: Missing::parse(&row.missing).map_err(|_| corrupt("missing"))?,
            name: row.name,
        },
    })
}

fn spec_columns(model: &mut rate_rule::ActiveModel, spec: &RuleSpec) {
    model.name = Set(spec.name.clone());
    model.dimensions = Set(spec
        .dimensions
        .iter()
        .map(|d| d.as_str())
        .collect::<Vec<_>>()
        .join(","));
    model.window = Set(spec.window.code());
    model.vote_limit = Set(spec.limit);
    model.overrides = Set(overrides_json(&spec.overrides));
    model.missing = Set(spec.missing.as_str().to_owned());
    model.updated_at = Set(to_naive(Utc::now()));
}

/// A board's rules, oldest first.
pub async fn list_rules(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Vec<RateRule>, SqlError> {
    rate_rule::Entity::find()
        .filter(rate_rule::Column::BoardId.eq(board_id))
        .order_by_asc(rate_rule::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// Adds a rule to a board.
pub async fn insert_rule(
    db: &impl ConnectionTrait,
    board_id: i64,
    spec: &RuleSpec,
) -> Result<RateRule, SqlError> {
    let mut model = rate_rule::ActiveModel {
        board_id: Set(board_id),
        created_at: Set(to_naive(Utc::now())),
        ..Default::default()
    };
    spec_columns(&mut model, spec);
    to_domain(model.insert(db).await.map_err(SqlError::from_write)?)
}

/// Saves a rule's new settings. (MySQL counts only rows whose values changed, so the
/// caller checks that the rule exists, not the number of rows.)
pub async fn update_rule(
    db: &impl ConnectionTrait,
    board_id: i64,
    rule: &RateRule,
) -> Result<(), SqlError> {
    let mut model = <rate_rule::ActiveModel as Default>::default();
    spec_columns(&mut model, &rule.spec);
    rate_rule::Entity::update_many()
        .set(model)
        .filter(rate_rule::Column::Id.eq(rule.id))
        .filter(rate_rule::Column::BoardId.eq(board_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes a rule; answers whether the board had it.
pub async fn delete_rule(
    db: &impl ConnectionTrait,
    board_id: i64,
    id: i64,
) -> Result<bool, SqlError> {
    let result = rate_rule::Entity::delete_many()
        .filter(rate_rule::Column::Id.eq(id))
        .filter(rate_rule::Column::BoardId.eq(board_id))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}
