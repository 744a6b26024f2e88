//! The resources `coapcc server` serves: a [`Handler`] over a fixed table of
//! paths, each a fixed-size payload (the testbed's resource, `docs/spec/testbed-spec.md`
//! §1.2), a text, or a small store that PUT / POST / DELETE change.
//!
//! Memory is bounded: the table is fixed at start-up and a store keeps at most
//! [`MAX_STORED`] bytes, so no request can grow the server.

use coapcc_proto::message::{option, Code, MessageView};
use coapcc_proto::server::{Handler, Response};

/// Largest payload a store resource keeps (one CoAP message's worth).
pub const MAX_STORED: usize = 1024;

/// What a path serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// GET → 2.05 with this many bytes (`x`); other methods → 4.05.
    Fixed(usize),
    /// GET → 2.05 with this text (content format text/plain); others → 4.05.
    Text(String),
    /// GET → 2.05 with the stored bytes; PUT / POST → 2.04 Changed, replacing
    /// them (4.13 if larger than [`MAX_STORED`]); DELETE → 2.02, clearing them.
    Store(Vec<u8>),
}

/// A table of resources by Uri-Path, plus `/.well-known/core` (RFC 6690)
/// listing them.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    entries: Vec<(String, Resource)>,
    core: String,
}

/// Content-Format application/link-format.
const LINK_FORMAT: u8 = 40;

impl Resources {
    /// An empty table.
    pub fn new() -> Self {
        Resources::default()
    }

    /// The table `coapcc server` serves by default: `/sense` (60 bytes, the
    /// testbed's response), `/large` (1000 bytes), `/hello` (text) and `/store`.
    pub fn standard() -> Self {
        let mut r = Resources::new();
        r.add("sense", Resource::Fixed(60));
        r.add("large", Resource::Fixed(1000));
        r.add("hello", Resource::Text("Hello from coapcc".into()));
        r.add("store", Resource::Store(Vec::new()));
        r
    }

    /// Adds (or replaces) the resource at `path` (`a/b`, leading slash optional).
    pub fn add(&mut self, path: &str, resource: Resource) {
        let path = path.trim_matches('/').to_string();
        match self.entries.iter_mut().find(|(p, _)| *p == path) {
            Some(e) => e.1 = resource,
            None => self.entries.push((path, resource)),
        }
        self.core = self
            .entries
            .iter()
            .map(|(p, _)| format!("</{p}>"))
            .collect::<Vec<_>>()
            .join(",");
    }

    /// Parses `PATH=SIZE` (a fixed payload), `PATH=text:STRING` or
    /// `PATH=store` and adds it.
    pub fn add_spec(&mut self, spec: &str) -> Result<(), String> {
        let (path, what) = spec.split_once('=').ok_or_else(|| {
            format!("resource `{spec}`: expected PATH=SIZE, PATH=text:STRING or PATH=store")
        })?;
        let resource = if what == "store" {
            Resource::Store(Vec::new())
        } else if let Some(t) = what.strip_prefix("text:") {
            Resource::Text(t.to_string())
        } else {
            match what.parse::<usize>() {
                Ok(n) if n <= MAX_STORED => Resource::Fixed(n),
                _ => {
                    return Err(format!(
                        "resource `{spec}`: size must be a number of bytes from 0 to {MAX_STORED}"
                    ))
                }
            }
        };
        self.add(path, resource);
        Ok(())
    }

