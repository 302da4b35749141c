//! The station routes without a browser: a typed scan down the scanner's path, the page served, and a failed pack retried or released.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_typed_scan_takes_the_scanners_path_and_the_page_is_served() {
    let mut floor = Floor::start("page-route").await;
    let b = floor.rig.business.0;
    let order = floor.order;

    // Typed, then from the scanner, then typed: one packing, in turn.
    let (status, body) = floor.typed(json!({"code": "MUG"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"]["message"],
        format!("MUG 1 of 2; 2 units left in order {order}")
    );
    assert_eq!(body["data"]["result"]["packing"]["remaining"], 2, "{body}");
    let e = last_event(&floor.api, b).await;
    assert_eq!(e["input"], json!({"scan": "MUG", "scanner": "keyboard"}));
    assert_eq!(e["message"], body["data"]["message"]);
    floor.scan(MUG_GTIN);
    eventually("the scanner's scan counted", || async {
        let (_, body) = floor.api.get("/v1/edge/stations").await;
        body["data"][0]["packing"]["remaining"] == 1
    })
    .await;

    // Refusals: the engine's (the station's status and message), the
    // route's own (the spec's error body).
    let (status, body) = floor.typed(json!({"code": "NOPE-404"})).await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let e = last_event(&floor.api, b).await;
    assert_eq!(
        (e["ok"].clone(), e["status"].clone()),
        (json!(false), json!(404))
    );
    assert_eq!(e["message"], body["message"]);
    let (status, body) = floor.typed(json!({"code": "MUG"})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["errors"][0]["name"], "MUG", "{body}");
    for bad in [
        json!({"code": ""}),
        json!({"code": "  "}),
        json!({"code": "X".repeat(8193)}),
    ] {
        let (status, body) = floor.typed(bad).await;
        assert_eq!(
            (
                status,
                body["error"].clone(),
                body["errors"][0]["name"].clone()
            ),
            (422, json!(1), json!("code")),
            "{body}"
        );
    }
    for (bad, name) in [
        (json!({"code": "TEA", "qty": 2}), "qty"),
        (json!({}), "code"),
    ] {
        let (status, body) = floor.typed(bad).await;
        assert_eq!(
            (status, body["errors"][0]["name"].clone()),
            (422, json!(name)),
            "{body}"
        );
    }
    let (status, body) = floor
        .api
        .call(
            "POST",
            "/v1/edge/stations/nope/scan",
            Some(json!({"code": "TEA"})),
        )
        .await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let anonymous = reqwest::Client::new();
    let r = anonymous
        .post(format!(
            "{}/v1/edge/stations/{STATION}/scan",
            floor.edge.base
        ))
        .json(&json!({"code": "TEA"}))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);
    let (_, body) = floor.api.get("/v1/edge/stations").await;
    assert_eq!(
        body["data"][0]["packing"]["remaining"], 1,
        "nothing counted"
    );

    // The last unit, typed: weighed, packed and labelled as from the scanner.
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 200, "{body}");
    let message = body["data"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("order {order} packed")) && message.contains("label queued"),
        "{body}"
    );
    floor
        .printer
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");

    // Documented.
    let (_, spec) = floor.api.get("/v1/openapi.json").await;
    let path = &spec["paths"]["/v1/edge/stations/{station}/scan"]["post"];
    assert!(path["requestBody"].is_object(), "{path}");

    // The page and its assets.
    let get = |path: String| {
        let url = format!("{}{path}", floor.edge.base);
        let client = anonymous.clone();
        async move {
            let r = client.get(url).send().await.expect("request");
            let header = |name: &str| {
                r.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let (kind, cache) = (header("content-type"), header("cache-control"));
            let status = r.status().as_u16();
            (status, kind, cache, r.text().await.expect("body"))
        }
    };
    let (status, kind, cache, page) = get(format!("/stations/{STATION}")).await;
    assert_eq!(
        (status, kind.as_str(), cache.as_str()),
        (200, "text/html; charset=utf-8", "no-cache")
    );
    assert!(page.contains(r#"data-station="pack-1""#), "{page}");
    for (asset, want) in [
        ("assets/app.js?v=", "text/javascript; charset=utf-8"),
        ("assets/style.css?v=", "text/css; charset=utf-8"),
    ] {
        let at = page
            .find(asset)
            .unwrap_or_else(|| panic!("{asset} in {page}"));
        let link = &page[at..page[at..].find('"').map_or(page.len(), |end| at + end)];
        let (status, kind, cache, body) = get(format!("/stations/{link}")).await;
        assert_eq!((status, kind.as_str()), (200, want), "{link}");
        assert!(cache.contains("immutable"), "{cache}");
        assert!(body.len() > 1000, "{link}");
    }
    let (status, kind, _, page) = get("/stations/%3Cb%3Enope".into()).await;
    assert_eq!((status, kind.as_str()), (404, "text/html; charset=utf-8"));
    assert!(
        page.contains("No such station") && page.contains("&lt;b&gt;nope"),
        "{page}"
    );
    let (status, ..) = get("/stations/assets/evil.js".into()).await;
    assert_eq!(status, 404);

    floor.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_pack_says_what_to_do_and_is_retried_or_released() {
    let floor = Floor::start("page-release").await;
    let (b, order) = (floor.rig.business.0, floor.order);
    // 1000 g expected (with the packaging); the package weighs 2 kg.
    floor.scale.set_weight("2.000".parse().expect("weight"));
    for code in ["MUG", "MUG"] {
        assert_eq!(floor.typed(json!({"code": code})).await.0, 200);
    }
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 422, "{body}");
    // What failed, and what to do: the spec's error body, errors by name.
    let said = format!("order {order} was not packed (the package weighs 2000 g");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&said)
            && message.ends_with("check its contents, then retry the pack, or release the order"),
        "{body}"
    );
    assert_eq!(
        (body["error"].clone(), body["errors"][0]["name"].clone()),
        (json!(1), json!("weight_g")),
        "{body}"
    );
    assert!(body["errors"][0]["status"].is_string(), "{body}");

    // Retried: weighed and refused again, once per key.
    let logged = station_events(&floor.api, b).await;
    let (status, first, _) = floor.keyed("pack", "retry-1", None).await;
    assert_eq!(status, 422, "{}", json_of(&first));
    assert_eq!(json_of(&first)["message"], body["message"]);
    let (status, again, replayed) = floor.keyed("pack", "retry-1", None).await;
    assert_eq!((status, replayed, &again), (422, true, &first));
    assert_eq!(station_events(&floor.api, b).await, logged + 1);

    // Released: the station idle, nothing packed, the units to keep.
    let (status, released, _) = floor.keyed("release", "release-1", None).await;
    let released = json_of(&released);
    assert_eq!(status, 200, "{released}");
    assert_eq!(
        released["data"]["message"],
        format!(
            "order {order} released, not packed: keep its 3 scanned units together with the order; it can be packed again later"
        )
    );
    assert_eq!(
        released["data"]["result"]["released"],
        json!({"task": "packing", "order_id": order.0})
    );
    let e = last_event(&floor.api, b).await;
    assert_eq!(
        (e["input"].clone(), e["ok"].clone(), e["task"].clone()),
        (json!({"release": {}}), json!(true), json!({"task": "idle"})),
        "{e}"
    );
    let (status, _, replayed) = floor.keyed("release", "release-1", None).await;
    assert_eq!((status, replayed), (200, true));
    assert_eq!(station_events(&floor.api, b).await, logged + 2);
    let (_, body) = floor.api.get("/v1/edge/stations").await;
    assert_eq!(
        (
            body["data"][0]["task"].clone(),
            body["data"][0]["packing"].clone()
        ),
        (json!({"task": "idle"}), Value::Null),
        "{body}"
    );
    let at_edge = floor
        .edge
        .wms
        .order(floor.rig.business, order)
        .await
        .expect("order");
    assert_eq!(at_edge.status, OrderStatus::Confirmed);
    // Nothing left to pack or release, said as such.
    let (status, body) = floor
        .api
        .call("POST", &format!("/v1/edge/stations/{STATION}/pack"), None)
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = floor
        .api
        .call(
            "POST",
            &format!("/v1/edge/stations/{STATION}/release"),
            None,
        )
        .await;
    assert_eq!(
        (status, body["data"]["message"].clone()),
        (
            200,
            json!(format!("station {STATION} has no task: nothing to release"))
        )
    );
    let (status, body) = floor
        .api
        .call("POST", "/v1/edge/stations/nope/release", None)
        .await;
    assert_eq!((status, body["error"].clone()), (404, json!(1)), "{body}");
    let r = reqwest::Client::new()
        .post(format!(
            "{}/v1/edge/stations/{STATION}/release",
            floor.edge.base
        ))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);

    // The order is still packable: set again, scanned, the right weight.
    let (status, body) = floor
        .api
        .call(
            "PUT",
            &format!("/v1/edge/stations/{STATION}/task"),
            Some(json!({"task": "packing", "order_id": order.0})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    floor.scale.set_weight("1.000".parse().expect("weight"));
    for code in ["MUG", "MUG"] {
        assert_eq!(floor.typed(json!({"code": code})).await.0, 200);
    }
    let (status, body) = floor.typed(json!({"code": "TEA"})).await;
    assert_eq!(status, 200, "{body}");
    floor
        .printer
        .wait_for_labels(1, LIMIT)
        .await
        .expect("the label");

    let (_, spec) = floor.api.get("/v1/openapi.json").await;
    let path = &spec["paths"]["/v1/edge/stations/{station}/release"]["post"];
    assert!(path["responses"]["200"].is_object(), "{path}");
    floor.stop().await;
}
