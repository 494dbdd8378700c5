//! Development certificates: a CA and a serving certificate for a service DNS name, so
//! `serve --dev` and `covenant certs` can stand up TLS without cert-manager. ECDSA P-256
//! keys: a handshake costs the server about half of what RSA-2048 costs.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};

/// A generated CA and serving certificate, PEM encoded.
#[derive(Clone, Debug)]
pub struct DevCerts {
    /// The CA certificate (what the webhook configuration's caBundle holds).
    pub ca_pem: String,
    /// The CA's private key, so further leaves can be issued.
    pub ca_key_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// The serving key.
    pub key_pem: String,
}

/// Certificate generation that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The parameters ask for a certificate that could not serve.
    #[error("{0}")]
    Invalid(String),
    /// rcgen refused the parameters.
    #[error("cannot generate certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Whether `name` is a DNS name a certificate can carry: dot-separated labels of letters,
/// digits and hyphens (not at either end), each at most 63 characters, optionally led by
/// a `*.` wildcard.
fn is_dns_name(name: &str) -> bool {
    let name = name.strip_prefix("*.").unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// Paths of the files `write` creates.
#[derive(Clone, Debug)]
pub struct Written {
    /// `ca.crt`
    pub ca: PathBuf,
    /// `tls.crt`
    pub cert: PathBuf,
    /// `tls.key`
    pub key: PathBuf,
}

impl DevCerts {
    /// A new CA and a serving certificate for `names` (DNS names or IP addresses), valid for
    /// `days` days.
    pub fn generate(names: &[String], days: i64) -> Result<DevCerts, Error> {
        if days < 1 {
            return Err(Error::Invalid(format!(
                "--days {days}: a certificate valid for less than a day would be expired (or all but) when it is served; expected 1 or more"
            )));
        }
        if names.is_empty() {
            return Err(Error::Invalid("at least one --dns name is needed".into()));
        }
        for name in names {
            if name.parse::<std::net::IpAddr>().is_err() && !is_dns_name(name) {
                return Err(Error::Invalid(format!(
                    "--dns {name:?} is neither a DNS name (labels of letters, digits and '-', such as covenant.covenant-system.svc; '*.' may lead) nor an IP address"
                )));
            }
        }
        let now = time::OffsetDateTime::now_utc();
        let not_after = now + time::Duration::days(days);

        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.distinguished_name = DistinguishedName::new();
        ca.distinguished_name.push(DnType::CommonName, "covenant development CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        ca.not_before = now - time::Duration::minutes(5);
        ca.not_after = not_after;
        let ca_cert = ca.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca, &ca_key);

        let key = KeyPair::generate()?;
        let mut leaf = CertificateParams::new(names.to_vec())?;
        leaf.distinguished_name = DistinguishedName::new();
        leaf.distinguished_name.push(DnType::CommonName, names.first().cloned().unwrap_or_default());
        leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        leaf.not_before = now - time::Duration::minutes(5);
        leaf.not_after = not_after;
        let cert = leaf.signed_by(&key, &issuer)?;

        Ok(DevCerts {
            ca_pem: ca_cert.pem(),
            ca_key_pem: ca_key.serialize_pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The caBundle value for a webhook configuration: the CA certificate, base64.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes())
    }

    /// Write `ca.crt`, `tls.crt` and `tls.key` (mode 0600) into `dir`, creating it.
    pub fn write(&self, dir: &Path) -> Result<Written, Error> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| Error::Write { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let written = Written { ca: dir.join("ca.crt"), cert: dir.join("tls.crt"), key: dir.join("tls.key") };
        std::fs::write(&written.ca, &self.ca_pem).map_err(io(&written.ca))?;
        std::fs::write(&written.cert, &self.cert_pem).map_err(io(&written.cert))?;
        std::fs::write(&written.key, &self.key_pem).map_err(io(&written.key))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&written.key, std::fs::Permissions::from_mode(0o600))
                .map_err(io(&written.key))?;
        }
        Ok(written)
    }
}

/// The DNS names the shipped Service answers to, for `certs --kustomize` without `--dns`.
pub const SERVICE_NAMES: [&str; 2] =
    ["covenant.covenant-system.svc", "covenant.covenant-system.svc.cluster.local"];

