//! The resources `coapcc server` serves: a [`Handler`] over a fixed table of
//! paths, each a fixed-size payload (the testbed's resource, `docs/spec/testbed-spec.md`
//! §1.2), a text, a small store that PUT / POST / DELETE change, a large
//! deterministic representation, an upload resource, or an observable
//! resource ([`crate::observed`]: its representation changes every period;
//! the UDP server notifies its observers, RFC 7641).
//!
//! Over UDP, responses are block-wise (RFC 7959): a GET answered with 2.05
//! is sent in Block2 blocks when the request carries Block2 or the payload
//! is larger than the server's block size (Size2 when the request asks with
//! Size2 0), and a PUT / POST carrying Block1 to a store or upload resource
//! is reassembled ([`crate::uploads`]), each non-final block answered 2.31
//! Continue.
//!
//! Memory is bounded: the table is fixed at start-up, a store keeps at most
//! [`MAX_STORED`] bytes, an upload resource at most its limit, and at most
//! [`crate::uploads::MAX_UPLOADS`] uploads are in progress, so no request can
//! grow the server past that.

use std::net::SocketAddr;
use std::sync::Arc;

use coapcc_proto::block::{
    block_size, Block1Config, Block1Outcome, Block2Responder, BlockOptions, BlockValue,
};
use coapcc_proto::message::{option, Code, MessageView};
use coapcc_proto::server::{recognized_by_default, Handler, Response};

use crate::blockwise::{pattern, szx_of};
use crate::observed::Observable;
use crate::uploads::Uploads;

/// Largest payload a store resource keeps (one CoAP message's worth).
pub const MAX_STORED: usize = 1024;

/// Largest `bytes:` representation (16 MiB).
pub const MAX_BYTES: usize = 16 << 20;

/// Largest limit of an upload resource (16 MiB).
pub const MAX_UPLOAD: usize = 16 << 20;

/// The size of the standard table's `/big` resource (100 KiB).
pub const BIG: usize = 100 << 10;

/// The limit of the standard table's `/upload` resource (1 MiB).
pub const UPLOAD_LIMIT: usize = 1 << 20;

/// The period of the standard table's `/obs` resource.
pub const OBS_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

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
    /// GET → 2.05 with these bytes ([`crate::blockwise::pattern`]), block-wise
    /// over UDP; other methods → 4.05.
    Bytes(Arc<[u8]>),
    /// PUT / POST → 2.04 Changed with the body's length in decimal as the
    /// payload, keeping the body (4.13 with Size1 = `limit` if larger);
    /// GET → 2.05 with the last body kept (block-wise over UDP, its ETag the
    /// upload's sequence number); DELETE → 2.02, clearing it.
    Upload {
        /// The largest body accepted.
        limit: usize,
        /// The last body received.
        body: Vec<u8>,
        /// Bodies received so far (the ETag of GET responses).
        version: u32,
    },
    /// GET → 2.05 with the representation of the current change
    /// ([`Observable::representation`], text/plain); over UDP a GET with
    /// Observe = 0 registers for notifications ([`crate::observed`]);
    /// other methods → 4.05.
    Observe(Observable),
}

/// A table of resources by Uri-Path, plus `/.well-known/core` (RFC 6690)
/// listing them.
#[derive(Clone, Debug)]
pub struct Resources {
    entries: Vec<(String, Resource)>,
    core: String,
    /// Block2 settings (the largest block sent).
    block2: Block2Responder,
    /// The largest Block1 block asked for.
    block1_szx: u8,
    /// Uploads in progress (UDP).
    uploads: Uploads,
    /// The source of the request being handled (UDP; set by the server loop).
    peer: SocketAddr,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            entries: Vec::new(),
            core: String::new(),
            block2: Block2Responder::default(),
            block1_szx: coapcc_proto::block::MAX_SZX,
            uploads: Uploads::default(),
            peer: SocketAddr::from(([0, 0, 0, 0], 0)),
        }
    }
}

/// Content-Format application/link-format.
const LINK_FORMAT: u8 = 40;

impl Resources {
    /// An empty table.
    pub fn new() -> Self {
        Resources::default()
    }

    /// The table `coapcc server` serves by default: `/sense` (60 bytes, the
    /// testbed's response), `/large` (1000 bytes), `/hello` (text), `/store`,
    /// `/big` ([`BIG`] bytes of [`crate::blockwise::pattern`]), `/upload`
    /// (bodies up to [`UPLOAD_LIMIT`]) and `/obs` (observable, changing every
    /// [`OBS_PERIOD`], every fifth notification Confirmable).
    pub fn standard() -> Self {
        let mut r = Resources::new();
        r.add("sense", Resource::Fixed(60));
        r.add("large", Resource::Fixed(1000));
        r.add("hello", Resource::Text("Hello from coapcc".into()));
        r.add("store", Resource::Store(Vec::new()));
        r.add("big", Resource::Bytes(pattern(BIG).into()));
        r.add("upload", Resource::upload(UPLOAD_LIMIT));
        r.add(
            "obs",
            Resource::Observe(Observable::new(
                OBS_PERIOD,
                coapcc_proto::observe::ConfirmRule::default().every,
            )),
        );
        r
    }

