//! Walking a scene graph's drawables with their local-to-world matrices, without any
//! intersector: what maps, rasterisers and bounding-box collectors need.
//!
//! Shared by the `city_drive`, `pick` and `render` examples and by their tests
//! (`#[path]`-included), so it only uses the library's public API.

use glam::{DMat4, DVec3, Vec3};
use scene_intersect::prelude::*;

/// The callback of [`for_each_drawable`]: `(local_to_world, node_path, id, drawable)`.
pub type DrawableVisit<'a> = dyn FnMut(&DMat4, &[NodeId], DrawableId, &dyn Drawable) + 'a;

/// Calls `visit(local_to_world, node_path, drawable_id, drawable)` for every drawable
/// under `root`, as the intersection visitor would reach it: nodes whose mask shares no
/// bit with `traversal_mask` are skipped with their subtree, Switch children only when
/// enabled, LOD the most detailed child (the visitor's default). `root_to_world` is the
/// matrix above `root` (identity for a scene root); `root`'s own transform is applied.
pub fn for_each_drawable(
    scene: &SceneGraph,
    root: NodeId,
    root_to_world: DMat4,
    traversal_mask: u32,
    visit: &mut DrawableVisit<'_>,
) {
    let mut path = Vec::new();
    walk(scene, root, root_to_world, traversal_mask, &mut path, visit);
}

fn walk(
    scene: &SceneGraph,
    id: NodeId,
    parent_to_world: DMat4,
    mask: u32,
    path: &mut Vec<NodeId>,
    visit: &mut DrawableVisit<'_>,
) {
    let Some(node) = scene.node(id) else { return };
    if node.node_mask() & mask == 0 {
        return;
    }
    path.push(id);
    let children: Vec<NodeId> = match node.kind() {
        NodeKind::Group | NodeKind::Transform(_) => node.children().to_vec(),
        NodeKind::Switch { enabled } => node
            .children()
            .iter()
            .zip(enabled)
            .filter(|(_, on)| **on)
            .map(|(c, _)| *c)
            .collect(),
        NodeKind::Lod(lod) => lod
            .ranges
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .and_then(|(i, _)| node.children().get(i).copied())
            .into_iter()
            .collect(),
        NodeKind::Geode { drawables } => {
            for &d in drawables {
                if let Some(drawable) = scene.drawable(d) {
                    visit(&parent_to_world, path, d, drawable);
                }
            }
            Vec::new()
        }
    };
    let to_world = match node.kind() {
        NodeKind::Transform(t) => match t.reference_frame {
            ReferenceFrame::Relative => parent_to_world * t.matrix,
            ReferenceFrame::Absolute => t.matrix,
        },
        _ => parent_to_world,
    };
    for child in children {
        walk(scene, child, to_world, mask, path, visit);
    }
    path.pop();
}

/// Collects world-space triangles (all kinds of primitive sets decomposed into
/// triangles by the library's primitive functor).
#[derive(Default)]
pub struct WorldTriangles {
    /// The triangles, world space.
    pub triangles: Vec<[DVec3; 3]>,
    matrix: DMat4,
}

impl WorldTriangles {
    /// Every triangle under `root` reachable with `traversal_mask`.
    pub fn of(scene: &SceneGraph, root: NodeId, traversal_mask: u32) -> Vec<[DVec3; 3]> {
        let mut sink = WorldTriangles::default();
        for_each_drawable(
            scene,
            root,
            DMat4::IDENTITY,
            traversal_mask,
            &mut |m, _, _, d| {
                sink.matrix = *m;
                d.accept(&mut sink);
            },
        );
        sink.triangles
    }
}

impl PrimitiveFunctor for WorldTriangles {
    fn triangle(&mut self, v: [Vec3; 3], _indices: [u32; 3], _primitive_index: u32) {
        let m = self.matrix;
        self.triangles
            .push(v.map(|p| m.transform_point3(p.as_dvec3())));
    }
}
