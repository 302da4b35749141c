//! CRM, cloud only: departments, contact forms and their submissions,
//! threads and messages. Buyers are the engine's (`depot_wms::buyers`).

use depot_protocol::crm::contact::{ContactForm, Department, NewDepartment, NewForm};
use depot_protocol::crm::{Direction, Message, Thread, ThreadFilter, ThreadStatus};
use depot_protocol::{BusinessId, Page, Timestamp};
use depot_sql::{Db, Row, params};
use depot_wms::Result;
use depot_wms::sql::{Key, ListQuery, Order, maybe, parse_json, parse_ts, ts};
use std::collections::BTreeMap;

fn department_row(r: &Row) -> depot_sql::Result<Department> {
    Ok(Department {
        id: r.get(0)?,
        code: r.get(1)?,
        name: r.get(2)?,
        created_at: parse_ts(&r.get::<String>(3)?)?,
    })
}

pub fn insert_department(
    conn: &Db,
    business: BusinessId,
    d: &NewDepartment,
    at: &Timestamp,
) -> Result<i64> {
    let inserted: i64 = conn.query_value(
        "INSERT INTO crm_departments (business_id, code, name, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id",
        params![business.0, d.code, d.name, ts(at)],
    )?;
    Ok(inserted)
}

pub fn department_by_code(
    conn: &Db,
    business: BusinessId,
    code: &str,
) -> Result<Option<Department>> {
    maybe(
        conn.query_row("SELECT id, code, name, created_at FROM crm_departments WHERE business_id = ?1 AND code = ?2", params![business.0, code], department_row),
    )
}

pub fn departments(
    conn: &Db,
    business: BusinessId,
    page: Page,
) -> Result<depot_protocol::Listed<Department>> {
    ListQuery::new("FROM crm_departments WHERE business_id = ?", business).run(
        conn,
        "crm_departments",
        "id, code, name, created_at",
        Order::asc(&[Key::Text("code")]),
        page,
        department_row,
    )
}

const FORM_COLS: &str = "f.id, f.name, d.code, f.fields, f.max_per_email_per_hour, f.max_per_hour, \
                         f.max_links, f.created_at, f.department_id";
const FORM_FROM: &str = "FROM contact_forms f JOIN crm_departments d ON d.id = f.department_id";

/// A form and the id of its department.
fn form_row(r: &Row) -> depot_sql::Result<(ContactForm, i64)> {
    Ok((
        ContactForm {
            id: r.get(0)?,
            name: r.get(1)?,
            department: r.get(2)?,
            fields: parse_json(&r.get::<String>(3)?)?,
            max_per_email_per_hour: r.get(4)?,
            max_per_hour: r.get(5)?,
            max_links: r.get(6)?,
            created_at: parse_ts(&r.get::<String>(7)?)?,
        },
        r.get(8)?,
    ))
}

pub fn insert_form(
    conn: &Db,
    business: BusinessId,
    department_id: i64,
    f: &NewForm,
    at: &Timestamp,
) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO contact_forms (business_id, department_id, name, fields, max_per_email_per_hour,
                                    max_per_hour, max_links, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id", params![
        business.0,
        department_id,
        f.name,
        serde_json::to_string(&f.fields)?,
        f.max_per_email_per_hour,
        f.max_per_hour,
        f.max_links,
        ts(at)
    ])?;
    Ok(inserted)
}

/// A form of the business, with its department's id.
pub fn form(conn: &Db, business: BusinessId, id: i64) -> Result<Option<(ContactForm, i64)>> {
    maybe(conn.query_row(
        &format!("SELECT {FORM_COLS} {FORM_FROM} WHERE f.business_id = ?1 AND f.id = ?2"),
        params![business.0, id],
        form_row,
    ))
}

