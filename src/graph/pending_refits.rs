//! [`PendingRefits`]: the acceleration structures that wait for an edit to end, or for
//! their next use, to be refitted.
//!
//! [`SceneGraph::drawable_mut`] and [`SceneGraph::geometry_mut`] hand out a plain
//! `&mut` borrow, so the graph cannot see when the caller is done editing. The borrow
//! checker can: whatever the caller does with the graph next, a query through
//! `&SceneGraph` or another edit, comes after the borrow has ended. So rather than
//! dropping the scene indices above the drawable (the next query would rebuild them:
//! tens of milliseconds on a city of two million triangles), the graph takes them from
//! their nodes and parks them here, with the drawables edited since, and refits each for
//! those drawables ([`SceneIndex::refit_drawable`], as the closure form
//! [`SceneGraph::edit_drawable`] does at once) the next time it is wanted:
//!
//! * a query's first use of the index (through `&SceneGraph`, hence the lock: several
//!   threads may query at once, and the node's `OnceLock` lets one of them take it);
//! * the next edit that refits indices (through `&mut SceneGraph`: a moved transform,
//!   an edited drawable).
//!
//! A parked index is refitted for the drawables as the caller left them, exactly as
//! the closure forms refit at the end of theirs. Structural edits (children linked or
//! unlinked, drawables put in or taken out of geodes, a switch child turned, a
//! reference frame changed) park the indices above them here too, or mark the one
//! parked already, so that the next use brings each up to date with the graph
//! ([`SceneIndex::restructure`]) before it refits it for its drawables, rather than
//! building it afresh (a marker added under the root with the query after it: 0.01
//! against 80 ms on littlest_tokyo, 2–3 against 120–150 ms on the generated
//! city_s10). The parked index keeps the nodes below which the edits changed the
//! instances, so that only those are collected again.
//!
//! An edited drawable's own [`PrimitiveBvh`] is parked here too, by the hand-outs and
//! by the closure forms, and refitted at its next use ([`PrimitiveBvh::refit`], 15 to
//! 28 times faster than a rebuild), which rebuilds it instead when the edit changed the
//! geometry's primitive sets.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use smallvec::SmallVec;

use super::{DrawableId, NodeId, SceneGraph};
use crate::accel::{PrimitiveBvh, SceneIndex};

/// The scene indices parked by handed-out drawables, and the BVHs of edited drawables
/// (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct PendingRefits {
    parked: Mutex<Vec<Parked>>,
    /// By drawable: a renderer may edit thousands of meshes between two queries.
    bvhs: Mutex<HashMap<DrawableId, PrimitiveBvh>>,
}

/// One parked index: taken from `node`, to be refitted for `edited`.
#[derive(Debug)]
pub(crate) struct Parked {
    node: NodeId,
    index: Box<SceneIndex>,
    /// The drawables handed out since the index was parked, each once.
    edited: SmallVec<[DrawableId; 2]>,
    /// What structural edits changed below `node` since it was parked.
    restructured: Restructured,
}

/// What structural edits changed below a parked index's node.
#[derive(Debug, Default)]
enum Restructured {
    /// Nothing.
    #[default]
    No,
    /// The instances on paths through these nodes (at most [`CHANGED_NODES`]).
    Under(SmallVec<[NodeId; 4]>),
    /// Anything.
    Anywhere,
}

/// The changed nodes a parked index keeps (past them, it collects every instance again).
/// Each costs the restructure little (a node created since the index collected its
/// instances nothing, an older one a read of every held path, once for all of them),
/// where collecting every instance costs nearly a build: with 16, twenty markers
/// added at once on the generated city_s10 took 80 ms.
const CHANGED_NODES: usize = 256;

impl Restructured {
    /// Notes a structural edit that changed the instances on paths through `changed`.
    fn add(&mut self, changed: NodeId) {
        match self {
            Restructured::No => *self = Restructured::Under(SmallVec::from_slice(&[changed])),
            Restructured::Under(nodes) if nodes.len() < CHANGED_NODES => {
                if !nodes.contains(&changed) {
                    nodes.push(changed);
                }
            }
            Restructured::Under(_) | Restructured::Anywhere => *self = Restructured::Anywhere,
        }
    }
}