    /// The largest block the server sends (Block2) and asks for (Block1): a
    /// power of two from 16 to 1024 (default 1024).
    pub fn set_block_size(&mut self, size: usize) -> Result<(), String> {
        let szx = szx_of(size)
            .ok_or_else(|| format!("block size {size}: expected a power of two from 16 to 1024"))?;
        self.block2.max_szx = szx;
        self.block1_szx = szx;
        Ok(())
    }

    /// The largest block the server sends.
    pub fn block_size(&self) -> usize {
        block_size(self.block2.max_szx)
    }

    /// Names the source of the next request handled (the UDP server loop
    /// calls it before each datagram): uploads are kept per source.
    pub fn set_peer(&mut self, peer: SocketAddr) {
        self.peer = peer;
    }

    /// Uploads in progress.
    pub fn uploads_in_progress(&self) -> usize {
        self.uploads.len()
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
            .map(|(p, r)| match r {
                Resource::Observe(_) => format!("</{p}>;obs"),
                _ => format!("</{p}>"),
            })
            .collect::<Vec<_>>()
            .join(",");
    }

    /// Parses `PATH=SIZE` (a fixed payload), `PATH=text:STRING`,
    /// `PATH=store`, `PATH=bytes:N` (N bytes of
    /// [`crate::blockwise::pattern`], up to [`MAX_BYTES`]),
    /// `PATH=upload:LIMIT` (up to [`MAX_UPLOAD`]) or
    /// `PATH=observe:PERIOD[:K]` ([`Observable::parse`]) and adds it.
    pub fn add_spec(&mut self, spec: &str) -> Result<(), String> {
        let (path, what) = spec.split_once('=').ok_or_else(|| {
            format!(
                "resource `{spec}`: expected PATH=SIZE, PATH=text:STRING, PATH=store, \
                 PATH=bytes:N, PATH=upload:LIMIT or PATH=observe:PERIOD[:K]"
            )
        })?;
        let number = |n: &str, max: usize| match n.parse::<usize>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!(
                "resource `{spec}`: expected a number of bytes from 0 to {max}"
            )),
        };
        let resource = if what == "store" {
            Resource::Store(Vec::new())
        } else if let Some(n) = what.strip_prefix("bytes:") {
            Resource::Bytes(pattern(number(n, MAX_BYTES)?).into())
        } else if let Some(n) = what.strip_prefix("upload:") {
            Resource::upload(number(n, MAX_UPLOAD)?)
        } else if let Some(o) = what.strip_prefix("observe:") {
            Resource::Observe(Observable::parse(o).map_err(|e| format!("resource `{spec}`: {e}"))?)
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

    /// The observable resources: path and definition.
    pub fn observables(&self) -> impl Iterator<Item = (&str, &Observable)> {
        self.entries.iter().filter_map(|(p, r)| match r {
            Resource::Observe(o) => Some((p.as_str(), o)),
            _ => None,
        })
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
            (Resource::Bytes(b), Code::GET) => {
                *resp_code = Code::CONTENT;
                resp_payload.extend_from_slice(b);
            }
            (Resource::Upload { body, version, .. }, Code::GET) => {
                *resp_code = Code::CONTENT;
                options.push((option::ETAG, version.to_be_bytes().to_vec()));
                resp_payload.extend_from_slice(body);
            }
            (
                Resource::Upload {
                    limit,
                    body,
                    version,
                },
                Code::PUT | Code::POST,
            ) => {
                if payload.len() > *limit {
                    *resp_code = Code::REQUEST_ENTITY_TOO_LARGE;
                    options.push((
                        option::SIZE1,
                        coapcc_proto::block::size_to_vec(coapcc_proto::block::size_value(*limit)),
                    ));
                } else {
                    body.clear();
                    body.extend_from_slice(payload);
                    *version = version.wrapping_add(1);
                    *resp_code = Code::CHANGED;
                    resp_payload.extend_from_slice(payload.len().to_string().as_bytes());
                }
            }
            (Resource::Upload { body, .. }, Code::DELETE) => {
                body.clear();
                *resp_code = Code::DELETED;
            }
            (Resource::Observe(o), Code::GET) => {
                *resp_code = Code::CONTENT;
                options.push((option::CONTENT_FORMAT, Vec::new()));
                let n = o.change_at(std::time::Instant::now());
                resp_payload.extend_from_slice(&o.representation(n));
            }
            _ => *resp_code = Code::METHOD_NOT_ALLOWED,
        }
    }

    /// The largest body a PUT / POST to the resource at `segments` takes
    /// block-wise, if it takes one.
    fn upload_limit<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        segments: impl Fn() -> I,
    ) -> Option<usize> {
        match self.find(segments)? {
            Resource::Store(_) => Some(MAX_STORED),
            Resource::Upload { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// The representation a GET of `segments` is answered with, when it is
    /// kept whole ([`Resource::Bytes`], [`Resource::Upload`]): its bytes
    /// and ETag.
    fn representation<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        segments: impl Fn() -> I,
    ) -> Option<(&[u8], Option<u32>)> {
        match self.find(segments)? {
            Resource::Bytes(b) => Some((b, None)),
            Resource::Upload { body, version, .. } => Some((body, Some(*version))),
            _ => None,
        }
    }

    /// Takes in a Block1 block of a PUT / POST: `Ok(Some(body))` once the
    /// body is complete (with the Block1 to echo), `Ok(None)` when the
    /// request carried no Block1 or the resource takes none, `Err(())` when
    /// `response` is already the answer (2.31, 4.08, 4.13, 4.00).
    #[allow(clippy::type_complexity)]
    fn receive<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        (code, segments, payload): (Code, &impl Fn() -> I, &[u8]),
        opts: &BlockOptions,
        response: &mut Response,
    ) -> Result<Option<(Vec<u8>, Option<BlockValue>)>, ()> {
        if !matches!(code, Code::PUT | Code::POST) || opts.block1.is_none() {
            return Ok(None);
        }
        let Some(limit) = self.upload_limit(segments) else {
            return Ok(None);
        };
        let path = segments()
            .map(String::from_utf8_lossy)
            .collect::<Vec<_>>()
            .join("/");
        let config = Block1Config {
            max_body: limit,
            max_szx: self.block1_szx,
        };
        let peer = self.peer;
        match self
            .uploads
            .on_request(peer, &path, config, opts.block1, opts.size1, payload)
        {
            Block1Outcome::Continue(b) => {
                response.code = Code::CONTINUE;
                response.options.push((option::BLOCK1, b.to_vec()));
                Err(())
            }
            Block1Outcome::Reject { code, size1 } => {
                response.code = code;
                if let Some(s) = size1 {
                    response
                        .options
                        .push((option::SIZE1, coapcc_proto::block::size_to_vec(s)));
                }
                Err(())
            }
            Block1Outcome::Complete { block1, body } => Ok(Some((body, block1))),
        }
    }
}

