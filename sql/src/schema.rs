//! What a database's schema holds, read from the database itself, in one
//! form for both: tables and their columns (by type class, nullability and
//! primary key), indexes (by the columns or expressions they order by),
//! unique keys and triggers. Two schemas written apart (SQLite's
//! migrations and PostgreSQL's baseline) are compared through it.

use crate::error::Result;
use crate::{Db, Dialect, params};
use std::collections::{BTreeMap, BTreeSet};

/// A column's type, as SQLite's affinity rules class it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Integer,
    Real,
    Text,
    Blob,
    /// SQLite's NUMERIC affinity, PostgreSQL's `numeric`; or a type
    /// neither rule knows, named.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Column {
    pub class: Class,
    pub not_null: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    pub columns: BTreeMap<String, Column>,
    /// The primary key's columns, in key order.
    pub primary_key: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Index {
    pub table: String,
    /// Columns by name; an expression as PostgreSQL writes it
    /// (`lower(buyer_name)`, SQLite's `buyer_name COLLATE NOCASE`).
    pub keys: Vec<String>,
    pub unique: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    pub tables: BTreeMap<String, Table>,
    /// Indexes made by `CREATE INDEX`, by name.
    pub indexes: BTreeMap<String, Index>,
    /// `UNIQUE` constraints: table and columns.
    pub unique: BTreeSet<(String, Vec<String>)>,
    pub triggers: BTreeSet<String>,
}

/// Tables that belong to the machinery, not the store: SQLite's own (its
/// planner's statistics among them) and PostgreSQL's migration log.
const MACHINERY: &[&str] = &[
    "sqlite_sequence",
    "sqlite_stat1",
    "sqlite_stat4",
    "depot_schema",
];

/// Reads `db`'s schema.
pub fn describe(db: &Db) -> Result<Schema> {
    match db.dialect() {
        Dialect::Sqlite => describe_sqlite(db),
        Dialect::Postgres => describe_postgres(db),
    }
}

fn sqlite_class(declared: &str) -> Class {
    // SQLite's affinity rules, in their order (§3.1 of its datatype page).
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        Class::Integer
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        Class::Text
    } else if t.contains("BLOB") || t.is_empty() {
        Class::Blob
    } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
        Class::Real
    } else {
        Class::Other("numeric".into())
    }
}

fn describe_sqlite(db: &Db) -> Result<Schema> {
    let mut schema = Schema::default();
    let tables = db.query_map(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        params![],
        |r| r.get::<String>(0),
    )?;
    for name in tables
        .into_iter()
        .filter(|t| !MACHINERY.contains(&t.as_str()))
    {
        let mut table = Table::default();
        let mut key = Vec::new();
        db.query_each(
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)",
            params![name],
            |r| {
                let column: String = r.get(0)?;
                let pk: i64 = r.get(3)?;
                if pk > 0 {
                    key.push((pk, column.clone()));
                }
                table.columns.insert(
                    column,
                    Column {
                        class: sqlite_class(&r.get::<String>(1)?),
                        // A primary key is never null in PostgreSQL; SQLite
                        // enforces it for INTEGER PRIMARY KEY and WITHOUT
                        // ROWID tables, the only kinds the store has.
                        not_null: r.get::<i64>(2)? != 0 || pk > 0,
                    },
                );
                Ok(())
            },
        )?;
        key.sort();
        table.primary_key = key.into_iter().map(|(_, c)| c).collect();
        let indexes = db.query_map(
            "SELECT name, \"unique\", origin FROM pragma_index_list(?1)",
            params![name],
            |r| Ok((r.get::<String>(0)?, r.get::<bool>(1)?, r.get::<String>(2)?)),
        )?;
        for (index, unique, origin) in indexes {
            let keys = db.query_map(
                "SELECT name, coll FROM pragma_index_xinfo(?1) WHERE key = 1 ORDER BY seqno",
                params![index],
                |r| {
                    let column: Option<String> = r.get(0)?;
                    let coll: String = r.get(1)?;
                    let column = column.unwrap_or_else(|| "<expression>".into());
                    Ok(if coll.eq_ignore_ascii_case("NOCASE") {
                        format!("lower({column})")
                    } else {
                        column
                    })
                },
            )?;
            match origin.as_str() {
                "c" => {
                    schema.indexes.insert(
                        index,
                        Index {
                            table: name.clone(),
                            keys,
                            unique,
                        },
                    );
                }
                "u" => {
                    schema.unique.insert((name.clone(), keys));
                }
                _ => {}
            }
        }
        schema.tables.insert(name, table);
    }
    schema.triggers = db
        .query_map(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'",
            params![],
            |r| r.get::<String>(0),
        )?
        .into_iter()
        .collect();
    Ok(schema)
}

