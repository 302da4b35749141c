//! Finds the statements a store's source holds, so that a test can prepare
//! each on PostgreSQL and new SQL stays portable: every string literal that
//! begins as a statement does (`SELECT`, `INSERT`, `UPDATE`, `DELETE`,
//! `WITH`), with `{NAME}` filled in from the file's own `const NAME: &str`
//! (column lists), or another file's when it has none of that name.
//! Literals with other holes are built at run time and counted apart; code
//! after a file's `#[cfg(test)]` is a test's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A statement found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub file: PathBuf,
    pub line: usize,
    pub sql: String,
}

/// What a directory's source holds.
#[derive(Debug, Default)]
pub struct Statements {
    pub found: Vec<Found>,
    /// Statements with holes only the running code fills (a list of ids,
    /// a filter's clauses): where they are.
    pub built_at_run_time: Vec<(PathBuf, usize)>,
}

/// The statements in every `.rs` file under `dir` (but `tests.rs`).
pub fn statements(dir: &Path) -> std::io::Result<Statements> {
    let mut out = Statements::default();
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let texts = files
        .iter()
        .map(std::fs::read_to_string)
        .collect::<std::io::Result<Vec<_>>>()?;
    // A file's own constants first, then those of the others (a fragment
    // two stores' statements share lives in one of them).
    let mut shared = HashMap::new();
    for text in &texts {
        shared.extend(constants(text, &literals(text)));
    }
    for (file, text) in files.into_iter().zip(&texts) {
        let literals = literals(text);
        let tests = test_items(text, &literals);
        let mut consts = shared.clone();
        consts.extend(constants(text, &literals));
        for lit in &literals {
            if !starts_statement(&lit.value) || tests.iter().any(|t| t.contains(&lit.start)) {
                continue;
            }
            match fill(&lit.value, &consts) {
                Some(sql) => out.found.push(Found {
                    file: file.clone(),
                    line: lit.line,
                    sql,
                }),
                None => out.built_at_run_time.push((file.clone(), lit.line)),
            }
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
    Ok(())
}

fn starts_statement(s: &str) -> bool {
    let word: String = s
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    let rest = &s.trim_start()[word.len()..];
    ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(&word.as_str())
        && rest.starts_with(|c: char| c.is_whitespace())
}

/// A string literal's value and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub value: String,
}

/// Every string literal in Rust source, escapes decoded.
pub fn literals(src: &str) -> Vec<Literal> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let line_at = |at: usize| src[..at].bytes().filter(|&c| c == b'\n').count() + 1;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = src[i..].find('\n').map_or(b.len(), |p| i + p);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            b'\'' => {
                // A char literal ('x', '\n', '\'') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i = src[i + 2..].find('\'').map_or(b.len(), |p| i + 2 + p + 1);
                } else if let Some(c) = src[i + 1..].chars().next() {
                    let after = i + 1 + c.len_utf8();
                    i = if b.get(after) == Some(&b'\'') {
                        after + 1
                    } else {
                        i + 1
                    };
                } else {
                    i += 1;
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = open + 1;
                let end = src[body..].find(&close).map_or(b.len(), |p| body + p);
                out.push(Literal {
                    start: i,
                    end: (end + close.len()).min(b.len()),
                    line: line_at(i),
                    value: src[body..end].to_owned(),
                });
                i = end + close.len();
            }
            b'"' => {
                let start = i;
                let mut value = String::new();
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                        match b.get(i) {
                            Some(b'n') => value.push('\n'),
                            Some(b't') => value.push('\t'),
                            Some(b'r') => value.push('\r'),
                            Some(b'0') => value.push('\0'),
                            Some(b'\n') => {
                                // A line continuation: the newline and the
                                // next line's indentation are dropped.
                                while i + 1 < b.len() && b[i + 1].is_ascii_whitespace() {
                                    i += 1;
                                }
                            }
                            Some(b'u') => {
                                let close = src[i..].find('}').map_or(i, |p| i + p);
                                let hex = src[i..close].trim_start_matches("u{");
                                if let Some(c) =
                                    u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
                                {
                                    value.push(c);
                                }
                                i = close;
                            }
                            Some(&c) => value.push(char::from(c)),
                            None => {}
                        }
                        i += 1;
                    } else {
                        let c = src[i..].chars().next().unwrap_or('\u{fffd}');
                        value.push(c);
                        i += c.len_utf8();
                    }
                }
                out.push(Literal {
                    start,
                    end: (i + 1).min(b.len()),
                    line: line_at(start),
                    value,
                });
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Where the file's test-only items are: each `#[cfg(test)]` and the item
/// after it, to its `;` (`mod tests;`) or the brace closing its body.
fn test_items(src: &str, literals: &[Literal]) -> Vec<std::ops::Range<usize>> {
    let in_literal = |at: usize| literals.iter().any(|l| (l.start..l.end).contains(&at));
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = src[from..].find("#[cfg(test)]") {
        let start = from + p;
        from = start + 1;
        if in_literal(start) {
            continue;
        }
        let mut depth = 0_usize;
        let mut i = start + "#[cfg(test)]".len();
        let mut end = b.len();
        while i < b.len() {
            if in_literal(i) || src[i..].starts_with("'{'") || src[i..].starts_with("'}'") {
                i += if in_literal(i) { 1 } else { 3 };
                continue;
            }
            match b[i] {
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        out.push(start..end);
        from = end;
    }
    out
}

/// `const NAME: &str = "…";` in the file: each name and its value.
fn constants(src: &str, literals: &[Literal]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for lit in literals {
        let before = src[..lit.start].trim_end();
        let Some(before) = before.strip_suffix('=') else {
            continue;
        };
        let before = before.trim_end();
        let Some(before) = before.strip_suffix("&str") else {
            continue;
        };
        let before = before.trim_end().trim_end_matches(':').trim_end();
        let name: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let is_const = before[..before.len() - name.len()]
            .trim_end()
            .ends_with("const");
        if is_const && !name.is_empty() {
            out.insert(name, lit.value.clone());
        }
    }
    out
}

/// `sql` with `{NAME}` filled from `consts` and `{{`, `}}` undone; `None`
/// when a hole is something else.
fn fill(sql: &str, consts: &HashMap<String, String>) -> Option<String> {
    if !sql.contains('{') && !sql.contains('}') {
        return Some(sql.to_owned());
    }
    let mut out = String::with_capacity(sql.len() * 2);
    let mut rest = sql;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if let Some(tail) = tail.strip_prefix('{') {
            let close = tail.find('}')?;
            out.push_str(consts.get(&tail[..close])?);
            rest = &tail[close + 1..];
        } else {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

/// A statement's text with its whitespace made one space: the same
/// statement reformatted reads the same.
pub fn normalize(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A short name for a statement that does not change when it moves:
/// FNV-1a of its normalized text, 12 hex digits.
pub fn key(sql: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in normalize(sql).bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:012x}", h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_read_as_rust_reads_them() {
        let src = r####"
            // "not this"
            const COLS: &str = "id, name";
            fn f(c: &'a str) -> char {
                let q = "SELECT {COLS} FROM t WHERE a = ?1 AND b = '\"' \
                         AND c = ?2";
                let r = r#"INSERT INTO t (a) VALUES ("x")"#;
                let s = format!("UPDATE t SET n = {} WHERE id IN ({ids})", 1);
                '"'
            }
        "####;
        let lits = literals(src);
        let values: Vec<&str> = lits.iter().map(|l| l.value.as_str()).collect();
        assert_eq!(
            values,
            vec![
                "id, name",
                "SELECT {COLS} FROM t WHERE a = ?1 AND b = '\"' AND c = ?2",
                "INSERT INTO t (a) VALUES (\"x\")",
                "UPDATE t SET n = {} WHERE id IN ({ids})",
            ]
        );
        let consts = constants(src, &lits);
        assert_eq!(consts.get("COLS").map(String::as_str), Some("id, name"));
        assert_eq!(
            fill(values[1], &consts).as_deref(),
            Some("SELECT id, name FROM t WHERE a = ?1 AND b = '\"' AND c = ?2")
        );
        assert_eq!(fill(values[3], &consts), None);
        assert!(starts_statement(values[1]) && !starts_statement(values[0]));
    }

    #[test]
    fn only_test_items_are_left_out() {
        let src = r##"
            #[cfg(test)]
            mod tests;
            const A: &str = "SELECT 1";
            #[cfg(test)]
            fn memory() { let _ = "SELECT '}' AND 2"; let _ = '{'; }
            fn f() { let _ = "SELECT 3"; }
            #[cfg(test)]
            mod more { fn g() { let _ = "SELECT 4"; } }
        "##;
        let lits = literals(src);
        let tests = test_items(src, &lits);
        let kept: Vec<&str> = lits
            .iter()
            .filter(|l| !tests.iter().any(|t| t.contains(&l.start)))
            .map(|l| l.value.as_str())
            .collect();
        assert_eq!(kept, ["SELECT 1", "SELECT 3"]);
    }

    #[test]
    fn a_fragment_is_filled_from_its_own_file_first_then_from_another() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, src: &str| {
            std::fs::write(dir.path().join(name), src).expect("written");
        };
        write(
            "a.rs",
            r#"pub const ITEM: &str = "(SELECT id FROM items)"; const COLS: &str = "a";"#,
        );
        write(
            "b.rs",
            r#"const COLS: &str = "b"; fn f() { format!("SELECT {COLS} FROM t WHERE id = {ITEM}"); format!("SELECT {NOWHERE}"); }"#,
        );
        let found = statements(dir.path()).expect("read");
        let sql: Vec<&str> = found.found.iter().map(|f| f.sql.as_str()).collect();
        assert_eq!(sql, ["SELECT b FROM t WHERE id = (SELECT id FROM items)"]);
        assert_eq!(found.built_at_run_time.len(), 1);
    }

    #[test]
    fn a_key_ignores_layout() {
        assert_eq!(key("SELECT a\n   FROM t"), key("SELECT a FROM t"));
        assert_ne!(key("SELECT a FROM t"), key("SELECT b FROM t"));
        assert_eq!(key("x").len(), 12);
    }
}
