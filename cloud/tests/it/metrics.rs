//! `GET /metrics` on the cloud, with no key: requests counted exactly by
//! route template (a 404 on a route, an unmatched path, a method a route
//! does not take), the writer's group commits, the edges taken together;
//! and nothing in it names a business's data.

use cloud::TestCloud;
use depot_protocol::sync::EdgeId;
use depot_testkit::cloud;
use depot_testkit::http::Client;
use depot_wms::metrics::exposition::{Sample, parse, value};
use depot_wms::sync::Sighting;

async fn scrape(app: &TestCloud) -> (Vec<Sample>, String) {
    let r = app.call("GET", "/metrics", None, None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let content_type = r.headers["content-type"].to_str().expect("ascii");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = r.body.as_str().expect("text").to_owned();
    assert!(text.ends_with("# EOF\n"), "{text}");
    (parse(&text).expect("exposition"), text)
}

fn get(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    value(samples, name, labels).unwrap_or(0.0)
}

#[tokio::test]
async fn requests_by_route_template_and_the_writer_counted_exactly() {
    let app = cloud::spawn_cloud().await;
    let a = app.a.business;
    let (before, _) = scrape(&app).await;

    for _ in 0..2 {
        assert_eq!(app.get(&format!("/v1/orders/{a}/list")).await.status, 200);
    }
    cloud::assert_error(&app.get(&format!("/v1/orders/{a}/987654321")).await, 404);
    cloud::assert_error(&app.get("/v1/no/such/route").await, 404);
    let r = app.call("POST", "/healthz", None, None).await;
    cloud::assert_error(&r, 405);
    let item = app.item("METRICS-SKU-1").await;

    let (after, text) = scrape(&app).await;
    let grew = |route: &str, method: &str, status: &str| {
        let labels = [("route", route), ("method", method), ("status", status)];
        get(&after, "depot_http_requests_total", &labels)
            - get(&before, "depot_http_requests_total", &labels)
    };
    assert_eq!(grew("/v1/orders/{business_id}/list", "GET", "200"), 2.0);
    assert_eq!(
        grew("/v1/orders/{business_id}/{order_id}", "GET", "404"),
        1.0
    );
    assert_eq!(grew("unmatched", "GET", "404"), 1.0);
    assert_eq!(grew("/healthz", "POST", "405"), 1.0);
    assert_eq!(grew("/v1/items/{business_id}/create", "POST", "200"), 1.0);
    // The scrape before, counted once it had answered.
    assert_eq!(grew("/metrics", "GET", "200"), 1.0);
    let timed = |s: &[Sample]| {
        get(
            s,
            "depot_http_request_duration_seconds_count",
            &[
                ("route", "/v1/orders/{business_id}/list"),
                ("method", "GET"),
            ],
        )
    };
    assert_eq!(timed(&after) - timed(&before), 2.0);

    // The item was written: at least one more group commit.
    let commits = |s: &[Sample]| get(s, "depot_writer_batch_size_count", &[]);
    assert!(commits(&after) > commits(&before));
    assert_eq!(
        get(&after, "depot_writer_commit_duration_seconds_count", &[]),
        commits(&after)
    );
    assert!(value(&after, "depot_writer_queue_depth", &[]).is_some());

    // The disk under the data directory, read at the scrape.
    let free = get(&after, "depot_storage_free_bytes", &[]);
    let size = get(&after, "depot_storage_size_bytes", &[]);
    assert!(free > 0.0 && free <= size, "free {free} of {size}");
    assert!(get(&after, "depot_storage_database_bytes", &[]) >= 4096.0);
    assert!(value(&after, "depot_storage_low", &[]).is_some());
    assert_eq!(get(&after, "depot_writer_disk_full", &[]), 0.0);

    // Nothing names a business's data: routes are templates, and the SKU
    // and ids of what was made appear nowhere.
    for sample in after.iter().filter(|s| s.name.starts_with("depot_http_")) {
        let route = sample.label("route").expect("route label");
        let numeric = |seg: &str| !seg.is_empty() && seg.bytes().all(|c| c.is_ascii_digit());
        assert!(
            route == "unmatched" || (route.starts_with('/') && !route.split('/').any(numeric)),
            "a route label that is not a template: {route}"
        );
    }
    assert!(!text.contains("METRICS-SKU-1"));
    assert!(!text.contains("987654321"));
    assert!(!text.contains(&format!("/{item}")));
}

#[tokio::test]
async fn edges_online_offline_and_their_backlog() {
    let app = cloud::spawn_cloud().await;
    let (s, _) = scrape(&app).await;
    let edges = |s: &[Sample], state: &str| get(s, "depot_sync_edges", &[("state", state)]);
    assert_eq!((edges(&s, "online"), edges(&s, "offline")), (0.0, 0.0));

    let b = app.a.business;
    for id in ["dock-1", "dock-2"] {
        let edge = EdgeId::parse(id).expect("edge id");
        app.wms
            .register_edge(b, edge, None)
            .await
            .expect("register");
    }
    let (s, _) = scrape(&app).await;
    assert_eq!((edges(&s, "online"), edges(&s, "offline")), (0.0, 2.0));
    assert_eq!(get(&s, "depot_sync_edge_silence_seconds_max", &[]), 0.0);

    // dock-1 says hello with 5 events the cloud does not have yet.
    let sighting = Sighting {
        session: Some("s1".into()),
        version: Some("test".into()),
        head: Some(5),
        taking_back_after: Some(None),
        by_state: false,
        downlink_owner: None,
    };
    let edge = EdgeId::parse("dock-1").expect("edge id");
    app.wms.edge_seen(b, edge, sighting).await.expect("seen");
    let (s, text) = scrape(&app).await;
    assert_eq!((edges(&s, "online"), edges(&s, "offline")), (1.0, 1.0));
    assert_eq!(get(&s, "depot_sync_edge_backlog_events", &[]), 5.0);
    assert_eq!(get(&s, "depot_sync_edge_backlog_events_max", &[]), 5.0);
    assert_eq!(get(&s, "depot_sync_edges_taking_back", &[]), 0.0);
    let silence = value(&s, "depot_sync_edge_silence_seconds_max", &[]).expect("silence");
    assert!(silence >= 0.0, "{silence}");
    // Edges are counted, not named.
    assert!(!text.contains("dock-1"), "{text}");
}

/// A TCP relay to `upstream` whose connections all end when it is cut.
struct Relay {
    addr: std::net::SocketAddr,
    tasks: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Relay {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tasks = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let conns = tasks.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let conn = tokio::spawn(async move {
                    if let Ok(mut out) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
                conns.lock().expect("lock").push(conn.abort_handle());
            }
        });
        tasks.lock().expect("lock").push(accept.abort_handle());
        Self { addr, tasks }
    }

    fn cut(&self) {
        for t in self.tasks.lock().expect("lock").drain(..) {
            t.abort();
        }
    }
}

