//! The vehicle: a Transform node of the scene, its own bounding box, and how a pose on
//! the ground becomes its matrix and its collision polytope.

use glam::{DMat4, DQuat, DVec3, Vec3};
use scene_intersect::bounding::BoundingBox;
use scene_intersect::prelude::*;

use super::scene_walk::for_each_drawable;

/// The node-mask bit of the vehicle's subtree. Queries about the vehicle's surroundings
/// use a traversal mask without it, so the vehicle never hits itself.
pub const VEHICLE_MASK: u32 = 0x2;

/// The traversal mask of queries that must not see the vehicle.
pub const WITHOUT_VEHICLE: u32 = !VEHICLE_MASK;

/// Where a vehicle stands: its frame's origin goes to `position` (x, z), lifted so the
/// bottom of its box rests at height `position.y`, turned by `yaw` about +Y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Ground point, world.
    pub position: DVec3,
    /// Heading about +Y, radians; local +Z faces `(sin yaw, 0, cos yaw)`.
    pub yaw: f64,
}

impl Pose {
    /// The pose at `position` heading along the horizontal direction `(dx, dz)`.
    pub fn heading(position: DVec3, dx: f64, dz: f64) -> Pose {
        Pose {
            position,
            yaw: dx.atan2(dz),
        }
    }
}

/// A vehicle of the scene.
#[derive(Clone, Debug)]
pub struct Vehicle {
    /// Its Transform node (carrying [`VEHICLE_MASK`]).
    pub node: NodeId,
    /// The matrix above the node (its parent's local-to-world).
    pub parent_to_world: DMat4,
    /// The box of every vertex under the node, in the node's own frame.
    pub local_box: BoundingBox,
}

impl Vehicle {
    /// Takes `node` (a Transform) as the vehicle: measures its box and gives it the
    /// vehicle's node mask.
    pub fn new(scene: &mut SceneGraph, node: NodeId) -> Result<Vehicle, String> {
        let n = scene
            .node(node)
            .ok_or("the vehicle node is not in the scene")?;
        if n.transform().is_none() {
            return Err(format!(
                "the vehicle node `{}` is a {}, not a Transform that can be moved",
                n.name(),
                n.kind().name()
            ));
        }
        let path = scene
            .node_paths_to(node)
            .into_iter()
            .next()
            .ok_or("the vehicle node has no path from a root")?;
        let parent_to_world = scene
            .local_to_world(&path[..path.len() - 1])
            .map_err(|e| e.to_string())?;
        let local_box = local_box(scene, node);
        if local_box.is_empty() {
            return Err(format!(
                "the vehicle node `{}` holds no geometry",
                scene.node(node).map_or("", |n| n.name())
            ));
        }
        scene
            .set_node_mask(node, VEHICLE_MASK)
            .map_err(|e| e.to_string())?;
        Ok(Vehicle {
            node,
            parent_to_world,
            local_box,
        })
    }

    /// The vehicle frame's local-to-world matrix for a pose: yaw about +Y, then lifted
    /// so the box's bottom touches `pose.position.y`.
    pub fn world_matrix(&self, pose: &Pose) -> DMat4 {
        let lift = DVec3::new(0.0, -self.local_box.min.y, 0.0);
        DMat4::from_translation(pose.position + lift) * DMat4::from_rotation_y(pose.yaw)
    }

    /// Moves the vehicle to `pose` (its node's matrix, relative to its parent); returns
    /// the new local-to-world matrix.
    pub fn place(&self, scene: &mut SceneGraph, pose: &Pose) -> Result<DMat4, String> {
        let world = self.world_matrix(pose);
        scene
            .set_matrix(self.node, self.parent_to_world.inverse() * world)
            .map_err(|e| e.to_string())?;
        Ok(world)
    }

    /// The vehicle's oriented box under `world`, grown by `inflate` metres on every side,
    /// as `(centre, half extents, rotation)` for [`Polytope::from_oriented_box`] and
    /// [`PolytopeIntersector::set_oriented_box`] (planes left, right, bottom, top, back,
    /// front: the front plane last, the reference plane of hit distances).
    pub fn oriented_box(&self, world: &DMat4, inflate: f64) -> (DVec3, DVec3, DQuat) {
        let (scale, rotation, _) = world.to_scale_rotation_translation();
        let half = (self.local_box.max - self.local_box.min) * 0.5 * scale.abs();
        (
            world.transform_point3(self.local_box.center()),
            half + DVec3::splat(inflate),
            rotation,
        )
    }

    /// The 4 corners of the (inflated) box's footprint on the ground, world x/z, in order.
    pub fn footprint(&self, world: &DMat4, inflate: f64) -> [DVec3; 4] {
        let (min, max) = (
            self.local_box.min - DVec3::splat(inflate),
            self.local_box.max + DVec3::splat(inflate),
        );
        [
            DVec3::new(min.x, min.y, min.z),
            DVec3::new(max.x, min.y, min.z),
            DVec3::new(max.x, min.y, max.z),
            DVec3::new(min.x, min.y, max.z),
        ]
        .map(|p| world.transform_point3(p))
    }
}

/// The box of every vertex of every primitive under `node`, in `node`'s own frame (its
/// own matrix not applied), collected through the primitive functor.
pub fn local_box(scene: &SceneGraph, node: NodeId) -> BoundingBox {
    struct Collect {
        matrix: DMat4,
        bound: BoundingBox,
    }
    impl Collect {
        fn add(&mut self, v: Vec3) {
            self.bound
                .expand_by_point(self.matrix.transform_point3(v.as_dvec3()));
        }
    }
    impl PrimitiveFunctor for Collect {
        fn point(&mut self, v: Vec3, _i: u32, _p: u32) {
            self.add(v);
        }
        fn line(&mut self, v: [Vec3; 2], _i: [u32; 2], _p: u32) {
            v.into_iter().for_each(|v| self.add(v));
        }
        fn triangle(&mut self, v: [Vec3; 3], _i: [u32; 3], _p: u32) {
            v.into_iter().for_each(|v| self.add(v));
        }
    }
    let mut collect = Collect {
        matrix: DMat4::IDENTITY,
        bound: BoundingBox::EMPTY,
    };
    // The children are walked from the node's own frame: its matrix is not applied.
    let children = scene
        .node(node)
        .map_or(Vec::new(), |n| n.children().to_vec());
    for child in children {
        for_each_drawable(
            scene,
            child,
            DMat4::IDENTITY,
            u32::MAX,
            &mut |m, _, _, d| {
                collect.matrix = *m;
                d.accept(&mut collect);
            },
        );
    }
    collect.bound
}
