//! The admission series of each review (`covenant_admission_requests_total`,
//! `covenant_admission_duration_seconds`), found by index.

use std::sync::Arc;

use crate::engine::Engine;
use crate::metrics::Metrics;
use crate::subject::Operation;

/// Which webhook a request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Webhook {
    /// Validating.
    Validate,
    /// Mutating.
    Mutate,
}

impl Webhook {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Webhook::Validate => "validate",
            Webhook::Mutate => "mutate",
        }
    }
}

/// A review's answer, as `covenant_admission_requests_total{decision}` counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Admitted as it was.
    Allowed,
    /// Refused.
    Denied,
    /// Admitted with a patch (the mutating webhook).
    Patched,
    /// Not judged by the request's deadline; the failure policy answered.
    Unjudged,
}

impl Decision {
    const ALL: [Decision; 4] = [Decision::Allowed, Decision::Denied, Decision::Patched, Decision::Unjudged];

    fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied => "denied",
            Decision::Patched => "patched",
            Decision::Unjudged => "unjudged",
        }
    }
}

/// The labels of a review's series, but its decision.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'a> {
    /// Which webhook answered.
    pub webhook: Webhook,
    /// The review's operation.
    pub operation: &'a Operation,
    /// Its group and kind, numbered by `AdmissionSeries::kind_of`.
    pub kind: usize,
    /// Whether it was a dry run.
    pub dry_run: bool,
}

/// Operations counted by name; any other is `other`.
const OPERATIONS: usize = 5;

impl Labels<'_> {
    /// The place of these labels in the table of durations.
    fn place(&self) -> usize {
        let webhook = usize::from(self.webhook == Webhook::Mutate);
        let operation = match self.operation {
            Operation::Create => 0,
            Operation::Update => 1,
            Operation::Delete => 2,
            Operation::Connect => 3,
            Operation::Other(_) => 4,
        };
        ((self.kind * 2 + webhook) * OPERATIONS + operation) * 2 + usize::from(self.dry_run)
    }

    /// The labels that are not the kind's.
    fn values(&self) -> [&'static str; 3] {
        [self.webhook.as_str(), self.operation.as_label(), if self.dry_run { "true" } else { "false" }]
    }
}

/// The admission series of each label set (`covenant_admission_requests_total`,
/// `covenant_admission_duration_seconds`), each found once and then by its place in a table:
/// `with_label_values` hashes every label and takes a lock, and each review counted itself
/// that way twice. A series appears in `/metrics` once a review has used it, as before.
pub struct AdmissionSeries {
    requests: prometheus::IntCounterVec,
    duration: prometheus::HistogramVec,
    engine: Arc<Engine>,
    counters: Box<[std::sync::OnceLock<prometheus::IntCounter>]>,
    durations: Box<[std::sync::OnceLock<prometheus::Histogram>]>,
}

impl AdmissionSeries {
    pub(crate) fn new(metrics: &Metrics, engine: Arc<Engine>) -> AdmissionSeries {
        let places = engine.metric_kinds().len() * 2 * OPERATIONS * 2;
        AdmissionSeries {
            requests: metrics.requests.clone(),
            duration: metrics.duration.clone(),
            counters: (0..places * Decision::ALL.len()).map(|_| Default::default()).collect(),
            durations: (0..places).map(|_| Default::default()).collect(),
            engine,
        }
    }

    /// The number a review of this group and kind is counted under (the engine's
    /// `MetricKinds`, the same engine this table was sized by).
    pub fn kind_of(&self, group: &str, kind: &str) -> usize {
        self.engine.metric_kinds().of_kind(group, kind)
    }

    /// Count a review answered.
    pub fn count(&self, labels: Labels<'_>, decision: Decision) {
        let place = labels.place() * Decision::ALL.len() + decision as usize;
        let counter = self.counters[place].get_or_init(|| {
            let (group, kind) = self.engine.metric_kinds().labels(labels.kind);
            let [webhook, operation, dry_run] = labels.values();
            self.requests.with_label_values(&[webhook, operation, group, kind, decision.as_str(), dry_run])
        });
        counter.inc();
    }

    /// Record how long a review took to answer.
    pub fn time(&self, labels: Labels<'_>, seconds: f64) {
        let histogram = self.durations[labels.place()].get_or_init(|| {
            let (group, kind) = self.engine.metric_kinds().labels(labels.kind);
            let [webhook, operation, dry_run] = labels.values();
            self.duration.with_label_values(&[webhook, operation, group, kind, dry_run])
        });
        histogram.observe(seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::EmptyCluster;
    use crate::config::Config;
    use crate::server::AppState;

    #[test]
    fn each_review_is_counted_in_its_own_series_and_made_up_kinds_share_other() {
        let state = AppState::new(&Config::embedded().unwrap(), Arc::new(EmptyCluster)).unwrap();
        let labels = |operation: &'static Operation, group: &str, kind: &str, dry_run: bool| Labels {
            webhook: Webhook::Validate,
            operation,
            kind: state.series.kind_of(group, kind),
            dry_run,
        };
        let component = labels(&Operation::Create, "openchoreo.dev", "Component", false);
        state.series.count(component, Decision::Allowed);
        state.series.count(component, Decision::Allowed);
        state.series.count(component, Decision::Denied);
        state
            .series
            .count(labels(&Operation::Update, "openchoreo.dev", "Component", true), Decision::Allowed);
        state.series.count(labels(&Operation::Create, "openchoreo.dev", "Made1", false), Decision::Allowed);
        state.series.count(labels(&Operation::Create, "made.example", "Made2", false), Decision::Allowed);
        state.series.count(labels(&Operation::Create, "made.example", "Made3", false), Decision::Allowed);
        state.series.time(component, 0.002);
        let counted = |decision: &str, operation: &str, group: &str, kind: &str, dry_run: &str| {
            state
                .metrics
                .requests
                .with_label_values(&["validate", operation, group, kind, decision, dry_run])
                .get()
        };
        assert_eq!(counted("allowed", "CREATE", "openchoreo.dev", "Component", "false"), 2);
        assert_eq!(counted("denied", "CREATE", "openchoreo.dev", "Component", "false"), 1);
        assert_eq!(counted("allowed", "UPDATE", "openchoreo.dev", "Component", "true"), 1);
        assert_eq!(counted("allowed", "CREATE", "openchoreo.dev", "other", "false"), 1);
        assert_eq!(counted("allowed", "CREATE", "other", "other", "false"), 2);
        let timed = state.metrics.duration.with_label_values(&[
            "validate",
            "CREATE",
            "openchoreo.dev",
            "Component",
            "false",
        ]);
        assert_eq!(timed.get_sample_count(), 1);
        // Nothing but what was used appears (the two `counted` reads above made none new).
        let families = state.registry.gather();
        let requests = families.iter().find(|f| f.name() == "covenant_admission_requests_total").unwrap();
        assert_eq!(requests.get_metric().len(), 5);
    }
}