async fn gauge_at(url: &str, name: &str) -> Option<f64> {
    let text = Client::new(url).get("").await.text();
    value(&parse(&text).expect("exposition"), name, &[])
}

async fn until_gauge(url: &str, name: &str, want: f64) {
    depot_testkit::eventually(&format!("{name} to be {want}"), || async {
        gauge_at(url, name).await == Some(want)
    })
    .await;
}

const CONNECTED: &str = "depot_sync_broker_connected";
const REFUSED: &str = "depot_sync_broker_subscriptions_refused";

/// A cloud serving and syncing through a broker, on a database of its own.
struct SyncingCloud {
    /// Its `/metrics`.
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
    _dir: tempfile::TempDir,
}

impl SyncingCloud {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.server.await.expect("join").expect("serve");
    }
}

async fn syncing_cloud(broker_url: String) -> SyncingCloud {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = depot_cloud::settings::Settings {
        data_dir: dir.path().to_owned(),
        ..Default::default()
    };
    settings.broker.url = Some(broker_url);
    let wms = depot_wms::Wms::open(&settings.database(), "cloud").expect("open");
    let broker = depot_cloud::Broker::start(&settings).await.expect("broker");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/metrics", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        depot_cloud::Daemon::new(wms, settings.clone())
            .sync_through(&broker)
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    SyncingCloud {
        url,
        stop,
        server,
        _dir: dir,
    }
}

/// A cloud syncing through a broker it reaches over a relay: the gauge is
/// 1 once connected (and nothing refused) and 0 as soon as the relay is
/// cut. The API-only
/// server (`run`, no sync) has no such gauge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_connection_to_the_broker_up_then_down() {
    let app = cloud::spawn_cloud().await;
    let (s, _) = scrape(&app).await;
    assert_eq!(value(&s, CONNECTED, &[]), None);
    assert_eq!(value(&s, REFUSED, &[]), None);

    let broker = tokio::task::spawn_blocking(|| {
        depot_cloud::broker::EmbeddedBroker::start("127.0.0.1:0".parse().expect("addr"))
    })
    .await
    .expect("join")
    .expect("embedded broker");
    let relay = Relay::start(broker.addr).await;
    let cloud = syncing_cloud(format!("mqtt://{}", relay.addr)).await;
    until_gauge(&cloud.url, CONNECTED, 1.0).await;
    assert_eq!(gauge_at(&cloud.url, REFUSED).await, Some(0.0));
    relay.cut();
    until_gauge(&cloud.url, CONNECTED, 0.0).await;
    cloud.stop().await;
}

/// Connected to a broker whose rules let it subscribe to nothing (here
/// Mosquitto's dynamic security plugin, `DEPOT_TEST_MOSQUITTO`): the cloud
/// hears nothing from its edges, and says why on `/metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_that_refuses_the_subscriptions() {
    use depot_mqtt::testing::mosquitto::Mosquitto;
    let Some(mosquitto) =
        Mosquitto::refusing_subscriptions("the refused-subscription metrics test")
            .expect("start mosquitto")
    else {
        return;
    };
    let cloud = syncing_cloud(mosquitto.url()).await;
    until_gauge(&cloud.url, REFUSED, 1.0).await;
    assert_eq!(gauge_at(&cloud.url, CONNECTED).await, Some(1.0));
    // Gone with the connection: down, not refused.
    drop(mosquitto);
    until_gauge(&cloud.url, CONNECTED, 0.0).await;
    assert_eq!(gauge_at(&cloud.url, REFUSED).await, Some(0.0));
    cloud.stop().await;
}