/// Puts the Block2 block of `body` that `opts` asks for into `response` (its
/// payload replaced; the whole body, with no Block2, when the request has no
/// Block2 and the body fits one block), with Size2 when asked, or the
/// refusal's code.
fn put_block2(
    responder: &Block2Responder,
    body: &[u8],
    opts: &BlockOptions,
    response: &mut Response,
) {
    match responder.respond(body, opts.block2, opts.size2.is_some()) {
        Ok(reply) => {
            response.payload.clear();
            response.payload.extend_from_slice(reply.payload);
            if let Some(b) = reply.block2 {
                response.options.push((option::BLOCK2, b.to_vec()));
            }
            if let Some(s) = reply.size2 {
                response
                    .options
                    .push((option::SIZE2, coapcc_proto::block::size_to_vec(s)));
            }
        }
        Err(refusal) => {
            response.code = refusal.code();
            response.payload.clear();
        }
    }
}

impl Resource {
    /// An upload resource taking bodies of at most `limit` bytes.
    pub fn upload(limit: usize) -> Self {
        Resource::Upload {
            limit,
            body: Vec::new(),
            version: 0,
        }
    }
}

impl Resources {
    /// Answers a request given by its code, Uri-Path segments, options and
    /// payload, block-wise (the module docs): what a UDP request gets, and a
    /// coap+tcp request carrying Block1 or Block2 (RFC 8323 §6).
    pub fn respond<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        (code, segments, payload): (Code, impl Fn() -> I, &[u8]),
        options: impl IntoIterator<Item = (u16, &'a [u8])>,
        response: &mut Response,
    ) {
        let opts = match BlockOptions::read(options) {
            Ok(o) => o,
            Err(e) => {
                response.code = e.response_code();
                return;
            }
        };
        if code == Code::GET {
            // Kept whole: the block is sliced from it, not copied whole.
            let block2 = self.block2;
            if let Some((body, etag)) = self.representation(&segments) {
                if let Some(v) = etag {
                    response
                        .options
                        .push((option::ETAG, v.to_be_bytes().to_vec()));
                }
                put_block2(&block2, body, &opts, response);
                return;
            }
        }
        let (body, echo) = match self.receive((code, &segments, payload), &opts, response) {
            Err(()) => return,
            Ok(Some((body, echo))) => (Some(body), echo),
            Ok(None) => (None, None),
        };
        self.answer(
            code,
            segments,
            body.as_deref().unwrap_or(payload),
            &mut response.code,
            &mut response.options,
            &mut response.payload,
        );
        if let Some(b) = echo {
            response.options.push((option::BLOCK1, b.to_vec()));
        }
        if response.code == Code::CONTENT {
            let whole = std::mem::take(&mut response.payload);
            put_block2(&self.block2, &whole, &opts, response);
        }
    }
}

