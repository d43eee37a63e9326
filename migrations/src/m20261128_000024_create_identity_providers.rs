//! `identity_providers`: the operator's identity providers whose tokens name voters
//! (`jwks`: keys fetched from a JWKS URL; `hmac`: an HS256 secret), and on `boards`,
//! `voters` (`anyone` or `signed_in`) and `identity_providers`, the names of the
//! providers a board accepts (comma-separated, empty for none).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(IdentityProviders::Table)
                    .if_not_exists()
                    .col(big_pk_auto(IdentityProviders::Id))
                    .col(string_len_uniq(IdentityProviders::Name, 64))
                    .col(string_len(IdentityProviders::Kind, 8))
                    .col(string_len(IdentityProviders::Issuer, 500))
                    .col(string_len(IdentityProviders::Audience, 500))
                    .col(string_len_null(IdentityProviders::JwksUrl, 2000))
                    .col(string_len(IdentityProviders::Algorithms, 100))
                    .col(string_len_null(IdentityProviders::Secret, 200))
                    .col(string_len(IdentityProviders::VoterClaim, 100))
                    .col(string_len_null(IdentityProviders::ChannelClaim, 100))
                    .col(string_len_null(IdentityProviders::TerminalClaim, 100))
                    .col(big_integer(IdentityProviders::MaxAgeS))
                    .col(big_integer(IdentityProviders::LeewayS))
                    .col(string_len_null(IdentityProviders::LoginUrl, 2000))
                    .col(date_time(IdentityProviders::CreatedAt))
                    .to_owned(),
            )
            .await?;
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            string_len(Boards::Voters, 16).default("anyone").to_owned(),
            string_len(Boards::IdentityProviders, 1000)
                .default("")
                .to_owned(),
        ];
        for mut column in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Boards::Voters, Boards::IdentityProviders] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(IdentityProviders::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum IdentityProviders {
    Table,
    Id,
    Name,
    Kind,
    Issuer,
    Audience,
    JwksUrl,
    Algorithms,
    Secret,
    VoterClaim,
    ChannelClaim,
    TerminalClaim,
    MaxAgeS,
    LeewayS,
    LoginUrl,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    Voters,
    IdentityProviders,
}
