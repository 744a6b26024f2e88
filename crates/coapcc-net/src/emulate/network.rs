//! The network an emulator runs, whichever it is: [`EmulatedNetwork`] holds
//! any network's [`Hook`] behind a trait object, and [`NetworkPart`] any
//! network's part of the relay's report. Neither names a network: each one's
//! hook and report part are in its file under `networks/`.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use coapcc_link::{Network, NodeId};

use super::{Emulated, Relaying};

/// What the emulators need of a network beyond its link model: its
/// parameters, where clients and the server attach, what it carries. One
/// implementation per network, in its file under `networks/`; the UDP relay
/// runs its [`Hook::Net`] (monomorphised, one loop per network) and the IP
/// mode the same model behind `dyn Network`.
pub(crate) trait Hook: fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The model the relay drives, with its attachment rule.
    type Net: Emulated + Send + 'static;
    /// The parameters, as reports show them.
    type Config: serde::Serialize;
    /// The network's name (`[network] kind` of a scenario file).
    const KIND: &'static str;
    /// The parameters.
    fn config(&self) -> &Self::Config;
    /// What the relay would refuse to run; errors name the field.
    fn validate(&self) -> Result<(), String>;
    /// The nodes clients attach to, in the order they are given out; empty
    /// if the model does not tell clients apart.
    fn client_nodes(&self) -> Vec<NodeId>;
    /// The server's node.
    fn server_node(&self) -> NodeId;
    /// The model seeded with `seed` (the simulator's construction).
    fn model(&self, seed: u64) -> Result<Self::Net, String>;
    /// What the IP mode hands to the model of a real IPv4 packet.
    fn ip_carriage(&self) -> IpCarriage;
    /// The IP MTU of the IP mode's TUN devices.
    fn ip_mtu(&self) -> usize;
}

/// What a network carries of a real IPv4 packet in the IP mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpCarriage {
    /// Any IPv4 packet, at its real size.
    AnyIpv4,
    /// Unfragmented UDP with a payload up to this many bytes, sized with an
    /// 8-byte transport header (the model compresses the rest).
    UdpUpTo(usize),
}

/// A value of some type behind a trait object that can still be compared
/// and reached as its own type.
trait Erased: fmt::Debug + Send + Sync {
    /// The value, to downcast.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` is a value of the same type, equal to this one.
    fn same(&self, other: &dyn Any) -> bool;
}

impl<T: fmt::Debug + PartialEq + Send + Sync + 'static> Erased for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// [`Hook`] made object-safe, for every hook: what [`EmulatedNetwork`]
/// calls. Building the relay ([`AnyHook::relaying`]) is the one virtual
/// call of a relay's life; its loop is compiled for the network's model.
trait AnyHook: Erased {
    fn kind(&self) -> &'static str;
    fn config_json(&self) -> serde_json::Value;
    fn validate(&self) -> Result<(), String>;
    fn client_nodes(&self) -> Vec<NodeId>;
    fn server_node(&self) -> NodeId;
    fn relaying(&self, seed: u64) -> Result<Box<dyn Relaying>, String>;
    fn dyn_model(&self, seed: u64) -> Result<Box<dyn Network + Send>, String>;
    fn ip_carriage(&self) -> IpCarriage;
    fn ip_mtu(&self) -> usize;
}

impl<H: Hook> AnyHook for H {
    fn kind(&self) -> &'static str {
        H::KIND
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self.config()).unwrap_or(serde_json::Value::Null)
    }

    fn validate(&self) -> Result<(), String> {
        Hook::validate(self)
    }

    fn client_nodes(&self) -> Vec<NodeId> {
        Hook::client_nodes(self)
    }

    fn server_node(&self) -> NodeId {
        Hook::server_node(self)
    }

    fn relaying(&self, seed: u64) -> Result<Box<dyn Relaying>, String> {
        Ok(Box::new(self.model(seed)?))
    }

    fn dyn_model(&self, seed: u64) -> Result<Box<dyn Network + Send>, String> {
        Ok(Box::new(self.model(seed)?))
    }

    fn ip_carriage(&self) -> IpCarriage {
        Hook::ip_carriage(self)
    }

    fn ip_mtu(&self) -> usize {
        Hook::ip_mtu(self)
    }
}

/// The network an emulator runs: any network's parameters (its hook, made
/// from them with `From`; the testbed's dumbbell by default), reached as
/// their own type with [`EmulatedNetwork::parameters`].
#[derive(Clone, Debug)]
pub struct EmulatedNetwork(Arc<dyn AnyHook>);

impl PartialEq for EmulatedNetwork {
    /// The same network with the same parameters.
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_any())
    }
}

impl EmulatedNetwork {
    /// The network of `hook`.
    pub(crate) fn new<H: Hook>(hook: H) -> Self {
        EmulatedNetwork(Arc::new(hook))
    }

    /// The parameters it was made from, if they are a `T`.
    pub fn parameters<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }

    /// Checks what the relay would refuse to run; errors name the field and
    /// what was expected.
    pub fn validate(&self) -> Result<(), String> {
        self.0.validate()
    }

    /// The nodes clients attach to, in the order they are given out; empty
    /// if the model does not tell clients apart (each network's hook says
    /// which).
    pub fn client_nodes(&self) -> Vec<NodeId> {
        self.0.client_nodes()
    }

    /// The server's node.
    pub fn server_node(&self) -> NodeId {
        self.0.server_node()
    }

    /// The network's name: its `[network] kind` in scenario files.
    pub fn kind(&self) -> &'static str {
        self.0.kind()
    }

    /// The network's parameters as JSON (its `Config`, without the kind).
    pub fn config_json(&self) -> serde_json::Value {
        self.0.config_json()
    }

    /// The model seeded with `seed`, with the relay loop for it.
    pub(crate) fn relaying(&self, seed: u64) -> anyhow::Result<Box<dyn Relaying>> {
        self.0.relaying(seed).map_err(anyhow::Error::msg)
    }

    /// The model seeded with `seed` behind `dyn Network`, for the IP mode
    /// (checked first).
    pub(crate) fn dyn_model(&self, seed: u64) -> anyhow::Result<Box<dyn Network + Send>> {
        self.validate().map_err(anyhow::Error::msg)?;
        self.0.dyn_model(seed).map_err(anyhow::Error::msg)
    }

    /// What the IP mode hands to the model of a real IPv4 packet.
    pub(crate) fn ip_carriage(&self) -> IpCarriage {
        self.0.ip_carriage()
    }

    /// The IP MTU of the IP mode's TUN devices.
    pub(crate) fn ip_mtu(&self) -> usize {
        self.0.ip_mtu()
    }
}

/// A network's part of the relay's report, in the network's own type (each
/// network's file under `networks/` says which), reached with
/// [`NetworkPart::get`] or [`super::EmulatorReport::network_part`].
#[derive(Clone)]
pub struct NetworkPart(Arc<dyn Erased>);

impl NetworkPart {
    /// `part` as a network's part of the report.
    pub fn new<T: fmt::Debug + PartialEq + Send + Sync + 'static>(part: T) -> Self {
        NetworkPart(Arc::new(part))
    }

    /// The part, if it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl fmt::Debug for NetworkPart {
    /// As the part's own type shows itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq for NetworkPart {
    /// Parts of the same type, equal.
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_any())
    }
}
