//! The configuration reference of a Depot binary, made from its settings
//! types rather than written beside them, so that it cannot drift: the
//! keys, types, descriptions (doc comments) and entries' defaults come from
//! the types' JSON schema (schemars, which follows serde's names, tags and
//! defaults), and the defaults of the settings themselves from serializing
//! `Settings::default()`.
//!
//! Every setting must have a description: [`markdown`] fails naming the
//! ones without.

mod schema;

use schema::{Kind, Node, Schemas};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// What a binary's reference says besides its settings.
pub struct Reference<'a> {
    /// The page's title.
    pub title: &'a str,
    /// Markdown after the title: which binary, where its file usually is.
    pub intro: &'a str,
    /// The command that prints this reference.
    pub command: &'a str,
    /// The command that rewrites the committed copy.
    pub regenerate: &'a str,
}

/// Environment variables: `DEPOT_` and the key's parts in capitals joined
/// with `__`, as figment's `Env::prefixed("DEPOT_").split("__")` reads them.
const ENV_PREFIX: &str = "DEPOT_";

/// The reference as markdown: a table of the settings, then a section for
/// each list of tables (`[[devices.printers]]`) and each table of tables
/// (`[carriers.<code>]`) with their entries' keys.
pub fn markdown(schema: &Value, defaults: &Value, r: &Reference) -> Result<String, String> {
    let schemas = Schemas::new(schema);
    let root = schemas.node(schema);
    let mut doc = Doc {
        schemas: &schemas,
        missing: Vec::new(),
        sections: Vec::new(),
    };
    let mut rows = Vec::new();
    match schemas.kind(&root) {
        Kind::Struct(fields) => {
            for (name, field, _) in fields {
                doc.setting(&mut rows, name, &field, Some(defaults.get(name)));
            }
        }
        _ => return Err("the settings are not a table".into()),
    }
    if !doc.missing.is_empty() {
        return Err(format!(
            "these settings have no doc comment (add one on the field or its type): {}",
            doc.missing.join(", ")
        ));
    }

    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", r.title);
    let _ = writeln!(
        out,
        "<!-- Made by `{}` from the settings types; do not edit. After changing a setting: {} -->\n",
        r.command, r.regenerate
    );
    let _ = writeln!(out, "{}\n", r.intro.trim());
    out.push_str(SOURCES);
    out.push_str("\n## Settings\n\n");
    out.push_str("| Setting | Type | Default | Environment | Description |\n");
    out.push_str("|---|---|---|---|---|\n");
    for row in &rows {
        row.write(&mut out, true);
    }
    for section in &doc.sections {
        let _ = writeln!(out, "\n## `{}`\n", section.heading);
        let _ = writeln!(out, "{}", section.intro);
        for (sub, rows) in &section.parts {
            if let Some(sub) = sub {
                let _ = writeln!(out, "\n### {sub}");
            }
            out.push_str("\n| Key | Type | Default | Description |\n");
            out.push_str("|---|---|---|---|\n");
            for row in rows {
                row.write(&mut out, false);
            }
        }
    }
    Ok(format!("{}\n", out.trim_end()))
}

const SOURCES: &str = "\
Settings are read from, each overriding the one before: the defaults below;
the TOML file given with `--config FILE` (or `DEPOT_CONFIG=FILE`), which
must exist; environment variables. A key the binary does not know is refused,
in the file and in the environment, so a typo stops the start with the key's
name rather than being ignored.

**Environment.** A setting's variable is `DEPOT_` and its key in capitals,
the parts of a dotted key joined with `__`: `broker.url` is
`DEPOT_BROKER__URL`. Values are read as TOML values are: `true`, `42`,
`\"text\"` or bare `text`, and lists and tables inline, so a list of
strings is `DEPOT_X='[\"a\", \"b\"]'`. A list of tables (`[[…]]` below)
cannot be set entry by entry: its variable replaces the whole list, written
inline, e.g. `DEPOT_STATIONS='[{name = \"pack-1\", scanners = [\"gun\"]}]'`;
such lists are better kept in the file. Keys read from the environment are
lower-cased.
";

/// One line of a table.
struct Row {
    key: String,
    ty: String,
    default: String,
    env: String,
    description: String,
}

