//! A `Verdict` to an AdmissionReview response: denial with a message kubectl shows and one
//! cause per finding, warnings within the apiserver's limits, and audit annotations.

use std::collections::BTreeMap;

use kube::core::response::{StatusCause, StatusDetails, StatusSummary};
use kube::core::Status;
use serde::Serialize;

use super::API_VERSION;

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

/// The AdmissionReview covenant answers with, as the API server reads it (`admission.k8s.io/v1`):
/// the request's uid borrowed, the rest built for this answer. Written straight from here, so an
/// answer costs its own strings and one buffer, and its audit annotations come out in one order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer<'a> {
    api_version: &'static str,
    kind: &'static str,
    /// The verdict.
    pub response: AnswerResponse<'a>,
}

/// The `response` of an answer. The members and their order are those of the API server's
/// `AdmissionResponse`; what is empty is left out.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerResponse<'a> {
    /// The request's uid, echoed.
    pub uid: &'a str,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// What kubectl shows of a refusal (`Success` when admitted).
    pub status: Status,
    /// The JSONPatch of a mutation, base64 as the API server reads a `[]byte` member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// `JSONPatch` beside a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// What the audit log records with the request.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<&'static str, String>,
    /// What kubectl prints as warnings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

impl<'a> Answer<'a> {
    /// An admission of the request `uid`, with nothing more to say.
    fn admit(uid: &'a str) -> Answer<'a> {
        Answer {
            api_version: API_VERSION,
            kind: "AdmissionReview",
            response: AnswerResponse {
                uid,
                allowed: true,
                status: Status::success(),
                patch: None,
                patch_type: None,
                audit_annotations: BTreeMap::new(),
                warnings: None,
            },
        }
    }

    /// A refusal: `message` for kubectl, with the HTTP-style `code` and `reason` of a Status.
    fn refuse(mut self, message: String, code: u16, reason: &str) -> Answer<'a> {
        let r = &mut self.response;
        r.allowed = false;
        r.status = Status {
            status: Some(StatusSummary::Failure),
            code,
            message,
            metadata: None,
            reason: reason.into(),
            details: None,
        };
        self
    }

    /// The answer's JSON, written into one buffer sized for a typical answer.
    pub fn to_bytes(&self) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        serde_json::to_writer(&mut out, self)?;
        Ok(out)
    }
}

/// The answer of the mutating webhook: allowed, with the JSONPatch when there is one
/// (`patchType: JSONPatch`, base64 on the wire) and the warnings of the mutation.
pub fn respond_mutation<'a>(uid: &'a str, ops: &[serde_json::Value], warnings: &[String]) -> Answer<'a> {
    let mut answer = Answer::admit(uid);
    if !ops.is_empty() {
        // The planned operations are checked to be RFC 6902 before they go out.
        let patch = serde_json::from_value::<json_patch::Patch>(serde_json::Value::Array(ops.to_vec()))
            .and_then(|patch| serde_json::to_vec(&patch));
        match patch {
            Ok(bytes) => {
                use base64::Engine as _;
                answer.response.patch = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
                answer.response.patch_type = Some("JSONPatch");
            }
            Err(e) => tracing::error!(error = %e, "the planned patch is not RFC 6902"),
        }
    }
    if !warnings.is_empty() {
        answer.response.warnings =
            Some(warnings.iter().take(MAX_WARNINGS).map(|w| truncate(w, MAX_WARNING_LEN)).collect());
    }
    answer
}

/// The answer for a review covenant could not judge in time: admitted with `reason` as a
/// warning when the failure policy allows, else refused with it (code 503, so a client may
/// retry) — never answered as if judged.
pub fn respond_unjudged<'a>(uid: &'a str, allow: bool, reason: &str) -> Answer<'a> {
    let mut answer = Answer::admit(uid);
    if allow {
        answer.response.warnings = Some(vec![truncate(reason, MAX_WARNING_LEN)]);
    } else {
        answer = answer.refuse(truncate(reason, MAX_MESSAGE_LEN), 503, "ServiceUnavailable");
    }
    answer.response.audit_annotations.insert("unjudged", "deadline".into());
    answer
}

/// The answer for `uid` from a verdict, plus any extra warnings the protocol layer has (such
/// as an unknown operation).
pub fn respond<'a>(uid: &'a str, verdict: &Verdict, extra_warnings: &[String]) -> Answer<'a> {
    let mut answer = Answer::admit(uid);

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
        answer = answer.refuse(message, 403, "Forbidden");
        answer.response.status.details = Some(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes,
            retry_after_seconds: 0,
        });
    }
    let response = &mut answer.response;

    let mut warnings: Vec<String> = extra_warnings.to_vec();
    warnings.extend(verdict.at(Action::Warn).map(|f| f.warning(MAX_WARNING_LEN)));
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
        response.audit_annotations.insert("rules", ids.join(","));
        let audited: Vec<String> = verdict.at(Action::Audit).map(|f| f.line()).collect();
        if !audited.is_empty() {
            response.audit_annotations.insert("audit", truncate(&audited.join("; "), 1024));
        }
    }
    if let Some(reason) = &verdict.exempted {
        response.audit_annotations.insert("exempted", truncate(reason, 256));
    }
    answer
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

    #[test]
    fn the_answer_is_written_as_the_api_server_reads_a_v1_review() {
        // Exactly these bytes: the members the API server declares, in its order, empty ones
        // left out, a patch in base64 beside its type, the audit annotations in one order.
        let admitted = super::respond("abc", &Verdict::default(), &[]).to_bytes().unwrap();
        assert_eq!(
            String::from_utf8(admitted).unwrap(),
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"abc","allowed":true,"status":{"status":"Success"}}}"#
        );
        let ops = [serde_json::json!({"op": "add", "path": "/metadata/labels/x", "value": "y"})];
        let patched = respond_mutation("abc", &ops, &["w".into()]).to_bytes().unwrap();
        assert_eq!(
            String::from_utf8(patched).unwrap(),
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"abc","allowed":true,"status":{"status":"Success"},"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscy94IiwidmFsdWUiOiJ5In1d","patchType":"JSONPatch","warnings":["w"]}}"#
        );
        let late = respond_unjudged("abc", false, "late").to_bytes().unwrap();
        assert_eq!(
            String::from_utf8(late).unwrap(),
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"abc","allowed":false,"status":{"status":"Failure","code":503,"message":"late","reason":"ServiceUnavailable"},"auditAnnotations":{"unjudged":"deadline"}}}"#
        );
        let verdict = Verdict {
            findings: vec![finding("CVN-109", Action::Deny)],
            exempted: Some("namespace kube-system".into()),
            ..Verdict::default()
        };
        let refused = String::from_utf8(super::respond("abc", &verdict, &[]).to_bytes().unwrap()).unwrap();
        assert!(
            refused.contains(r#""auditAnnotations":{"exempted":"namespace kube-system","rules":"CVN-109"}"#),
            "{refused}"
        );
    }
}
