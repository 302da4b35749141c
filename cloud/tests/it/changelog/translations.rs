//! Translation sync from a directory, followed to its end, and without a source.

use super::*;

fn write(dir: &Path, locale: &str, product: &str, version: &str, text: &str) {
    let d = dir.join(locale).join(product);
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(d.join(format!("{version}.md")), text).expect("file");
}

async fn follow(app: &TestCloud, token: &str, location: &str) -> Value {
    depot_testkit::eventually_some("the translation job to end", || async {
        let r = app
            .http
            .raw("GET", location)
            .header("authorization", format!("Bearer {token}"))
            .send()
            .await;
        assert_eq!(r.status, 200);
        let job = r.body;
        (job["status"] != "running").then_some(job)
    })
    .await
}

#[tokio::test]
async fn translation_sync_fills_missing_locales_and_reports_each_file() {
    let source = tempfile::tempdir().expect("tempdir");
    let dir = source.path().to_owned();
    let app = spawn_cloud_configured(|s| {
        s.changelog.translations_dir = Some(dir.clone());
    })
    .await;
    let token = writer_token(&app).await;
    publish_three(&app, &token).await;
    // Wanted: es and pt-BR for three releases, less the es 1.5.0 has: 5.
    write(
        &dir,
        "es",
        "wms",
        "1.4.0",
        "# Picking más rápido\n\n- Los escaneos tardan la mitad.\n",
    );
    write(
        &dir,
        "pt-BR",
        "wms",
        "1.4.0",
        "# Separação mais rápida\n- Metade do tempo.",
    );
    write(&dir, "pt-BR", "app", "2.0.0", "no title line here");
    // The Spanish of 1.5.0 exists already: a file for it is not read.
    write(&dir, "es", "wms", "1.5.0", "# Otro título\n");

    let (s, job) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 202, "{job}");
    let location = format!("/api/sync-translations/{}", job["job_id"]);
    let done = follow(&app, &token, &location).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["total"], 5);
    assert_eq!(done["done"], 5);
    assert_eq!(done["filled"], 2);
    assert_eq!(done["failed"], 1);
    assert_eq!(done["skipped"], 2);
    let err = &done["errors"][0];
    assert_eq!(
        (err["product"].as_str(), err["locale"].as_str()),
        (Some("app"), Some("pt-BR"))
    );
    assert!(
        err["reason"].as_str().unwrap_or("").contains("first line"),
        "{err}"
    );
    assert!(done["finished_at"].is_string());

    let es = list(&app, "?product=wms&version=1.4.0&locale=es").await;
    assert_eq!(es["data"][0]["title"], "Picking más rápido");
    assert_eq!(es["data"][0]["fallback"], false);
    assert_eq!(es["data"][0]["locales"], json!(["en", "es", "pt-BR"]));
    let kept = list(&app, "?product=wms&version=1.5.0&locale=es").await;
    assert_eq!(
        kept["data"][0]["title"], "Oleadas por zona",
        "never replaced"
    );

    // Mended, a second run fills what failed and finds nothing else to do.
    write(&dir, "pt-BR", "app", "2.0.0", "# Novo app\nModo escuro.");
    let (s, job) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 202, "{job}");
    let again = follow(
        &app,
        &token,
        &format!("/api/sync-translations/{}", job["job_id"]),
    )
    .await;
    assert_eq!(
        (
            again["status"].as_str(),
            again["total"].as_u64(),
            again["filled"].as_u64()
        ),
        (Some("completed"), Some(3), Some(1)),
        "{again}"
    );
    assert_eq!(
        list(&app, "?product=app&locale=pt-BR").await["data"][0]["title"],
        "Novo app"
    );

    // Jobs are the writers' business, and unknown ones are not found.
    let anon = app.http.raw("GET", &location).send().await;
    assert_eq!(anon.status, 401);
    let missing = app
        .http
        .raw("GET", "/api/sync-translations/999999")
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn translation_sync_without_a_source_is_a_conflict() {
    let app = spawn_cloud_configured(|_| {}).await;
    let token = writer_token(&app).await;
    let (s, b) = post(&app, &token, "/api/sync-translations", None).await;
    assert_eq!(s, 409, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap_or("")
            .contains("translations_dir"),
        "{b}"
    );
}

#[tokio::test]
async fn a_second_start_answers_the_running_job_and_starts_are_limited() {
    let source = tempfile::tempdir().expect("tempdir");
    let dir = source.path().to_owned();
    let app = spawn_cloud_configured(|s| {
        s.changelog.translations_dir = Some(dir.clone());
    })
    .await;
    let token = writer_token(&app).await;
    // A job running elsewhere (another instance, say).
    let now = depot_protocol::now();
    let running = match app
        .wms
        .start_translation_job(
            Some("elsewhere".into()),
            now,
            now - chrono::Duration::minutes(1),
        )
        .await
        .expect("start")
    {
        depot_wms::releases::JobStart::Started(job) => job,
        other => panic!("{other:?}"),
    };
    let mut statuses = Vec::new();
    for _ in 0..8 {
        let (s, job) = post(&app, &token, "/api/sync-translations", None).await;
        statuses.push(s);
        if s == 200 {
            assert_eq!(job["job_id"], running.job_id, "{job}");
        } else {
            assert_eq!(s, 429, "{job}");
            assert_eq!((&job["error"], &job["code"]), (&json!(1), &json!(429)));
            break;
        }
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429]);
}