impl Row {
    fn write(&self, out: &mut String, with_env: bool) {
        let env = if with_env {
            format!(" {} |", self.env)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |{env} {} |",
            self.key,
            cell(&self.ty),
            cell(&self.default),
            cell(&self.description)
        );
    }
}

/// A list of tables or a table of tables, with its entries' keys (per
/// variant, for entries of several kinds).
struct Section {
    heading: String,
    intro: String,
    parts: Vec<(Option<String>, Vec<Row>)>,
}

struct Doc<'a> {
    schemas: &'a Schemas<'a>,
    missing: Vec<String>,
    sections: Vec<Section>,
}

impl<'a> Doc<'a> {
    /// A top-level setting (or one nested in top-level tables), whose
    /// default comes from the serialized defaults.
    fn setting(
        &mut self,
        rows: &mut Vec<Row>,
        key: &str,
        node: &Node<'a>,
        default: Option<Option<&Value>>,
    ) {
        let description = self.describe(key, node);
        let env = format!("`{ENV_PREFIX}{}`", key.replace('.', "__").to_uppercase());
        let default_text = match default {
            Some(Some(v)) if !v.is_null() => toml(v),
            _ => "unset".to_owned(),
        };
        match self.schemas.kind(node) {
            Kind::Struct(fields) => {
                rows.push(Row {
                    key: key.to_owned(),
                    ty: "table".into(),
                    default: "—".into(),
                    env: "—".into(),
                    description,
                });
                for (name, field, _) in fields {
                    let sub = default.map(|d| d.and_then(|d| d.get(name)));
                    self.setting(rows, &format!("{key}.{name}"), &field, sub);
                }
            }
            Kind::Map(value) => {
                let heading = format!("[{key}.<name>]");
                rows.push(Row {
                    key: key.to_owned(),
                    ty: format!("tables by name, see [`{heading}`](#{})", anchor(&heading)),
                    default: default_text,
                    env: format!(
                        "`{ENV_PREFIX}{}__<NAME>__…`",
                        key.replace('.', "__").to_uppercase()
                    ),
                    description: description.clone(),
                });
                let parts = self.entry_parts(key, &value, &format!("{key}.<name>"));
                self.sections.push(Section {
                    heading,
                    intro: format!(
                        "{description} Each `[{key}.<name>]` table has these keys; from the environment, `{ENV_PREFIX}{}__<NAME>__<KEY>`.",
                        key.replace('.', "__").to_uppercase()
                    ),
                    parts,
                });
            }
            Kind::Array(items) if self.schemas.is_table(&items) => {
                let heading = format!("[[{key}]]");
                rows.push(Row {
                    key: key.to_owned(),
                    ty: format!("list of tables, see [`{heading}`](#{})", anchor(&heading)),
                    default: default_text,
                    env: format!("{env} (the whole list)"),
                    description: description.clone(),
                });
                let parts = self.entry_parts(key, &items, key);
                self.sections.push(Section {
                    heading,
                    intro: format!(
                        "{description} Each `[[{key}]]` entry has these keys; from the environment only the whole list, as `{}`.",
                        env.trim_matches('`')
                    ),
                    parts,
                });
            }
            _ => rows.push(Row {
                key: key.to_owned(),
                ty: self.schemas.type_name(node),
                default: default_text,
                env,
                description,
            }),
        }
    }

    /// The keys of one entry of a list or map: one table, or one per
    /// variant when a tag decides the entry's kind.
    fn entry_parts(
        &mut self,
        key: &str,
        entry: &Node<'a>,
        path: &str,
    ) -> Vec<(Option<String>, Vec<Row>)> {
        match self.schemas.kind(entry) {
            Kind::Tagged { tag, variants } => {
                let mut parts = Vec::new();
                for (value, variant) in variants {
                    let mut rows = vec![Row {
                        key: tag.clone(),
                        ty: toml(&Value::String(value.clone())),
                        default: "required".into(),
                        env: String::new(),
                        description: self.describe(&format!("{path}.{tag}"), &variant),
                    }];
                    self.entry_fields(&mut rows, "", &variant, path, Some(&tag), "");
                    parts.push((Some(format!("`{tag} = \"{value}\"`")), rows));
                }
                parts
            }
            _ => {
                let mut rows = Vec::new();
                self.entry_fields(&mut rows, "", entry, path, None, "");
                if rows.is_empty() {
                    self.missing.push(format!("{key} (no keys)"));
                }
                vec![(None, rows)]
            }
        }
    }

