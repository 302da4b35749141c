//! Businesses, warehouses and API keys.

use crate::store::{self, tenants as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::gs1::sscc::CompanyPrefix;
use depot_protocol::order::Address;
use depot_protocol::tenant::{ApiKey, Business, Caller, Warehouse};
use depot_protocol::validate::Check;
use depot_protocol::{BusinessId, KeyId, WarehouseId, now};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Keys look like `dpk_` and 48 hex digits (192 random bits): unguessable,
/// so a fast hash is the right way to store them.
const KEY_PREFIX: &str = "dpk_";

/// The stored form of a key.
pub fn hash_key(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// A secret nobody can guess (192 random bits, in hex) after `prefix`,
/// which says what it is: an API key, a websocket ticket.
pub(crate) fn new_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

/// A key just created: the secret exists only in this value.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub key: ApiKey,
    pub secret: String,
}

impl Wms {
    pub async fn create_business(
        &self,
        name: &str,
        currency: &str,
        timezone: &str,
    ) -> Result<Business> {
        let mut c = Check::new();
        let name = c.text("name", name, 200);
        let currency = c.currency("currency", currency);
        let timezone = c.code("timezone", timezone, 64);
        c.finish(()).map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let at = now();
            let id = sql::insert_business(conn, &name, &currency, &timezone, &at)?;
            let b = Business {
                id,
                name,
                currency,
                timezone,
                gs1_company_prefix: None,
                created_at: at,
            };
            store::events::append(conn, &origin, Some(id), EventKind::BusinessCreated, &b)?;
            Ok(b)
        })
        .await
    }

    /// Sets (or, with `None`, clears) the GS1 company prefix the business's
    /// parcels are numbered from, and grants the cloud and every edge of the
    /// business a block of SSCCs of it. A prefix belongs to one company, so
    /// one another business numbers from is refused.
    pub async fn set_gs1_prefix(
        &self,
        business: BusinessId,
        prefix: Option<&str>,
    ) -> Result<Business> {
        let prefix = prefix
            .map(|p| {
                CompanyPrefix::parse(p).map_err(|e| {
                    WmsError::invalid(vec![depot_protocol::FieldError::new(
                        "gs1_company_prefix",
                        e,
                    )])
                })
            })
            .transpose()?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let p = prefix.as_ref().map(CompanyPrefix::as_str);
            if let Some(p) = p {
                if let Some(other) = sql::gs1_prefix_holder(conn, p, business)? {
                    return Err(WmsError::field_conflict(
                        "gs1_company_prefix",
                        format!("business {other} already numbers its parcels from {p}"),
                    ));
                }
            }
            sql::set_gs1_prefix(conn, business, p)?;
            let b = sql::business(conn, business)?
                .ok_or_else(|| WmsError::NotFound(format!("business {business} does not exist")))?;
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::BusinessUpdated,
                &b,
            )?;
            crate::sscc::keep_ahead(conn, &origin, business, 0)?;
            for edge in store::sync::edges(conn, business)? {
                crate::sscc::keep_ahead(conn, &origin, business, edge.node)?;
            }
            Ok(b)
        })
        .await
    }

    /// Changes a warehouse's name and address (printed in the FROM block of
    /// its labels); its code stays.
    pub async fn update_warehouse(
        &self,
        business: BusinessId,
        id: WarehouseId,
        name: Option<&str>,
        address: Option<Address>,
    ) -> Result<Warehouse> {
        let mut c = Check::new();
        let name = name.map(|n| c.text("name", n, 200));
        c.finish(()).map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let mut w = sql::warehouse(conn, business, id)?.ok_or_else(|| {
                WmsError::NotFound(format!(
                    "warehouse {id} of business {business} does not exist"
                ))
            })?;
            if let Some(name) = name {
                w.name = name;
            }
            if let Some(address) = address {
                w.address = address;
            }
            sql::update_warehouse(conn, business, id, &w.name, &w.address)?;
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::WarehouseUpdated,
                &w,
            )?;
            Ok(w)
        })
        .await
    }

    pub async fn create_warehouse(
        &self,
        business: BusinessId,
        code: &str,
        name: &str,
        address: Address,
        visible_sales: bool,
    ) -> Result<Warehouse> {
        let mut c = Check::new();
        let code = c.code("code", code, 16);
        let name = c.text("name", name, 200);
        c.finish(()).map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if sql::business(conn, business)?.is_none() {
                return Err(WmsError::NotFound(format!(
                    "business {business} does not exist"
                )));
            }
            if sql::warehouse_code_taken(conn, business, &code)? {
                return Err(WmsError::field_conflict(
                    "code",
                    format!("warehouse {code} already exists"),
                ));
            }
            let at = now();
            let id =
                sql::insert_warehouse(conn, business, &code, &name, &address, visible_sales, &at)?;
            let w = Warehouse {
                id,
                business_id: business,
                code,
                name,
                address,
                is_visible_sales: i32::from(visible_sales),
                created_at: at,
            };
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::WarehouseCreated,
                &w,
            )?;
            Ok(w)
        })
        .await
    }

    /// Creates a key for a business. The secret is returned here and never
    /// again: only its hash is stored.
    pub async fn create_key(&self, business: BusinessId, label: Option<String>) -> Result<NewKey> {
        let mut c = Check::new();
        let label = c.opt_text("label", label.as_deref(), 100);
        c.finish(()).map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if sql::business(conn, business)?.is_none() {
                return Err(WmsError::NotFound(format!(
                    "business {business} does not exist"
                )));
            }
            let secret = new_secret(KEY_PREFIX);
            let prefix: String = secret.chars().take(KEY_PREFIX.len() + 8).collect();
            let at = now();
            let id = sql::insert_key(
                conn,
                business,
                &hash_key(&secret),
                &prefix,
                label.as_deref(),
                &at,
            )?;
            let key = ApiKey {
                id,
                business_id: business,
                prefix,
                label,
                created_at: at,
                revoked_at: None,
            };
            // The hash travels in the event so edges can authenticate offline.
            let payload = serde_json::json!({"key": key, "hash": hex::encode(hash_key(&secret))});
            store::events::append(
                conn,
                &origin,
                Some(business),
                EventKind::KeyCreated,
                &payload,
            )?;
            Ok(NewKey { key, secret })
        })
        .await
    }

    pub async fn revoke_key(&self, id: KeyId) -> Result<ApiKey> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let at = now();
            if !sql::revoke_key(conn, id, &at)? {
                return match sql::key(conn, id)? {
                    Some(k) => Err(WmsError::conflict(format!(
                        "key {} was already revoked",
                        k.prefix
                    ))),
                    None => Err(WmsError::NotFound(format!("key {id} does not exist"))),
                };
            }
            let key = sql::key(conn, id)?
                .ok_or_else(|| WmsError::NotFound(format!("key {id} does not exist")))?;
            store::events::append(
                conn,
                &origin,
                Some(key.business_id),
                EventKind::KeyRevoked,
                &key,
            )?;
            Ok(key)
        })
        .await
    }

    /// The caller a presented key belongs to; `None` for an unknown or
    /// revoked key.
    pub async fn authenticate(&self, secret: &str) -> Result<Option<Caller>> {
        let hash = hash_key(secret);
        if let Some(caller) = self.inner.keys.get(&hash) {
            return Ok(Some(caller));
        }
        let epoch = self.inner.keys.epoch();
        let found = self
            .read(move |conn| sql::caller_by_hash(conn, &hash))
            .await?;
        if let Some(caller) = found {
            self.inner.keys.put(hash, caller, epoch);
        }
        Ok(found)
    }

    /// Whether a key exists and is not revoked: for work a key started
    /// that goes on without it presenting itself again (a station's task).
    pub async fn key_active(&self, id: depot_protocol::KeyId) -> Result<bool> {
        self.read(move |conn| Ok(sql::key(conn, id)?.is_some_and(|k| k.revoked_at.is_none())))
            .await
    }

    pub async fn business(&self, id: BusinessId) -> Result<Business> {
        self.read(move |conn| sql::business(conn, id))
            .await?
            .ok_or_else(|| WmsError::NotFound(format!("business {id} does not exist")))
    }

    pub async fn businesses(&self) -> Result<Vec<Business>> {
        self.read(sql::businesses).await
    }

    pub async fn keys(&self, business: BusinessId) -> Result<Vec<ApiKey>> {
        self.read(move |conn| sql::keys(conn, business)).await
    }

    pub async fn warehouses(
        &self,
        business: BusinessId,
        visible: Option<bool>,
    ) -> Result<Vec<Warehouse>> {
        self.read(move |conn| sql::warehouses(conn, business, visible))
            .await
    }

    pub async fn warehouse(&self, business: BusinessId, id: WarehouseId) -> Result<Warehouse> {
        self.read(move |conn| sql::warehouse(conn, business, id))
            .await?
            .ok_or_else(|| WmsError::NotFound(format!("warehouse {id} does not exist")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_distinct_and_shaped() {
        let a = new_secret(KEY_PREFIX);
        let b = new_secret(KEY_PREFIX);
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX));
        assert_eq!(a.len(), KEY_PREFIX.len() + 48);
        assert_ne!(hash_key(&a), hash_key(&b));
    }
}