fn postgres_class(data_type: &str) -> Class {
    match data_type {
        "bigint" | "integer" | "smallint" => Class::Integer,
        "text" | "character varying" | "character" => Class::Text,
        "bytea" => Class::Blob,
        "double precision" | "real" => Class::Real,
        "numeric" => Class::Other("numeric".into()),
        other => Class::Other(other.into()),
    }
}

fn describe_postgres(db: &Db) -> Result<Schema> {
    let mut schema = Schema::default();
    db.query_each(
        "SELECT c.table_name::text, c.column_name::text, c.data_type::text, c.is_nullable::text
           FROM information_schema.columns c
           JOIN information_schema.tables t
             ON t.table_schema = c.table_schema AND t.table_name = c.table_name
          WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'",
        params![],
        |r| {
            let table: String = r.get(0)?;
            if MACHINERY.contains(&table.as_str()) {
                return Ok(());
            }
            schema.tables.entry(table).or_default().columns.insert(
                r.get(1)?,
                Column {
                    class: postgres_class(&r.get::<String>(2)?),
                    not_null: r.get::<String>(3)? == "NO",
                },
            );
            Ok(())
        },
    )?;
    // Every index with its keys: a column's name, or the expression as
    // PostgreSQL prints it.
    db.query_each(
        "SELECT i.relname::text, t.relname::text, x.indisunique, x.indisprimary,
                EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid
                                                       AND k.contype = 'u'),
                ARRAY(SELECT pg_get_indexdef(x.indexrelid, n, true)
                        FROM generate_series(1, x.indnkeyatts) AS n ORDER BY n)::text
           FROM pg_index x
           JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_class t ON t.oid = x.indrelid
           JOIN pg_namespace s ON s.oid = t.relnamespace
          WHERE s.nspname = current_schema()",
        params![],
        |r| {
            let (index, table): (String, String) = (r.get(0)?, r.get(1)?);
            if MACHINERY.contains(&table.as_str()) {
                return Ok(());
            }
            // A column whose name is a keyword comes back quoted.
            let keys: Vec<String> = parse_text_array(&r.get::<String>(5)?)
                .into_iter()
                .map(
                    |k| match k.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
                        Some(name) if !name.contains('"') => name.to_owned(),
                        _ => k,
                    },
                )
                .collect();
            if r.get::<bool>(3)? {
                schema.tables.entry(table).or_default().primary_key = keys;
            } else if r.get::<bool>(4)? {
                schema.unique.insert((table, keys));
            } else {
                schema.indexes.insert(
                    index,
                    Index {
                        table,
                        keys,
                        unique: r.get(2)?,
                    },
                );
            }
            Ok(())
        },
    )?;
    schema.triggers = db
        .query_map(
            "SELECT DISTINCT trigger_name::text FROM information_schema.triggers
              WHERE trigger_schema = current_schema()",
            params![],
            |r| r.get::<String>(0),
        )?
        .into_iter()
        .collect();
    Ok(schema)
}

