//! The Debian packages CI builds (.ci/run, packaging/README.md), taken
//! apart and then installed into a scratch root with the real dpkg: their
//! files, control fields, conffiles and maintainer scripts, and what the
//! scripts do. Runs where DEPOT_TEST_DEB_DIR names the directory holding
//! the .debs; prints why it skipped otherwise.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What one package must hold.
struct Pkg {
    name: &'static str,
    config: &'static str,
    udev: bool,
}

const EDGE: Pkg = Pkg {
    name: "depot-edge",
    config: "edge.toml",
    udev: true,
};
const CLOUD: Pkg = Pkg {
    name: "depot-cloud",
    config: "cloud.toml",
    udev: false,
};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn deb_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("DEPOT_TEST_DEB_DIR") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            println!(
                "note: {test} skipped: DEPOT_TEST_DEB_DIR is not set (.ci/run builds the packages with cargo-deb and sets it)"
            );
            None
        }
    }
}

/// The one `NAME_VERSION_ARCH.deb` in the directory, if any.
fn find_deb(dir: &Path, name: &str, arch: &str) -> Option<PathBuf> {
    let prefix = format!("{name}_");
    let suffix = format!("_{arch}.deb");
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("DEPOT_TEST_DEB_DIR is readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            let f = p.file_name().and_then(|f| f.to_str()).unwrap_or_default();
            f.starts_with(&prefix) && f.ends_with(&suffix)
        })
        .collect();
    assert!(
        found.len() <= 1,
        "more than one {name} for {arch}: {found:?}"
    );
    found.into_iter().next()
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn field(deb: &Path, name: &str) -> String {
    let out = run(Command::new("dpkg-deb").arg("-f").arg(deb).arg(name));
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ELF machine of a file: 0x3e x86-64, 0xb7 AArch64.
fn elf_machine(path: &Path) -> u16 {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(20).read_to_end(&mut head))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        head.len() == 20 && head[..4] == *b"\x7fELF" && head[4] == 2 && head[5] == 1,
        "{}: not a 64-bit little-endian ELF",
        path.display()
    );
    u16::from_le_bytes([head[18], head[19]])
}

/// Each entry `name` or `name (op version)`, nothing left for cargo-deb to
/// fill in, and the C library among them. A cross build's entries carry
/// the architecture (`libc6:arm64`): dpkg-shlibdeps read the cross libc.
fn check_depends(depends: &str, arch: &str) {
    let mut names = Vec::new();
    for dep in depends.split([',', '|']).map(str::trim) {
        let (name, version) = dep.split_once(' ').unwrap_or((dep, ""));
        let name = match name.split_once(':') {
            Some((name, qualifier)) => {
                assert_eq!(qualifier, arch, "Depends entry {dep:?}");
                name
            }
            None => name,
        };
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b)),
            "Depends entry {dep:?} in {depends:?}"
        );
        assert!(
            version.is_empty() || (version.starts_with('(') && version.ends_with(')')),
            "Depends entry {dep:?}"
        );
        names.push(name);
    }
    assert!(names.contains(&"libc6"), "Depends: {depends}");
}

