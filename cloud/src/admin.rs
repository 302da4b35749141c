//! The admin command line of `depot-cloud`: serve, and manage businesses,
//! warehouses and keys directly on the database (safe while the server runs:
//! SQLite serializes the writers).

use crate::settings::Settings;
use anyhow::Context;
use clap::{Parser, Subcommand};
use depot_protocol::order::Address;
use depot_protocol::{BusinessId, KeyId, WarehouseId};
use depot_wms::Wms;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "depot-cloud",
    version,
    about = "Depot cloud service and its administration"
)]
pub struct Cli {
    /// TOML settings file.
    #[arg(long, global = true, env = "DEPOT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory (overrides the settings).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API.
    Serve {
        /// Address to listen on (overrides the settings); port 0 picks a free one.
        #[arg(long)]
        listen: Option<SocketAddr>,
    },
    /// Manage businesses.
    #[command(subcommand)]
    Business(BusinessCmd),
    /// Manage warehouses.
    #[command(subcommand)]
    Warehouse(WarehouseCmd),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCmd),
    /// Manage edges.
    #[command(subcommand)]
    Edge(EdgeCmd),
    /// About the settings themselves.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// People and clients of the release-notes API's authorization server.
    #[command(subcommand)]
    Oauth(crate::oauth::admin::OAuthCmd),
    /// Publish and list releases of the software (every edge receives them).
    #[command(subcommand)]
    Release(ReleaseCmd),
    /// Copy a stopped SQLite cloud into an empty PostgreSQL database,
    /// keeping every id, sequence number and cursor (edges carry on
    /// without a resync); then set `database.url` to it.
    MigrateToPostgres {
        /// The SQLite cloud's data directory (its `cloud.db`).
        #[arg(long)]
        from: PathBuf,
        /// The PostgreSQL database: `postgres://user:password@host/db`.
        #[arg(long)]
        to: String,
    },
}

/// `migrate-to-postgres`: the copy, told as it goes on standard error,
/// and what it copied on standard output.
pub async fn migrate_to_postgres(from: &std::path::Path, to: &str) -> anyhow::Result<()> {
    depot_sql::check_postgres_url(to).map_err(|e| anyhow::anyhow!("--to: {e}"))?;
    let path = from.join("cloud.db");
    let url = to.to_owned();
    let copied = tokio::task::spawn_blocking(move || {
        use std::io::IsTerminal;
        let live = std::io::stderr().is_terminal();
        depot_wms::database::copy_to_postgres(&path, &url, |table, done, of| {
            if live {
                eprint!("\r{table}: {done} of {of} rows\x1b[K");
            }
            if done == of {
                if live {
                    eprint!("\r\x1b[K");
                }
                eprintln!("{table}: {of} rows");
            }
        })
    })
    .await?
    .with_context(|| {
        format!(
            "copying {} into PostgreSQL",
            from.join("cloud.db").display()
        )
    })?;
    println!(
        "copied {} rows of {} tables into PostgreSQL: set database.url to it and start the cloud",
        copied.rows(),
        copied.tables.len()
    );
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum ReleaseCmd {
    /// Publish a release of a product: its version, date, and notes in one
    /// locale (`release translate` adds more).
    Publish {
        /// wms, app or signage.
        #[arg(long, default_value = "wms")]
        product: String,
        /// A semantic version, e.g. 1.4.0.
        #[arg(long)]
        version: String,
        /// The release date, YYYY-MM-DD (default: today).
        #[arg(long)]
        date: Option<String>,
        /// The locale of the title and notes: the release's default.
        #[arg(long, default_value = "en")]
        locale: String,
        #[arg(long)]
        title: String,
        /// A Markdown file with the notes ("-" reads standard input).
        #[arg(long)]
        notes: Option<PathBuf>,
    },
    /// Add the notes of another locale to a published release.
    Translate {
        #[arg(long, default_value = "wms")]
        product: String,
        #[arg(long)]
        version: String,
        #[arg(long)]
        locale: String,
        #[arg(long)]
        title: String,
        /// A Markdown file with the notes ("-" reads standard input).
        #[arg(long)]
        notes: Option<PathBuf>,
    },
    /// List releases, newest first.
    List,
}

/// The notes of a release, from a file, standard input ("-") or nowhere.
fn read_notes(notes: Option<PathBuf>) -> anyhow::Result<String> {
    Ok(match notes {
        None => String::new(),
        Some(p) if p.as_os_str() == "-" => std::io::read_to_string(std::io::stdin())
            .context("reading the notes from standard input")?,
        Some(p) => std::fs::read_to_string(&p)
            .with_context(|| format!("reading the notes from {}", p.display()))?,
    })
}

/// Field violations as one line for the terminal.
fn violations(errors: Vec<depot_protocol::FieldError>) -> anyhow::Error {
    let lines: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.name, e.status))
        .collect();
    anyhow::anyhow!("{}", lines.join("; "))
}