pub fn forms(
    conn: &Db,
    business: BusinessId,
    page: Page,
) -> Result<depot_protocol::Listed<ContactForm>> {
    ListQuery::new(&format!("{FORM_FROM} WHERE f.business_id = ?"), business).run(
        conn,
        "contact_forms",
        FORM_COLS,
        Order::asc(&[Key::Int("f.id")]),
        page,
        |r| form_row(r).map(|(f, _)| f),
    )
}

/// Submissions a form accepted after `since` (from `email` alone when
/// given), and the time of the oldest of them. Each case has its index.
pub fn submissions_since(
    conn: &Db,
    form: i64,
    email: Option<&str>,
    since: &Timestamp,
) -> Result<(i64, Option<Timestamp>)> {
    let count =
        |r: &Row| -> depot_sql::Result<(i64, Option<String>)> { Ok((r.get(0)?, r.get(1)?)) };
    let (n, oldest) = match email {
        Some(e) => conn.query_row(
            "SELECT COUNT(*), MIN(at) FROM contact_submissions
                 WHERE form_id = ?1 AND email = ?2 AND at > ?3",
            params![form, e, ts(since)],
            count,
        )?,
        None => conn.query_row(
            "SELECT COUNT(*), MIN(at) FROM contact_submissions WHERE form_id = ?1 AND at > ?2",
            params![form, ts(since)],
            count,
        )?,
    };
    Ok((n, oldest.map(|t| parse_ts(&t)).transpose()?))
}

pub fn insert_submission(
    conn: &Db,
    form: i64,
    email: &str,
    thread: i64,
    at: &Timestamp,
) -> Result<()> {
    conn.execute(
        "INSERT INTO contact_submissions (form_id, email, thread_id, at) VALUES (?1, ?2, ?3, ?4)",
        params![form, email, thread, ts(at)],
    )?;
    Ok(())
}

/// A thread about to be opened.
#[derive(Debug, Clone)]
pub struct NewThread<'a> {
    pub business: BusinessId,
    pub subject: &'a str,
    pub department_id: Option<i64>,
    pub integration_id: &'a str,
    pub form_id: Option<i64>,
    pub buyer_id: Option<i64>,
    pub at: &'a Timestamp,
}

/// Opens a thread, open and without messages yet.
pub fn insert_thread(conn: &Db, t: &NewThread) -> Result<i64> {
    let inserted: i64 = conn.query_value("INSERT INTO crm_threads (business_id, subject, status, department_id, integration_id, form_id,
                                  buyer_id, created_at, updated_at, last_message_at)
         VALUES (?1, ?2, 'open', ?3, ?4, ?5, ?6, ?7, ?7, ?7) RETURNING id", params![
        t.business.0,
        t.subject,
        t.department_id,
        t.integration_id,
        t.form_id,
        t.buyer_id,
        ts(t.at)
    ])?;
    Ok(inserted)
}

const THREAD_COLS: &str = "t.id, t.subject, t.status, d.code, t.integration_id, t.form_id, t.buyer_id, \
                           t.created_at, t.updated_at, t.message_count, t.last_message_at";
const THREAD_FROM: &str =
    "FROM crm_threads t LEFT JOIN crm_departments d ON d.id = t.department_id";

fn thread_row(r: &Row) -> depot_sql::Result<Thread> {
    let status: String = r.get(2)?;
    Ok(Thread {
        id: r.get(0)?,
        subject: r.get(1)?,
        status: ThreadStatus::parse(&status).ok_or_else(|| {
            depot_sql::Error::conversion(2, format!("not a value this release knows: {status}"))
        })?,
        department: r.get(3)?,
        integration_id: r.get(4)?,
        form_id: r.get(5)?,
        buyer_id: r.get(6)?,
        created_at: parse_ts(&r.get::<String>(7)?)?,
        updated_at: parse_ts(&r.get::<String>(8)?)?,
        message_count: r.get(9)?,
        last_message_at: parse_ts(&r.get::<String>(10)?)?,
    })
}