/// Control fields, files, conffiles and scripts of one package; answers
/// the tree it was unpacked into.
fn check_deb(deb: &Path, pkg: &Pkg, arch: &str, machine: u16) -> tempfile::TempDir {
    assert_eq!(field(deb, "Package"), pkg.name);
    assert_eq!(field(deb, "Architecture"), arch);
    let version = field(deb, "Version");
    assert!(
        version.starts_with(&format!("{VERSION}-")),
        "{}: Version {version}, workspace {VERSION}",
        pkg.name
    );
    check_depends(&field(deb, "Depends"), arch);
    let description = field(deb, "Description");
    let synopsis = description.lines().next().unwrap_or_default();
    assert!(
        !synopsis.is_empty() && synopsis.len() < 80 && description.lines().count() > 1,
        "{}: a synopsis under 80 characters and a long description: {description}",
        pkg.name
    );

    let root = tempfile::tempdir().expect("tempdir");
    run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(root.path()));
    let r = root.path();
    let bin = r.join("usr/bin").join(pkg.name);
    let mode = std::fs::metadata(&bin)
        .expect("the binary")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "{}", bin.display());
    assert_eq!(elf_machine(&bin), machine, "{}", bin.display());

    // The unit runs the installed binary on the installed configuration,
    // and is the one in systemd/ (as are the other files from there).
    let unit = format!("{}.service", pkg.name);
    let unit_text =
        String::from_utf8(read(&r.join("lib/systemd/system").join(&unit))).expect("utf-8");
    let exec = format!(
        "ExecStart=/usr/bin/{} --config /etc/depot/{} serve",
        pkg.name, pkg.config
    );
    assert!(
        unit_text.lines().any(|l| l == exec),
        "{unit}: no line {exec}"
    );
    assert_eq!(
        unit_text.as_bytes(),
        read(&repo().join("systemd").join(&unit))
    );
    let sysusers = r.join(format!("usr/lib/sysusers.d/{}.conf", pkg.name));
    assert_eq!(
        read(&sysusers),
        read(&repo().join("systemd/depot.sysusers.conf"))
    );
    // The embedded fonts' licence travels with them.
    assert_eq!(
        read(&r.join("usr/share/doc").join(pkg.name).join("fonts-OFL.txt")),
        read(&repo().join("labels/fonts/OFL.txt"))
    );
    let rules = r.join("lib/udev/rules.d/60-depot.rules");
    if pkg.udev {
        assert_eq!(read(&rules), read(&repo().join("systemd/60-depot.rules")));
    } else {
        assert!(!rules.exists(), "{}: ships udev rules", pkg.name);
    }
    // The configuration and the template postinst compares it with are
    // the example the docs describe.
    let example = read(&repo().join("examples").join(pkg.config));
    assert_eq!(read(&r.join("etc/depot").join(pkg.config)), example);
    assert_eq!(
        read(&r.join("usr/share").join(pkg.name).join(pkg.config)),
        example
    );

    let control = tempfile::tempdir().expect("tempdir");
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(control.path()));
    let conffiles = String::from_utf8(read(&control.path().join("conffiles"))).expect("utf-8");
    let conffiles: Vec<&str> = conffiles.lines().collect();
    assert_eq!(conffiles, [format!("/etc/depot/{}", pkg.config)]);
    for script in ["postinst", "prerm", "postrm"] {
        let path = control.path().join(script);
        let text = String::from_utf8(read(&path)).expect("utf-8");
        assert!(
            text.starts_with("#!/bin/sh\n") && text.contains("\nset -e\n"),
            "{}: {script} is a set -e sh script",
            pkg.name
        );
        assert_eq!(
            std::fs::metadata(&path).expect("script").mode() & 0o111,
            0o111
        );
        run(Command::new("sh").arg("-n").arg(&path));
    }
    root
}

#[test]
fn the_amd64_packages_hold_the_service_its_unit_and_configuration() {
    let Some(dir) = deb_dir("the amd64 package check") else {
        return;
    };
    for pkg in [EDGE, CLOUD] {
        let deb = find_deb(&dir, pkg.name, "amd64")
            .unwrap_or_else(|| panic!("no {}_*_amd64.deb in {}", pkg.name, dir.display()));
        let root = check_deb(&deb, &pkg, "amd64", 0x3e);
        let out = run(Command::new(root.path().join("usr/bin").join(pkg.name)).arg("--version"));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains(VERSION), "{} --version: {said}", pkg.name);
    }
}

#[test]
fn the_arm64_packages_hold_aarch64_binaries() {
    let Some(dir) = deb_dir("the arm64 package check") else {
        return;
    };
    let mut checked = 0;
    for pkg in [EDGE, CLOUD] {
        match find_deb(&dir, pkg.name, "arm64") {
            Some(deb) => {
                check_deb(&deb, &pkg, "arm64", 0xb7);
                checked += 1;
            }
            None => println!("note: no {} arm64 package in {}", pkg.name, dir.display()),
        }
    }
    println!("checked {checked} arm64 package(s)");
}

