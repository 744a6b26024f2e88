//! The hot path allocates nothing in steady state: client and server exchanging
//! requests, retransmissions, duplicates and expiring cache entries, counted
//! by an instrumented global allocator. The binary has no test harness
//! (`harness = false` in Cargo.toml): the check runs on the main thread and
//! no other thread exists to allocate while it counts (libtest's own threads
//! were seen to allocate inside the counted region on a loaded machine).

use std::alloc::System;

use coapcc_proto::client::{Client, ClientConfig, ClientEvent, Request};
use coapcc_proto::message::Code;
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};
use coapcc_rto::{registry, AlgorithmParams, Random};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const SEC: u64 = 1_000_000_000;

struct Lcg(u64);
impl Random for Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Loop {
    client: Client<u32, Lcg>,
    server: Server<u32, FixedPayload>,
    now: u64,
    buf: [u8; 1152],
    out: [u8; 1152],
    responses: u64,
    duplicates: u64,
}

impl Loop {
    /// One exchange; every third loses the original's reply, so the
    /// retransmission is answered from the cache and the late reply arrives as
    /// a duplicate.
    fn exchange(&mut self, i: u64) {
        let req = Request {
            method: Code::GET,
            path: "sense",
            payload: &[],
            confirmable: true,
        };
        self.client.request(self.now, 0, &req).unwrap();
        let t = self.client.poll_transmit(&mut self.buf).unwrap();
        // The server sees one new exchange per second (its own clock), so the
        // number of live cache entries is constant in steady state.
        let server_now = i * SEC;
        let first = self
            .server
            .handle_datagram(server_now, 1, &self.buf[..t.len], &mut self.out);
        let ServerOutput::Reply { len: first_len, .. } = first else {
            panic!()
        };
        if i.is_multiple_of(3) {
            self.now = self.client.poll_timeout().unwrap();
            self.client.handle_timeout(self.now);
            let t = self.client.poll_transmit(&mut self.buf).unwrap();
            assert_eq!(t.ordinal, 1);
            let again = self.server.handle_datagram(
                server_now + SEC / 2,
                1,
                &self.buf[..t.len],
                &mut self.out,
            );
            assert!(matches!(
                again,
                ServerOutput::Reply {
                    duplicate: true,
                    ..
                }
            ));
            self.now += SEC / 10;
            self.client
                .handle_datagram(self.now, 0, &self.out[..first_len]);
            self.client
                .handle_datagram(self.now, 0, &self.out[..first_len]);
        } else {
            self.now += SEC / 10;
            self.client
                .handle_datagram(self.now, 0, &self.out[..first_len]);
        }
        while let Some(ev) = self.client.poll_event() {
            match ev {
                ClientEvent::Response { .. } => self.responses += 1,
                ClientEvent::DuplicateResponse { .. } => self.duplicates += 1,
                _ => {}
            }
        }
        self.now += SEC;
    }
}

fn steady_state_allocates_nothing() {
    let info = registry::find("default").unwrap();
    let mut l = Loop {
        client: Client::new(
            ClientConfig {
                max_retransmit: 20,
                ..ClientConfig::default()
            },
            (info, AlgorithmParams::default()),
            Lcg(3),
            0,
        ),
        // A short lifetime so that entries expire (and are recycled) while
        // counting; the cache holds 40 entries at a time.
        server: Server::new(
            ServerConfig {
                exchange_lifetime: 40 * SEC,
                max_cache_entries: 1000,
                ..ServerConfig::default()
            },
            FixedPayload { size: 60 },
        ),
        now: 0,
        buf: [0; 1152],
        out: [0; 1152],
        responses: 0,
        duplicates: 0,
    };
    for i in 0..300 {
        l.exchange(i);
    }
    let region = Region::new(GLOBAL);
    for i in 300..3300 {
        l.exchange(i);
    }
    let stats = region.change();
    assert_eq!(l.responses, 3300);
    assert_eq!(l.duplicates, 1100);
    assert_eq!(stats.allocations, 0, "{stats:?}");
    assert_eq!(stats.reallocations, 0, "{stats:?}");
}

fn main() {
    steady_state_allocates_nothing();
    println!("no_alloc: steady state allocates nothing ... ok");
}