impl Handler for Resources {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        self.respond(
            (request.code, || request.path_segments(), request.payload),
            request.options(),
            response,
        );
    }

    fn recognizes(&self, number: u16) -> bool {
        recognized_by_default(number) || matches!(number, option::BLOCK1 | option::BLOCK2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_proto::message::{MessageType, MessageWriter};

    fn call(r: &mut Resources, code: Code, path: &str, payload: &[u8]) -> Response {
        call_with(r, code, path, &[], payload)
    }

    /// A request with `extra` options (numbered above Uri-Path, ascending).
    fn call_with(
        r: &mut Resources,
        code: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
    ) -> Response {
        let mut buf = [0u8; 1152];
        let mut w = MessageWriter::new(&mut buf, MessageType::Con, code, 1, &[]).unwrap();
        for s in path.split('/').filter(|s| !s.is_empty()) {
            w.option(option::URI_PATH, s.as_bytes()).unwrap();
        }
        for (n, v) in extra {
            w.option(*n, v).unwrap();
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
            b"</sense>,</large>,</hello>,</store>,</big>,</upload>,</obs>;obs,</a/b>".to_vec()
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

    #[test]
    fn block_wise_responses_and_uploads() {
        let mut r = Resources::standard();
        // Block2 2/0/16 of /sense: bytes 32..48, more to come.
        let x = call_with(
            &mut r,
            Code::GET,
            "sense",
            &[(option::BLOCK2, &[0x20])],
            b"",
        );
        assert_eq!(x.payload.len(), 16);
        assert_eq!(x.options, vec![(option::BLOCK2, vec![0x28])]);
        // /big without Block2: the first 1024-byte block; Size2 when asked.
        let x = call_with(&mut r, Code::GET, "big", &[(option::SIZE2, &[])], b"");
        assert_eq!(x.payload, crate::blockwise::pattern(1024));
        assert!(x.options.contains(&(option::SIZE2, vec![0x01, 0x90, 0x00])));
        // Past the end: 4.02; SZX 7: 4.00.
        let past = call_with(
            &mut r,
            Code::GET,
            "sense",
            &[(option::BLOCK2, &[0x40])],
            b"",
        );
        assert_eq!(past.code, Code::BAD_OPTION);
        let bad = call_with(&mut r, Code::GET, "big", &[(option::BLOCK2, &[0x07])], b"");
        assert_eq!(bad.code, Code::BAD_REQUEST);
        // An upload in two blocks: 2.31 then 2.04 with the length.
        let x = call_with(
            &mut r,
            Code::PUT,
            "upload",
            &[(option::BLOCK1, &[0x08])],
            &[1; 16],
        );
        assert_eq!(
            (x.code, x.options.clone()),
            (Code::CONTINUE, vec![(option::BLOCK1, vec![0x08])])
        );
        let x = call_with(
            &mut r,
            Code::PUT,
            "upload",
            &[(option::BLOCK1, &[0x10])],
            &[2; 3],
        );
        assert_eq!((x.code, x.payload.as_slice()), (Code::CHANGED, &b"19"[..]));
        assert_eq!(x.options, vec![(option::BLOCK1, vec![0x10])]);
        let x = call(&mut r, Code::GET, "upload", b"");
        assert_eq!(x.payload.len(), 19);
        assert_eq!(x.options, vec![(option::ETAG, vec![0, 0, 0, 1])]);
        // Size1 past the limit: 4.13 with the limit.
        r.add_spec("tiny=upload:10").unwrap();
        let x = call_with(
            &mut r,
            Code::POST,
            "tiny",
            &[(option::BLOCK1, &[0x08]), (option::SIZE1, &[20])],
            &[0; 16],
        );
        assert_eq!(x.code, Code::REQUEST_ENTITY_TOO_LARGE);
        assert_eq!(x.options, vec![(option::SIZE1, vec![10])]);
        let x = call(&mut r, Code::POST, "tiny", &[0; 11]);
        assert_eq!(x.code, Code::REQUEST_ENTITY_TOO_LARGE);
        assert!(r.add_spec("b=bytes:99999999999").is_err());
        assert!(r.add_spec("u=upload:x").is_err());
        assert!(r.set_block_size(100).is_err());
    }
}