/// `{a,"lower(b)"}` as its elements (the array's text form: elements
/// quoted when they hold a comma, a brace, a quote or a space).
fn parse_text_array(text: &str) -> Vec<String> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' if quoted => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            ',' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if !inner.is_empty() {
        out.push(current);
    }
    out
}

/// What differs between two schemas, one line each; empty when they agree.
pub fn differences(left: &Schema, right: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = left.tables.keys().chain(right.tables.keys()).collect();
    for name in names {
        match (left.tables.get(name), right.tables.get(name)) {
            (Some(_), None) => out.push(format!("table {name}: only on the left")),
            (None, Some(_)) => out.push(format!("table {name}: only on the right")),
            (Some(l), Some(r)) => {
                let columns: BTreeSet<&String> = l.columns.keys().chain(r.columns.keys()).collect();
                for c in columns {
                    let (a, b) = (l.columns.get(c), r.columns.get(c));
                    if a != b {
                        out.push(format!("column {name}.{c}: {a:?} against {b:?}"));
                    }
                }
                if l.primary_key != r.primary_key {
                    out.push(format!(
                        "primary key of {name}: {:?} against {:?}",
                        l.primary_key, r.primary_key
                    ));
                }
            }
            (None, None) => {}
        }
    }
    let indexes: BTreeSet<&String> = left.indexes.keys().chain(right.indexes.keys()).collect();
    for i in indexes {
        let (a, b) = (left.indexes.get(i), right.indexes.get(i));
        if a != b {
            out.push(format!("index {i}: {a:?} against {b:?}"));
        }
    }
    for u in left.unique.symmetric_difference(&right.unique) {
        let side = if left.unique.contains(u) {
            "left"
        } else {
            "right"
        };
        out.push(format!("unique key {}{:?}: only on the {side}", u.0, u.1));
    }
    for t in left.triggers.symmetric_difference(&right.triggers) {
        let side = if left.triggers.contains(t) {
            "left"
        } else {
            "right"
        };
        out.push(format!("trigger {t}: only on the {side}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_text_is_split_as_postgres_quotes_it() {
        assert_eq!(parse_text_array("{a,b}"), vec!["a", "b"]);
        assert_eq!(
            parse_text_array("{business_id,\"lower(buyer_name)\",id}"),
            vec!["business_id", "lower(buyer_name)", "id"]
        );
        assert_eq!(parse_text_array("{}"), Vec::<String>::new());
    }

    #[test]
    fn a_sqlite_schema_reads_back() -> Result<()> {
        let db = Db::sqlite(rusqlite::Connection::open_in_memory()?);
        db.execute_batch(
            "CREATE TABLE a (id INTEGER PRIMARY KEY, code TEXT NOT NULL, name TEXT, UNIQUE (code));
             CREATE TABLE b (a_id INTEGER NOT NULL, n INTEGER, PRIMARY KEY (a_id, n)) WITHOUT ROWID;
             CREATE INDEX a_by_name ON a (name COLLATE NOCASE, id);
             CREATE TRIGGER a_gone AFTER DELETE ON a BEGIN DELETE FROM b WHERE a_id = OLD.id; END;",
        )?;
        let s = describe(&db)?;
        assert_eq!(s.tables["a"].primary_key, vec!["id"]);
        assert_eq!(s.tables["b"].primary_key, vec!["a_id", "n"]);
        assert!(s.tables["b"].columns["n"].not_null);
        assert!(!s.tables["a"].columns["name"].not_null);
        assert_eq!(s.indexes["a_by_name"].keys, vec!["lower(name)", "id"]);
        assert!(s.unique.contains(&("a".into(), vec!["code".into()])));
        assert!(s.triggers.contains("a_gone"));
        assert!(differences(&s, &s).is_empty());
        let mut other = s.clone();
        other.tables.remove("b");
        assert_eq!(differences(&s, &other), vec!["table b: only on the left"]);
        Ok(())
    }
}
