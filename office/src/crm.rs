//! CRM, cloud only: buyers found by name, id or wildcard; departments and
//! contact forms; threads that forms open and agents answer. Each write,
//! with its event, is one transaction.

use crate::Office;
use crate::store::crm::{self as sql, NewMessage as MessageRow, NewThread};
use depot_protocol::crm::buyers::CONTACT_CHANNEL;
use depot_protocol::crm::contact::{
    Checked, ContactForm, ContactSubmission, Department, DepartmentCreate, FormCreate, Receipt,
};
use depot_protocol::crm::{
    CONTACT_FORM, Direction, MessagesPage, NewMessage, Thread, ThreadFilter, ThreadMessages,
    ThreadScope,
};
use depot_protocol::event::EventKind;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, ListEnvelope, Page, now};
use depot_sql::Db;
use depot_wms::buyers::{self as buyer_sql, Sighting};
use depot_wms::sql::append_event;
use depot_wms::{Result, WmsError};

/// The window of the contact forms' submission limits.
const LIMIT_WINDOW_SECS: i64 = 3600;

/// What became of a contact form submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    Received(Receipt),
    /// Over one of the form's hourly limits: nothing was kept.
    Limited {
        wait_secs: u64,
    },
}

fn load_thread(conn: &Db, business: BusinessId, id: i64) -> Result<Thread> {
    sql::thread(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("thread {id} does not exist")))
}

/// Seconds until one of the limit's window's submissions falls out of it
/// (at least 1), or `None` when the limit leaves room.
fn over_limit(
    conn: &Db,
    form: i64,
    email: Option<&str>,
    max: i64,
    at: &depot_protocol::Timestamp,
) -> Result<Option<u64>> {
    let since = *at - chrono::Duration::seconds(LIMIT_WINDOW_SECS);
    let (n, oldest) = sql::submissions_since(conn, form, email, &since)?;
    Ok((n >= max).then(|| {
        let frees = oldest.map_or(0, |t| (t - since).num_seconds());
        u64::try_from(frees).unwrap_or(0).max(1)
    }))
}

