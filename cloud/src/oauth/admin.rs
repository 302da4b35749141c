//! `depot-cloud oauth ...`: people who may sign in, and clients an
//! operator creates or grants scopes to, directly on the database.

use super::register::{ClientMetadata, check};
use super::secrets::{hash_password, random_token, sha256_hex};
use super::{GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER, now, parse_scope};
use anyhow::Context;
use clap::Subcommand;
use depot_office::Office;
use depot_office::oauth::{ClientRow, UserRow};
use depot_wms::Wms;

#[derive(Debug, Subcommand)]
pub enum OAuthCmd {
    /// Create or update a person who signs in on the login page. The
    /// password comes from DEPOT_OAUTH_PASSWORD or the first line of
    /// standard input.
    User {
        username: String,
        /// Space-separated scopes the person holds, e.g. "releases:write".
        #[arg(long, default_value = "")]
        scope: String,
    },
    /// Create a confidential client for machines (client credentials and
    /// identity assertions); its secret is printed once.
    Client {
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "releases:write")]
        scope: String,
    },
    /// Set the scopes a client may be granted.
    Grant {
        client_id: String,
        #[arg(long)]
        scope: String,
    },
}

fn scope_of(raw: &str) -> anyhow::Result<String> {
    Ok(parse_scope(raw).map_err(anyhow::Error::msg)?.join(" "))
}

/// Creates a confidential client for machines (client credentials and
/// identity assertions) that may be granted `scope`: its id and secret.
pub async fn create_client(wms: &Wms, name: &str, scope: &str) -> anyhow::Result<(String, String)> {
    let metadata = check(ClientMetadata {
        client_name: Some(name.to_owned()),
        grant_types: vec![GRANT_CLIENT_CREDENTIALS.into(), GRANT_JWT_BEARER.into()],
        scope: scope_of(scope)?,
        ..ClientMetadata::default()
    })
    .map_err(|e| anyhow::anyhow!("{}", e.description))?;
    let client_id = random_token().map_err(anyhow::Error::msg)?;
    let secret = random_token().map_err(anyhow::Error::msg)?;
    Office::new(wms.clone())
        .register_client(ClientRow {
            client_id: client_id.clone(),
            secret_hash: Some(sha256_hex(&secret)),
            allowed_scope: metadata.scope.clone(),
            metadata: serde_json::to_string(&metadata)?,
            owner: Some("operator".into()),
            claim_hash: None,
            created_at: now(),
        })
        .await?;
    Ok((client_id, secret))
}

pub async fn run(wms: &Office, cmd: OAuthCmd) -> anyhow::Result<()> {
    match cmd {
        OAuthCmd::User { username, scope } => {
            let username = username.trim().to_owned();
            anyhow::ensure!(
                !username.is_empty() && username.len() <= 200,
                "the user name must be 1 to 200 characters"
            );
            let scope = scope_of(&scope)?;
            let password = match std::env::var("DEPOT_OAUTH_PASSWORD") {
                Ok(p) => p,
                Err(_) => {
                    let mut line = String::new();
                    std::io::stdin()
                        .read_line(&mut line)
                        .context("reading the password from standard input")?;
                    line.trim_end_matches(['\r', '\n']).to_owned()
                }
            };
            anyhow::ensure!(
                (12..=1024).contains(&password.len()),
                "the password must be 12 to 1024 bytes"
            );
            let password_hash = hash_password(&password).map_err(anyhow::Error::msg)?;
            wms.save_user(UserRow {
                username: username.clone(),
                password_hash,
                scope: scope.clone(),
                created_at: now(),
            })
            .await?;
            println!("user {username} saved with scope {scope:?}");
        }
        OAuthCmd::Client { name, scope } => {
            let (client_id, secret) = create_client(wms, &name, &scope).await?;
            println!("client_id={client_id}");
            println!("client_secret={secret}");
            eprintln!("client {name:?}: the secret is shown once, store it now");
        }
        OAuthCmd::Grant { client_id, scope } => {
            let scope = scope_of(&scope)?;
            anyhow::ensure!(
                wms.set_client_scope(client_id.clone(), scope.clone())
                    .await?,
                "no client {client_id}"
            );
            println!("client {client_id} may be granted {scope:?}");
        }
    }
    Ok(())
}
