//! Keys provisioned in an edge's configuration: they work on a box that has
//! never synced, are installed idempotently and only as hashes, never travel
//! to the cloud, keep working once the cloud's keys arrive, stop working
//! when taken out of the configuration, and a key the cloud also knows
//! follows the cloud (its revocation reaches the box).

use depot_protocol::BusinessId;
use depot_protocol::sync::EdgeId;
use depot_wms::Wms;
use depot_wms::sync::{LocalKey, PageOutcome};
use depot_wms::tenants::hash_key;

const EDGE: &str = "lk-1";

fn local(key: &str) -> LocalKey {
    LocalKey {
        hash: hash_key(key),
        prefix: format!("test:{}", &key[..4]),
    }
}

struct World {
    cloud: Wms,
    edge: Wms,
    business: BusinessId,
    _dir: tempfile::TempDir,
    /// The cloud's database when it is on PostgreSQL.
    _database: Option<depot_testkit::pg::PgDatabase>,
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let node = cloud
        .register_edge(b.id, EdgeId::parse(EDGE).expect("id"), None)
        .await
        .expect("register")
        .node;
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), &format!("edge:{EDGE}"), node).expect("edge");
    World {
        cloud,
        edge,
        business: b.id,
        _dir: dir,
        _database: database,
    }
}

/// Applies every page the cloud has for the edge.
async fn pull(w: &World) {
    loop {
        let (_, cursor) = w.edge.sync_state().await.expect("state");
        let page = w
            .cloud
            .changes_for(w.business, EdgeId::parse(EDGE).expect("id"), cursor, 50)
            .await
            .expect("page");
        let more = page.more;
        let outcome = w.edge.apply_page(w.business, page).await.expect("apply");
        assert!(!matches!(outcome, PageOutcome::Gap { .. }), "{outcome:?}");
        if !more {
            return;
        }
    }
}

async fn business_of(wms: &Wms, key: &str) -> Option<BusinessId> {
    wms.authenticate(key)
        .await
        .expect("authenticate")
        .map(|c| c.business_id)
}

#[tokio::test]
async fn provisioned_keys_work_before_the_first_sync_and_after_it() {
    let w = world().await;
    let (k1, k2) = ("local-key-one-0123456789", "local-key-two-0123456789");
    let keys = vec![local(k1), local(k2)];
    assert_eq!(
        w.edge
            .install_local_keys(w.business, keys.clone())
            .await
            .expect("install"),
        2
    );
    assert_eq!(business_of(&w.edge, k1).await, Some(w.business));
    assert_eq!(business_of(&w.edge, k2).await, Some(w.business));
    assert_eq!(business_of(&w.edge, "another-key-0123456789").await, None);
    // Nothing to send up: local keys are not events.
    assert_eq!(w.edge.outgoing_head().await.expect("head"), 0);
    assert!(w.edge.events_since(0, 100).await.expect("log").is_empty());
    // Installed again at the next start: the same rows, nothing added.
    let before = w.edge.keys(w.business).await.expect("keys");
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|k| k.prefix.starts_with("test:")));
    w.edge
        .install_local_keys(w.business, keys)
        .await
        .expect("install again");
    assert_eq!(w.edge.keys(w.business).await.expect("keys"), before);
    // Numbered in the edge's range, which no cloud key uses.
    assert!(
        before
            .iter()
            .all(|k| depot_wms::database::node_of(k.id.0) >= 1),
        "{before:?}"
    );

    // The box goes online: the business and the cloud's key arrive.
    let cloud_key = w.cloud.create_key(w.business, None).await.expect("key");
    pull(&w).await;
    assert_eq!(
        w.edge.business(w.business).await.expect("business").name,
        "B",
        "the stand-in business is replaced by the cloud's"
    );
    assert_eq!(
        w.edge.business(w.business).await.expect("business"),
        w.cloud.business(w.business).await.expect("business")
    );
    assert_eq!(
        business_of(&w.edge, &cloud_key.secret).await,
        Some(w.business)
    );
    assert_eq!(business_of(&w.edge, k1).await, Some(w.business));
    // The cloud never heard of the local keys.
    assert_eq!(business_of(&w.cloud, k1).await, None);
    assert_eq!(w.cloud.keys(w.business).await.expect("keys").len(), 1);

    // Taken out of the configuration: it stops working at the next start.
    assert_eq!(
        w.edge
            .install_local_keys(w.business, vec![local(k1)])
            .await
            .expect("install"),
        1
    );
    assert_eq!(business_of(&w.edge, k2).await, None);
    assert_eq!(business_of(&w.edge, k1).await, Some(w.business));
    assert_eq!(
        business_of(&w.edge, &cloud_key.secret).await,
        Some(w.business)
    );
}

#[tokio::test]
async fn a_provisioned_key_the_cloud_also_knows_follows_the_cloud() {
    let w = world().await;
    let shared = w.cloud.create_key(w.business, None).await.expect("key");
    // The technician pasted the hash of a key the cloud made.
    w.edge
        .install_local_keys(w.business, vec![local(&shared.secret)])
        .await
        .expect("install");
    assert_eq!(business_of(&w.edge, &shared.secret).await, Some(w.business));
    pull(&w).await;
    // The cloud's record took the local one's place: one row, the cloud's id.
    let keys = w.edge.keys(w.business).await.expect("keys");
    assert_eq!(
        keys.iter().map(|k| k.id).collect::<Vec<_>>(),
        [shared.key.id]
    );
    assert!(
        w.edge
            .conflicts(None, 10)
            .await
            .expect("conflicts")
            .is_empty()
    );
    // Revoked in the cloud: revoked at the edge, and a restart with the key
    // still configured does not bring it back.
    w.cloud.revoke_key(shared.key.id).await.expect("revoke");
    pull(&w).await;
    assert_eq!(business_of(&w.edge, &shared.secret).await, None);
    assert_eq!(
        w.edge
            .install_local_keys(w.business, vec![local(&shared.secret)])
            .await
            .expect("install"),
        0
    );
    assert_eq!(business_of(&w.edge, &shared.secret).await, None);
}

#[tokio::test]
async fn keys_are_provisioned_locally_only_on_an_edge() {
    let w = world().await;
    assert!(
        w.cloud
            .install_local_keys(w.business, vec![local("local-key-one-0123456789")])
            .await
            .is_err()
    );
}
