//! Which table a statement writes, read from its text: how a connection
//! to PostgreSQL, which has no update hook, tells the engine what a
//! commit changed (SQLite's hook says it row by row).

/// The table an `INSERT`, `UPDATE` or `DELETE` writes (after any `WITH`
/// clause), lower-cased; `None` for a statement that writes none.
pub fn table(sql: &str) -> Option<String> {
    let words = words(sql);
    // A WITH clause's bodies are in parentheses: the statement proper is
    // the first of the three verbs at depth 0.
    let verb = words.iter().position(|(w, depth)| {
        *depth == 0 && matches!(w.as_str(), "insert" | "update" | "delete")
    })?;
    let rest = &words[verb + 1..];
    let name = match words[verb].0.as_str() {
        // INSERT [OR …] INTO t
        "insert" => rest.iter().skip_while(|(w, _)| w != "into").nth(1),
        // UPDATE [OR …] t
        "update" => rest
            .iter()
            .find(|(w, _)| !matches!(w.as_str(), "or" | "ignore" | "replace" | "only")),
        // DELETE FROM t
        _ => rest.iter().skip_while(|(w, _)| w != "from").nth(1),
    }?;
    let name = name.0.trim_matches('"');
    (!name.is_empty()).then(|| name.to_owned())
}

/// The statement's words (names, keywords) with the parenthesis depth
/// each is at, lower-cased; literals and comments left out.
fn words(sql: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut depth = 0_usize;
    let mut chars = sql.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<(String, usize)>, depth: usize| {
        if !word.is_empty() {
            out.push((std::mem::take(word).to_lowercase(), depth));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                flush(&mut word, &mut out, depth);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                flush(&mut word, &mut out, depth);
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                flush(&mut word, &mut out, depth);
                depth += 1;
            }
            ')' => {
                flush(&mut word, &mut out, depth);
                depth = depth.saturating_sub(1);
            }
            c if c.is_alphanumeric() || c == '_' || c == '"' || c == '.' => word.push(c),
            _ => flush(&mut word, &mut out, depth),
        }
    }
    flush(&mut word, &mut out, depth);
    out
}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn the_written_table_is_named() {
        let cases = [
            ("INSERT INTO events (id) VALUES (?1)", Some("events")),
            (
                "insert or ignore into \"Print_Jobs\" (id) values (1)",
                Some("print_jobs"),
            ),
            (
                "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1",
                Some("api_keys"),
            ),
            ("  DELETE FROM printers WHERE id = ?1", Some("printers")),
            (
                "WITH old AS (SELECT id FROM events WHERE x = 'INSERT INTO y') \
                 UPDATE events SET out_seq = NULL WHERE id IN (SELECT id FROM old)",
                Some("events"),
            ),
            ("SELECT 1 FROM orders -- UPDATE x", None),
            ("SELECT pg_advisory_xact_lock(?1)", None),
        ];
        for (sql, want) in cases {
            assert_eq!(table(sql).as_deref(), want, "{sql}");
        }
    }
}
