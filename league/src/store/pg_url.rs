//! The store's connection string, and the TLS it asks for.
//!
//! The `postgres` crate parses a connection string itself (the URL form,
//! `postgres://USER:PASSWORD@HOST:PORT/DB?key=value&...`, and libpq's key=value form),
//! but of libpq's TLS settings it knows only `sslmode=disable|prefer|require`, and it
//! refuses `verify-ca`, `verify-full` and `sslrootcert` as unknown. So [`parse`] takes
//! `sslmode` and `sslrootcert` out of the string first, hands the rest to the crate,
//! and keeps them as a [`Tls`], which [`Tls::connector`] turns into the connector
//! (`postgres-native-tls`: OpenSSL, as libpq) with libpq's meaning:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` (the default) | when the server offers it | not checked |
//! | `require` | always | not checked, unless a root certificate is there (`sslrootcert`, or `~/.postgresql/root.crt`): then as `verify-ca` |
//! | `verify-ca` | always | signed by the root certificate |
//! | `verify-full` | always | signed by it, and made out to the host connected to |
//!
//! `sslrootcert=FILE` is a PEM file of the certificates to trust (only those);
//! `sslrootcert=system` trusts the system's; without it, `~/.postgresql/root.crt`, as
//! libpq. No message repeats the string (it may hold a password).

use std::path::PathBuf;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use postgres::config::{SslMode as CrateSslMode, SslNegotiation};
use postgres::Config;
use postgres_native_tls::MakeTlsConnector;

/// libpq's `sslmode`, all five of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => {
                return Err(format!(
                    "sslmode={value:?} is not one of disable, prefer, require, verify-ca, \
                     verify-full"
                ))
            }
        })
    }
}

/// The certificates a verified connection trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The certificates of this PEM file, and no others.
    File(PathBuf),
    /// The system's trusted certificates (`sslrootcert=system`).
    System,
}

/// The TLS a connection string asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tls {
    pub mode: SslMode,
    /// `sslrootcert`, when given.
    pub roots: Option<Roots>,
    /// `sslnegotiation=direct`: TLS from the first byte (it needs ALPN).
    direct: bool,
}

/// A connection string taken apart: the crate's configuration (its `sslmode` set from
/// ours), and the TLS to connect with.
pub(crate) fn parse(url: &str) -> Result<(Config, Tls), String> {
    let (rest, mode, roots) = take_tls_params(url)?;
    let mut config = Config::from_str(&rest).map_err(|e| {
        format!("not a valid PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB): {e}")
    })?;
    let mode = match mode {
        Some(value) => SslMode::parse(&value)?,
        None => SslMode::Prefer,
    };
    let roots = roots.map(|value| match value.as_str() {
        "system" => Roots::System,
        _ => Roots::File(PathBuf::from(value)),
    });
    config.ssl_mode(match mode {
        SslMode::Disable => CrateSslMode::Disable,
        SslMode::Prefer => CrateSslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => CrateSslMode::Require,
    });
    let direct = config.get_ssl_negotiation() == SslNegotiation::Direct;
    Ok((
        config,
        Tls {
            mode,
            roots,
            direct,
        },
    ))
}

/// libpq's default root certificate file, `~/.postgresql/root.crt`, when it exists.
fn default_roots() -> Option<Roots> {
    let home = std::env::var_os("HOME")?;
    let path = PathBuf::from(home).join(".postgresql").join("root.crt");
    path.is_file().then_some(Roots::File(path))
}

