//! Lists: a filtered query ([`ListQuery`]) read a page at a time in a
//! stable order ([`Order`] of [`Key`]s), answered with the page, the
//! DataTables counts and the cursor to the next page; on a read
//! connection ([`Listing::run`]), or on PostgreSQL by async calls on the
//! caller's runtime ([`Listing::run_shared`]).

use super::maybe;
use crate::error::{Result, WmsError};
use depot_sql::{Db, Value, params_from_iter};

/// How long a list's count of more than [`EXACT_COUNT`] matching rows is
/// reused before it is counted again: the bound on its staleness.
pub const COUNTS_FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// Matching rows a list counts exactly on every page; past this, a count
/// is remembered for [`COUNTS_FRESH_FOR`] (see docs/api-contract.md, "Paging").
pub const EXACT_COUNT: i64 = 1000;

/// One expression of a list's order, with the type of its values: what a
/// cursor holds. Never NULL (a NULL compares as unknown and would end
/// the list early): nullable columns are ordered through `COALESCE`.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Int(&'static str),
    Text(&'static str),
}

impl Key {
    fn expr(self) -> &'static str {
        match self {
            Key::Int(e) | Key::Text(e) => e,
        }
    }
}

/// A list's order: keys that together tell every row apart (the last is
/// the row's id), all ascending or all descending.
#[derive(Debug, Clone, Copy)]
pub struct Order {
    pub keys: &'static [Key],
    pub desc: bool,
}

impl Order {
    pub const fn asc(keys: &'static [Key]) -> Self {
        Self { keys, desc: false }
    }

    pub const fn desc(keys: &'static [Key]) -> Self {
        Self { keys, desc: true }
    }

