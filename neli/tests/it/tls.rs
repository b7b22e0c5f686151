//! A real TLS endpoint for the Kafka tests: tansu behind a TLS-terminating
//! proxy, with a throwaway CA made at test time.
//!
//! tansu 0.6.0 accepts `--cert`/`--key` but its listener does not use them
//! (a TLS client gets "early eof"), so tansu listens in plain text on one
//! loopback port and advertises a second port, on which a small tokio-rustls
//! proxy terminates TLS and forwards the bytes (neli/KAFKA.md, "Tests against
//! real brokers"). Clients bootstrap on the TLS port and the metadata sends
//! them back to it. Everything listens on 127.0.0.1 only.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{RootCertStore, ServerConfig, server::WebPkiClientVerifier};

/// A certificate authority made for one test.
pub struct Ca {
    key: KeyPair,
    cert: rcgen::Certificate,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).expect("self-signed CA");
        Ca { key, cert }
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A leaf certificate for `names` (DNS names or IP addresses) signed by
    /// this CA, for a server or a client; (certificate PEM, key PEM, DER pair).
    pub fn issue(&self, names: &[&str], client: bool) -> Leaf {
        let key = KeyPair::generate().expect("leaf key");
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("neli"));
        params.extended_key_usages =
            vec![if client { ExtendedKeyUsagePurpose::ClientAuth } else { ExtendedKeyUsagePurpose::ServerAuth }];
        let cert = params.signed_by(&key, &self.cert, &self.key).expect("leaf certificate");
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }
}

pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

/// The certificate files a test hands to librdkafka, in a temporary directory.
pub struct Files {
    pub dir: PathBuf,
    /// The CA that signed the broker certificate.
    pub ca: PathBuf,
    /// Another CA: a client trusting only this one must refuse the broker.
    pub wrong_ca: PathBuf,
    /// A client certificate and key signed by `ca` (mutual TLS).
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TLS-terminating proxy on 127.0.0.1 forwarding to `upstream`.
pub struct Proxy {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start_proxy(listener: TcpListener, upstream: SocketAddr, config: Arc<ServerConfig>) -> Proxy {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("tls-proxy".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("proxy runtime");
            rt.block_on(async move {
                listener.set_nonblocking(true).expect("nonblocking listener");
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                let acceptor = TlsAcceptor::from(config);
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        accepted = listener.accept() => {
                            let Ok((socket, _)) = accepted else { continue };
                            let acceptor = acceptor.clone();
                            tokio::spawn(async move {
                                // A failed handshake (wrong CA on the client,
                                // no client certificate) just closes.
                                let Ok(mut tls) = acceptor.accept(socket).await else { return };
                                let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await else { return };
                                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                            });
                        }
                    }
                }
            });
        })
        .expect("proxy thread");
    Proxy { stop: Some(stop), thread: Some(thread) }
}

/// tansu reachable only over TLS (plus the files a client needs).
pub struct TlsTansu {
    /// `127.0.0.1:<TLS port>`: what clients bootstrap from.
    pub bootstrap: String,
    pub files: Files,
    _proxy: Proxy,
    _tansu: crate::kafka_tansu::Reap,
}

/// Whether the proxy demands a client certificate signed by the CA.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    None,
    Required,
}

fn free_port() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").expect("bind a loopback port")
}

/// Starts tansu on a plain port, advertising the TLS port of a proxy in
/// front of it. None (skip) when tansu is unavailable outside CI.
pub fn start(name: &str, client_auth: ClientAuth, extra_tansu_args: &[&str]) -> Option<TlsTansu> {
    let bin = crate::kafka_tansu::tansu_bin()?;
    let ca = Ca::new("neli test CA");
    let wrong = Ca::new("neli test CA (wrong)");
    let broker = ca.issue(&["127.0.0.1", "localhost"], false);
    let client = ca.issue(&["neli-client"], true);
    let dir = std::env::temp_dir().join(format!("neli-it-certs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let write = |file: &str, text: &str| {
        let p = dir.join(file);
        std::fs::write(&p, text).expect("write certificate file");
        p
    };
    let files = Files {
        ca: write("ca.pem", &ca.pem()),
        wrong_ca: write("wrong-ca.pem", &wrong.pem()),
        client_cert: write("client.pem", &client.cert_pem),
        client_key: write("client.key", &client.key_pem),
        dir: dir.clone(),
    };

    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("TLS versions");
    let builder = match client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        ClientAuth::Required => {
            let mut roots = RootCertStore::empty();
            roots.add(ca.cert.der().clone()).expect("CA root");
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("client verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(broker.key_der.clone()));
    let config = builder.with_single_cert(vec![broker.der.clone()], key).expect("server certificate");

    let tls_listener = free_port();
    let tls_port = tls_listener.local_addr().expect("TLS port").port();
    let plain_port = free_port().local_addr().expect("plain port").port();
    let listen = format!("tcp://127.0.0.1:{plain_port}");
    let advertised = format!("tcp://127.0.0.1:{tls_port}");
    let child = Command::new(&bin)
        .args(["broker", "--listener-url", &listen, "--advertised-listener-url", &advertised])
        .args(extra_tansu_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tansu");
    let tansu = crate::kafka_tansu::Reap(vec![child]);
    let plain = format!("127.0.0.1:{plain_port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(&plain).is_err() {
        assert!(Instant::now() < deadline, "tansu did not listen on {plain} within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let upstream: SocketAddr = plain.parse().expect("plain address");
    let proxy = start_proxy(tls_listener, upstream, Arc::new(config));
    Some(TlsTansu { bootstrap: format!("127.0.0.1:{tls_port}"), files, _proxy: proxy, _tansu: tansu })
}

pub fn path(p: &Path) -> String {
    p.display().to_string()
}
