//! The applications a network's world places on its nodes, shared by the
//! networks that run them. A world owns its apps and drives them from the
//! event loop's events (a packet arrived, a timer fired); what it counts
//! and when its workload acts stay in the network's folder.
//!
//! - [`packets`]: the packet pool, the encoded datagrams in flight (the
//!   dumbbell's and the grid's CoAP over UDP);
//! - [`segments`]: the segment pool, the TCP segments in flight (the
//!   dumbbell's CoAP over TCP, the star's bulk transfers);
//! - [`coap_client`]: the CoAP client endpoint, built from an algorithm
//!   spec (the dumbbell's UDP clients, the grid's clients and interferers);
//! - [`coap_server`]: the CoAP server answering from the packet pool, and
//!   the grid's sink handler (the dumbbell's and the grid's server).

pub mod coap_client;
pub mod coap_server;
pub mod packets;
pub mod segments;
