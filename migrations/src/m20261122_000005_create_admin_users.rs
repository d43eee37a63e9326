//! Admin users of the dashboard (argon2 password hashes) and the audit log of admin changes.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(AdminUsers::Table)
                    .if_not_exists()
                    .col(big_pk_auto(AdminUsers::Id))
                    .col(string_len_uniq(AdminUsers::Username, 64))
                    .col(string_len(AdminUsers::PasswordHash, 255))
                    .col(date_time(AdminUsers::CreatedAt))
                    .col(date_time(AdminUsers::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(AuditLog::Table)
                    .if_not_exists()
                    .col(big_pk_auto(AuditLog::Id))
                    .col(date_time(AuditLog::At))
                    .col(string_len(AuditLog::Actor, 128))
                    .col(string_len(AuditLog::Action, 64))
                    .col(string_len(AuditLog::Target, 200))
                    .col(text(AuditLog::Detail))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_audit_log_at")
                    .table(AuditLog::Table)
                    .col(AuditLog::At)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AuditLog::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(AdminUsers::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum AdminUsers {
    Table,
    Id,
    Username,
    PasswordHash,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    Id,
    At,
    Actor,
    Action,
    Target,
    Detail,
}