impl DevCerts {
    /// Write a kustomize overlay into `dir` that installs `base` (covenant's `deploy/`)
    /// without cert-manager: the pair as the `covenant-tls` Secret, the CA as every webhook
    /// entry's caBundle, and cert-manager's Issuers, Certificates and inject annotation left
    /// out. The pair is written beside it (`ca.crt`, `tls.crt`, `tls.key`).
    pub fn write_kustomize(&self, dir: &Path, base: &Path) -> Result<Written, Error> {
        let written = self.write(dir)?;
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| Error::Write { path, source }
        };
        let base = crate::source::relative_to(base, dir)
            .map_err(|source| Error::Write { path: base.display().to_string(), source })?;
        let deleted = |kind: &str, name: &str| {
            format!(
                "  - patch: |-\n      $patch: delete\n      apiVersion: cert-manager.io/v1\n      kind: {kind}\n      metadata: {{name: {name}, namespace: covenant-system}}\n"
            )
        };
        let mut text = format!(
            "# Written by `covenant certs --kustomize`: covenant's deploy/ without cert-manager. The serving\n\
             # pair (tls.crt, tls.key: keep tls.key secret) becomes the covenant-tls Secret, the CA\n\
             # (ca.crt) every webhook entry's caBundle. Nothing renews them: run the command again\n\
             # before the certificate expires and apply again (`kubectl apply --server-side -k DIR`);\n\
             # covenant reloads the Secret without a restart.\n\
             apiVersion: kustomize.config.k8s.io/v1beta1\n\
             kind: Kustomization\n\
             resources:\n  - {base}\n  - ca-bundle.yaml\n\
             secretGenerator:\n  - name: covenant-tls\n    namespace: covenant-system\n    type: kubernetes.io/tls\n    files: [tls.crt, tls.key]\n    options:\n      disableNameSuffixHash: true\n\
             patches:\n",
            base = base.display()
        );
        for (kind, name) in [
            ("Certificate", "covenant-serving"),
            ("Certificate", "covenant-ca"),
            ("Issuer", "covenant-ca"),
            ("Issuer", "covenant-selfsigned"),
        ] {
            text.push_str(&deleted(kind, name));
        }
        text.push_str(
            "  - target:\n      group: admissionregistration.k8s.io\n      kind: ValidatingWebhookConfiguration|MutatingWebhookConfiguration\n    patch: |-\n      - op: remove\n        path: /metadata/annotations/cert-manager.io~1inject-ca-from\n\
             replacements:\n",
        );
        for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
            if kind.starts_with('V') {
                text.push_str("  - source: {kind: ConfigMap, name: covenant-ca-bundle, fieldPath: data.caBundle}\n    targets:\n");
            }
            text.push_str(&format!(
                "      - select: {{kind: {kind}}}\n        fieldPaths: [webhooks.*.clientConfig.caBundle]\n        options: {{create: true}}\n"
            ));
        }
        let bundle = format!(
            "# The CA every webhook entry trusts, read by kustomize only (local-config: never applied).\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: covenant-ca-bundle\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  caBundle: {}\n",
            self.ca_bundle()
        );
        let (k, b) = (dir.join("kustomization.yaml"), dir.join("ca-bundle.yaml"));
        std::fs::write(&k, text).map_err(io(&k))?;
        std::fs::write(&b, bundle).map_err(io(&b))?;
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expired_certificate_or_a_name_that_is_no_dns_name_is_refused() {
        let names = vec!["covenant.covenant-system.svc".to_string()];
        for days in [0, -3] {
            let e = DevCerts::generate(&names, days).unwrap_err().to_string();
            assert!(e.contains("--days") && e.contains("expected 1 or more"), "{e}");
        }
        for bad in ["not a name", "-lead.example", "a..b", "ünïcode.example", ""] {
            let e = DevCerts::generate(&[bad.to_string()], 30).unwrap_err().to_string();
            assert!(e.contains("neither a DNS name"), "{bad}: {e}");
        }
        for good in ["localhost", "*.covenant-system.svc", "127.0.0.1", "::1", "covenant.covenant-system.svc"]
        {
            assert!(DevCerts::generate(&[good.to_string()], 1).is_ok(), "{good}");
        }
    }

    #[test]
    fn generated_pair_is_pem_and_bundle_decodes() {
        let c = DevCerts::generate(&["covenant.covenant-system.svc".into()], 30).unwrap();
        assert!(c.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(c.key_pem.contains("PRIVATE KEY"));
        let decoded = base64::engine::general_purpose::STANDARD.decode(c.ca_bundle()).unwrap();
        assert_eq!(decoded, c.ca_pem.as_bytes());
    }
}
