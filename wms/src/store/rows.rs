//! Statements over many rows at once, their text built for the number of
//! rows: a list of keys to read (`IN (…)`), rows to insert (`VALUES (…),
//! (…)`). Each text is a statement the connection prepares and keeps, so
//! the numbers of rows are taken from a few sizes only: a list is padded
//! up to a power of two (repeating its last key), and rows to insert go in
//! blocks of the sizes in [`BLOCKS`].
//!
//! On PostgreSQL a statement costs the server about as much to start as a
//! small one costs to run: a burst of replicated movements read and
//! written a row a statement spent most of the server's time starting
//! statements.

use std::ops::Range;

/// The sizes rows are inserted in, largest first: 127 rows are 3 blocks
/// of 32 and one each of 16, 8, 4, 2 and 1, eight statements; fewer than
/// 32 rows at most five.
pub const BLOCKS: [usize; 6] = [32, 16, 8, 4, 2, 1];

/// `n` rows cut into blocks of the sizes in [`BLOCKS`], in order.
pub fn blocks(n: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for size in BLOCKS {
        while n - start >= size {
            out.push(start..start + size);
            start += size;
        }
    }
    out
}

/// `rows` groups of `columns` placeholders, numbered from `?{first}`:
/// `(?1, ?2), (?3, ?4)`.
pub fn values(first: usize, rows: usize, columns: usize) -> String {
    let mut out = String::with_capacity(rows * columns * 5);
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        out.push('(');
        for c in 0..columns {
            if c > 0 {
                out.push_str(", ");
            }
            out.push('?');
            out.push_str(&(first + r * columns + c).to_string());
        }
        out.push(')');
    }
    out
}

/// The statements that insert `rows` in blocks ([`blocks`]), each with
/// its values: `into` names the table and its `N` columns (`t (a, b)`),
/// `tail` follows the rows (`ON CONFLICT …`, `RETURNING …`), `values_of`
/// gives a row's.
pub fn insert_blocks<T, const N: usize>(
    into: &str,
    tail: &str,
    rows: &[T],
    values_of: impl Fn(&T) -> [depot_sql::Value; N],
) -> Vec<(String, Vec<depot_sql::Value>)> {
    blocks(rows.len())
        .into_iter()
        .map(|block| {
            let sql = format!(
                "INSERT INTO {into} VALUES {}{tail}",
                values(1, block.len(), N)
            );
            let args = rows[block].iter().flat_map(&values_of).collect();
            (sql, args)
        })
        .collect()
}

/// Inserts `rows` in blocks ([`insert_blocks`], no tail), each statement
/// sent without waiting for its answer (`Db::execute_later`).
pub fn insert_later<T, const N: usize>(
    conn: &depot_sql::Db,
    into: &str,
    rows: &[T],
    values_of: impl Fn(&T) -> [depot_sql::Value; N],
) -> depot_sql::Result<()> {
    for (sql, args) in insert_blocks(into, "", rows, values_of) {
        conn.execute_later(&sql, &depot_sql::params_from_iter(&args))?;
    }
    Ok(())
}

/// The keys of an `IN (…)` list, padded to the next power of two by
/// repeating the last (a key listed twice matches nothing more), with
/// their placeholders numbered from `?{first}`. No keys, no list: the
/// caller reads nothing.
pub fn in_list<T: Clone>(first: usize, keys: &[T]) -> Option<(String, Vec<T>)> {
    let last = keys.last()?;
    let n = keys.len().next_power_of_two();
    let mut padded = keys.to_vec();
    padded.resize(n, last.clone());
    let list = (first..first + n)
        .map(|p| format!("?{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some((list, padded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placeholders_are_numbered_in_rows() {
        assert_eq!(values(1, 2, 2), "(?1, ?2), (?3, ?4)");
        assert_eq!(values(3, 1, 3), "(?3, ?4, ?5)");
        assert_eq!(
            in_list(2, &[7, 8, 9]).expect("keys"),
            ("?2, ?3, ?4, ?5".into(), vec![7, 8, 9, 9])
        );
        assert_eq!(in_list::<i64>(1, &[]), None);
    }

    proptest! {
        /// Every row is in one block, in order, and a block has one of
        /// the few sizes.
        #[test]
        fn blocks_cover_every_row_once(n in 0usize..600) {
            let cut = blocks(n);
            let mut next = 0;
            for b in &cut {
                prop_assert_eq!(b.start, next);
                prop_assert!(BLOCKS.contains(&b.len()));
                next = b.end;
            }
            prop_assert_eq!(next, n);
            prop_assert!(cut.len() <= n / 32 + 5);
        }

        /// A padded list holds the keys, in order, and only them.
        #[test]
        fn a_padded_list_holds_its_keys(keys in proptest::collection::vec(0i64..50, 1..200)) {
            let (list, padded) = in_list(1, &keys).expect("keys");
            prop_assert!(padded.len().is_power_of_two());
            prop_assert_eq!(&padded[..keys.len()], &keys[..]);
            prop_assert!(padded[keys.len()..].iter().all(|k| Some(k) == keys.last()));
            prop_assert_eq!(list.matches('?').count(), padded.len());
        }
    }
}
