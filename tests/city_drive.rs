//! The core loop of `examples/city_drive` (its own modules, included here) on a scene
//! small enough to work out by hand: a vehicle drives straight through a building.
//!
//! Scene (metres, +Y up):
//! * `ground`: the square x, z in [-50, 50] at y = 0 (terrain: ignored as a contact);
//! * `building`: a Transform moving a box of walls and a roof (no floor) to
//!   x in [20, 30], z in [-5, 5], y in [0, 10]; each face is one QUADS primitive, so a
//!   face inside the vehicle's box is one hit;
//! * `vehicle`: a Transform holding a closed 1.8 x 1.5 x 4.5 m box, x in [-0.9, 0.9],
//!   y in [0, 1.5], z in [-2.25, 2.25], front at +Z.
//!
//! The route runs from (0, 0) to (40, 0) along +x at 10 m/s and 10 fps: frame f puts the
//! vehicle's origin at x = f, yaw 90 degrees (local +Z to world +x). With the box grown
//! by 0.25 m, the box spans x in [f - 2.5, f + 2.5], z in [-1.15, 1.15], y in
//! [-0.25, 1.75].
//! * The front wall (x = 20) is inside iff f - 2.5 <= 20 <= f + 2.5: frames 18..=22.
//!   Frame 17 has the front face at 19.5 (clear), frame 18 at 20.5, so the contact begins
//!   at frame 18 with the wall 0.5 m behind the front plane (distance 0.5); it ends at
//!   frame 23, last seen at frame 22 with the wall at 24.5 - 20 = 4.5 m.
//! * Inside the building nothing is touched (walls at z = +-5 and the roof at y = 10 are
//!   out of reach) until the back wall (x = 30) enters: 30 <= f + 2.5 from frame 28
//!   (distance 30.5 - 30 = 0.5) until f - 2.5 > 30, frame 33.
//! * The ground is always inside the box (its bottom is at -0.25) and the vehicle's own
//!   mesh too: neither may ever appear.

#[allow(dead_code)]
#[path = "../examples/city_drive/drive.rs"]
mod drive;
#[allow(dead_code)]
#[path = "../examples/city_drive/route.rs"]
mod route;
#[allow(dead_code)]
#[path = "../examples/common/scene_walk.rs"]
mod scene_walk;
#[allow(dead_code)]
#[path = "../examples/city_drive/terrain.rs"]
mod terrain;
#[allow(dead_code)]
#[path = "../examples/city_drive/vehicle.rs"]
mod vehicle;

use drive::{path_names, ContactEvent, Drive};
use glam::{DMat4, DVec2, DVec3, Vec3};
use route::{parse_route, Route};
use scene_intersect::prelude::*;
use terrain::Terrain;
use vehicle::{Pose, Vehicle, WITHOUT_VEHICLE};

fn geode(scene: &mut SceneGraph, parent: NodeId, name: &str, geometry: Geometry) {
    let g = scene.add_geode(name);
    let d = scene.add_drawable(name, geometry);
    scene.add_drawable_to_geode(g, d).unwrap();
    scene.add_child(parent, g).unwrap();
}

/// The faces of the box `[min, max]` as QUADS, one primitive each: the four walls, the
/// roof and, when `floor`, the floor.
fn box_quads(min: Vec3, max: Vec3, floor: bool) -> Geometry {
    let corner = |x: bool, y: bool, z: bool| {
        Vec3::new(
            if x { max.x } else { min.x },
            if y { max.y } else { min.y },
            if z { max.z } else { min.z },
        )
    };
    let faces: &[[(bool, bool, bool); 4]] = &[
        [
            (false, false, false),
            (false, true, false),
            (false, true, true),
            (false, false, true),
        ],
        [
            (true, false, false),
            (true, false, true),
            (true, true, true),
            (true, true, false),
        ],
        [
            (false, false, false),
            (true, false, false),
            (true, true, false),
            (false, true, false),
        ],
        [
            (false, false, true),
            (false, true, true),
            (true, true, true),
            (true, false, true),
        ],
        [
            (false, true, false),
            (true, true, false),
            (true, true, true),
            (false, true, true),
        ],
        [
            (false, false, false),
            (false, false, true),
            (true, false, true),
            (true, false, false),
        ],
    ];
    let used = if floor { 6 } else { 5 };
    let vertices: Vec<Vec3> = faces[..used]
        .iter()
        .flatten()
        .map(|&(x, y, z)| corner(x, y, z))
        .collect();
    let n = vertices.len() as u32;
    Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, n))
        .unwrap()
}

