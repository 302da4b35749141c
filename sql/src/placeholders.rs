//! The store writes parameters as SQLite numbers them (`?1`, `?2`, or a
//! bare `?` for the next one); PostgreSQL numbers them `$1`, `$2`. One
//! pass rewrites the first into the second, leaving string literals,
//! quoted names and comments alone.

use std::fmt;

/// A statement PostgreSQL's numbering cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unportable(pub String);

impl fmt::Display for Unportable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `sql` with `?N` and `?` as `$N`; the number of parameters it names.
pub fn to_postgres(sql: &str) -> Result<(String, usize), Unportable> {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut highest = 0_usize;
    let mut i = 0;
    // Copies `bytes[from..to]` as is: every cut is at an ASCII byte, so
    // the slices stay on character boundaries.
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => {
                i = skip_quoted(bytes, i, quote);
            }
            b'[' => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b']')
                    .map_or(bytes.len(), |p| i + p + 1);
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
            }
            b'?' => {
                out.push_str(&sql[copied..i]);
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                let n = if end == start {
                    highest + 1
                } else {
                    sql[start..end]
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=65_535).contains(n))
                        .ok_or_else(|| Unportable(format!("parameter ?{}", &sql[start..end])))?
                };
                highest = highest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
                i = end;
                copied = end;
            }
            b':' | b'@' | b'$' => {
                // `::` is PostgreSQL's cast; `$1` may already be written
                // the PostgreSQL way. A named parameter is not portable.
                let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                if bytes[i] == b':' && next == b':' {
                    i += 2;
                } else if (next.is_ascii_alphabetic() || next == b'_')
                    && !(bytes[i] == b':' && i > 0 && bytes[i - 1] == b':')
                {
                    return Err(Unportable(format!(
                        "named parameter at byte {i}: write ?N, which both databases read"
                    )));
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    Ok((out, highest))
}

/// The index just past the literal or name opened by `quote` at `at`
/// (a doubled quote inside it is the quote itself).
fn skip_quoted(bytes: &[u8], at: usize, quote: u8) -> usize {
    let mut i = at + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pg(sql: &str) -> String {
        to_postgres(sql).expect("portable").0
    }

    #[test]
    fn numbered_and_bare_parameters_become_dollars() {
        assert_eq!(
            pg("SELECT a FROM t WHERE b = ?1 AND c = ?2 OR d = ?1"),
            "SELECT a FROM t WHERE b = $1 AND c = $2 OR d = $1"
        );
        assert_eq!(pg("VALUES (?, ?, ?)"), "VALUES ($1, $2, $3)");
        // As SQLite: a bare ? is one past the largest number so far.
        assert_eq!(pg("VALUES (?3, ?)"), "VALUES ($3, $4)");
        assert_eq!(to_postgres("x = ?12").map(|r| r.1), Ok(12));
    }

    #[test]
    fn literals_names_and_comments_are_left_alone() {
        assert_eq!(
            pg("SELECT '?1', \"a?\", 'it''s ?' -- what ?\n, ?1 /* ?2 */ FROM t"),
            "SELECT '?1', \"a?\", 'it''s ?' -- what ?\n, $1 /* ?2 */ FROM t"
        );
        assert_eq!(pg("SELECT x::text, ?1"), "SELECT x::text, $1");
        assert_eq!(pg("SELECT 'Ωμέγα', ?1"), "SELECT 'Ωμέγα', $1");
    }

    #[test]
    fn named_parameters_are_refused() {
        assert!(to_postgres("SELECT :name").is_err());
        assert!(to_postgres("SELECT @name").is_err());
        assert!(to_postgres("SELECT ?0").is_err());
    }

    proptest! {
        /// Whatever the text, the rewrite never panics, and text without
        /// a `?` comes back unchanged.
        #[test]
        fn any_text_is_rewritten_or_refused(sql in "[ -~Ωé\\n]{0,80}") {
            if let Ok((out, _)) = to_postgres(&sql) {
                if !sql.contains('?') {
                    prop_assert_eq!(out, sql);
                }
            }
        }

        /// Every numbered parameter outside a literal is renumbered in
        /// place: the count of `$` grows by the count of `?`.
        #[test]
        fn every_parameter_is_rewritten(ns in proptest::collection::vec(1_usize..40, 0..10)) {
            let sql: Vec<String> = ns.iter().map(|n| format!("c{n} = ?{n}")).collect();
            let sql = sql.join(" AND ");
            let (out, highest) = to_postgres(&sql).expect("portable");
            prop_assert_eq!(out.matches('$').count(), ns.len());
            prop_assert_eq!(highest, ns.iter().copied().max().unwrap_or(0));
            prop_assert!(!out.contains('?'));
        }
    }
}