impl Parked {
    /// The node the index was taken from.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The index, refitted for every drawable handed out since it was parked, after
    /// it was brought up to date with the structural edits since
    /// ([`SceneIndex::restructure`]; built afresh when that declines).
    pub fn refitted(self, scene: &SceneGraph) -> Box<SceneIndex> {
        let mut index = self.index;
        let restructured = match &self.restructured {
            Restructured::No => true,
            Restructured::Under(nodes) => index.restructure(scene, self.node, Some(nodes)),
            Restructured::Anywhere => index.restructure(scene, self.node, None),
        };
        if !restructured {
            return Box::new(SceneIndex::build(scene, self.node));
        }
        for &drawable in &self.edited {
            index.refit_drawable(scene, drawable);
        }
        index
    }
}

impl PendingRefits {
    /// The parked list, also when a thread panicked while holding it (every change to
    /// it is a single push or removal, which leaves it whole).
    fn parked_mut(&mut self) -> &mut Vec<Parked> {
        self.parked
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The parked BVHs, also when a thread panicked while holding them (every change
    /// is a single insertion or removal).
    fn bvhs_mut(&mut self) -> &mut HashMap<DrawableId, PrimitiveBvh> {
        self.bvhs.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Parks `index`, just taken from `node`, because `drawable` below it is being
    /// handed out; or, when `index` is `None` (`node` holds none now), notes `drawable`
    /// against the index already parked for `node`, if there is one.
    pub fn park(&mut self, node: NodeId, index: Option<Box<SceneIndex>>, drawable: DrawableId) {
        let parked = self.parked_mut();
        match index {
            Some(index) => parked.push(Parked {
                node,
                index,
                edited: SmallVec::from_slice(&[drawable]),
                restructured: Restructured::No,
            }),
            None => {
                if let Some(p) = parked.iter_mut().find(|p| p.node == node) {
                    if !p.edited.contains(&drawable) {
                        p.edited.push(drawable);
                    }
                }
            }
        }
    }

    /// Parks `index`, just taken from `node`, because the graph below it changed in
    /// structure, the instances on paths through `changed` (see
    /// [`SceneIndex::restructure`]); or, when `index` is `None`, notes that against the
    /// index already parked for `node`, if there is one.
    pub fn park_restructured(
        &mut self,
        node: NodeId,
        index: Option<Box<SceneIndex>>,
        changed: NodeId,
    ) {
        let parked = self.parked_mut();
        let entry = match index {
            Some(index) => {
                parked.push(Parked {
                    node,
                    index,
                    edited: SmallVec::new(),
                    restructured: Restructured::No,
                });
                parked.last_mut()
            }
            None => parked.iter_mut().find(|p| p.node == node),
        };
        if let Some(p) = entry {
            p.restructured.add(changed);
        }
    }

    /// Drops the index parked for `node`, if any (an edit that invalidates it).
    pub fn forget(&mut self, node: NodeId) {
        self.parked_mut().retain(|p| p.node != node);
    }

    /// Takes the index parked for `node`, if any, through a shared borrow.
    pub fn take(&self, node: NodeId) -> Option<Parked> {
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        let at = parked.iter().position(|p| p.node == node)?;
        Some(parked.swap_remove(at))
    }

    /// Takes every parked index.
    pub fn take_all(&mut self) -> Vec<Parked> {
        std::mem::take(self.parked_mut())
    }

    /// Takes the BVH built in `accel`, the slot of `drawable`, just edited, and parks it
    /// for a refit at its next use (in place of one parked before); nothing when none
    /// is built.
    pub fn park_bvh(&mut self, drawable: DrawableId, accel: &mut OnceLock<Option<PrimitiveBvh>>) {
        if let Some(Some(bvh)) = accel.take() {
            self.bvhs_mut().insert(drawable, bvh);
        }
    }

    /// Drops the BVH parked for `drawable`, if any (the drawable replaced or removed).
    pub fn forget_bvh(&mut self, drawable: DrawableId) {
        self.bvhs_mut().remove(&drawable);
    }

    /// Takes the BVH parked for `drawable`, if any, through a shared borrow.
    pub fn take_bvh(&self, drawable: DrawableId) -> Option<PrimitiveBvh> {
        let mut bvhs = self.bvhs.lock().unwrap_or_else(PoisonError::into_inner);
        bvhs.remove(&drawable)
    }

    /// Bytes held by the parked indices and BVHs.
    pub fn memory_bytes(&self) -> usize {
        let parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        let bvhs = self.bvhs.lock().unwrap_or_else(PoisonError::into_inner);
        parked.iter().map(|p| p.index.memory_bytes()).sum::<usize>()
            + bvhs.values().map(PrimitiveBvh::memory_bytes).sum::<usize>()
    }
}
