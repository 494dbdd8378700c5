//! Prometheus metrics, registered into a registry passed in (no globals), with bounded
//! labels only: never a namespace, object name, user, path or error text.

use prometheus::{
    Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};

/// Every metric covenant exports.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// `covenant_admission_requests_total{webhook,operation,group,kind,decision,dry_run}`
    pub requests: IntCounterVec,
    /// `covenant_admission_duration_seconds{webhook,operation,group,kind,dry_run}`
    pub duration: HistogramVec,
    /// `covenant_findings_total{rule,action}`
    pub findings: IntCounterVec,
    /// `covenant_patches_total{rule}`
    pub patches: IntCounterVec,
    /// `covenant_lookup_duration_seconds{resource}`
    pub lookup_duration: HistogramVec,
    /// `covenant_cache_objects{resource}`
    pub cache_objects: IntGaugeVec,
    /// `covenant_watch_up{resource}`: 1 while a watched resource's watch is up and its cache
    /// can be answered from, 0 while it lists for the first time or relists after an error.
    pub watch_up: IntGaugeVec,
    /// `covenant_tls_reloads_total{result}`
    pub tls_reloads: IntCounterVec,
    /// `covenant_tls_certificate_expiry_timestamp_seconds`
    pub certificate_expiry: Gauge,
    /// `covenant_build_info{version}`
    pub build_info: GaugeVec,
    /// `covenant_audit_findings{rule,kind}`: findings of the last completed audit run.
    pub audit_findings: IntGaugeVec,
    /// `covenant_audit_objects{kind}`: objects the last completed audit run checked.
    pub audit_objects: IntGaugeVec,
    /// `covenant_audit_runs_total{result}`: audit runs, `complete` or `partial` (a kind
    /// could not be listed).
    pub audit_runs: IntCounterVec,
    /// `covenant_audit_last_run_timestamp_seconds`: when the last audit run finished.
    pub audit_last_run: Gauge,
    /// `covenant_audit_duration_seconds`: how long the last audit run took.
    pub audit_duration: Gauge,
    /// `covenant_leader`: 1 on the replica that holds the leader Lease (and so audits), else 0.
    pub leader: IntGauge,
    /// `covenant_events_total{result}`: Events on objects written, forwarded to the leader,
    /// failed, or dropped by the rate limits.
    pub events: IntCounterVec,
    /// `covenant_connections_open{listener}`: connections being served.
    pub connections_open: IntGaugeVec,
    /// `covenant_connection_events_total{listener,event}`: what befell connections
    /// (`accept_failed`, `handshake_failed`, `handshake_timeout`, `idle_closed`, `error`) —
    /// counted, and logged only at a bounded rate.
    pub connection_events: IntCounterVec,
    /// `covenant_upgrade_gap`: constructs that declare no version (the number to watch reach
    /// zero).
    pub upgrade_gap: IntGauge,
    /// `covenant_construct_consumers{kind,name,version,how}`: consumers per construct version,
    /// `how` pinned, floating or frozen (in a release).
    pub construct_consumers: IntGaugeVec,
    /// `covenant_consumers_below_newest{kind,name}`: live consumers resolved below the newest
    /// supported version.
    pub consumers_below_newest: IntGaugeVec,
    /// `covenant_consumers_outside_window{kind,name}`: live consumers resolved outside the
    /// support window.
    pub consumers_outside_window: IntGaugeVec,
}

/// The events `connection_events` counts.
pub const CONNECTION_EVENTS: &[&str] =
    &["accept_failed", "handshake_failed", "handshake_timeout", "idle_closed", "error"];

/// Buckets from 1 ms to 5 s, with the apiserver's own 5 ms and 25 ms bounds among them.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];