/// `dpkg --root` runs the scripts on the host with DPKG_ROOT set
/// (--force-script-chrootless): they must make the user, set the
/// configuration's owner and mode, enable only a unit whose configuration
/// was edited, and on purge leave the data directory alone.
#[test]
fn dpkg_installs_both_into_a_scratch_root_and_purge_keeps_the_data() {
    let Some(dir) = deb_dir("the dpkg --root install") else {
        return;
    };
    let uid = run(Command::new("id").arg("-u"));
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        println!("note: the dpkg --root install skipped: it sets owners, which needs root");
        return;
    }
    for tool in ["systemd-sysusers", "deb-systemd-helper"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            println!("note: the dpkg --root install skipped: {tool} is not installed");
            return;
        }
    }
    let debs: Vec<PathBuf> = [EDGE, CLOUD]
        .iter()
        .map(|p| find_deb(&dir, p.name, "amd64").expect("the amd64 package"))
        .collect();
    let scratch = tempfile::tempdir().expect("tempdir");
    let r = scratch.path();
    let admin = r.join("var/lib/dpkg");
    for sub in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(sub)).expect("dpkg's database");
    }
    std::fs::write(admin.join("status"), "").expect("status");
    std::fs::write(admin.join("available"), "").expect("available");
    // The cloud's configuration, edited before the package comes (as an
    // image builder would): kept, and its unit enabled. The edge's stays
    // the template: not enabled.
    std::fs::create_dir_all(r.join("etc/depot")).expect("etc/depot");
    let edited = "listen = \"127.0.0.1:9090\"\n";
    std::fs::write(r.join("etc/depot/cloud.toml"), edited).expect("cloud.toml");

    let dpkg = |args: &[&str]| -> String {
        let mut cmd = Command::new("dpkg");
        cmd.arg(format!("--root={}", r.display()))
            .args([
                "--log=/dev/null",
                "--force-script-chrootless",
                "--force-depends",
            ])
            .args(args)
            .env_remove("DPKG_ROOT")
            .env_remove("DPKG_ADMINDIR");
        let out = run(&mut cmd);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut install = vec!["--force-confold".to_owned(), "-i".to_owned()];
    install.extend(debs.iter().map(|d| d.display().to_string()));
    let said = dpkg(&install.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        said.contains("/etc/depot/edge.toml is still the template"),
        "{said}"
    );

    for pkg in [EDGE, CLOUD] {
        let status = dpkg(&["-s", pkg.name]);
        assert!(
            status.contains("\nStatus: install ok installed\n"),
            "{status}"
        );
        let conffile = format!("\n /etc/depot/{} ", pkg.config);
        assert!(
            status.contains("\nConffiles:\n") && status.contains(&conffile),
            "{status}"
        );
    }

    let passwd = String::from_utf8(read(&r.join("etc/passwd"))).expect("utf-8");
    assert!(
        passwd
            .lines()
            .any(|l| l.starts_with("depot:") && l.contains(":/var/lib/depot:")),
        "{passwd}"
    );
    let group = String::from_utf8(read(&r.join("etc/group"))).expect("utf-8");
    let gid: u32 = group
        .lines()
        .find_map(|l| l.strip_prefix("depot:x:"))
        .and_then(|rest| rest.split(':').next())
        .and_then(|g| g.parse().ok())
        .unwrap_or_else(|| panic!("no group depot: {group}"));
    for (path, mode) in [
        ("etc/depot", 0o750),
        ("etc/depot/edge.toml", 0o640),
        ("etc/depot/cloud.toml", 0o640),
    ] {
        let meta = std::fs::metadata(r.join(path)).expect(path);
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o777),
            (0, gid, mode),
            "{path}"
        );
    }
    assert_eq!(read(&r.join("etc/depot/cloud.toml")), edited.as_bytes());
    assert!(r.join("etc/depot/cloud.toml.dpkg-dist").exists());

    let wants = r.join("etc/systemd/system/multi-user.target.wants");
    let link = std::fs::read_link(wants.join("depot-cloud.service")).expect("depot-cloud enabled");
    assert_eq!(link, Path::new("/lib/systemd/system/depot-cloud.service"));
    assert!(
        std::fs::symlink_metadata(wants.join("depot-edge.service")).is_err(),
        "depot-edge was enabled on the template"
    );

    // A database the edge made; purge must leave it where it is.
    std::fs::create_dir_all(r.join("var/lib/depot")).expect("var/lib/depot");
    std::fs::write(r.join("var/lib/depot/edge.db"), "the warehouse").expect("edge.db");
    let said = dpkg(&["-P", "depot-edge", "depot-cloud"]);
    assert!(said.contains("kept"), "{said}");
    assert_eq!(read(&r.join("var/lib/depot/edge.db")), b"the warehouse");
    assert!(!r.join("etc/depot").exists(), "purge left /etc/depot");
    assert!(!r.join("usr/bin/depot-edge").exists());
    assert!(std::fs::symlink_metadata(wants.join("depot-cloud.service")).is_err());
    let status = String::from_utf8(read(&admin.join("status"))).expect("utf-8");
    assert!(!status.contains("Package: depot-"), "{status}");
}
