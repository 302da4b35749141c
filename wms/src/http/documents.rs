//! `/v1/documents/...`: categories, attached documents, uploads, downloads.

use super::error::ApiError;
use super::extract::{ApiPath, Tenant};
use super::idempotency::{ok, respond};
use crate::Wms;
use crate::documents::Upload;
use crate::idempotency::Answer;
use axum::Json;
use axum::extract::{Multipart, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use depot_protocol::document::{Category, Document, EntityType, MAX_DOCUMENT_BYTES, categories};
use depot_protocol::{DataEnvelope, ErrorBody, FieldError, ListEnvelope};

fn entity(raw: &str) -> Result<EntityType, ApiError> {
    EntityType::parse(raw).ok_or_else(|| {
        ApiError::invalid(vec![FieldError::new(
            "entity_type",
            "must be order, shipment or purchase",
        )])
    })
}

/// Document categories and the tax types they carry.
#[utoipa::path(get, path = "/v1/documents/{business_id}/categories", tag = "documents",
    params(("business_id" = i32, Path, description = "The business")),
    responses((status = 200, body = ListEnvelope<Category>), (status = 401, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list_categories(_t: Tenant) -> Json<ListEnvelope<Category>> {
    let all = categories();
    let n = all.len() as u64;
    Json(ListEnvelope::new(all, n, n))
}

/// Documents attached to an order, shipment or purchase.
#[utoipa::path(get, path = "/v1/documents/{business_id}/{entity_type}/{entity_id}/list", tag = "documents",
    params(("business_id" = i32, Path, description = "The business"),
        ("entity_type" = inline(depot_protocol::document::EntityType), Path, description = "order, shipment or purchase"), ("entity_id" = i64, Path, description = "Its id")),
    responses((status = 200, body = ListEnvelope<Document>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn list(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, et, id)): ApiPath<(i64, String, i64)>,
) -> Result<Json<ListEnvelope<Document>>, ApiError> {
    let rows = wms.documents(t.business_id(), entity(&et)?, id).await?;
    let n = rows.len() as u64;
    Ok(Json(ListEnvelope::new(rows, n, n)))
}

/// The form of an upload.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // describes the form `upload` reads part by part
pub struct DocumentUpload {
    /// The document; its file name and content type are kept.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// One of the business's document categories (`GET …/categories`).
    #[schema(format = "code")]
    category: String,
    description: Option<String>,
}

/// Uploads a document (multipart/form-data: `file`, `category`, optional
/// `description`) and attaches it. PDF, PNG, JPEG or XML, checked by
/// content, at most 10 MiB; stored with its SHA-256.
#[utoipa::path(post, path = "/v1/documents/{business_id}/{entity_type}/{entity_id}", tag = "documents",
    params(("business_id" = i32, Path, description = "The business"),
        ("entity_type" = inline(depot_protocol::document::EntityType), Path, description = "order, shipment or purchase"), ("entity_id" = i64, Path, description = "Its id")),
    request_body(content = DocumentUpload, content_type = "multipart/form-data"),
    responses((status = 200, body = DataEnvelope<Document>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn upload(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, et, id)): ApiPath<(i64, String, i64)>,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Answer, ApiError> {
    let entity = entity(&et)?;
    let mut form = multipart.map_err(|e| {
        ApiError::bad_request(format!("expected multipart/form-data: {}", e.body_text()))
    })?;
    let (mut file, mut category, mut description) = (None, None, None);
    let too_large = |e: axum::extract::multipart::MultipartError| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge {
                limit: MAX_DOCUMENT_BYTES,
            }
        } else {
            ApiError::bad_request(format!("unreadable form: {}", e.body_text()))
        }
    };
    while let Some(field) = form.next_field().await.map_err(too_large)? {
        match field.name().unwrap_or("") {
            "file" => {
                let filename = field.file_name().unwrap_or("document").to_owned();
                let content_type = field
                    .content_type()
                    .unwrap_or("application/octet-stream")
                    .to_owned();
                let bytes = field.bytes().await.map_err(too_large)?;
                file = Some((filename, content_type, bytes.to_vec()));
            }
            "category" => category = Some(field.text().await.map_err(too_large)?),
            "description" => description = Some(field.text().await.map_err(too_large)?),
            // As a JSON body's unknown field: refused, named.
            other => {
                return Err(ApiError::invalid(vec![FieldError::new(
                    other,
                    "is not a field of this form: send file, category and description",
                )]));
            }
        }
    }
    let Some((filename, content_type, bytes)) = file else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "file",
            "is required",
        )]));
    };
    let category = category
        .ok_or_else(|| ApiError::invalid(vec![FieldError::new("category", "is required")]))?;
    let upload = Upload {
        category,
        filename,
        content_type,
        description,
        bytes,
    };
    respond(ok::<Document>, wms.attach(t.0, entity, id, upload)).await
}