impl Metrics {
    /// Set the upgrade-picture gauges from `covenant status`'s JSON, replacing what a
    /// construct no longer published left behind. Labels are bounded by the constructs the
    /// platform publishes.
    pub fn set_usage(&self, usage: &serde_json::Value) {
        self.construct_consumers.reset();
        self.consumers_below_newest.reset();
        self.consumers_outside_window.reset();
        self.upgrade_gap.set(usage["upgradeGap"].as_i64().unwrap_or(0));
        let count = |v: &serde_json::Value| v.as_array().map_or(0, Vec::len) as i64;
        for c in usage["constructs"].as_array().into_iter().flatten() {
            let (kind, name) = (c["kind"].as_str().unwrap_or(""), c["name"].as_str().unwrap_or(""));
            for v in c["versions"].as_array().into_iter().flatten() {
                let version = v["version"].as_str().unwrap_or("");
                for how in ["pinned", "floating", "frozen"] {
                    self.construct_consumers
                        .with_label_values(&[kind, name, version, how])
                        .set(count(&v["consumers"][how]));
                }
            }
            self.consumers_below_newest
                .with_label_values(&[kind, name])
                .set(c["belowNewest"].as_i64().unwrap_or(0));
            self.consumers_outside_window
                .with_label_values(&[kind, name])
                .set(c["outsideWindow"].as_i64().unwrap_or(0));
        }
    }

