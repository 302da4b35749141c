//! Where deliveries may go. A tenant names the URL, so without care a
//! subscription could make the cloud call its own private network (the
//! broker, a metadata service): unless the settings allow private targets,
//! only `https://` to public addresses, checked when a subscription is saved
//! (for literal addresses) and at every connection (for names, whose
//! addresses can change).

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Whether an address is reachable on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => {
                let first = v6.segments()[0];
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (first & 0xfe00) == 0xfc00 // unique local
                    || (first & 0xffc0) == 0xfe80 // link-local
                    || (first == 0x2001 && v6.segments()[1] == 0x0db8)) // documentation
            }
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space
        || a >= 240)
}

/// Checks a subscription's URL: absolute, http(s), a host, no credentials
/// and no fragment; `https` and not a private literal address unless
/// `allow_private`. Answers it as parsed.
pub fn check_url(raw: &str, allow_private: bool) -> Result<String, String> {
    let url = Url::parse(raw).map_err(|e| format!("is not a URL: {e}"))?;
    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        "http" => return Err("must be https".into()),
        other => return Err(format!("must be https, not {other}")),
    }
    let Some(host) = url.host_str() else {
        return Err("must name a host".into());
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials: sign with the secret instead".into());
    }
    if url.fragment().is_some() {
        return Err("must not have a fragment".into());
    }
    if !allow_private {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return Err("must not be a loopback address".into());
        }
        let ip = host.parse::<IpAddr>().ok();
        if ip.is_some_and(|ip| !is_public(ip)) {
            return Err("must not be a private, loopback or link-local address".into());
        }
    }
    Ok(url.to_string())
}

/// Resolves names as the system does, keeping only public addresses: a
/// name that resolves only to private ones fails the attempt.
#[derive(Debug, Clone, Copy)]
pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| is_public(a.ip()))
                .collect();
            if found.is_empty() {
                return Err(format!("{host} resolves to no public address").into());
            }
            let addrs: Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_https_unless_allowed() {
        assert_eq!(
            check_url("https://hooks.example.com/in?x=1", false).as_deref(),
            Ok("https://hooks.example.com/in?x=1")
        );
        for (bad, says) in [
            ("http://hooks.example.com/", "https"),
            ("ftp://hooks.example.com/", "https"),
            ("https://10.0.0.8/", "private"),
            ("https://127.0.0.1:8080/", "private"),
            ("https://[::1]/", "private"),
            ("https://169.254.169.254/latest", "private"),
            ("https://[::ffff:192.168.1.1]/", "private"),
            ("https://localhost/", "loopback"),
            ("https://user:pw@hooks.example.com/", "credentials"),
            ("https://hooks.example.com/#x", "fragment"),
            ("hooks.example.com", "not a URL"),
        ] {
            let e = check_url(bad, false).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(check_url("http://127.0.0.1:9/hook", true).is_ok());
        assert!(check_url("ftp://127.0.0.1/", true).is_err());
    }

    #[test]
    fn public_addresses() {
        for ip in ["8.8.8.8", "2606:4700::1111", "100.128.0.1"] {
            assert!(is_public(ip.parse().expect("ip")), "{ip}");
        }
        for ip in [
            "100.64.0.1",
            "0.1.2.3",
            "fd00::1",
            "fe80::1",
            "::",
            "240.0.0.1",
            "224.0.0.1",
        ] {
            assert!(!is_public(ip.parse().expect("ip")), "{ip}");
        }
    }
}