/// Downloads a document's bytes (extension).
#[utoipa::path(get, path = "/v1/documents/{business_id}/{entity_type}/{entity_id}/{document_id}", tag = "documents",
    params(("business_id" = i32, Path, description = "The business"),
        ("entity_type" = inline(depot_protocol::document::EntityType), Path, description = "order, shipment or purchase"), ("entity_id" = i64, Path, description = "Its id"),
        ("document_id" = i64, Path, description = "The document")),
    responses((status = 200, description = "The document", body = Vec<u8>), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("api_key" = [])))]
pub async fn download(
    State(wms): State<Wms>,
    t: Tenant,
    ApiPath((_, et, id, doc)): ApiPath<(i64, String, i64, i64)>,
) -> Result<Response, ApiError> {
    let (d, bytes) = wms.document(t.business_id(), entity(&et)?, id, doc).await?;
    let disposition = content_disposition(&d.filename);
    Ok((
        [
            (header::CONTENT_TYPE, d.content_type),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        bytes,
    )
        .into_response())
}

/// `Content-Disposition` for a stored file name, which is whatever an
/// uploader sent: only its last path segment, with no control characters;
/// `filename` a plain-ASCII stand-in any client can read (a quoted string
/// with nothing to escape), `filename*` the name itself, UTF-8 and
/// percent-encoded (RFC 6266, RFC 8187) for clients that read it.
pub(crate) fn content_disposition(stored: &str) -> String {
    let base = stored
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>();
    let base = base.trim().trim_start_matches('.');
    let base = if base.is_empty() { "document" } else { base };
    let ascii: String = base
        .chars()
        .take(120)
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '-' | '_' | ' ' | '(' | ')' | '+' => c,
            _ => '_',
        })
        .collect();
    let mut encoded = String::new();
    for b in base.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'!'
            | b'#'
            | b'$'
            | b'&'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~' => encoded.push(char::from(b)),
            _ => encoded.push_str(&format!("%{b:02X}")),
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::content_disposition;

    #[test]
    fn a_download_is_named_safely_whatever_was_uploaded() {
        for (stored, expected) in [
            (
                "invoice.pdf",
                "attachment; filename=\"invoice.pdf\"; filename*=UTF-8''invoice.pdf",
            ),
            (
                "../../etc/passwd",
                "attachment; filename=\"passwd\"; filename*=UTF-8''passwd",
            ),
            (
                "C:\\Users\\ana\\.bashrc",
                "attachment; filename=\"bashrc\"; filename*=UTF-8''bashrc",
            ),
            (
                "<script>alert(1)</script>.pdf",
                "attachment; filename=\"script_.pdf\"; filename*=UTF-8''script%3E.pdf",
            ),
            (
                "a\"b;c\r\nSet-Cookie: x.pdf",
                "attachment; filename=\"a_b_cSet-Cookie_ x.pdf\"; filename*=UTF-8''a%22b%3BcSet-Cookie%3A%20x.pdf",
            ),
            (
                "Τιμολόγιο 7.pdf",
                "attachment; filename=\"_________ 7.pdf\"; filename*=UTF-8''%CE%A4%CE%B9%CE%BC%CE%BF%CE%BB%CF%8C%CE%B3%CE%B9%CE%BF%207.pdf",
            ),
            (
                "",
                "attachment; filename=\"document\"; filename*=UTF-8''document",
            ),
        ] {
            let header = content_disposition(stored);
            assert_eq!(header, expected, "{stored:?}");
            assert!(axum::http::HeaderValue::from_str(&header).is_ok());
        }
    }
}