impl Tls {
    /// The connector: reads the root certificates, if the mode checks the server's.
    pub(crate) fn connector(&self) -> Result<MakeTlsConnector, String> {
        let mut builder = native_tls::TlsConnector::builder();
        let roots = self.roots.clone().or_else(default_roots);
        let checks = match self.mode {
            SslMode::Disable | SslMode::Prefer => None,
            SslMode::Require => roots.map(|r| (r, false)),
            SslMode::VerifyCa | SslMode::VerifyFull => {
                let roots = roots.ok_or_else(|| {
                    format!(
                        "sslmode={} checks the server's certificate, but there is no root \
                         certificate to check it with: add sslrootcert=FILE (a PEM file of the \
                         CA's certificate), or sslrootcert=system for the system's, or put it \
                         in ~/.postgresql/root.crt",
                        self.mode_name()
                    )
                })?;
                Some((roots, self.mode == SslMode::VerifyFull))
            }
        };
        match checks {
            None => {
                builder.danger_accept_invalid_certs(true);
            }
            Some((roots, full)) => {
                if let Roots::File(path) = roots {
                    let text = std::fs::read(&path).map_err(|e| {
                        format!("sslrootcert={}: cannot read it: {e}", path.display())
                    })?;
                    let certs = native_tls::Certificate::stack_from_pem(&text).map_err(|e| {
                        format!(
                            "sslrootcert={}: not a PEM file of certificates: {e}",
                            path.display()
                        )
                    })?;
                    if certs.is_empty() {
                        return Err(format!(
                            "sslrootcert={}: no certificate in it",
                            path.display()
                        ));
                    }
                    builder.disable_built_in_roots(true);
                    for cert in certs {
                        builder.add_root_certificate(cert);
                    }
                }
                builder.danger_accept_invalid_hostnames(!full);
            }
        }
        if self.direct {
            postgres_native_tls::set_postgresql_alpn(&mut builder);
        }
        let connector = builder
            .build()
            .map_err(|e| format!("cannot set up TLS: {e}"))?;
        Ok(MakeTlsConnector::new(connector))
    }

    fn mode_name(&self) -> &'static str {
        match self.mode {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Whether `e` is a TLS handshake that failed on something waiting will not cure: a
/// certificate refused, a server without TLS (and not the network failing under it,
/// which is an I/O error among its causes).
pub(crate) fn is_tls_refusal(e: &postgres::Error) -> bool {
    // The crate does not say its errors' kinds; a TLS failure's message is this.
    if e.to_string() != "error performing TLS handshake" {
        return false;
    }
    let mut next = std::error::Error::source(e);
    while let Some(cause) = next {
        if cause.is::<std::io::Error>() {
            return false;
        }
        next = cause.source();
    }
    true
}

/// `sslmode` and `sslrootcert` taken out of a connection string (their last values,
/// decoded), and the string without them.
type Taken = (String, Option<String>, Option<String>);

fn take_tls_params(url: &str) -> Result<Taken, String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        take_from_url(url)
    } else {
        take_from_key_values(url)
    }
}

/// The URL form: parameters after `?`, `&`-separated, percent-encoded.
fn take_from_url(url: &str) -> Result<Taken, String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), None, None));
    };
    let (mut mode, mut roots) = (None, None);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |text: &str| {
            percent_decode_str(text)
                .decode_utf8()
                .map(|t| t.into_owned())
                .map_err(|_| "a parameter of the URL is not UTF-8 once decoded".to_string())
        };
        match decode(key)?.as_str() {
            "sslmode" => mode = Some(decode(value)?),
            "sslrootcert" => roots = Some(decode(value)?),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, mode, roots))
}

