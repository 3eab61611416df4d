//! The instances under a root, collected from the graph as the plain traversal reaches
//! them ([`collect`], and [`collect_in`] for the region a structural edit changed).

use glam::DMat4;
use smallvec::SmallVec;

use super::placement::world_box;
use super::{Gate, Instance, Placement};
use crate::accel::Aabb;
use crate::graph::{NodeId, NodeKind, SceneGraph};

/// One node still to visit: where it hangs and in which frame.
struct Pending {
    id: NodeId,
    local_to_world: DMat4,
    world_to_local: DMat4,
    /// Length of the path above it.
    depth: usize,
    /// Number of gates above it.
    gate_count: usize,
    /// The gate its parent adds, if any.
    gate: Option<Gate>,
    /// Whether a transform above it is singular.
    singular: bool,
    /// Whether it lies below a changed node of the region collected (see
    /// [`collect_in`]).
    inside: bool,
}

/// Every instance under `root`, depth first with an explicit stack (hierarchies may be
/// deep; the call stack must not grow with them).
pub(super) fn collect(scene: &SceneGraph, root: NodeId) -> Vec<Instance> {
    collect_in(scene, root, None)
}

/// The nodes structural edits changed (see
/// [`SceneIndex::restructure`](super::SceneIndex::restructure)), and every node above
/// them: the part of the graph [`collect_in`] walks to collect the instances on paths
/// through a changed node.
pub(super) struct Region {
    changed: std::collections::HashSet<NodeId>,
    above: std::collections::HashSet<NodeId>,
}

impl Region {
    /// The region of the `changed` nodes (those still in `scene`) and their ancestors.
    pub(super) fn around(scene: &SceneGraph, changed: &[NodeId]) -> Region {
        let mut above = std::collections::HashSet::new();
        let mut stack: Vec<NodeId> = changed.to_vec();
        while let Some(n) = stack.pop() {
            if let Some(node) = scene.node(n) {
                if above.insert(n) {
                    stack.extend_from_slice(node.parents());
                }
            }
        }
        Region {
            changed: changed.iter().copied().collect(),
            above,
        }
    }
}

/// [`collect`], only the instances on paths through a changed node of `region` (every
/// instance without one).
pub(super) fn collect_in(
    scene: &SceneGraph,
    root: NodeId,
    region: Option<&Region>,
) -> Vec<Instance> {
    let mut out = Vec::new();
    let mut path: Vec<NodeId> = Vec::new();
    let mut gates: SmallVec<[Gate; 1]> = SmallVec::new();
    let mut stack = vec![Pending {
        id: root,
        local_to_world: DMat4::IDENTITY,
        world_to_local: DMat4::IDENTITY,
        depth: 0,
        gate_count: 0,
        gate: None,
        singular: false,
        inside: false,
    }];
    while let Some(p) = stack.pop() {
        let inside = p.inside || region.is_none_or(|r| r.changed.contains(&p.id));
        if !inside && !region.is_some_and(|r| r.above.contains(&p.id)) {
            // Off every path through a changed node.
            continue;
        }
        path.truncate(p.depth);
        gates.truncate(p.gate_count);
        gates.extend(p.gate);
        let Some(node) = scene.node(p.id) else {
            continue;
        };
        // Cache the bound (see `SceneIndex::build`).
        let _ = scene.node_bound(p.id);
        path.push(p.id);
        let (depth, gate_count) = (path.len(), gates.len());
        let singular = p.singular;
        let child = |id: NodeId, l2w: DMat4, w2l: DMat4, gate: Option<Gate>| Pending {
            id,
            local_to_world: l2w,
            world_to_local: w2l,
            depth,
            gate_count,
            gate,
            singular,
            inside,
        };
        let children = node.children();
        match node.kind() {
            NodeKind::Group => {
                for &c in children.iter().rev() {
                    stack.push(child(c, p.local_to_world, p.world_to_local, None));
                }
            }
            NodeKind::Switch { .. } => {
                for (position, &c) in children.iter().enumerate().rev() {
                    let gate = Gate::Switch {
                        node: p.id,
                        position,
                    };
                    stack.push(child(c, p.local_to_world, p.world_to_local, Some(gate)));
                }
            }
            NodeKind::Lod(_) => {
                for (position, &c) in children.iter().enumerate().rev() {
                    let gate = Gate::Lod {
                        node: p.id,
                        position,
                        local_to_world: p.local_to_world,
                    };
                    stack.push(child(c, p.local_to_world, p.world_to_local, Some(gate)));
                }
            }
            NodeKind::Transform(t) => {
                // The visitor's own arithmetic, so the matrices are bit for bit the same.
                // Below a singular transform instances are kept, inactive, for refits.
                let (child_to_world, world_to_child) = t.frame_below(&p.local_to_world);
                for &c in children.iter().rev() {
                    let w2l = world_to_child.unwrap_or(DMat4::IDENTITY);
                    let mut next = child(c, child_to_world, w2l, None);
                    next.singular = p.singular || world_to_child.is_none();
                    stack.push(next);
                }
            }
            // Only the instances on paths through a changed node are wanted.
            NodeKind::Geode { .. } if !inside => {}
            NodeKind::Geode { drawables } => {
                for &d in drawables {
                    // A drawable with nothing to hit yet (no primitives, no finite
                    // vertex) is kept, with an empty box and out of the world tree, so
                    // that an edit that gives it some finds its instances.
                    let Some(b) = scene.drawable_bound(d) else {
                        continue;
                    };
                    out.push(Instance {
                        path: path.clone().into_boxed_slice(),
                        drawable: d,
                        local_to_world: p.local_to_world,
                        world_to_local: p.world_to_local,
                        world_box: if p.singular || b.is_empty() {
                            Aabb::EMPTY
                        } else {
                            world_box(&b, &p.local_to_world)
                        },
                        active: !p.singular,
                        default_masks: path
                            .iter()
                            .all(|&n| scene.node(n).is_some_and(|n| n.node_mask() == u32::MAX)),
                        gates: gates.to_vec().into_boxed_slice(),
                        placement: Placement::Absent,
                        detached: false,
                        removed: false,
                    });
                }
            }
        }
    }
    out
}