/// (scene, root, vehicle transform) of the module docs.
fn scene() -> (SceneGraph, NodeId, NodeId) {
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let ground = Geometry::new(vec![
        Vec3::new(-50.0, 0.0, -50.0),
        Vec3::new(-50.0, 0.0, 50.0),
        Vec3::new(50.0, 0.0, 50.0),
        Vec3::new(50.0, 0.0, -50.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))
    .unwrap();
    geode(&mut s, root, "ground", ground);
    let building = s
        .add_transform(
            "building",
            DMat4::from_translation(DVec3::new(20.0, 0.0, 0.0)),
        )
        .unwrap();
    s.add_child(root, building).unwrap();
    geode(
        &mut s,
        building,
        "walls",
        box_quads(Vec3::new(0.0, 0.0, -5.0), Vec3::new(10.0, 10.0, 5.0), false),
    );
    let vehicle = s.add_transform("vehicle", DMat4::IDENTITY).unwrap();
    s.add_child(root, vehicle).unwrap();
    geode(
        &mut s,
        vehicle,
        "body",
        box_quads(Vec3::new(-0.9, 0.0, -2.25), Vec3::new(0.9, 1.5, 2.25), true),
    );
    (s, root, vehicle)
}

#[test]
fn route_is_sampled_by_distance() {
    let r = Route::new([DVec2::ZERO, DVec2::new(10.0, 0.0), DVec2::new(10.0, 5.0)]).unwrap();
    assert_eq!(r.length(), 15.0);
    assert_eq!(r.sample(4.0), (DVec2::new(4.0, 0.0), DVec2::X));
    assert_eq!(r.sample(12.0), (DVec2::new(10.0, 2.0), DVec2::Y));
    assert_eq!(r.sample(99.0).0, DVec2::new(10.0, 5.0));
    assert!(parse_route("0,0;1,x").is_err());
    assert!(parse_route("3,4").is_err());
    assert_eq!(parse_route("0,0; 3,4").unwrap().length(), 5.0);
}

#[test]
fn vehicle_box_comes_from_its_own_vertices() {
    let (mut s, _, vehicle) = scene();
    let v = Vehicle::new(&mut s, vehicle).unwrap();
    // The vertices are f32: compare with the same numbers widened.
    assert_eq!(v.local_box.min, Vec3::new(-0.9, 0.0, -2.25).as_dvec3());
    assert_eq!(v.local_box.max, Vec3::new(0.9, 1.5, 2.25).as_dvec3());
    assert_eq!(s.node(vehicle).unwrap().node_mask(), vehicle::VEHICLE_MASK);
}

#[test]
fn driving_through_a_building_begins_and_ends_contacts_at_the_hand_computed_frames() {
    let (mut s, root, vehicle) = scene();
    let v = Vehicle::new(&mut s, vehicle).unwrap();
    let terrain = Terrain::new(&s, root, vec!["ground".into()], WITHOUT_VEHICLE);
    let route = parse_route("0,0;40,0").unwrap();
    let mut drive = Drive::new(v, terrain, root, 0.25);
    let (speed, fps) = (10.0, 10.0);
    let mut events = Vec::new();
    for frame in 0..=40 {
        let (at, heading) = route.sample(speed * f64::from(frame) / fps);
        let height = drive.terrain.height(&s, root, at.x, at.y).unwrap();
        assert_eq!(height, 0.0, "the ground is at y = 0 under the vehicle");
        let pose = Pose::heading(DVec3::new(at.x, height, at.y), heading.x, heading.y);
        let result = drive.step(&mut s, &pose).unwrap();
        // The front face (box front + 0.25 m) is at x = frame + 2.5.
        let front = result.world.transform_point3(DVec3::new(0.0, 0.0, 2.5));
        assert!((front - DVec3::new(f64::from(frame) + 2.5, 0.0, 0.0)).length() < 1e-9);
        for e in result.events {
            let (kind, c) = match e {
                ContactEvent::Begin(c) => ("begin", c),
                ContactEvent::End(c) => ("end", c),
            };
            events.push((
                frame,
                kind,
                path_names(&s, &c.object),
                c.distance,
                c.triangles,
            ));
        }
    }
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let expected = [
        (18, "begin", 0.5),
        (23, "end", 4.5),
        (28, "begin", 0.5),
        (33, "end", 4.5),
    ];
    assert_eq!(events.len(), expected.len(), "events: {events:?}");
    for (got, want) in events.iter().zip(expected) {
        assert_eq!((got.0, got.1), (want.0, want.1), "events: {events:?}");
        assert_eq!(got.2, "root/building");
        assert!(close(got.3, want.2), "distance {} != {}", got.3, want.2);
        assert_eq!(got.4, 1, "one wall quad");
    }
}
