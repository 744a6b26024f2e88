//! Where the nodes are, who hears whom, and the routes (spec `docs/spec/radio-spec.md` §1.2,
//! §1.6).
//!
//! Nodes are numbered from 1, as in the pCoCoA paper; node `i` is index
//! `i − 1` of every table. The default layout is the 6 × 6 grid with a 10 m
//! pitch, numbered row by row: node `i` at (10·((i−1) mod 6), 10·⌊(i−1)/6⌋) m,
//! the numbering of the ns-3 reference (its index `i − 1`). With node 1 (a
//! corner) the border router and node 3 the server, nodes 4 and 9 are the
//! server's one-hop clients and 5, 10 and 15 its two-hop clients
//! (`docs/decisions/grid-choices.md`).
//!
//! **Routing** is a static min-hop DODAG rooted at the border router: every
//! node's parent is, among its neighbours one hop closer to the root, the one
//! with the lowest number. A packet then travels
//! - [`Routing::Storing`] (default): up to the lowest common ancestor, then
//!   down — what Contiki's RPL does: storing mode is its only mode, and
//!   Cooja's motes keep routes to all their descendants
//!   (`UIP_CONF_MAX_ROUTES` 300);
//! - [`Routing::Root`]: up the tree until it reaches its destination or the
//!   root, then down from the root (the spec's reading of the paper:
//!   requests go through the border router; the ns-3 reference's default).

use serde::{Deserialize, Serialize};

use crate::NodeId;

/// How packets find their way through the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    /// Up to the root (or the destination, if it is on the way), then down.
    Root,
    /// Up to the lowest common ancestor, then down.
    #[default]
    Storing,
}

/// A neighbour within interference range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    /// Its index.
    pub index: u16,
    /// Within reception range: it can receive (and be received by) this node.
    pub receives: bool,
    /// Strictly closer than the reception range: its frames register above
    /// Cooja's clear-channel threshold (−95 dBm at exactly the range).
    pub strong: bool,
}

/// The fixed geometry and routes of a run.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Positions (m), by index.
    pub positions: Vec<[f64; 2]>,
    /// Index of the border router (the DODAG root).
    pub root: usize,
    /// Per index: every other node within interference range.
    pub neighbours: Vec<Vec<Neighbour>>,
    /// Per index: the parent's index (`None` for the root).
    pub parent: Vec<Option<usize>>,
    /// Per index: hops to the root.
    pub depth: Vec<u32>,
    /// `down[n * len + d]`: the child of `n` on the way to `d` if `d` is in
    /// `n`'s subtree (and not `n`), else `u16::MAX`.
    down: Vec<u16>,
    routing: Routing,
}

/// Why a layout cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl Topology {
    /// The topology of `positions` with the given root, radio ranges and
    /// routing. Every node must reach the root over reception-range links.
    pub fn new(
        positions: Vec<[f64; 2]>,
        root: usize,
        reception_m: f64,
        interference_m: f64,
        routing: Routing,
    ) -> Result<Self, LayoutError> {
        let n = positions.len();
        if root >= n {
            return Err(LayoutError(format!(
                "root: node {} does not exist ({n} nodes)",
                root + 1
            )));
        }
        // A hair of slack so that a pitch of exactly the range counts as in
        // range despite floating-point rounding of the positions.
        let eps = 1e-9;
        let mut neighbours = vec![Vec::new(); n];
        for (i, nb) in neighbours.iter_mut().enumerate() {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let d = distance(positions[i], positions[j]);
                if d <= interference_m + eps {
                    nb.push(Neighbour {
                        index: j as u16,
                        receives: d <= reception_m + eps,
                        strong: d < reception_m - eps,
                    });
                }
            }
        }
        // Breadth-first from the root over reception links; the parent of a
        // node at depth h + 1 is its lowest-numbered neighbour at depth h.
        let mut depth = vec![u32::MAX; n];
        depth[root] = 0;
        let mut frontier = vec![root];
        let mut h = 0;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                for nb in neighbours[u].iter().filter(|nb| nb.receives) {
                    let v = usize::from(nb.index);
                    if depth[v] == u32::MAX {
                        depth[v] = h + 1;
                        next.push(v);
                    }
                }
            }
            next.sort_unstable();
            frontier = next;
            h += 1;
        }
        if let Some(lost) = depth.iter().position(|&d| d == u32::MAX) {
            return Err(LayoutError(format!(
                "node {} cannot reach the root (node {}) over {reception_m} m links",
                lost + 1,
                root + 1
            )));
        }
        let parent: Vec<Option<usize>> = (0..n)
            .map(|v| {
                (v != root).then(|| {
                    neighbours[v]
                        .iter()
                        .filter(|nb| nb.receives && depth[usize::from(nb.index)] + 1 == depth[v])
                        .map(|nb| usize::from(nb.index))
                        .min()
                        .expect("a node below the root has a neighbour one hop closer")
                })
            })
            .collect();
        // For every destination, walk up its ancestors recording which child
        // each ancestor uses to reach it.
        let mut down = vec![u16::MAX; n * n];
        for d in 0..n {
            let mut child = d;
            while let Some(p) = parent[child] {
                down[p * n + d] = child as u16;
                child = p;
            }
        }
        Ok(Topology {
            positions,
            root,
            neighbours,
            parent,
            depth,
            down,
            routing,
        })
    }

    /// The default layout: `rows × cols` at `pitch` metres, numbered row by row.
    pub fn grid_positions(rows: u32, cols: u32, pitch: f64) -> Vec<[f64; 2]> {
        (0..rows * cols)
            .map(|i| [pitch * f64::from(i % cols), pitch * f64::from(i / cols)])
            .collect()
    }

    /// Nodes in the topology.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether it has no node.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The next hop from `at` toward `dst` (both indices, `at != dst`), and
    /// whether the packet has now passed the root (for [`Routing::Root`];
    /// `climbed` says whether it had before).
    #[inline]
    pub fn next_hop(&self, at: usize, dst: usize, climbed: bool) -> (usize, bool) {
        let n = self.len();
        let below = self.down[at * n + dst];
        let climbed = climbed || at == self.root;
        let go_down = match self.routing {
            Routing::Storing => below != u16::MAX,
            Routing::Root => climbed,
        };
        if go_down {
            (usize::from(below), climbed)
        } else {
            (
                self.parent[at].expect("a node that is not the root has a parent"),
                climbed,
            )
        }
    }

    /// The hops a packet from `src` to `dst` takes (indices, both ends
    /// included).
    pub fn path(&self, src: usize, dst: usize) -> Vec<usize> {
        let mut path = vec![src];
        let (mut at, mut climbed) = (src, false);
        while at != dst {
            (at, climbed) = self.next_hop(at, dst, climbed);
            path.push(at);
        }
        path
    }
}

fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// Node number (from 1) of an index.
pub fn node_id(index: usize) -> NodeId {
    index as NodeId + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn six(routing: Routing) -> Topology {
        Topology::new(Topology::grid_positions(6, 6, 10.0), 0, 10.0, 20.0, routing).unwrap()
    }

    fn ids(path: Vec<usize>) -> Vec<usize> {
        path.into_iter().map(|i| i + 1).collect()
    }

    /// The tree of the ns-3 reference: row 0 is a chain from the root, every
    /// other node's parent is the node above it.
    #[test]
    fn the_default_tree() {
        let t = six(Routing::Root);
        assert_eq!(t.parent[0], None);
        for c in 1..6 {
            assert_eq!(t.parent[c], Some(c - 1), "row 0 chain");
        }
        for i in 6..36 {
            assert_eq!(t.parent[i], Some(i - 6), "node {} hangs below", i + 1);
        }
        assert_eq!(t.depth[35], 10);
    }

    /// Hand-counted neighbourhoods: a corner has 2 nodes in reception range
    /// and 3 more within 20 m (the diagonal at 14.1 m, two at 20 m); an inner
    /// node has 4 + 4 diagonals + up to 4 at 20 m (where they exist).
    #[test]
    fn neighbourhoods() {
        let t = six(Routing::Root);
        let count = |i: usize| {
            let nb = &t.neighbours[i];
            (
                nb.iter().filter(|n| n.receives).count(),
                nb.len(),
                nb.iter().filter(|n| n.strong).count(),
            )
        };
        assert_eq!(count(0), (2, 5, 0));
        assert_eq!(count(14), (4, 12, 0)); // node 15 at (20, 20)
                                           // node 8 at (10, 10): 4 + 4 diagonals + only (30, 10) and (10, 30) at 20 m
        assert_eq!(count(7), (4, 10, 0));
    }

    /// Node 10 (30, 10) to the server, node 3 (20, 0): root routing climbs
    /// 10 → 4 → 3 and stops at the server on the way up; the response goes
    /// 3 → 2 → 1 and back down 1 → 2 → 3 → 4 → 10. Storing routing turns at
    /// the common ancestor: 3 → 4 → 10.
    #[test]
    fn paths_by_routing() {
        let root = six(Routing::Root);
        assert_eq!(ids(root.path(9, 2)), [10, 4, 3]);
        assert_eq!(ids(root.path(2, 9)), [3, 2, 1, 2, 3, 4, 10]);
        assert_eq!(ids(root.path(7, 2)), [8, 2, 1, 2, 3]);
        let storing = six(Routing::Storing);
        assert_eq!(ids(storing.path(2, 9)), [3, 4, 10]);
        assert_eq!(ids(storing.path(7, 2)), [8, 2, 3]);
        assert_eq!(ids(storing.path(35, 2)), [36, 30, 24, 18, 12, 6, 5, 4, 3]);
    }

    #[test]
    fn unreachable_nodes_are_refused() {
        let pos = vec![[0.0, 0.0], [10.0, 0.0], [30.0, 0.0]];
        let e = Topology::new(pos, 0, 10.0, 20.0, Routing::Root).unwrap_err();
        assert!(e.0.contains("node 3 cannot reach the root"), "{}", e.0);
    }
}
