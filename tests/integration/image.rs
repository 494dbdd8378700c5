//! The image smoke test: the built image started exactly as `deploy/` runs it — the image's
//! entrypoint with the rendered Deployment's args, the config from `deploy/config`, a serving
//! certificate from `covenant certs`, as the non-root user on a read-only root filesystem —
//! then real reviews, then SIGTERM and a clean exit. A stand-in API server (plain HTTP on
//! loopback, named by a kubeconfig) is the cluster it watches.
//!
//! Ignored by `cargo test`: it needs a Docker daemon and a built image. `make image-smoke`
//! runs it (COVENANT_IMAGE names the image); `.ci/run` builds the image and runs it.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn docker(args: &[&str]) -> Output {
    Command::new("docker").args(args).output().expect("docker runs")
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The Deployment's container, as `kubectl kustomize deploy/` renders it (the manifest itself
/// where kubectl is not installed: the base patches nothing in it).
fn deployed_container() -> Value {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let text = match Command::new("kubectl").arg("kustomize").arg(&deploy).output() {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap(),
        _ => std::fs::read_to_string(deploy.join("deployment.yaml")).unwrap(),
    };
    let docs = covenant::source::parse_stream(&text).0;
    let d = docs.iter().find(|d| d.value["kind"] == "Deployment").expect("a Deployment");
    d.value["spec"]["template"]["spec"]["containers"][0].clone()
}

/// A mount path of the Deployment's container, by volume name.
fn mount(container: &Value, volume: &str) -> String {
    let mounts = container["volumeMounts"].as_array().unwrap();
    let m = mounts.iter().find(|m| m["name"] == volume).unwrap_or_else(|| panic!("no mount {volume}"));
    m["mountPath"].as_str().unwrap().to_string()
}