impl Office {
    /// Creates a department; its code is unique in the business.
    pub async fn create_department(
        &self,
        caller: Caller,
        req: DepartmentCreate,
    ) -> Result<Department> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        let business = caller.business_id;
        self.write(move |conn| {
            if sql::department_by_code(conn, business, &new.code)?.is_some() {
                return Err(WmsError::field_conflict(
                    "code",
                    format!("department {} already exists", new.code),
                ));
            }
            sql::insert_department(conn, business, &new, &now())?;
            let d = sql::department_by_code(conn, business, &new.code)?
                .ok_or_else(|| WmsError::Internal("department vanished".into()))?;
            append_event(
                conn,
                &origin,
                Some(business),
                EventKind::CrmDepartmentSaved,
                &d,
            )?;
            Ok(d)
        })
        .await
    }

    pub async fn departments(
        &self,
        business: BusinessId,
        page: Page,
    ) -> Result<ListEnvelope<Department>> {
        self.read(move |conn| Ok(sql::departments(conn, business, page)?.into()))
            .await
    }

    /// Creates a contact form answered by one of the business's departments.
    pub async fn create_form(&self, caller: Caller, req: FormCreate) -> Result<ContactForm> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        let business = caller.business_id;
        self.write(move |conn| {
            let department =
                sql::department_by_code(conn, business, &new.department)?.ok_or_else(|| {
                    WmsError::invalid(vec![FieldError::new(
                        "department",
                        format!("no department {} in this business", new.department),
                    )])
                })?;
            let id = sql::insert_form(conn, business, department.id, &new, &now())?;
            let (form, _) = sql::form(conn, business, id)?
                .ok_or_else(|| WmsError::Internal("form vanished".into()))?;
            append_event(
                conn,
                &origin,
                Some(business),
                EventKind::CrmFormSaved,
                &form,
            )?;
            Ok(form)
        })
        .await
    }

    pub async fn forms(
        &self,
        business: BusinessId,
        page: Page,
    ) -> Result<ListEnvelope<ContactForm>> {
        self.read(move |conn| Ok(sql::forms(conn, business, page)?.into()))
            .await
    }

    /// Takes a submission of form `form_id`: checked against the form and
    /// its hourly limits, it opens a thread for the form's department with
    /// the message, and keeps its sender as a buyer, all in one transaction.
    pub async fn submit_contact(
        &self,
        business: BusinessId,
        form_id: i64,
        submission: ContactSubmission,
    ) -> Result<Submitted> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let (form, department) = sql::form(conn, business, form_id)?.ok_or_else(|| {
                WmsError::NotFound(format!("contact form {form_id} does not exist"))
            })?;
            let s = match submission.check(&form).map_err(WmsError::invalid)? {
                Checked::Spam => return Ok(Submitted::Received(Receipt::received(None))),
                Checked::Valid(s) => s,
            };
            let at = now();
            for (email, max) in [
                (Some(s.email.as_str()), form.max_per_email_per_hour),
                (None, form.max_per_hour),
            ] {
                if let Some(wait_secs) = over_limit(conn, form.id, email, max, &at)? {
                    return Ok(Submitted::Limited { wait_secs });
                }
            }
            let buyer = buyer_sql::note(
                conn,
                business,
                Sighting {
                    name: Some(&s.name),
                    email: Some(&s.email),
                    phone: s.phone.as_deref(),
                    channel: CONTACT_CHANNEL,
                    at: &at,
                    order: false,
                },
            )?;
            let thread = sql::insert_thread(
                conn,
                &NewThread {
                    business,
                    subject: &s.subject,
                    department_id: Some(department),
                    integration_id: CONTACT_FORM,
                    form_id: Some(form.id),
                    buyer_id: buyer,
                    at: &at,
                },
            )?;
            let message = sql::insert_message(
                conn,
                &MessageRow {
                    thread,
                    direction: Direction::Inbound,
                    author: &format!("{} <{}>", s.name, s.email),
                    body: &s.message,
                    fields: Some(&s.fields).filter(|f| !f.is_empty()),
                    status: None,
                    at: &at,
                },
            )?;
            sql::insert_submission(conn, form.id, &s.email, thread, &at)?;
            let payload = serde_json::json!({
                "thread": load_thread(conn, business, thread)?,
                "message": sql::message(conn, message)?,
            });
            append_event(
                conn,
                &origin,
                Some(business),
                EventKind::CrmThreadOpened,
                &payload,
            )?;
            Ok(Submitted::Received(Receipt::received(Some(thread))))
        })
        .await
    }

    pub async fn threads(
        &self,
        business: BusinessId,
        filter: ThreadFilter,
        page: Page,
    ) -> Result<ListEnvelope<Thread>> {
        self.read(move |conn| Ok(sql::threads(conn, business, &filter, page)?.into()))
            .await
    }

    /// A thread with a page of its messages, oldest first.
    pub async fn thread_messages(
        &self,
        business: BusinessId,
        id: i64,
        page: Page,
    ) -> Result<MessagesPage> {
        self.read(move |conn| {
            let thread = load_thread(conn, business, id)?;
            let messages = sql::messages(conn, id, page)?;
            let n = thread.message_count.to_string();
            Ok(MessagesPage {
                thread: vec![thread],
                messages,
                records_total: n.clone(),
                records_filtered: n,
            })
        })
        .await
    }

    /// Posts a reply or a note to a thread of the business; when `scope`
    /// names an integration or a topic, the thread must be in it.
    pub async fn post_message(
        &self,
        caller: Caller,
        id: i64,
        scope: ThreadScope,
        m: NewMessage,
    ) -> Result<ThreadMessages> {
        let origin = self.origin().to_owned();
        let business = caller.business_id;
        self.write(move |conn| {
            let thread = load_thread(conn, business, id)?;
            if !scope.admits(&thread) {
                return Err(WmsError::NotFound(format!(
                    "thread {id} is not in the integration or topic named"
                )));
            }
            let at = now();
            let author = m.author.unwrap_or_else(|| caller.actor());
            let message = sql::insert_message(
                conn,
                &MessageRow {
                    thread: id,
                    direction: m.direction,
                    author: &author,
                    body: &m.body,
                    fields: None,
                    status: m.status,
                    at: &at,
                },
            )?;
            let message = sql::message(conn, message)?
                .ok_or_else(|| WmsError::Internal("message vanished".into()))?;
            let payload = serde_json::json!({"thread_id": id, "message": message});
            append_event(
                conn,
                &origin,
                Some(business),
                EventKind::CrmMessagePosted,
                &payload,
            )?;
            Ok(ThreadMessages {
                thread: vec![load_thread(conn, business, id)?],
                messages: vec![message],
            })
        })
        .await
    }
}
