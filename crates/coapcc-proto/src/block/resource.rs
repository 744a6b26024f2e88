//! A block-wise resource as a server [`Handler`]: one representation served
//! to GET in Block2 blocks ([`Block2Responder`]), and request bodies taken
//! from PUT / POST in Block1 blocks ([`Block1Receiver`], one upload per
//! peer, RFC 7959 §2.5 matching blocks by endpoint). Every request of a
//! transfer is one exchange; a server's deduplication answers a repeated
//! Confirmable block from its cache, so each block reaches the handler once.
//!
//! A handler sees no addresses: the server loop names the source of each
//! request with [`BlockResource::set_peer`] before handing it over (as the
//! real server's resources do). A completed upload is kept for the
//! application ([`BlockResource::take_upload`]); nothing else outlives a
//! transfer, and at most [`BlockResource::max_uploads`] uploads are in
//! progress (a new one past that is refused with 5.03).

use std::collections::HashMap;
use std::hash::Hash;

use super::options::BlockOptions;
use super::receiver::{Block1Config, Block1Outcome, Block1Receiver};
use super::responder::Block2Responder;
use super::value::size_to_vec;
use crate::message::{option, Code, MessageView};
use crate::server::{recognized_by_default, Handler, Response};

/// A body that finished uploading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedUpload<P> {
    /// Who sent it.
    pub peer: P,
    /// The reassembled body.
    pub body: Vec<u8>,
}

/// The resource (see the module docs), for peers of type `P`.
#[derive(Clone, Debug)]
pub struct BlockResource<P> {
    representation: Vec<u8>,
    /// How GET is answered (the largest block sent).
    pub responder: Block2Responder,
    /// What uploads may be (the largest body, the block size asked for).
    pub receiver: Block1Config,
    /// Most uploads in progress at once.
    pub max_uploads: usize,
    uploads: HashMap<P, Block1Receiver>,
    peer: Option<P>,
    completed: Option<CompletedUpload<P>>,
}

impl<P: Copy + Eq + Hash> BlockResource<P> {
    /// A resource serving `representation`, with the default Block2 and
    /// Block1 settings and room for 1024 uploads at once.
    pub fn new(representation: Vec<u8>) -> Self {
        BlockResource {
            representation,
            responder: Block2Responder::default(),
            receiver: Block1Config::default(),
            max_uploads: 1024,
            uploads: HashMap::new(),
            peer: None,
            completed: None,
        }
    }

    /// The representation GET is answered with.
    pub fn representation(&self) -> &[u8] {
        &self.representation
    }

    /// Names the source of the next request handed over.
    pub fn set_peer(&mut self, peer: P) {
        self.peer = Some(peer);
    }

    /// Uploads in progress.
    pub fn uploads_in_progress(&self) -> usize {
        self.uploads.len()
    }

    /// The upload completed by the last request, if it completed one (it is
    /// kept until taken, or until the next upload completes).
    pub fn take_upload(&mut self) -> Option<CompletedUpload<P>> {
        self.completed.take()
    }

    fn get(&self, opts: &BlockOptions, response: &mut Response) {
        match self
            .responder
            .respond(&self.representation, opts.block2, opts.size2.is_some())
        {
            Ok(reply) => {
                response.code = Code::CONTENT;
                response.payload.extend_from_slice(reply.payload);
                if let Some(b) = reply.block2 {
                    response.options.push((option::BLOCK2, b.to_vec()));
                }
                if let Some(s) = reply.size2 {
                    response.options.push((option::SIZE2, size_to_vec(s)));
                }
            }
            Err(refusal) => response.code = refusal.code(),
        }
    }

    fn put(&mut self, request: &MessageView<'_>, opts: &BlockOptions, response: &mut Response) {
        let Some(peer) = self.peer else {
            response.code = Code::INTERNAL_SERVER_ERROR;
            return;
        };
        if !self.uploads.contains_key(&peer) && self.uploads.len() >= self.max_uploads {
            response.code = Code::SERVICE_UNAVAILABLE;
            return;
        }
        let receiver = self
            .uploads
            .entry(peer)
            .or_insert_with(|| Block1Receiver::new(self.receiver));
        let outcome = receiver.on_request(opts.block1, opts.size1, request.payload);
        if !receiver.is_active() {
            // Finished or refused: nothing to remember.
            self.uploads.remove(&peer);
        }
        match outcome {
            Block1Outcome::Continue(b) => {
                response.code = Code::CONTINUE;
                response.options.push((option::BLOCK1, b.to_vec()));
            }
            Block1Outcome::Reject { code, size1 } => {
                response.code = code;
                if let Some(s) = size1 {
                    response.options.push((option::SIZE1, size_to_vec(s)));
                }
            }
            Block1Outcome::Complete { block1, body } => {
                response.code = Code::CHANGED;
                if let Some(b) = block1 {
                    response.options.push((option::BLOCK1, b.to_vec()));
                }
                self.completed = Some(CompletedUpload { peer, body });
            }
        }
    }
}

