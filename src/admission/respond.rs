//! A `Verdict` to an AdmissionReview response: denial with a message kubectl shows and one
//! cause per finding, warnings within the apiserver's limits, and audit annotations.

use kube::core::admission::{AdmissionResponse, AdmissionReview};
use kube::core::response::{StatusCause, StatusDetails};
use kube::core::DynamicObject;
use kube::core::Status;

use crate::engine::Verdict;
use crate::rules::Action;

/// At most this many warnings go back; the apiserver truncates large numbers of them.
pub const MAX_WARNINGS: usize = 20;
/// Warnings longer than this are cut; the apiserver truncates over 256 characters.
pub const MAX_WARNING_LEN: usize = 256;
/// At most this many findings go back as `status.details.causes` (one more says how many
/// were left out): a CRD update can draw thousands.
pub const MAX_CAUSES: usize = 100;
/// A cause's message is cut at this length.
pub const MAX_CAUSE_LEN: usize = 1024;
/// The deny message kubectl prints is cut at this length; the causes carry the rest.
const MAX_MESSAGE_LEN: usize = 1024;

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The refusal kubectl prints: as many findings as fit in `MAX_MESSAGE_LEN`, each whole,
/// then how many more there are and where to read them. A first finding longer than the
/// limit alone is cut at a word boundary.
fn deny_message(lines: &[String]) -> String {
    let head = format!("{} covenant violation(s): ", lines.len());
    let more = |n: usize| {
        format!("; and {n} more (see status.details.causes, or run `covenant check` on the document for all of them)")
    };
    let mut message = head.clone();
    for (i, line) in lines.iter().enumerate() {
        let separator = if i == 0 { "" } else { "; " };
        let rest = lines.len() - i - 1;
        let tail = if rest > 0 { more(rest).len() } else { 0 };
        if message.len() + separator.len() + line.len() + tail <= MAX_MESSAGE_LEN {
            message.push_str(separator);
            message.push_str(line);
            continue;
        }
        if i == 0 {
            let room = MAX_MESSAGE_LEN.saturating_sub(message.len() + tail + '…'.len_utf8());
            message.push_str(&cut_at_word(line, room));
            message.push('…');
            if rest > 0 {
                message.push_str(&more(rest));
            }
        } else {
            message.push_str(&more(lines.len() - i));
        }
        return message;
    }
    message
}

/// The longest prefix of `s` within `max` bytes that ends at a word boundary.
fn cut_at_word(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &s[..end];
    match cut.rfind(' ') {
        Some(i) if i > 0 => cut[..i].to_string(),
        _ => cut.to_string(),
    }
}

