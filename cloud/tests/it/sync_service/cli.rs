//! The admin commands that say which warehouses an edge serves, as a
//! technician runs them.

use super::process::admin;
use std::process::Command;

#[test]
fn the_warehouses_an_edge_serves_are_set_and_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    admin(d, &["business", "create", "--name", "A"]);
    admin(d, &["business", "create", "--name", "B"]);
    for (business, code) in [("1", "A1"), ("1", "A2"), ("2", "B1")] {
        admin(
            d,
            &[
                "warehouse",
                "create",
                "--business",
                business,
                "--code",
                code,
                "--name",
                code,
            ],
        );
    }
    let out = admin(
        d,
        &[
            "edge",
            "register",
            "--business",
            "1",
            "--edge",
            "a-1",
            "--warehouse",
            "1",
        ],
    );
    assert_eq!(
        out,
        "registered edge a-1 of business 1 as node 1, serving warehouse 1"
    );
    let list = admin(d, &["edge", "list", "--business", "1"]);
    assert!(list.contains("serves warehouse 1\tnone refused"), "{list}");
    let out = admin(
        d,
        &[
            "edge",
            "serve",
            "--business",
            "1",
            "--edge",
            "a-1",
            "--warehouse",
            "2",
            "--warehouse",
            "1",
        ],
    );
    assert_eq!(out, "edge a-1 of business 1 serves warehouses 1, 2");
    let out = admin(d, &["edge", "serve", "--business", "1", "--edge", "a-1"]);
    assert_eq!(
        out,
        "edge a-1 of business 1 serves every warehouse of its business"
    );
    // Another business's warehouse, and an edge that is not registered:
    // refused, and nothing changes.
    for args in [
        &["--edge", "a-1", "--warehouse", "3"][..],
        &["--edge", "b-9", "--warehouse", "1"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_depot-cloud"))
            .arg("--data-dir")
            .arg(d)
            .args(["edge", "serve", "--business", "1"])
            .args(args)
            .env("DEPOT_LOG", "warn")
            .output()
            .expect("run");
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("warehouse 3 is not one of business 1's")
                || err.contains("edge b-9 is not registered in business 1"),
            "{err}"
        );
    }
    let list = admin(d, &["edge", "list", "--business", "1"]);
    assert!(
        list.contains("serves every warehouse of its business"),
        "{list}"
    );
}

#[test]
fn a_business_gets_a_gs1_prefix_and_a_warehouse_its_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    admin(d, &["business", "create", "--name", "A"]);
    admin(d, &["business", "create", "--name", "B"]);
    admin(
        d,
        &[
            "warehouse",
            "create",
            "--business",
            "1",
            "--code",
            "MAD1",
            "--name",
            "Madrid",
            "--line1",
            "Calle de Alcalá 123",
            "--postal-code",
            "28009",
            "--city",
            "Madrid",
            "--country",
            "es",
        ],
    );
    let out = admin(
        d,
        &[
            "warehouse",
            "set",
            "--business",
            "1",
            "--id",
            "1",
            "--line2",
            "Muelle 4",
        ],
    );
    assert_eq!(
        out,
        "warehouse 1 (MAD1 Madrid): Calle de Alcalá 123, Muelle 4, 28009, Madrid, ES"
    );
    let out = admin(
        d,
        &["business", "set", "--id", "1", "--gs1-prefix", "4012345"],
    );
    assert_eq!(
        out,
        "business 1 numbers its parcels' SSCCs from GS1 company prefix 4012345"
    );
    // A prefix is one company's, and has the digits GS1 gives.
    for args in [
        &["--id", "2", "--gs1-prefix", "4012345"][..],
        &["--id", "2", "--gs1-prefix", "40-12345"][..],
        &["--id", "2"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_depot-cloud"))
            .arg("--data-dir")
            .arg(d)
            .args(["business", "set"])
            .args(args)
            .env("DEPOT_LOG", "warn")
            .output()
            .expect("run");
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("gs1") || err.contains("GS1") || err.contains("prefix"),
            "{args:?}: {err}"
        );
    }
    let out = admin(d, &["business", "set", "--id", "1", "--no-gs1-prefix"]);
    assert_eq!(out, "business 1 gives its parcels no SSCC");
}