#[derive(Debug, Subcommand)]
pub enum ConfigCmd {
    /// Print every setting with its default, environment variable and
    /// meaning (markdown; docs/cloud-configuration.md); needs no settings.
    Reference,
}

#[derive(Debug, Subcommand)]
pub enum EdgeCmd {
    /// Register an edge and print its node number (its depot-edge
    /// configuration needs it).
    Register {
        #[arg(long)]
        business: i64,
        /// Letters, digits, '-' or '_' (it appears in MQTT topics).
        #[arg(long)]
        edge: String,
        #[arg(long)]
        name: Option<String>,
        /// A warehouse it serves (repeat for several): its events may write
        /// only into these. None: every warehouse of the business.
        #[arg(long = "warehouse")]
        warehouses: Vec<i64>,
    },
    /// Set the warehouses an edge serves (none: every warehouse of its
    /// business). Its events naming records of other warehouses are then
    /// refused, as conflicts of its business.
    Serve {
        #[arg(long)]
        business: i64,
        #[arg(long)]
        edge: String,
        /// A warehouse it serves (repeat for several); none: all.
        #[arg(long = "warehouse")]
        warehouses: Vec<i64>,
    },
    /// List a business's edges.
    List {
        #[arg(long)]
        business: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum BusinessCmd {
    /// Create a business and print its id.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "EUR")]
        currency: String,
        #[arg(long, default_value = "UTC")]
        timezone: String,
    },
    /// Set a business's GS1 company prefix: every parcel then gets an SSCC
    /// numbered from it (the cloud and each edge get blocks of serials).
    Set {
        #[arg(long)]
        id: i64,
        /// 4 to 12 digits, as GS1 issued it.
        #[arg(long, conflicts_with = "no_gs1_prefix")]
        gs1_prefix: Option<String>,
        /// Stop numbering parcels with SSCCs.
        #[arg(long)]
        no_gs1_prefix: bool,
    },
    /// List businesses.
    List,
}

/// A warehouse's address, printed in the FROM block of its labels.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AddressArgs {
    /// The sender's name on labels (default: the business's).
    #[arg(long = "address-name")]
    pub address_name: Option<String>,
    /// Street and number.
    #[arg(long)]
    pub line1: Option<String>,
    #[arg(long)]
    pub line2: Option<String>,
    #[arg(long)]
    pub city: Option<String>,
    #[arg(long)]
    pub region: Option<String>,
    #[arg(long)]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2 ("ES").
    #[arg(long)]
    pub country: Option<String>,
}

impl AddressArgs {
    fn given(&self) -> bool {
        [
            &self.address_name,
            &self.line1,
            &self.line2,
            &self.city,
            &self.region,
            &self.postal_code,
            &self.country,
        ]
        .iter()
        .any(|f| f.is_some())
    }

