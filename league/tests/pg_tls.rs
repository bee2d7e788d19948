//! The PostgreSQL store over TLS, against a cluster that takes only TLS (`hostssl`)
//! with a certificate made for the test: `sslmode` and `sslrootcert` mean what they
//! mean to libpq.

use league::PgStore;

use crate::pg::{Certs, Postgres};

/// What connecting says: `Ok` or the error's message.
fn connect(url: &str) -> Result<(), String> {
    PgStore::connect(url).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn the_store_speaks_tls_as_sslmode_says_and_checks_the_server_against_its_ca() {
    let certs = Certs::make();
    let pg = Postgres::start_tls(&certs);
    let url = pg.fresh_db();
    let db = url.rsplit('/').next().unwrap_or_default().to_string();
    let ca = certs.path("ca.pem").display().to_string();
    let other = certs.path("other-ca.pem").display().to_string();
    let at = |host: &str, params: &str| format!("{}?{params}", pg.url_at(host, &db));
    let place = |host: &str| format!("the league store postgres://hus@{host}:{}/{db}", pg.port);

    // TLS without a check of the certificate: the default (prefer) and require.
    assert_eq!(connect(&url), Ok(()));
    assert_eq!(connect(&at("127.0.0.1", "sslmode=require")), Ok(()));
    // The certificate checked against the right CA, at both names it is made out to.
    for host in ["127.0.0.1", "localhost"] {
        let full = at(host, &format!("sslmode=verify-full&sslrootcert={ca}"));
        assert_eq!(connect(&full), Ok(()), "{host}");
    }
    // require with a root certificate checks the chain, as libpq does.
    let err = connect(&at(
        "127.0.0.1",
        &format!("sslmode=require&sslrootcert={other}"),
    ))
    .expect_err("another CA's certificate is refused");
    assert!(err.contains("certificate verify failed"), "{err}");

    // Another CA: refused, saying why.
    let err = connect(&at(
        "127.0.0.1",
        &format!("sslmode=verify-full&sslrootcert={other}"),
    ))
    .expect_err("another CA's certificate is refused");
    assert!(
        err.starts_with(&format!(
            "{}: cannot connect: error performing TLS handshake: ",
            place("127.0.0.1")
        )) && err.contains("certificate verify failed"),
        "{err}"
    );
    // 127.0.0.2 is the same server, but the certificate is not made out to it:
    // verify-ca (the chain only) connects, verify-full does not.
    assert_eq!(
        connect(&at(
            "127.0.0.2",
            &format!("sslmode=verify-ca&sslrootcert={ca}")
        )),
        Ok(())
    );
    let err = connect(&at(
        "127.0.0.2",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .expect_err("a certificate for another host is refused");
    assert!(
        err.starts_with(&format!("{}: cannot connect: ", place("127.0.0.2")))
            && err.contains("certificate verify failed")
            && err.contains("IP address mismatch"),
        "{err}"
    );
    // No TLS: the server refuses it (only hostssl lines).
    let err = connect(&at("127.0.0.1", "sslmode=disable")).expect_err("refused by the server");
    assert_eq!(
        err,
        format!(
            "{}: cannot connect: FATAL: no pg_hba.conf entry for host \"127.0.0.1\", \
             user \"hus\", database \"{db}\", no encryption",
            place("127.0.0.1")
        )
    );
}

#[test]
fn a_tls_mode_that_checks_with_nothing_to_check_with_is_refused_before_connecting() {
    // Port 9 (discard): nobody is asked; the message is about the URL.
    let err = connect(
        "postgres://hus:hunter2@127.0.0.1:9/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    )
    .expect_err("refused");
    assert!(
        err.starts_with("the league store URL: sslrootcert=/nonexistent/ca.pem: cannot read it: "),
        "{err}"
    );
    let err =
        connect("postgres://hus:hunter2@127.0.0.1:9/db?sslmode=verify-all").expect_err("refused");
    assert_eq!(
        err,
        "the league store URL: sslmode=\"verify-all\" is not one of disable, prefer, require, \
         verify-ca, verify-full"
    );
}