    fn order_by(&self) -> String {
        let dir = if self.desc { " DESC" } else { "" };
        self.keys
            .iter()
            .map(|k| format!("{}{dir}", k.expr()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `(k1, k2) < (?, ?)`: the rows after a cursor's, in this order.
    fn after(&self) -> String {
        let keys: Vec<_> = self.keys.iter().map(|k| k.expr()).collect();
        let marks = vec!["?"; keys.len()].join(", ");
        let op = if self.desc { "<" } else { ">" };
        format!("({}) {op} ({marks})", keys.join(", "))
    }

    /// `k1 <= ?`: the bound on the first key that the rows after a
    /// cursor's keep, on its own (see [`ListQuery::after`]).
    fn first_bound(&self) -> String {
        let op = if self.desc { "<=" } else { ">=" };
        format!(" AND {} {op} ?", self.keys[0].expr())
    }

    /// The cursor after a row whose keys are `values`: the list's name and
    /// the values, as base64url JSON. Opaque to callers; not a secret (it
    /// holds what the row shows).
    fn cursor(&self, list: &str, values: &[Value]) -> String {
        use base64::Engine;
        let keys: Vec<serde_json::Value> = values
            .iter()
            .map(|v| match v {
                Value::Integer(i) => (*i).into(),
                Value::Text(t) => t.clone().into(),
                _ => serde_json::Value::Null,
            })
            .collect();
        let json = serde_json::json!({"l": list, "k": keys}).to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// The key values a cursor of `list` holds, each of its key's type;
    /// a 422 naming `cursor` for anything else (another list's cursor, a
    /// made-up one).
    fn parse_cursor(&self, list: &str, cursor: &str) -> Result<Vec<Value>> {
        use base64::Engine;
        let refuse = || {
            WmsError::invalid(vec![depot_protocol::FieldError::new(
                "cursor",
                "is not a cursor this list gave: pass back the `cursor` of the last page's answer",
            )])
        };
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor.trim())
            .map_err(|_| refuse())?;
        let v: serde_json::Value = serde_json::from_slice(&json).map_err(|_| refuse())?;
        let keys = v["k"].as_array().ok_or_else(refuse)?;
        if v["l"] != list || keys.len() != self.keys.len() {
            return Err(refuse());
        }
        self.keys
            .iter()
            .zip(keys)
            .map(|(key, v)| match (key, v) {
                (Key::Int(_), serde_json::Value::Number(n)) => {
                    n.as_i64().map(Value::Integer).ok_or_else(refuse)
                }
                (Key::Text(_), serde_json::Value::String(s)) => Ok(Value::Text(s.clone())),
                _ => Err(refuse()),
            })
            .collect()
    }
}

/// The statement of a list's total: the business's rows of a table, as
/// `row_counts` keeps them.
const TOTAL: &str = "SELECT n FROM row_counts WHERE business_id = ?1 AND tbl = ?2";

/// A filtered, paged list: `FROM … WHERE business_id = ?` grown one filter
/// at a time, answered with the page, the DataTables counts and the cursor
/// to the next page.
#[derive(Debug, Clone)]
pub struct ListQuery {
    from: String,
    /// Where the filters start in `from`, after the business's condition
    /// (its one argument).
    filters_at: usize,
    pub(super) args: Vec<Value>,
    business: depot_protocol::BusinessId,
    filtered: bool,
}

/// A list as a read runs it: its query, the table it is (its total's row
/// in `row_counts`, and the name its cursors carry), and the columns and
/// order of its page.
#[derive(Debug, Clone)]
pub struct Listing {
    pub query: ListQuery,
    pub table: &'static str,
    pub select: &'static str,
    pub order: Order,
}

/// A list's statements once its page is known.
struct Paged {
    /// The total's arguments: the business and the table.
    total: [Value; 2],
    /// How the rows the filters match are counted; `None` when there are
    /// no filters, and the total is the count.
    counting: Option<Counting>,
    page: String,
    args: Vec<Value>,
}

/// The statements that count the rows a list's filters match.
struct Counting {
    exact: String,
    /// Counts at most one row past [`EXACT_COUNT`].
    bounded: String,
    args: Vec<Value>,
}

impl Counting {
    /// The rows the filters match: exactly up to [`EXACT_COUNT`], and past
    /// it as counted within [`COUNTS_FRESH_FOR`] on this database's read
    /// pool (`memo`). Paging through a large result then counts it once,
    /// not once a page.
    fn count(&self, conn: &Db) -> Result<i64> {
        let Some(memo) = conn.counts() else {
            return Ok(conn.query_value(&self.exact, &params_from_iter(&self.args))?);
        };
        if let Some(n) = memo.get(&self.exact, &self.args) {
            return Ok(n);
        }
        // Counting at most one past the threshold costs little; only a
        // large result is counted in full, and remembered.
        let n: i64 = conn.query_value(&self.bounded, &params_from_iter(&self.args))?;
        if n <= EXACT_COUNT {
            return Ok(n);
        }
        let n: i64 = conn.query_value(&self.exact, &params_from_iter(&self.args))?;
        memo.put(&self.exact, &self.args, n);
        Ok(n)
    }
}

/// A page's rows as they are read, and the keys of the last row of a full
/// page (the next page's cursor).
struct PageRows<T, F> {
    rows: Vec<T>,
    last: Vec<Value>,
    keys: usize,
    length: u64,
    row: F,
}

impl<T, F: FnMut(&depot_sql::Row<'_>) -> depot_sql::Result<T>> PageRows<T, F> {
    fn new(order: Order, page: &depot_protocol::Page, row: F) -> Self {
        Self {
            rows: Vec::new(),
            last: Vec::new(),
            keys: order.keys.len(),
            length: page.length,
            row,
        }
    }

    /// Reads a row: the caller's columns by `row`, the order's keys (after
    /// them) only for the page's last.
    fn push(&mut self, r: &depot_sql::Row<'_>) -> depot_sql::Result<()> {
        self.rows.push((self.row)(r)?);
        if self.rows.len() as u64 == self.length {
            let first = r.column_count() - self.keys;
            self.last = (first..r.column_count())
                .map(|i| r.get::<Value>(i))
                .collect::<depot_sql::Result<_>>()?;
        }
        Ok(())
    }

    fn listed(
        self,
        table: &str,
        order: Order,
        total: i64,
        filtered: i64,
    ) -> depot_protocol::Listed<T> {
        let cursor = (!self.last.is_empty()).then(|| order.cursor(table, &self.last));
        depot_protocol::Listed {
            rows: self.rows,
            total: total as u64,
            filtered: filtered as u64,
            cursor,
        }
    }
}

impl ListQuery {
    /// `from_where` ends with the business condition, `… WHERE x.business_id = ?`.
    pub fn new(from_where: &str, business: depot_protocol::BusinessId) -> Self {
        let from = format!(" {from_where}");
        Self {
            filters_at: from.len(),
            from,
            args: vec![business.0.into()],
            business,
            filtered: false,
        }
    }

    /// Adds ` AND {clause}`, whose `?`s take `args` in order.
    pub fn and<const N: usize>(&mut self, clause: &str, args: [Value; N]) {
        self.filtered = true;
        self.from.push_str(" AND ");
        self.from.push_str(clause);
        self.args.extend(args);
    }

    /// This query as a list of `table`, its page `select`ed in `order`.
    pub fn listing(self, table: &'static str, select: &'static str, order: Order) -> Listing {
        Listing {
            query: self,
            table,
            select,
            order,
        }
    }

    /// Narrows the list to the rows after a cursor's key `values`.
    /// SQLite does not walk an index from a row value (`(k1, k2) < (?,
    /// ?)`): it starts from the first bound on `k1` the statement names,
    /// and with a filter's own range on `k1` (a date range on the order
    /// list) that is the filter's, so a page deep in the list read every
    /// entry from the filter's bound to the cursor, as an offset does.
    /// The cursor's bound on `k1` alone, named before every filter, is
    /// the one it starts from.
    pub(super) fn after(&mut self, order: Order, values: Vec<Value>) {
        if let Some(first) = values.first() {
            self.from.insert_str(self.filters_at, &order.first_bound());
            self.args.insert(1, first.clone());
        }
        self.from.push_str(" AND ");
        self.from.push_str(&order.after());
        self.args.extend(values);
    }

    /// The page's statement: `select`, then the keys of `order` (they ride
    /// after the row's own columns, where its reader does not look), its
    /// limit and offset the last two arguments.
    pub(super) fn page_sql(&self, select: &str, order: Order) -> String {
        let keys: Vec<_> = order.keys.iter().map(|k| k.expr()).collect();
        format!(
            "SELECT {select}, {}{} ORDER BY {} LIMIT ? OFFSET ?",
            keys.join(", "),
            self.from,
            order.order_by()
        )
    }

    /// The statements of `page`: a cursor of another list, or none this
    /// list gave, is refused before any is run.
    fn paged(
        mut self,
        table: &str,
        select: &str,
        order: Order,
        page: &depot_protocol::Page,
    ) -> Result<Paged> {
        let after = page
            .cursor
            .as_deref()
            .map(|c| order.parse_cursor(table, c))
            .transpose()?;
        // Counted without the cursor's narrowing: the rows of the whole list.
        let counting = self.filtered.then(|| Counting {
            exact: format!("SELECT COUNT(*){}", self.from),
            bounded: format!(
                "SELECT COUNT(*) FROM (SELECT 1{} LIMIT {}) AS matching",
                self.from,
                EXACT_COUNT + 1
            ),
            args: self.args.clone(),
        });
        let start = match after {
            Some(values) => {
                self.after(order, values);
                0
            }
            None => page.start,
        };
        self.args.push((page.length as i64).into());
        self.args.push((start as i64).into());
        Ok(Paged {
            total: [self.business.0.into(), table.to_owned().into()],
            counting,
            page: self.page_sql(select, order),
            args: self.args,
        })
    }

    /// Reads the page on `conn`, with the business's rows of `table`
    /// (from `row_counts`), the rows the filters match, and the cursor
    /// after the page's last row when the page is full. `table` also names
    /// the list in its cursors.
    pub fn run<T>(
        self,
        conn: &Db,
        table: &str,
        select: &str,
        order: Order,
        page: depot_protocol::Page,
        row: impl FnMut(&depot_sql::Row<'_>) -> depot_sql::Result<T>,
    ) -> Result<depot_protocol::Listed<T>> {
        let paged = self.paged(table, select, order, &page)?;
        let total: i64 =
            maybe(conn.query_row(TOTAL, &params_from_iter(&paged.total), |r| r.get(0)))?
                .unwrap_or(0);
        let filtered = match &paged.counting {
            Some(counting) => counting.count(conn)?,
            None => total,
        };
        let mut rows = PageRows::new(order, &page, row);
        conn.query_each(&paged.page, &params_from_iter(&paged.args), |r| {
            rows.push(r)
        })?;
        Ok(rows.listed(table, order, total, filtered))
    }
}

impl Listing {
    /// [`ListQuery::run`] of this list.
    pub fn run<T>(
        self,
        conn: &Db,
        page: depot_protocol::Page,
        row: impl FnMut(&depot_sql::Row<'_>) -> depot_sql::Result<T>,
    ) -> Result<depot_protocol::Listed<T>> {
        self.query
            .run(conn, self.table, self.select, self.order, page, row)
    }

    /// [`ListQuery::run`] by calls on the caller's runtime over connections
    /// many tasks share (PostgreSQL): the total, the count (unless `memo`
    /// remembers it) and the page are sent at once, not one after the
    /// other. A count past [`EXACT_COUNT`] is then counted in full and
    /// remembered in `memo`, one more round trip.
    #[cfg(feature = "postgres")]
    pub async fn run_shared<T>(
        self,
        reads: &depot_sql::SharedReads,
        memo: &depot_sql::CountMemo,
        page: depot_protocol::Page,
        row: impl FnMut(&depot_sql::Row<'_>) -> depot_sql::Result<T>,
    ) -> Result<depot_protocol::Listed<T>> {
        let Listing {
            query,
            table,
            select,
            order,
        } = self;
        let paged = query.paged(table, select, order, &page)?;
        let remembered = paged
            .counting
            .as_ref()
            .and_then(|c| memo.get(&c.exact, &c.args));
        let bounded = async {
            match (&paged.counting, remembered) {
                (Some(c), None) => reads.query_opt(&c.bounded, &c.args, |r| r.get(0)).await,
                _ => Ok(None),
            }
        };
        let mut rows = PageRows::new(order, &page, row);
        let (total, bounded, ()) = tokio::try_join!(
            reads.query_opt(TOTAL, &paged.total, |r| r.get::<i64>(0)),
            bounded,
            reads.query_each(&paged.page, &paged.args, |r| rows.push(r)),
        )?;
        let total = total.unwrap_or(0);
        let filtered = match (&paged.counting, remembered, bounded) {
            (None, ..) => total,
            (Some(_), Some(n), _) => n,
            (Some(_), None, n) if n.unwrap_or(0) <= EXACT_COUNT => n.unwrap_or(0),
            (Some(c), None, _) => {
                let n = reads
                    .query_opt(&c.exact, &c.args, |r| r.get::<i64>(0))
                    .await?
                    .unwrap_or(0);
                memo.put(&c.exact, &c.args, n);
                n
            }
        };
        Ok(rows.listed(table, order, total, filtered))
    }
}