    /// The address these arguments make of `base`: the fields given replace
    /// its own.
    fn over(self, base: Address) -> Address {
        Address {
            name: self.address_name.or(base.name),
            line1: self.line1.or(base.line1),
            line2: self.line2.or(base.line2),
            city: self.city.or(base.city),
            region: self.region.or(base.region),
            postal_code: self.postal_code.or(base.postal_code),
            country: self.country.map(|c| c.to_uppercase()).or(base.country),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum WarehouseCmd {
    /// Create a warehouse and print its id.
    Create {
        #[arg(long)]
        business: i64,
        /// Short code ("MAD1").
        #[arg(long)]
        code: String,
        #[arg(long)]
        name: String,
        /// Buyers may pick up orders here.
        #[arg(long)]
        visible_sales: bool,
        #[command(flatten)]
        address: AddressArgs,
    },
    /// Change a warehouse's name or address (the fields given).
    Set {
        #[arg(long)]
        business: i64,
        #[arg(long)]
        id: i64,
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        address: AddressArgs,
    },
    /// List a business's warehouses.
    List {
        #[arg(long)]
        business: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCmd {
    /// Create a key; it is printed once and only its hash is stored.
    Create {
        #[arg(long)]
        business: i64,
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a key by id: it stops working at once.
    Revoke { id: i64 },
    /// List a business's keys (ids and prefixes, never secrets).
    List {
        #[arg(long)]
        business: i64,
    },
}

impl Cli {
    pub fn settings(&self) -> anyhow::Result<Settings> {
        let mut s = Settings::load(self.config.as_deref()).context("loading settings")?;
        if let Some(dir) = &self.data_dir {
            s.data_dir = dir.clone();
        }
        Ok(s)
    }
}

pub fn open(settings: &Settings) -> anyhow::Result<Wms> {
    if let Some(url) = settings.database.postgres() {
        return Wms::open_postgres(url, &settings.data_dir, "cloud")
            .context("opening the database on PostgreSQL (database.url)");
    }
    let path = settings.database();
    Wms::open(&path, "cloud").with_context(|| format!("opening {}", path.display()))
}

/// Opens the database to serve from, keeping room in reserve on its disk
/// for a start on a full disk (see `depot_wms::disk`), and says so when
/// the disk is low.
pub fn open_to_serve(settings: &Settings) -> anyhow::Result<Wms> {
    let path = settings.database();
    let probe = settings.storage();
    let wms = match settings.database.postgres() {
        Some(_) => open(settings)?,
        None => probe
            .open_to_serve(|| Wms::open(&path, "cloud"))
            .map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?,
    };
    match probe.read(None) {
        Ok(s) if s.state != depot_wms::disk::StorageState::Ok => {
            tracing::warn!("disk: {}", s.summary());
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot read the data directory's disk"),
    }
    Ok(wms)
}

/// Runs an admin command (everything but `serve`), printing its result.
pub async fn run_admin(wms: &Wms, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve { .. } | Command::Config(_) | Command::MigrateToPostgres { .. } => {
            anyhow::bail!("not an admin command")
        }
        Command::Oauth(cmd) => {
            crate::oauth::admin::run(&depot_office::Office::new(wms.clone()), cmd).await?
        }
        Command::Business(BusinessCmd::Create {
            name,
            currency,
            timezone,
        }) => {
            let b = wms.create_business(&name, &currency, &timezone).await?;
            println!("created business {} ({})", b.id, b.name);
        }
        Command::Business(BusinessCmd::Set {
            id,
            gs1_prefix,
            no_gs1_prefix,
        }) => {
            if gs1_prefix.is_none() && !no_gs1_prefix {
                anyhow::bail!("say what to set: --gs1-prefix P or --no-gs1-prefix");
            }
            let b = wms
                .set_gs1_prefix(BusinessId(id), gs1_prefix.as_deref())
                .await?;
            match b.gs1_company_prefix {
                Some(p) => println!(
                    "business {} numbers its parcels' SSCCs from GS1 company prefix {p}",
                    b.id
                ),
                None => println!("business {} gives its parcels no SSCC", b.id),
            }
        }
        Command::Business(BusinessCmd::List) => {
            for b in wms.businesses().await? {
                println!("{}\t{}\t{}\t{}", b.id, b.name, b.currency, b.timezone);
            }
        }
        Command::Warehouse(WarehouseCmd::Create {
            business,
            code,
            name,
            visible_sales,
            address,
        }) => {
            let w = wms
                .create_warehouse(
                    BusinessId(business),
                    &code,
                    &name,
                    address.over(Address::default()),
                    visible_sales,
                )
                .await?;
            println!(
                "created warehouse {} ({} {}) in business {}",
                w.id, w.code, w.name, w.business_id
            );
        }
        Command::Warehouse(WarehouseCmd::Set {
            business,
            id,
            name,
            address,
        }) => {
            let business = BusinessId(business);
            let id = WarehouseId(id);
            let base = wms
                .warehouses(business, None)
                .await?
                .into_iter()
                .find(|w| w.id == id)
                .map(|w| w.address)
                .unwrap_or_default();
            let address = address.given().then(|| address.over(base));
            let w = wms
                .update_warehouse(business, id, name.as_deref(), address)
                .await?;
            let a = &w.address;
            let lines: Vec<&str> = [
                &a.name,
                &a.line1,
                &a.line2,
                &a.postal_code,
                &a.city,
                &a.region,
                &a.country,
            ]
            .into_iter()
            .filter_map(|f| f.as_deref())
            .collect();
            println!(
                "warehouse {} ({} {}): {}",
                w.id,
                w.code,
                w.name,
                lines.join(", ")
            );
        }
        Command::Warehouse(WarehouseCmd::List { business }) => {
            for w in wms.warehouses(BusinessId(business), None).await? {
                println!(
                    "{}\t{}\t{}\tvisible_sales={}",
                    w.id, w.code, w.name, w.is_visible_sales
                );
            }
        }
        Command::Key(KeyCmd::Create { business, label }) => {
            let k = wms.create_key(BusinessId(business), label).await?;
            println!("{}", k.secret);
            eprintln!(
                "key {} for business {}: shown once, store it now",
                k.key.id, k.key.business_id
            );
        }
        Command::Key(KeyCmd::Revoke { id }) => {
            let k = wms.revoke_key(KeyId(id)).await?;
            println!("revoked key {} ({})", k.id, k.prefix);
        }
        Command::Edge(EdgeCmd::Register {
            business,
            edge,
            name,
            warehouses,
        }) => {
            let id = depot_protocol::sync::EdgeId::parse(&edge)?;
            let mut e = wms
                .register_edge(BusinessId(business), id.clone(), name)
                .await?;
            if !warehouses.is_empty() {
                let ws = warehouses.into_iter().map(WarehouseId).collect();
                e = wms
                    .set_edge_warehouses(BusinessId(business), id, ws)
                    .await?;
            }
            println!(
                "registered edge {} of business {} as node {}, serving {}",
                e.edge_id,
                e.business_id,
                e.node,
                served(&e.warehouses)
            );
        }
        Command::Edge(EdgeCmd::Serve {
            business,
            edge,
            warehouses,
        }) => {
            let id = depot_protocol::sync::EdgeId::parse(&edge)?;
            let ws = warehouses.into_iter().map(WarehouseId).collect();
            let e = wms
                .set_edge_warehouses(BusinessId(business), id, ws)
                .await?;
            println!(
                "edge {} of business {} serves {}",
                e.edge_id,
                e.business_id,
                served(&e.warehouses)
            );
        }
        Command::Release(ReleaseCmd::Publish {
            product,
            version,
            date,
            locale,
            title,
            notes,
        }) => {
            use depot_protocol::release::{Note, ReleaseCreate};
            let body = read_notes(notes)?;
            let new = ReleaseCreate {
                product,
                version,
                date,
                default_locale: Some(locale.clone()),
                notes: std::collections::BTreeMap::from([(locale, Note { title, body })]),
            }
            .parse(depot_protocol::now().date_naive())
            .map_err(violations)?;
            let r = wms.publish_release(new, None).await?;
            println!(
                "published {} {} ({})",
                r.product.as_str(),
                r.version,
                r.date
            );
        }
        Command::Release(ReleaseCmd::Translate {
            product,
            version,
            locale,
            title,
            notes,
        }) => {
            use depot_protocol::release::{Note, Product, check_notes};
            let body = read_notes(notes)?;
            let product = Product::parse(&product)
                .ok_or_else(|| anyhow::anyhow!("product: must be one of wms, app, signage"))?;
            let mut c = depot_protocol::validate::Check::new();
            let notes = check_notes(
                &mut c,
                std::collections::BTreeMap::from([(locale, Note { title, body })]),
            );
            let notes = c.finish(notes).map_err(violations)?;
            let r = wms.translate_release(product, version, notes).await?;
            let locales: Vec<&str> = r.notes.keys().map(String::as_str).collect();
            println!(
                "{} {} now has notes in {}",
                r.product.as_str(),
                r.version,
                locales.join(", ")
            );
        }
        Command::Release(ReleaseCmd::List) => {
            for r in wms.releases(1000).await? {
                let title = r
                    .note_for(&r.default_locale)
                    .map(|(_, n)| n.title.as_str())
                    .unwrap_or_default();
                let locales: Vec<&str> = r.notes.keys().map(String::as_str).collect();
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    r.product.as_str(),
                    r.version,
                    r.date,
                    locales.join(","),
                    title
                );
            }
        }
        Command::Edge(EdgeCmd::List { business }) => {
            for e in wms.edges(BusinessId(business)).await? {
                let seen = e
                    .last_seen
                    .map(|t| depot_protocol::format_ts(&t))
                    .unwrap_or_else(|| "never".into());
                let backlog = e
                    .backlog
                    .map_or_else(|| "backlog unknown".to_owned(), |n| format!("backlog {n}"));
                let refused = match &e.last_refused {
                    Some(r) => format!(
                        "{} refused, last: {} at {}: {}",
                        e.refused,
                        r.kind,
                        depot_protocol::format_ts(&r.at),
                        r.reason
                    ),
                    None => "none refused".to_owned(),
                };
                println!(
                    "{}\tnode {}\t{}\tapplied through {}\t{backlog}\tlast seen {seen}\tserves {}\t{refused}\t{}",
                    e.edge_id,
                    e.node,
                    if e.online { "online" } else { "offline" },
                    e.up_cursor,
                    served(&e.warehouses),
                    e.version.unwrap_or_default()
                );
            }
        }
        Command::Key(KeyCmd::List { business }) => {
            for k in wms.keys(BusinessId(business)).await? {
                let state = if k.revoked_at.is_some() {
                    "revoked"
                } else {
                    "live"
                };
                println!(
                    "{}\t{}…\t{}\t{}",
                    k.id,
                    k.prefix,
                    state,
                    k.label.unwrap_or_default()
                );
            }
        }
    }
    Ok(())
}

/// The warehouses an edge serves, for a person.
fn served(warehouses: &[WarehouseId]) -> String {
    match warehouses {
        [] => "every warehouse of its business".to_owned(),
        [one] => format!("warehouse {one}"),
        many => {
            let ids: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("warehouses {}", ids.join(", "))
        }
    }
}