    /// The paths served, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(p, _)| p.as_str())
    }

    fn find<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        segments: impl Fn() -> I,
    ) -> Option<&mut Resource> {
        self.entries.iter_mut().find_map(|(p, r)| {
            let mut want = p.split('/').filter(|s| !s.is_empty());
            let mut got = segments();
            loop {
                match (want.next(), got.next()) {
                    (None, None) => return Some(&mut *r),
                    (Some(a), Some(b)) if a.as_bytes() == b => {}
                    _ => return None,
                }
            }
        })
    }

    fn is_well_known_core<'a>(mut s: impl Iterator<Item = &'a [u8]>) -> bool {
        s.next() == Some(b".well-known") && s.next() == Some(b"core") && s.next().is_none()
    }

    /// Answers a request given by its code, its Uri-Path segments and its
    /// payload, over any transport: fills the response's code, options and
    /// payload (all three start empty / 2.05).
    pub fn answer<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        code: Code,
        segments: impl Fn() -> I,
        payload: &[u8],
        resp_code: &mut Code,
        options: &mut Vec<(u16, Vec<u8>)>,
        resp_payload: &mut Vec<u8>,
    ) {
        if Self::is_well_known_core(segments()) {
            if code == Code::GET {
                *resp_code = Code::CONTENT;
                options.push((option::CONTENT_FORMAT, vec![LINK_FORMAT]));
                resp_payload.extend_from_slice(self.core.as_bytes());
            } else {
                *resp_code = Code::METHOD_NOT_ALLOWED;
            }
            return;
        }
        let Some(resource) = self.find(segments) else {
            *resp_code = Code::NOT_FOUND;
            return;
        };
        match (resource, code) {
            (Resource::Fixed(n), Code::GET) => {
                *resp_code = Code::CONTENT;
                resp_payload.resize(*n, b'x');
            }
            (Resource::Text(t), Code::GET) => {
                *resp_code = Code::CONTENT;
                // text/plain is format 0: a uint option of value 0 is empty.
                options.push((option::CONTENT_FORMAT, Vec::new()));
                resp_payload.extend_from_slice(t.as_bytes());
            }
            (Resource::Store(s), Code::GET) => {
                *resp_code = Code::CONTENT;
                resp_payload.extend_from_slice(s);
            }
            (Resource::Store(s), Code::PUT | Code::POST) => {
                if payload.len() > MAX_STORED {
                    *resp_code = Code::REQUEST_ENTITY_TOO_LARGE;
                } else {
                    s.clear();
                    s.extend_from_slice(payload);
                    *resp_code = Code::CHANGED;
                }
            }
            (Resource::Store(s), Code::DELETE) => {
                s.clear();
                *resp_code = Code::DELETED;
            }
            _ => *resp_code = Code::METHOD_NOT_ALLOWED,
        }
    }
}

impl Handler for Resources {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        self.answer(
            request.code,
            || request.path_segments(),
            request.payload,
            &mut response.code,
            &mut response.options,
            &mut response.payload,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_proto::message::{MessageType, MessageWriter};

    fn call(r: &mut Resources, code: Code, path: &str, payload: &[u8]) -> Response {
        let mut buf = [0u8; 1152];
        let mut w = MessageWriter::new(&mut buf, MessageType::Con, code, 1, &[]).unwrap();
        for s in path.split('/').filter(|s| !s.is_empty()) {
            w.option(option::URI_PATH, s.as_bytes()).unwrap();
        }
        w.payload(payload).unwrap();
        let n = w.len();
        let view = MessageView::decode(&buf[..n]).unwrap();
        let mut resp = Response::default();
        resp.clear();
        r.handle(&view, &mut resp);
        resp
    }

    #[test]
    fn serves_fixed_text_store_and_core() {
        let mut r = Resources::standard();
        r.add_spec("a/b=7").unwrap();
        let x = call(&mut r, Code::GET, "/a/b", b"");
        assert_eq!(
            (x.code, x.payload.as_slice()),
            (Code::CONTENT, &b"xxxxxxx"[..])
        );
        assert_eq!(call(&mut r, Code::GET, "a", b"").code, Code::NOT_FOUND);
        assert_eq!(call(&mut r, Code::GET, "a/b/c", b"").code, Code::NOT_FOUND);
        assert_eq!(
            call(&mut r, Code::PUT, "sense", b"").code,
            Code::METHOD_NOT_ALLOWED
        );
        assert_eq!(call(&mut r, Code::GET, "sense", b"").payload.len(), 60);
        assert_eq!(call(&mut r, Code::PUT, "store", b"hi").code, Code::CHANGED);
        assert_eq!(call(&mut r, Code::GET, "store", b"").payload, b"hi");
        assert_eq!(call(&mut r, Code::DELETE, "store", b"").code, Code::DELETED);
        assert_eq!(call(&mut r, Code::GET, "store", b"").payload, b"");
        let core = call(&mut r, Code::GET, ".well-known/core", b"");
        assert_eq!(
            core.payload,
            b"</sense>,</large>,</hello>,</store>,</a/b>".to_vec()
        );
        let hello = call(&mut r, Code::GET, "hello", b"");
        assert_eq!(hello.payload, b"Hello from coapcc");
    }

    #[test]
    fn rejects_bad_specs_and_oversized_stores() {
        let mut r = Resources::new();
        assert!(r.add_spec("x").is_err());
        assert!(r.add_spec("x=2000").is_err());
        assert!(r.add_spec("x=abc").is_err());
        r.add_spec("t=text:hi").unwrap();
        r.add_spec("s=store").unwrap();
        assert_eq!(
            call(&mut r, Code::POST, "s", &[0u8; 1025]).code,
            Code::REQUEST_ENTITY_TOO_LARGE
        );
        assert_eq!(call(&mut r, Code::GET, "t", b"").payload, b"hi");
    }
}