impl<P: Copy + Eq + Hash> Handler for BlockResource<P> {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        let opts = match BlockOptions::read(request.options()) {
            Ok(o) => o,
            Err(e) => {
                response.code = e.response_code();
                return;
            }
        };
        match request.code {
            Code::GET => self.get(&opts, response),
            Code::PUT | Code::POST => self.put(request, &opts, response),
            _ => response.code = Code::METHOD_NOT_ALLOWED,
        }
    }

    fn recognizes(&self, number: u16) -> bool {
        recognized_by_default(number) || matches!(number, option::BLOCK1 | option::BLOCK2)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{pattern, Block1Upload, Block2Download, Progress, UploadStep};
    use super::*;
    use crate::message::{MessageType, MessageWriter};

    fn call(
        r: &mut BlockResource<u8>,
        peer: u8,
        code: Code,
        extra: &[(u16, &[u8])],
        payload: &[u8],
    ) -> Response {
        let mut buf = [0u8; 1152];
        let mut w = MessageWriter::new(&mut buf, MessageType::Con, code, 1, &[]).unwrap();
        for (n, v) in extra {
            w.option(*n, v).unwrap();
        }
        w.payload(payload).unwrap();
        let n = w.len();
        let view = MessageView::decode(&buf[..n]).unwrap();
        let mut resp = Response::default();
        resp.clear();
        r.set_peer(peer);
        r.handle(&view, &mut resp);
        resp
    }

    fn opts(r: &Response) -> BlockOptions {
        BlockOptions::read(r.options.iter().map(|(n, v)| (*n, v.as_slice()))).unwrap()
    }

    /// 300 bytes in 64-byte blocks: five exchanges, the body exactly.
    #[test]
    fn a_download_reassembles_the_representation() {
        let mut r = BlockResource::new(pattern(300));
        let mut dl = Block2Download::new(300, Some(2));
        let mut exchanges = 0;
        loop {
            let b = dl.next_request().unwrap().unwrap().to_vec();
            let resp = call(&mut r, 1, Code::GET, &[(option::BLOCK2, &b)], b"");
            exchanges += 1;
            assert_eq!(resp.code, Code::CONTENT);
            match dl.on_response(opts(&resp).block2, None, None, &resp.payload) {
                Ok(Progress::Complete) => break,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(exchanges, 5);
        assert_eq!(dl.body(), pattern(300).as_slice());
        assert_eq!(
            call(&mut r, 1, Code::DELETE, &[], b"").code,
            Code::METHOD_NOT_ALLOWED
        );
    }

    /// Two peers upload side by side; each completed body is handed over
    /// once, with its sender; an out-of-sequence block gets 4.08.
    #[test]
    fn uploads_are_kept_per_peer() {
        let mut r = BlockResource::<u8>::new(Vec::new());
        let body = pattern(40);
        let mut a = Block1Upload::new(body.clone(), 0).unwrap();
        let mut b = Block1Upload::new(body[..20].to_vec(), 0).unwrap();
        let step = |r: &mut BlockResource<u8>, peer: u8, up: &mut Block1Upload| {
            let blk = up.next_block().unwrap();
            let v = blk.block1.to_vec();
            let resp = call(r, peer, Code::PUT, &[(option::BLOCK1, &v)], blk.payload);
            up.on_response(resp.code, opts(&resp).block1, None).unwrap()
        };
        assert_eq!(step(&mut r, 1, &mut a), UploadStep::Continue);
        assert_eq!(step(&mut r, 2, &mut b), UploadStep::Continue);
        assert_eq!(r.uploads_in_progress(), 2);
        assert_eq!(step(&mut r, 2, &mut b), UploadStep::Done(Code::CHANGED));
        let done = r.take_upload().unwrap();
        assert_eq!((done.peer, done.body.as_slice()), (2, &body[..20]));
        assert_eq!(r.take_upload(), None);
        assert_eq!(step(&mut r, 1, &mut a), UploadStep::Continue);
        assert_eq!(step(&mut r, 1, &mut a), UploadStep::Done(Code::CHANGED));
        assert_eq!(r.take_upload().unwrap().body, body);
        assert_eq!(r.uploads_in_progress(), 0);
        let blk = super::super::BlockValue::new(3, true, 0).unwrap().to_vec();
        let resp = call(&mut r, 1, Code::PUT, &[(option::BLOCK1, &blk)], &[0; 16]);
        assert_eq!(resp.code, Code::REQUEST_ENTITY_INCOMPLETE);
    }

    #[test]
    fn uploads_past_the_bound_are_refused() {
        let mut r = BlockResource::<u8>::new(Vec::new());
        r.max_uploads = 1;
        let first = super::super::BlockValue::new(0, true, 0).unwrap().to_vec();
        let ok = call(&mut r, 1, Code::PUT, &[(option::BLOCK1, &first)], &[0; 16]);
        assert_eq!(ok.code, Code::CONTINUE);
        let no = call(&mut r, 2, Code::PUT, &[(option::BLOCK1, &first)], &[0; 16]);
        assert_eq!(no.code, Code::SERVICE_UNAVAILABLE);
    }
}