pub fn thread(conn: &Db, business: BusinessId, id: i64) -> Result<Option<Thread>> {
    maybe(conn.query_row(
        &format!("SELECT {THREAD_COLS} {THREAD_FROM} WHERE t.business_id = ?1 AND t.id = ?2"),
        params![business.0, id],
        thread_row,
    ))
}

/// Threads, the most recently active first; each filter combination is
/// served by an index that starts with `business_id` and ends with
/// `last_message_at, id`.
pub fn threads(
    conn: &Db,
    business: BusinessId,
    f: &ThreadFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Thread>> {
    let mut q = ListQuery::new(&format!("{THREAD_FROM} WHERE t.business_id = ?"), business);
    if let Some(i) = &f.integration_id {
        q.and("t.integration_id = ?", [i.clone().into()]);
    }
    if let Some(d) = &f.department {
        q.and(
            "t.department_id = (SELECT id FROM crm_departments WHERE business_id = ? AND code = ?)",
            [business.0.into(), d.clone().into()],
        );
    }
    if let Some(s) = f.status {
        q.and("t.status = ?", [s.as_str().to_owned().into()]);
    }
    q.run(
        conn,
        "crm_threads",
        THREAD_COLS,
        Order::desc(&[Key::Text("t.last_message_at"), Key::Int("t.id")]),
        page,
        thread_row,
    )
}

/// A message about to be posted.
#[derive(Debug, Clone, Copy)]
pub struct NewMessage<'a> {
    pub thread: i64,
    pub direction: Direction,
    pub author: &'a str,
    pub body: &'a str,
    pub fields: Option<&'a BTreeMap<String, String>>,
    /// The thread's status from now on, when it changes.
    pub status: Option<ThreadStatus>,
    pub at: &'a Timestamp,
}

/// Adds a message to a thread and moves the thread's counters, activity
/// and status with it.
pub fn insert_message(conn: &Db, m: &NewMessage) -> Result<i64> {
    let fields = m.fields.map(serde_json::to_string).transpose()?;
    let inserted: i64 = conn.query_value(
        "INSERT INTO crm_messages (thread_id, direction, author, body, fields, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        params![
            m.thread,
            m.direction.as_str(),
            m.author,
            m.body,
            fields,
            ts(m.at)
        ],
    )?;
    let id = inserted;
    conn.execute(
        "UPDATE crm_threads SET message_count = message_count + 1, last_message_at = ?2,
                updated_at = ?2, status = COALESCE(?3, status)
         WHERE id = ?1",
        params![m.thread, ts(m.at), m.status.map(ThreadStatus::as_str)],
    )?;
    Ok(id)
}

const MESSAGE_COLS: &str = "id, thread_id, direction, author, body, fields, created_at";

fn message_row(r: &Row) -> depot_sql::Result<Message> {
    let direction: String = r.get(2)?;
    Ok(Message {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        direction: Direction::parse(&direction).ok_or_else(|| {
            depot_sql::Error::conversion(2, format!("not a value this release knows: {direction}"))
        })?,
        author: r.get(3)?,
        body: r.get(4)?,
        fields: r
            .get::<Option<String>>(5)?
            .map(|f| parse_json(&f))
            .transpose()?,
        created_at: parse_ts(&r.get::<String>(6)?)?,
    })
}

pub fn message(conn: &Db, id: i64) -> Result<Option<Message>> {
    maybe(conn.query_row(
        &format!("SELECT {MESSAGE_COLS} FROM crm_messages WHERE id = ?1"),
        params![id],
        message_row,
    ))
}

/// A page of a thread's messages, oldest first.
pub fn messages(conn: &Db, thread: i64, page: Page) -> Result<Vec<Message>> {
    let stmt = &format!(
        "SELECT {MESSAGE_COLS} FROM crm_messages WHERE thread_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3"
    );
    let rows = conn.query_map(
        stmt,
        params![thread, page.length as i64, page.start as i64],
        message_row,
    )?;
    Ok(rows)
}