/// The response of the mutating webhook: allowed, with the JSONPatch when there is one
/// (`patchType: JSONPatch`, base64 on the wire) and the warnings of the mutation.
///
/// The patch goes out base64-encoded, as the apiserver reads a `[]byte` field from JSON: the
/// `kube` type serializes its bytes as a list of numbers, so the encoded review is fixed up
/// here rather than trusted.
pub fn respond_mutation(uid: &str, ops: &[serde_json::Value], warnings: &[String]) -> serde_json::Value {
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_string();
    response.allowed = true;
    response.result = Status::success();
    if !ops.is_empty() {
        match serde_json::from_value::<json_patch::Patch>(serde_json::Value::Array(ops.to_vec())) {
            Ok(patch) => match response.clone().with_patch(patch) {
                Ok(r) => response = r,
                Err(e) => tracing::error!(error = %e, "cannot encode the patch"),
            },
            Err(e) => tracing::error!(error = %e, "the planned patch is not RFC 6902"),
        }
    }
    if !warnings.is_empty() {
        response.warnings =
            Some(warnings.iter().take(MAX_WARNINGS).map(|w| truncate(w, MAX_WARNING_LEN)).collect());
    }
    let patch = response.patch.take();
    let mut review = serde_json::to_value(response.into_review()).unwrap_or(serde_json::Value::Null);
    if let (Some(bytes), Some(r)) = (patch, review.get_mut("response")) {
        use base64::Engine as _;
        r["patch"] = serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    review
}

/// The answer for a review covenant could not judge in time: admitted with `reason` as a
/// warning when the failure policy allows, else refused with it (code 503, so a client may
/// retry) — never answered as if judged.
pub fn respond_unjudged(uid: &str, allow: bool, reason: &str) -> AdmissionReview<DynamicObject> {
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_string();
    response.allowed = true;
    response.result = Status::success();
    if allow {
        response.warnings = Some(vec![truncate(reason, MAX_WARNING_LEN)]);
    } else {
        response = response.deny(truncate(reason, MAX_MESSAGE_LEN));
        response.result.status = Some(kube::core::response::StatusSummary::Failure);
        response.result.code = 503;
        response.result.reason = "ServiceUnavailable".into();
    }
    response.audit_annotations.insert("unjudged".into(), "deadline".into());
    response.into_review()
}

/// Build the response review for `uid` from a verdict, plus any extra warnings the
/// protocol layer has (such as an unknown operation).
pub fn respond(uid: &str, verdict: &Verdict, extra_warnings: &[String]) -> AdmissionReview<DynamicObject> {
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_string();
    response.allowed = true;
    response.result = Status::success();

    let denials: Vec<_> = verdict.at(Action::Deny).collect();
    if !denials.is_empty() {
        let message = deny_message(&denials.iter().map(|f| f.line()).collect::<Vec<_>>());
        // Capped like the warnings: the first MAX_CAUSES findings, then one cause saying how
        // many more there were and where to see them all.
        let mut causes: Vec<StatusCause> = denials
            .iter()
            .take(MAX_CAUSES)
            .map(|f| StatusCause {
                reason: f.rule.id.to_string(),
                message: truncate(&f.message, MAX_CAUSE_LEN),
                field: f.pointer.clone(),
            })
            .collect();
        if denials.len() > MAX_CAUSES {
            causes.push(StatusCause {
                reason: "covenant".into(),
                message: format!(
                    "{} more finding(s) not listed; run `covenant check` on the document to see them all",
                    denials.len() - MAX_CAUSES
                ),
                field: String::new(),
            });
        }
        response = response.deny(message);
        response.result.status = Some(kube::core::response::StatusSummary::Failure);
        response.result.code = 403;
        response.result.reason = "Forbidden".into();
        response.result.details = Some(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes,
            retry_after_seconds: 0,
        });
    }

    let mut warnings: Vec<String> = extra_warnings.to_vec();
    warnings.extend(verdict.at(Action::Warn).map(|f| f.line()));
    warnings.extend(verdict.expired.iter().map(|e| format!("covenant: {e}")));
    warnings.extend(verdict.unchecked.iter().map(|u| format!("covenant: {u}")));
    if !warnings.is_empty() {
        let total = warnings.len();
        if total > MAX_WARNINGS {
            warnings.truncate(MAX_WARNINGS - 1);
            warnings.push(format!("covenant: {} more warning(s) not shown", total - (MAX_WARNINGS - 1)));
        }
        response.warnings = Some(warnings.iter().map(|w| truncate(w, MAX_WARNING_LEN)).collect());
    }

    if !verdict.findings.is_empty() {
        let ids = verdict.rule_counts();
        response.audit_annotations.insert("rules".into(), ids.join(","));
        let audited: Vec<String> = verdict.at(Action::Audit).map(|f| f.line()).collect();
        if !audited.is_empty() {
            response.audit_annotations.insert("audit".into(), truncate(&audited.join("; "), 1024));
        }
    }
    if let Some(reason) = &verdict.exempted {
        response.audit_annotations.insert("exempted".into(), truncate(reason, 256));
    }

    response.into_review()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{lookup, Finding};
    use serde_json::Value;

    fn respond(uid: &str, verdict: &Verdict, extra: &[String]) -> Value {
        serde_json::to_value(super::respond(uid, verdict, extra)).unwrap()
    }

    fn finding(id: &str, action: Action) -> Finding {
        Finding::new(lookup(id).unwrap(), action, "/x", vec![("reason", "bad".into())])
    }

    #[test]
    fn allow_echoes_uid_and_version() {
        let v = respond("abc", &Verdict::default(), &[]);
        assert_eq!(v["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(v["kind"], "AdmissionReview");
        assert_eq!(v["response"]["uid"], "abc");
        assert_eq!(v["response"]["allowed"], true);
    }

    #[test]
    fn denial_carries_one_cause_per_finding() {
        let verdict = Verdict {
            family: Some("versioned"),
            findings: vec![finding("CVN-109", Action::Deny), finding("CVN-109", Action::Deny)],
            exempted: None,
            expired: Vec::new(),
            unchecked: Vec::new(),
        };
        let v = respond("abc", &verdict, &[]);
        let r = &v["response"];
        assert_eq!(r["allowed"], false);
        assert_eq!(r["status"]["code"], 403);
        assert!(r["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("2 covenant violation(s): CVN-109 /x: bad"));
        assert_eq!(r["status"]["details"]["causes"].as_array().unwrap().len(), 2);
        assert_eq!(r["status"]["details"]["causes"][0]["reason"], "CVN-109");
        assert_eq!(r["auditAnnotations"]["rules"], "CVN-109×2");
    }

    #[test]
    fn a_long_refusal_lists_whole_findings_and_says_how_many_more() {
        let long = |i: usize| {
            Finding::new(
                lookup("CVN-109").unwrap(),
                Action::Deny,
                format!("/x{i}"),
                vec![("reason", "word ".repeat(30))],
            )
        };
        let verdict = Verdict {
            family: None,
            findings: (0..20).map(long).collect(),
            exempted: None,
            expired: Vec::new(),
            unchecked: Vec::new(),
        };
        let v = respond("abc", &verdict, &[]);
        let message = v["response"]["status"]["message"].as_str().unwrap();
        assert!(message.len() <= MAX_MESSAGE_LEN, "{}", message.len());
        assert!(message.starts_with("20 covenant violation(s): CVN-109 /x0: word"), "{message}");
        let shown = message.matches("CVN-109").count();
        assert!(shown >= 2, "{message}");
        assert!(
            message.ends_with(&format!(
                "; and {} more (see status.details.causes, or run `covenant check` on the document for all of them)",
                20 - shown
            )),
            "{message}"
        );
        // Every finding shown is whole.
        assert_eq!(message.matches("word ".repeat(29).trim_end()).count(), shown);
        assert_eq!(v["response"]["status"]["details"]["causes"].as_array().unwrap().len(), 20);
        // Thousands of findings: the causes are capped, and the last says how many more.
        let verdict = Verdict {
            family: None,
            findings: (0..2500).map(long).collect(),
            exempted: None,
            expired: Vec::new(),
            unchecked: Vec::new(),
        };
        let v = respond("abc", &verdict, &[]);
        let causes = v["response"]["status"]["details"]["causes"].as_array().unwrap();
        assert_eq!(causes.len(), MAX_CAUSES + 1);
        assert!(causes[MAX_CAUSES]["message"].as_str().unwrap().starts_with("2400 more finding(s)"));
        // One finding longer than the limit is cut at a word, not mid-word.
        let huge = Finding::new(
            lookup("CVN-109").unwrap(),
            Action::Deny,
            "/y",
            vec![("reason", "abcdefg ".repeat(200))],
        );
        let verdict = Verdict { findings: vec![huge], ..Verdict::default() };
        let message =
            respond("abc", &verdict, &[])["response"]["status"]["message"].as_str().unwrap().to_string();
        assert!(message.len() <= MAX_MESSAGE_LEN && message.ends_with("abcdefg…"), "{message}");
    }

    #[test]
    fn warnings_are_capped_in_count_and_length() {
        let findings = (0..30).map(|_| finding("CVN-109", Action::Warn)).collect();
        let verdict = Verdict { findings, ..Verdict::default() };
        let long = "w".repeat(400);
        let v = respond("abc", &verdict, &[long]);
        let w = v["response"]["warnings"].as_array().unwrap();
        assert_eq!(w.len(), MAX_WARNINGS);
        assert!(w.iter().all(|s| s.as_str().unwrap().chars().count() <= MAX_WARNING_LEN));
        assert!(w.last().unwrap().as_str().unwrap().contains("more warning(s)"));
        assert_eq!(v["response"]["allowed"], true);
    }
}
