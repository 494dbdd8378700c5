//! Where a review is judged: on the connection's worker that read it, or handed to the
//! blocking pool. The engine says what a judgement costs (`Engine::cost`) and the cluster view
//! whether a lookup waits (`ClusterView::answers_without_waiting`); the decision is the
//! server's, here.

use crate::cluster::ClusterView;
use crate::engine::{Cost, Engine, Verdict};
use crate::subject::Subject;

/// Bodies up to this size are decoded on the worker that read them, and judged there when
/// `here` says so; larger ones are decoded and judged on the blocking pool in one hand-off:
/// megabytes of JSON are work the connection workers should not do.
pub const INLINE_DECODE: usize = 64 * 1024;

/// The verdict of a small review judged on the worker that read it, when a hand-off would
/// cost more than the judgement: a subject only the exemptions concern, or one whose
/// judgement is bounded by it while every lookup answers without waiting. `None`: hand it to
/// the blocking pool.
pub fn here(engine: &Engine, subject: &Subject, cluster: &dyn ClusterView) -> Option<Verdict> {
    match engine.cost(subject) {
        Cost::Exemptions => Some(engine.evaluate(subject, cluster)),
        Cost::Subject => engine.evaluate_without_waiting(subject, cluster),
        Cost::Open => None,
    }
}