    /// The keys of a table inside an entry, dotted after `prefix`; their
    /// defaults are the schema's (serde's `default`), or none: required.
    /// `when` says which variant of an enclosing table they belong to.
    fn entry_fields(
        &mut self,
        rows: &mut Vec<Row>,
        prefix: &str,
        table: &Node<'a>,
        path: &str,
        skip: Option<&str>,
        when: &str,
    ) {
        let Kind::Struct(fields) = self.schemas.kind(table) else {
            return;
        };
        for (name, field, required) in fields {
            if Some(name) == skip {
                continue;
            }
            let key = format!("{prefix}{name}");
            let description = format!("{when}{}", self.describe(&format!("{path}.{key}"), &field));
            let default = match field.default {
                Some(v) if !v.is_null() => toml(v),
                _ if required => "required".to_owned(),
                _ => "unset".to_owned(),
            };
            let row = |ty: String| Row {
                key: key.clone(),
                ty,
                default,
                env: String::new(),
                description,
            };
            match self.schemas.kind(&field) {
                Kind::Struct(_) => {
                    rows.push(row("table".into()));
                    self.entry_fields(rows, &format!("{key}."), &field, path, None, when);
                }
                Kind::Tagged { tag, variants } => {
                    rows.push(row(format!("table, by `{tag}`")));
                    for (value, variant) in variants {
                        let is = format!("{when}With `{key}.{tag} = \"{value}\"`: ");
                        let description = self.describe(&format!("{path}.{key}.{tag}"), &variant);
                        rows.push(Row {
                            key: format!("{key}.{tag}"),
                            ty: toml(&Value::String(value.clone())),
                            default: "required".into(),
                            env: String::new(),
                            description: format!("{is}{description}"),
                        });
                        let prefix = format!("{key}.");
                        self.entry_fields(rows, &prefix, &variant, path, Some(&tag), &is);
                    }
                }
                _ => rows.push(row(self.schemas.type_name(&field))),
            }
        }
    }

    /// The field's description, or its type's; a setting without either is
    /// noted as missing.
    fn describe(&mut self, key: &str, node: &Node<'a>) -> String {
        match node.description.as_deref().map(str::trim) {
            Some(d) if !d.is_empty() => {
                let mut d = one_paragraph(d);
                let values = self.schemas.documented_values(node);
                if !values.is_empty() {
                    d = format!("{d} {}", values.join(" "));
                }
                d
            }
            _ => {
                self.missing.push(key.to_owned());
                String::new()
            }
        }
    }
}

/// A doc comment on one line of a table: lines joined, rustdoc links
/// (`` [`X`] ``) as plain code.
fn one_paragraph(doc: &str) -> String {
    let joined = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.replace("[`", "`").replace("`]", "`")
}

/// A table cell: pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// GitHub's anchor for a heading in backticks.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A default as it is written in TOML, in backticks.
fn toml(v: &Value) -> String {
    format!("`{}`", toml_value(v))
}

fn toml_value(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) if o.is_empty() => "{}".into(),
        Value::Object(o) => format!(
            "{{ {} }}",
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Compares a committed reference with the one the types make; with
/// `DEPOT_BLESS=1` in the environment, rewrites the file instead.
pub fn check_committed(path: &Path, made: &str, regenerate: &str) -> Result<(), String> {
    if std::env::var_os("DEPOT_BLESS").is_some_and(|v| v == "1") {
        return std::fs::write(path, made).map_err(|e| format!("{}: {e}", path.display()));
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed == made {
        return Ok(());
    }
    let line = committed
        .lines()
        .zip(made.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(made.lines().count()));
    Err(format!(
        "{} is not what the settings types say (first difference at line {}): run `{regenerate}` and commit the file",
        path.display(),
        line + 1
    ))
}

#[cfg(test)]
mod tests;
