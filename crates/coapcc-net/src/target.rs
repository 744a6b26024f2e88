//! `coap://host:port/path` URIs (RFC 7252 §6.1), reduced to what a request
//! needs here: the server's socket address and the Uri-Path.

use std::net::SocketAddr;

use anyhow::{bail, Context, Result};

/// The default CoAP port.
pub const COAP_PORT: u16 = 5683;

/// A resolved request target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The server.
    pub addr: SocketAddr,
    /// Uri-Path, `/`-separated, without the leading slash, then `?` and the
    /// `&`-separated Uri-Query arguments if any; percent-decoded.
    pub path: String,
}

/// Parses a `coap://` URI and resolves its host (first address returned).
///
/// Fragments are refused (they never reach a server).
pub async fn resolve(uri: &str) -> Result<Target> {
    let (host, port, path) = split(uri)?;
    lookup(uri, host, port, path).await
}

/// Whether `uri` names CoAP over TCP (`coap+tcp://`, RFC 8323 §8.2).
pub fn is_tcp(uri: &str) -> bool {
    uri.get(..11)
        .is_some_and(|s| s.eq_ignore_ascii_case("coap+tcp://"))
}

/// Parses a `coap+tcp://` URI (default port 5683, RFC 8323 §8.2) and
/// resolves its host.
pub async fn resolve_tcp(uri: &str) -> Result<Target> {
    let (host, port, path) = split_scheme(uri, "coap+tcp")?;
    lookup(uri, host, port, path).await
}

async fn lookup(uri: &str, host: String, port: u16, path: String) -> Result<Target> {
    let addr = tokio::net::lookup_host((host.as_str(), port))
        .await
        .with_context(|| format!("{uri}: cannot resolve `{host}`"))?
        .next()
        .with_context(|| format!("{uri}: `{host}` has no address"))?;
    Ok(Target { addr, path })
}

/// Host, port and decoded path of a `coap://` URI.
pub fn split(uri: &str) -> Result<(String, u16, String)> {
    split_scheme(uri, "coap")
}

/// Host, port and decoded path of a URI of `scheme` (`coap` or `coap+tcp`).
pub fn split_scheme(uri: &str, scheme: &str) -> Result<(String, u16, String)> {
    let url = url::Url::parse(uri).with_context(|| format!("`{uri}`: not a URI"))?;
    if url.scheme() != scheme {
        bail!("`{uri}`: expected the {scheme}:// scheme");
    }
    if url.fragment().is_some() {
        bail!("`{uri}`: fragments are not supported");
    }
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.to_string(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => bail!("`{uri}`: no host"),
    };
    let mut segments = Vec::new();
    for s in url.path().split('/').filter(|s| !s.is_empty()) {
        let raw = percent_decode(s);
        if raw.contains('/') {
            bail!("`{uri}`: a path segment may not contain an encoded `/`");
        }
        segments.push(raw);
    }
    let mut path = segments.join("/");
    if let Some(q) = url.query().filter(|q| !q.is_empty()) {
        let args: Vec<String> = q.split('&').map(percent_decode).collect();
        if args.iter().any(|a| a.contains('&')) {
            bail!("`{uri}`: a query argument may not contain an encoded `&`");
        }
        path.push('?');
        path.push_str(&args.join("&"));
    }
    Ok((host, url.port().unwrap_or(COAP_PORT), path))
}

/// Percent-decodes one path segment (invalid escapes are kept as they are).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_host_port_path() {
        assert_eq!(
            split("coap://127.0.0.1:5999/a/b").unwrap(),
            ("127.0.0.1".into(), 5999, "a/b".into())
        );
        assert_eq!(
            split("coap://localhost/").unwrap(),
            ("localhost".into(), 5683, "".into())
        );
        assert_eq!(
            split("coap://[::1]:6000/x%20y").unwrap(),
            ("::1".into(), 6000, "x y".into())
        );
        assert!(split("http://a/").is_err());
        assert_eq!(split("coap://a/b?q=1&r").unwrap().2, "b?q=1&r");
        assert!(split("coap://a/b#f").is_err());
        assert!(split("coap://a/b%2Fc").is_err());
        assert!(split("coap+tcp://a/b").is_err());
        assert!(is_tcp("coap+tcp://a/b") && is_tcp("COAP+TCP://a/") && !is_tcp("coap://a/"));
        assert_eq!(
            split_scheme("coap+tcp://127.0.0.1/sense", "coap+tcp").unwrap(),
            ("127.0.0.1".into(), 5683, "sense".into())
        );
    }

    #[tokio::test]
    async fn resolves_loopback() {
        let t = resolve("coap://127.0.0.1:7000/sense").await.unwrap();
        assert_eq!(t.addr, "127.0.0.1:7000".parse().unwrap());
        assert_eq!(t.path, "sense");
    }
}
