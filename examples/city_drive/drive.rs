//! One frame of the drive: move the vehicle, ask a polytope query what its box touches,
//! and turn the hits into contacts per object that begin and end.
//!
//! Shared by the `city_drive` example and `tests/city_drive.rs`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use scene_intersect::prelude::*;

use super::terrain::Terrain;
use super::vehicle::{Pose, Vehicle, WITHOUT_VEHICLE};

/// A contact between the vehicle's box and one object of the scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Contact {
    /// Node path from the root to the object (the deepest Transform above the geode hit,
    /// that is the glTF node instancing the mesh, or the geode itself without one).
    pub object: Vec<NodeId>,
    /// The smallest distance of a hit behind the box's front plane, metres (0 at the
    /// front face; the box is `length + 2 inflate` deep).
    pub distance: f64,
    /// Triangles of the object inside the box.
    pub triangles: usize,
}

/// What changed in one frame.
#[derive(Clone, Debug, PartialEq)]
pub enum ContactEvent {
    /// The box started touching the object.
    Begin(Contact),
    /// The box stopped touching it (the contact as it was last seen).
    End(Contact),
}

/// The result of one frame.
#[derive(Debug)]
pub struct Frame {
    /// Contacts that began or ended.
    pub events: Vec<ContactEvent>,
    /// The obstacle hits of this frame (terrain left out).
    pub hits: Vec<PolytopeHit>,
    /// The time the polytope query took.
    pub query_time: Duration,
    /// The time moving the vehicle took (its node's matrix set, the scene index refitted
    /// along the vehicle's paths).
    pub move_time: Duration,
    /// The vehicle's local-to-world matrix this frame.
    pub world: glam::DMat4,
}

/// Drives a vehicle through a scene, frame by frame.
pub struct Drive {
    /// The vehicle.
    pub vehicle: Vehicle,
    /// Terrain: its hits are not contacts.
    pub terrain: Terrain,
    /// Metres the vehicle's box is grown by on every side.
    pub inflate: f64,
    root: NodeId,
    visitor: IntersectionVisitor,
    /// The contact query, made at the first frame and moved to the vehicle's box at
    /// every frame after (its working room is kept).
    query: Option<PolytopeIntersector>,
    current: BTreeMap<Vec<NodeId>, Contact>,
}

impl Drive {
    /// A drive of `vehicle` through the scene under `root`.
    pub fn new(vehicle: Vehicle, terrain: Terrain, root: NodeId, inflate: f64) -> Drive {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_traversal_mask(WITHOUT_VEHICLE);
        Drive {
            vehicle,
            terrain,
            inflate,
            root,
            visitor,
            query: None,
            current: BTreeMap::new(),
        }
    }

    /// The contacts of the last frame, by object path.
    pub fn contacts(&self) -> impl Iterator<Item = &Contact> {
        self.current.values()
    }

    /// Moves the vehicle to `pose` and finds what its box touches.
    pub fn step(&mut self, scene: &mut SceneGraph, pose: &Pose) -> Result<Frame, String> {
        let started = Instant::now();
        let world = self.vehicle.place(scene, pose)?;
        let move_time = started.elapsed();
        let (center, half, rotation) = self.vehicle.oriented_box(&world, self.inflate);
        let bad_box = |e: QueryError| format!("vehicle box: {e}");
        let query = match &mut self.query {
            Some(query) => {
                // Written in place, frame after frame.
                query
                    .set_oriented_box(center, half, rotation)
                    .map_err(bad_box)?;
                query
            }
            None => {
                let polytope =
                    Polytope::from_oriented_box(center, half, rotation).map_err(bad_box)?;
                self.query.insert(
                    PolytopeIntersector::new(polytope)
                        .with_primitive_mask(PrimitiveMask::TRIANGLES),
                )
            }
        };
        let started = Instant::now();
        self.visitor
            .apply(scene, self.root, query)
            .map_err(|e| format!("contact query: {e}"))?;
        let query_time = started.elapsed();

        let hits: Vec<PolytopeHit> = query
            .take_intersections()
            .into_iter()
            .filter(|h| !self.terrain.is_terrain(scene, &h.node_path))
            .collect();
        let mut now: BTreeMap<Vec<NodeId>, Contact> = BTreeMap::new();
        for hit in &hits {
            let object = object_path(scene, &hit.node_path);
            let contact = now.entry(object.clone()).or_insert(Contact {
                object,
                distance: f64::INFINITY,
                triangles: 0,
            });
            contact.distance = contact.distance.min(hit.distance);
            contact.triangles += 1;
        }
        let mut events = Vec::new();
        for (key, old) in &self.current {
            if !now.contains_key(key) {
                events.push(ContactEvent::End(old.clone()));
            }
        }
        for (key, new) in &now {
            if !self.current.contains_key(key) {
                events.push(ContactEvent::Begin(new.clone()));
            }
        }
        self.current = now;
        Ok(Frame {
            events,
            hits,
            query_time,
            move_time,
            world,
        })
    }
}

/// The path to the object a hit belongs to: cut after the deepest Transform (in a loaded
/// glTF file, the node instancing the mesh: `.../building_57/proto_pyramid_roof` in the
/// city, `.../House06/House06Mesh` in truck_town); the whole path when there is none.
pub fn object_path(scene: &SceneGraph, path: &[NodeId]) -> Vec<NodeId> {
    let end = path
        .iter()
        .rposition(|id| scene.node(*id).is_some_and(|n| n.transform().is_some()))
        .map_or(path.len(), |i| i + 1);
    path[..end].to_vec()
}

/// The names along a path, joined by `/` (unnamed nodes skipped).
pub fn path_names(scene: &SceneGraph, path: &[NodeId]) -> String {
    path.iter()
        .filter_map(|id| scene.node(*id).map(|n| n.name()))
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}