    /// Register every metric into `registry`.
    pub fn register(registry: &Registry) -> prometheus::Result<Metrics> {
        let ns = |name: &str, help: &str| Opts::new(name, help).namespace("covenant");
        let requests = IntCounterVec::new(
            ns("admission_requests_total", "Admission reviews answered, by decision."),
            &["webhook", "operation", "group", "kind", "decision", "dry_run"],
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new("admission_duration_seconds", "Time to answer an admission review.")
                .namespace("covenant")
                .buckets(BUCKETS.to_vec()),
            &["webhook", "operation", "group", "kind", "dry_run"],
        )?;
        let findings = IntCounterVec::new(
            ns("findings_total", "Findings reported, by rule and action."),
            &["rule", "action"],
        )?;
        let patches =
            IntCounterVec::new(ns("patches_total", "Patch operations written, by rule."), &["rule"])?;
        let lookup_duration = HistogramVec::new(
            HistogramOpts::new("lookup_duration_seconds", "Time of cluster lookups, by resource.")
                .namespace("covenant")
                .buckets(BUCKETS.to_vec()),
            &["resource"],
        )?;
        let cache_objects = IntGaugeVec::new(
            ns("cache_objects", "Objects held in the cluster cache, by resource."),
            &["resource"],
        )?;
        let watch_up = IntGaugeVec::new(
            ns(
                "watch_up",
                "1 while a watched resource's watch is up (its cache is answered from), 0 while it relists.",
            ),
            &["resource"],
        )?;
        let tls_reloads = IntCounterVec::new(
            ns("tls_reloads_total", "Serving certificate reloads, by result."),
            &["result"],
        )?;
        let certificate_expiry = Gauge::with_opts(ns(
            "tls_certificate_expiry_timestamp_seconds",
            "Unix time at which the serving certificate expires.",
        ))?;
        let build_info =
            GaugeVec::new(ns("build_info", "Always 1; labelled with the version."), &["version"])?;
        let audit_findings = IntGaugeVec::new(
            ns("audit_findings", "Findings of the last completed audit run, by rule and kind."),
            &["rule", "kind"],
        )?;
        let audit_objects = IntGaugeVec::new(
            ns("audit_objects", "Objects the last completed audit run checked, by kind."),
            &["kind"],
        )?;
        let audit_runs = IntCounterVec::new(
            ns("audit_runs_total", "Audit runs finished, by result (complete, partial)."),
            &["result"],
        )?;
        let audit_last_run = Gauge::with_opts(ns(
            "audit_last_run_timestamp_seconds",
            "Unix time at which the last audit run finished (0: none yet).",
        ))?;
        let audit_duration =
            Gauge::with_opts(ns("audit_duration_seconds", "How long the last audit run took."))?;
        let events = IntCounterVec::new(
            ns("events_total", "Events on objects: written, forwarded to the leader, failed (not written, or not handed to the leader), or dropped by the rate limits."),
            &["result"],
        )?;
        let leader = IntGauge::with_opts(ns(
            "leader",
            "1 on the replica that holds the leader Lease and so runs the audit and writes Events, else 0.",
        ))?;
        let connections_open = IntGaugeVec::new(
            ns("connections_open", "Connections being served, by listener."),
            &["listener"],
        )?;
        let connection_events = IntCounterVec::new(
            ns("connection_events_total", "What befell connections, by listener and event."),
            &["listener", "event"],
        )?;
        let upgrade_gap = IntGauge::with_opts(ns("upgrade_gap", "Constructs that declare no version."))?;
        let construct_consumers = IntGaugeVec::new(
            ns(
                "construct_consumers",
                "Consumers per construct version, pinned, floating or frozen in a release.",
            ),
            &["kind", "name", "version", "how"],
        )?;
        let consumers_below_newest = IntGaugeVec::new(
            ns(
                "consumers_below_newest",
                "Live consumers resolved below the newest supported version, by construct.",
            ),
            &["kind", "name"],
        )?;
        let consumers_outside_window = IntGaugeVec::new(
            ns(
                "consumers_outside_window",
                "Live consumers resolved outside the support window, by construct.",
            ),
            &["kind", "name"],
        )?;
        for m in [&construct_consumers, &consumers_below_newest, &consumers_outside_window] {
            registry.register(Box::new(m.clone()))?;
        }
        registry.register(Box::new(upgrade_gap.clone()))?;
        registry.register(Box::new(connections_open.clone()))?;
        registry.register(Box::new(connection_events.clone()))?;
        for listener in ["webhook", "admin"] {
            connections_open.with_label_values(&[listener]);
            for event in CONNECTION_EVENTS {
                connection_events.with_label_values(&[listener, event]);
            }
        }
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        registry.register(Box::new(findings.clone()))?;
        registry.register(Box::new(patches.clone()))?;
        registry.register(Box::new(lookup_duration.clone()))?;
        registry.register(Box::new(cache_objects.clone()))?;
        registry.register(Box::new(watch_up.clone()))?;
        registry.register(Box::new(tls_reloads.clone()))?;
        registry.register(Box::new(certificate_expiry.clone()))?;
        registry.register(Box::new(build_info.clone()))?;
        build_info.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1.0);
        registry.register(Box::new(audit_findings.clone()))?;
        registry.register(Box::new(audit_objects.clone()))?;
        registry.register(Box::new(audit_runs.clone()))?;
        registry.register(Box::new(audit_last_run.clone()))?;
        registry.register(Box::new(audit_duration.clone()))?;
        registry.register(Box::new(leader.clone()))?;
        registry.register(Box::new(events.clone()))?;
        for result in ["written", "failed", "dropped"] {
            events.with_label_values(&[result]);
        }
        // Every outcome exists from the start, at zero, so a dashboard's rate() or an alert
        // sees zero, not an absent series.
        for result in ["success", "failure"] {
            tls_reloads.with_label_values(&[result]);
        }
        for result in ["complete", "partial"] {
            audit_runs.with_label_values(&[result]);
        }
        Ok(Metrics {
            upgrade_gap,
            construct_consumers,
            consumers_below_newest,
            consumers_outside_window,
            requests,
            duration,
            findings,
            patches,
            lookup_duration,
            cache_objects,
            watch_up,
            tls_reloads,
            certificate_expiry,
            build_info,
            audit_findings,
            audit_objects,
            audit_runs,
            audit_last_run,
            audit_duration,
            leader,
            events,
            connections_open,
            connection_events,
        })
    }
}

/// Render a registry in the Prometheus text format.
pub fn render(registry: &Registry) -> String {
    use prometheus::Encoder;
    let mut out = Vec::new();
    let encoder = prometheus::TextEncoder::new();
    if encoder.encode(&registry.gather(), &mut out).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_register_and_render() {
        let registry = Registry::new();
        let m = Metrics::register(&registry).unwrap();
        m.requests.with_label_values(&["validate", "CREATE", "", "Pod", "allowed", "false"]).inc();
        let text = render(&registry);
        assert!(text.contains("covenant_admission_requests_total{"), "{text}");
        assert!(text.contains("covenant_build_info{version=\""), "{text}");
        assert!(text.contains("covenant_tls_reloads_total{result=\"failure\"} 0"), "{text}");
    }
}
