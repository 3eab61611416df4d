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
//! building it afresh: 0.1 ms against 90 ms for a part added to littlest_tokyo and the
//! query after it.
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
    /// Whether structural edits changed the graph below `node` since.
    restructured: bool,
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
        if self.restructured && !index.restructure(scene, self.node) {
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
                restructured: false,
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
    /// structure (see [`SceneIndex::restructure`]); or, when `index` is `None`, marks
    /// the index already parked for `node`, if there is one, as restructured.
    pub fn park_restructured(&mut self, node: NodeId, index: Option<Box<SceneIndex>>) {
        let parked = self.parked_mut();
        match index {
            Some(index) => parked.push(Parked {
                node,
                index,
                edited: SmallVec::new(),
                restructured: true,
            }),
            None => {
                if let Some(p) = parked.iter_mut().find(|p| p.node == node) {
                    p.restructured = true;
                }
            }
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