/// libpq's key=value form: `key = value` pairs separated by blanks, a value in single
/// quotes when it has blanks, `\` escaping the next character.
fn take_from_key_values(text: &str) -> Result<Taken, String> {
    let (mut mode, mut roots) = (None, None);
    let mut kept = String::new();
    let mut chars = text.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            break;
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next_if(|(_, c)| *c == '=').is_none() {
            return Err(format!(
                "{key:?} in the connection string has no \"= value\""
            ));
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
        loop {
            match chars.next() {
                None if quoted => {
                    return Err(format!(
                        "the value of {key:?} in the connection string has no closing quote"
                    ))
                }
                None => break,
                Some((_, '\\')) => match chars.next() {
                    Some((_, c)) => value.push(c),
                    None => break,
                },
                Some((_, '\'')) if quoted => break,
                Some((_, c)) if !quoted && c.is_whitespace() => break,
                Some((_, c)) => value.push(c),
            }
        }
        let end = chars.peek().map_or(text.len(), |&(i, _)| i);
        match key.as_str() {
            "sslmode" => mode = Some(value),
            "sslrootcert" => roots = Some(value),
            _ => {
                kept.push_str(text[start..end].trim_end());
                kept.push(' ');
            }
        }
    }
    Ok((kept.trim_end().to_string(), mode, roots))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_parameters_are_taken_out_of_a_url_and_the_rest_is_kept() {
        let (config, tls) = parse(
            "postgres://hus:se%3Fcret@db.example:5433/league1?sslmode=verify-full&\
             application_name=x&sslrootcert=%2Fetc%2Fhus%2Fca%20file.pem",
        )
        .expect("parses");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(
            tls.roots,
            Some(Roots::File(PathBuf::from("/etc/hus/ca file.pem")))
        );
        assert_eq!(config.get_ssl_mode(), CrateSslMode::Require);
        assert_eq!(config.get_application_name(), Some("x"));
        assert_eq!(config.get_password(), Some(&b"se?cret"[..]));
        assert_eq!(config.get_dbname(), Some("league1"));

        let (config, tls) = parse("postgres://hus@db/l").expect("parses");
        assert_eq!((tls.mode, tls.roots), (SslMode::Prefer, None));
        assert_eq!(config.get_ssl_mode(), CrateSslMode::Prefer);
        let (config, tls) = parse("postgresql://hus@db/l?sslmode=disable").expect("parses");
        assert_eq!(tls.mode, SslMode::Disable);
        assert_eq!(config.get_ssl_mode(), CrateSslMode::Disable);
        let (_, tls) =
            parse("postgres://hus@db/l?sslrootcert=system&sslmode=verify-ca").expect("parses");
        assert_eq!(
            (tls.mode, tls.roots),
            (SslMode::VerifyCa, Some(Roots::System))
        );
    }

    #[test]
    fn the_tls_parameters_are_taken_out_of_the_key_value_form() {
        let (config, tls) = parse(
            "host=db.example  sslmode = verify-ca user=hus password='a b' \
             sslrootcert='/etc/hus/my ca.pem' dbname=l1",
        )
        .map_err(|e| e.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tls.mode, SslMode::VerifyCa);
        assert_eq!(
            tls.roots,
            Some(Roots::File(PathBuf::from("/etc/hus/my ca.pem")))
        );
        assert_eq!(config.get_user(), Some("hus"));
        assert_eq!(config.get_dbname(), Some("l1"));
        let (rest, mode, roots) =
            take_from_key_values(r"password='a \' b' sslmode=require host=h").expect("splits");
        assert_eq!(rest, r"password='a \' b' host=h");
        assert_eq!((mode.as_deref(), roots), (Some("require"), None));
    }

    #[test]
    fn a_bad_mode_or_a_missing_root_certificate_is_a_clear_error_without_the_password() {
        let err = parse("postgres://hus:hunter2@db/l?sslmode=verify").expect_err("refused");
        assert_eq!(
            err,
            "sslmode=\"verify\" is not one of disable, prefer, require, verify-ca, verify-full"
        );
        let err =
            parse("postgres://hus:hunter2@db/l?sslmode=require&nonsense=1").expect_err("refused");
        assert!(err.starts_with("not a valid PostgreSQL URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = take_from_key_values("host=db password='open").expect_err("refused");
        assert_eq!(
            err,
            "the value of \"password\" in the connection string has no closing quote"
        );
        let (_, tls) = parse("postgres://hus@db/l?sslmode=verify-full&sslrootcert=/nonexistent")
            .expect("parses");
        let err = tls.connector().err().expect("no such file");
        assert!(
            err.starts_with("sslrootcert=/nonexistent: cannot read it: "),
            "{err}"
        );
    }
}
