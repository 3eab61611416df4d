//! Ground height under a point: a vertical segment dropped onto the scene.

use glam::DVec3;
use scene_intersect::prelude::*;

/// Which objects count as terrain, and how to drop segments onto the scene.
pub struct Terrain {
    /// Names of terrain nodes: a hit whose node path holds one of them is terrain.
    pub names: Vec<String>,
    /// Top and bottom heights of the dropped segments (above and below the scene).
    pub top: f64,
    /// See [`Terrain::top`].
    pub bottom: f64,
    /// The traversal mask (without the vehicle's bit).
    pub traversal_mask: u32,
}

impl Terrain {
    /// Terrain for the scene under `root`: segments span its bounding sphere.
    pub fn new(scene: &SceneGraph, root: NodeId, names: Vec<String>, traversal_mask: u32) -> Self {
        let (top, bottom) = match scene.node_bound(root) {
            Some(b) if !b.is_empty() && b.radius.is_finite() => {
                (b.center.y + b.radius + 1.0, b.center.y - b.radius - 1.0)
            }
            _ => (1.0e4, -1.0e4),
        };
        Terrain {
            names,
            top,
            bottom,
            traversal_mask,
        }
    }

    /// True when the node path passes through a terrain node.
    pub fn is_terrain(&self, scene: &SceneGraph, path: &[NodeId]) -> bool {
        path.iter().any(|id| {
            scene
                .node(*id)
                .is_some_and(|n| self.names.iter().any(|t| t == n.name()))
        })
    }

    /// The height of the ground at `(x, z)`: the highest terrain hit of a vertical
    /// segment, or, when no terrain is there, the highest hit of anything; `None` when
    /// the segment meets nothing.
    pub fn height(&self, scene: &SceneGraph, root: NodeId, x: f64, z: f64) -> Option<f64> {
        let mut drop =
            LineSegmentIntersector::new(DVec3::new(x, self.top, z), DVec3::new(x, self.bottom, z))
                .ok()?;
        let mut visitor = IntersectionVisitor::new();
        visitor.set_traversal_mask(self.traversal_mask);
        visitor.apply(scene, root, &mut drop).ok()?;
        let hits = drop.intersections();
        hits.iter()
            .find(|h| self.is_terrain(scene, &h.node_path))
            .or(hits.first())
            .map(|h| h.world_point.y)
    }
}