#[test]
#[ignore = "needs a Docker daemon and a built image: make image image-smoke"]
fn the_image_starts_as_deployed_answers_reviews_and_stops_cleanly_on_sigterm() {
    let image = std::env::var("COVENANT_IMAGE").unwrap_or_else(|_| "covenant:0.1.0".into());
    let container = deployed_container();
    assert!(container.get("command").is_none(), "the Deployment must run the image's entrypoint");
    let args: Vec<String> =
        container["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
    assert_eq!(args[0], "serve", "the Deployment's args name the subcommand; the entrypoint does not");
    let entrypoint =
        ok(docker(&["image", "inspect", "--format", "{{json .Config.Entrypoint}}", &image]), "inspect");
    assert_eq!(entrypoint, r#"["/usr/local/bin/covenant"]"#);
    let user = ok(docker(&["image", "inspect", "--format", "{{.Config.User}}", &image]), "inspect");
    assert_eq!(user, "65532:65532");
    let size: u64 =
        ok(docker(&["image", "inspect", "--format", "{{.Size}}", &image]), "inspect").parse().unwrap();

    // What the Deployment mounts: the config, the serving certificate, a kubeconfig for the
    // stand-in API server (in a cluster: the ServiceAccount token).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (config, tls, kube) = (root.join("config"), root.join("tls"), root.join("kube"));
    for d in [&config, &tls, &kube] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/config/covenant.yaml"),
        config.join("covenant.yaml"),
    )
    .unwrap();
    let certs = Command::new(env!("CARGO_BIN_EXE_covenant"))
        .args(["certs", "--dns", "localhost", "--dns", "covenant.covenant-system.svc", "--out"])
        .arg(&tls)
        .output()
        .unwrap();
    assert!(certs.status.success(), "{}", String::from_utf8_lossy(&certs.stderr));
    // The names cert-manager's Secret uses, where the Deployment reads them.
    for file in ["tls.crt", "tls.key"] {
        assert!(tls.join(file).is_file(), "covenant certs wrote no {file}");
        assert!(args.iter().any(|a| a.ends_with(&format!("/{file}"))), "{args:?}");
    }
    let ca = std::fs::read_to_string(tls.join("ca.crt")).unwrap();
    let mut fake = common::apiserver::Fake::default();
    let published = common::fixtures().join("openchoreo/published/ruby-service.yaml");
    for d in covenant::source::parse_stream(&std::fs::read_to_string(published).unwrap()).0 {
        fake.objects
            .entry(("openchoreo.dev".into(), "clustercomponenttypes".into()))
            .or_default()
            .push(d.value);
    }
    for (kind, namespaced) in [("ClusterComponentType", false), ("Component", true)] {
        fake.serve_openchoreo(kind, namespaced);
    }
    let api = common::apiserver::serve(fake);
    std::fs::write(
        kube.join("config"),
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"http://{api}\"}}}}]\nusers: [{{name: u, user: {{}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    // The container runs as 65532: everything it reads must be readable by anyone here.
    for entry in walk(root) {
        use std::os::unix::fs::PermissionsExt;
        let mode = if entry.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    let name = format!("covenant-smoke-{}", std::process::id());
    let volume = |host: &Path, at: String| format!("{}:{at}:ro", host.display());
    let mut run: Vec<String> = vec![
        "run".into(),
        "-d".into(),
        "--name".into(),
        name.clone(),
        "--network".into(),
        "host".into(),
        "--read-only".into(),
        "--user".into(),
        "65532:65532".into(),
        "--cap-drop".into(),
        "ALL".into(),
        "--security-opt".into(),
        "no-new-privileges".into(),
        "-v".into(),
        volume(&config, mount(&container, "config")),
        "-v".into(),
        volume(&tls, mount(&container, "tls")),
        "-v".into(),
        volume(&kube, "/etc/covenant/kube".into()),
        "-e".into(),
        "KUBECONFIG=/etc/covenant/kube/config".into(),
        image.clone(),
    ];
    run.extend(args.iter().cloned());
    let started = Instant::now();
    let run: Vec<&str> = run.iter().map(String::as_str).collect();
    ok(docker(&run), "docker run");
    let _cleanup = Remove(name.clone());

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let admin = "http://127.0.0.1:8080";
        let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = http.get(format!("{admin}/readyz")).send().await {
                if r.status() == 200 {
                    break;
                }
            }
            if Instant::now() > deadline {
                let logs = docker(&["logs", &name]);
                panic!("never ready; logs:\n{}{}", String::from_utf8_lossy(&logs.stdout), String::from_utf8_lossy(&logs.stderr));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let ready_after = started.elapsed();
        let addr: std::net::SocketAddr = "127.0.0.1:8443".parse().unwrap();
        for h2 in [true, false] {
            let client = common::client(&[&ca], addr, h2, None);
            let url = "https://localhost:8443/api/v0/validate?timeout=10s";
            // A Pod (no rule concerns it): allowed.
            let pod = std::fs::read(common::fixtures().join("admission/kube-rs/v1-create-pod-gke.json")).unwrap();
            let got: Value = common::post(&client, url, pod).await.json().await.unwrap();
            assert_eq!(got["response"]["allowed"], true, "{got}");
            // A Component pinned to a version the cluster does not publish: refused through
            // the live view, naming what is published.
            let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
                "metadata": {"name": "bakery-web", "namespace": "bakery"},
                "spec": {"owner": {"projectName": "bakery"},
                         "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "9"}}});
            let body = common::review("c", "openchoreo.dev", "Component", component);
            let got: Value = common::post(&client, url, body.to_string()).await.json().await.unwrap();
            let message = got["response"]["status"]["message"].as_str().unwrap_or_default().to_string();
            assert_eq!(got["response"]["allowed"], false, "{got}");
            assert!(message.contains("CVN-406") && message.contains("ruby-service-v2=2.0.0"), "{message}");
        }
        let metrics = http.get(format!("{admin}/metrics")).send().await.unwrap().text().await.unwrap();
        assert!(metrics.contains("covenant_admission_requests_total"), "{metrics}");
        // The read API answers on the pod's loopback (what `kubectl port-forward` reaches),
        // and the admin port, which the cluster reaches, does not serve it.
        let status = http.get("http://127.0.0.1:8081/api/v0/status").send().await.unwrap();
        assert_eq!(status.status(), 200);
        let elsewhere = http.get(format!("{admin}/api/v0/status")).send().await.unwrap();
        assert_eq!(elsewhere.status(), 404);
        eprintln!(
            "image {image}: {:.1} MiB, ready {:.0} ms after docker run",
            size as f64 / (1024.0 * 1024.0),
            ready_after.as_secs_f64() * 1000.0
        );
    });

    // SIGTERM: readiness drops, the drain delay passes, it exits 0.
    let stopping = Instant::now();
    ok(docker(&["kill", "--signal", "TERM", &name]), "docker kill");
    let code = ok(docker(&["wait", &name]), "docker wait");
    let logs = docker(&["logs", &name]);
    let logs = format!("{}{}", String::from_utf8_lossy(&logs.stdout), String::from_utf8_lossy(&logs.stderr));
    assert_eq!(code, "0", "exit code after SIGTERM; logs:\n{logs}");
    assert!(!logs.contains("panicked"), "{logs}");
    eprintln!("stopped {:.1} s after SIGTERM (drain delay included)", stopping.elapsed().as_secs_f64());
}

/// `docker run IMAGE serve --dev` works as the README says: as the image's non-root user it
/// writes its certificates to /tmp and serves (on the container's loopback).
#[test]
#[ignore = "needs a Docker daemon and a built image: make image image-smoke"]
fn the_image_runs_serve_dev() {
    let image = std::env::var("COVENANT_IMAGE").unwrap_or_else(|_| "covenant:0.1.0".into());
    let name = format!("covenant-dev-{}", std::process::id());
    ok(docker(&["run", "-d", "--name", &name, "--network", "none", &image, "serve", "--dev"]), "docker run");
    let _cleanup = Remove(name.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let logs = docker(&["logs", &name]);
        let (out, err) = (String::from_utf8_lossy(&logs.stdout), String::from_utf8_lossy(&logs.stderr));
        if out.contains("(dev) serving") && out.contains("certificates in /tmp/covenant-dev") {
            break;
        }
        let state = ok(docker(&["inspect", "--format", "{{.State.Running}}", &name]), "inspect");
        assert!(state == "true" && Instant::now() < deadline, "serve --dev did not start:\n{out}{err}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Removes the container however the test ends.
struct Remove(String);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rm", "-f", &self.0]).output();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
