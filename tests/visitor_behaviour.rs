//! Behaviour of the visitor and the three intersectors on small scenes whose answers
//! are worked out by hand in the comments.

use glam::{DMat4, DQuat, DVec3, DVec4, Vec3};
use scene_intersect::intersectors::{AnyIntersector, PrimitiveKind};
use scene_intersect::prelude::*;

/// A scene with a root group; returns (scene, root).
fn scene() -> (SceneGraph, NodeId) {
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    (s, root)
}

/// Adds a geode holding `geometry` under `parent`; returns (geode, drawable).
fn add_mesh(
    s: &mut SceneGraph,
    parent: NodeId,
    name: &str,
    geometry: Geometry,
) -> (NodeId, DrawableId) {
    let geode = s.add_geode(name);
    let d = s.add_drawable(name, geometry);
    s.add_drawable_to_geode(geode, d).unwrap();
    s.add_child(parent, geode).unwrap();
    (geode, d)
}

fn triangles(vertices: Vec<Vec3>) -> Geometry {
    let n = vertices.len() as u32;
    Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, n))
        .unwrap()
}

/// The square [-1, 1]^2 at height `y`, as two triangles sharing the diagonal
/// (-1,-1)-(1,1) in x/z.
fn square_at(y: f32) -> Geometry {
    triangles(vec![
        Vec3::new(-1.0, y, -1.0),
        Vec3::new(1.0, y, -1.0),
        Vec3::new(1.0, y, 1.0),
        Vec3::new(1.0, y, 1.0),
        Vec3::new(-1.0, y, 1.0),
        Vec3::new(-1.0, y, -1.0),
    ])
}

/// An intersector's hits, to compare two traversals' answers.
trait Hits {
    type Hit: PartialEq + std::fmt::Debug;
    fn hits(&self) -> &[Self::Hit];
}

impl Hits for LineSegmentIntersector {
    type Hit = LineSegmentHit;
    fn hits(&self) -> &[LineSegmentHit] {
        self.intersections()
    }
}

impl Hits for PolytopeIntersector {
    type Hit = PolytopeHit;
    fn hits(&self) -> &[PolytopeHit] {
        self.intersections()
    }
}

impl Hits for SphereIntersector {
    type Hit = SphereHit;
    fn hits(&self) -> &[SphereHit] {
        self.intersections()
    }
}

/// Answers `query` with a new (accelerated) visitor, and checks that the plain traversal
/// gives the same hits: the plain one culls by node bounds, the accelerated one by its
/// own trees, so a test of either alone would miss a wrong bound.
fn apply_both<I: Intersector + Hits + Clone>(s: &SceneGraph, root: NodeId, query: &mut I) {
    let mut plain = query.clone();
    let mut visitor = IntersectionVisitor::new();
    visitor.apply(s, root, query).unwrap();
    visitor.set_use_acceleration(false);
    visitor.apply(s, root, &mut plain).unwrap();
    assert_eq!(
        query.hits(),
        plain.hits(),
        "accelerated and plain traversals differ"
    );
}

/// The hits of the segment from `a` to `b` (both traversals, see [`apply_both`]).
fn segment_hits(s: &SceneGraph, root: NodeId, a: DVec3, b: DVec3) -> Vec<LineSegmentHit> {
    let mut i = LineSegmentIntersector::new(a, b).unwrap();
    apply_both(s, root, &mut i);
    i.take_intersections()
}

#[test]
fn segment_through_two_stacked_triangles_gives_two_hits_in_ratio_order() {
    let (mut s, root) = scene();
    add_mesh(&mut s, root, "upper", square_at(2.0));
    add_mesh(&mut s, root, "lower", square_at(0.0));
    // From y = 4 down to y = -4 at (0.5, _, -0.25): crosses y = 2 at ratio 2/8 and y = 0 at 4/8.
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.5, 4.0, -0.25),
        DVec3::new(0.5, -4.0, -0.25),
    );
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].ratio, 0.25);
    assert_eq!(hits[1].ratio, 0.5);
    assert_eq!(hits[0].world_point, DVec3::new(0.5, 2.0, -0.25));
    assert_eq!(hits[1].world_point, DVec3::new(0.5, 0.0, -0.25));
    // (0.5, -0.25) has z < x: below the diagonal, in the first triangle (-1,-1),(1,-1),(1,1).
    assert_eq!(hits[0].primitive_index, 0);
    assert_eq!(hits[0].primitive_kind, PrimitiveKind::Triangle);
    // Barycentric weights reproduce the point: a(-1,-1) b(1,-1) c(1,1) in (x, z):
    // (0.5, -0.25) = 0.25 a + 0.375 b + 0.375 c.
    let w = &hits[0].barycentric;
    assert!(
        (w[0] - 0.25).abs() < 1e-12 && (w[1] - 0.375).abs() < 1e-12 && (w[2] - 0.375).abs() < 1e-12
    );
    assert_eq!(hits[0].vertex_indices.as_slice(), &[0, 1, 2]);
    // The triangle winds (-1,-1)->(1,-1)->(1,1) in x/z: normal (b-a)x(c-a) = (2,0,0)x(2,0,2) = (0,-4,0).
    assert_eq!(hits[0].world_normal, DVec3::new(0.0, -1.0, 0.0));
    assert_eq!(hits[0].node_path, vec![root, s.find_node("upper").unwrap()]);
}

#[test]
fn segment_through_a_shared_edge_hits_both_triangles() {
    let (mut s, root) = scene();
    add_mesh(&mut s, root, "sq", square_at(0.0));
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.5, 1.0, 0.5),
        DVec3::new(0.5, -1.0, 0.5),
    );
    assert_eq!(
        hits.iter().map(|h| h.primitive_index).collect::<Vec<_>>(),
        vec![0, 1]
    );
    // Through the shared vertex (1, 1): both again.
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(1.0, 1.0, 1.0),
        DVec3::new(1.0, -1.0, 1.0),
    );
    assert_eq!(hits.len(), 2);
}

#[test]
fn segment_ending_on_a_face_and_coplanar_segments() {
    let (mut s, root) = scene();
    add_mesh(&mut s, root, "sq", square_at(0.0));
    // Ends exactly on the face: ratio 1.
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.2, 3.0, 0.1),
        DVec3::new(0.2, 0.0, 0.1),
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].ratio, 1.0);
    // Lying in the plane of the square: not a hit.
    assert!(segment_hits(
        &s,
        root,
        DVec3::new(-3.0, 0.0, 0.1),
        DVec3::new(3.0, 0.0, 0.1)
    )
    .is_empty());
}

#[test]
fn node_masks_and_traversal_mask() {
    let (mut s, root) = scene();
    let (vehicle, _) = add_mesh(&mut s, root, "vehicle", square_at(1.0));
    add_mesh(&mut s, root, "ground", square_at(0.0));
    let down = (DVec3::new(0.1, 5.0, 0.2), DVec3::new(0.1, -5.0, 0.2));
    assert_eq!(segment_hits(&s, root, down.0, down.1).len(), 2);

    // The vehicle carries bit 2 only; a traversal mask without bit 2 skips it.
    s.set_node_mask(vehicle, 0b10).unwrap();
    let mut i = LineSegmentIntersector::new(down.0, down.1).unwrap();
    let mut v = IntersectionVisitor::new();
    v.set_traversal_mask(!0b10);
    v.apply(&s, root, &mut i).unwrap();
    assert_eq!(i.intersections().len(), 1);
    assert_eq!(i.intersections()[0].world_point.y, 0.0);
    // The override mask is OR-ed into every node mask: a bit the traversal mask has
    // brings the vehicle back.
    v.set_override_mask(0b01);
    v.apply(&s, root, &mut i).unwrap();
    assert_eq!(i.intersections().len(), 2);

    // A node with mask 0 is skipped by the default visitor.
    s.set_node_mask(vehicle, 0).unwrap();
    assert_eq!(segment_hits(&s, root, down.0, down.1).len(), 1);
}

#[test]
fn masks_are_honoured_whether_set_before_or_after_the_index_is_built() {
    // A group above the vehicle carries the mask, so the instance's path (not its own
    // geode) decides; set before the first (accelerated) query builds the index.
    let (mut s, root) = scene();
    let carrier = s.add_group("carrier");
    s.add_child(root, carrier).unwrap();
    let (vehicle, _) = add_mesh(&mut s, carrier, "vehicle", square_at(1.0));
    add_mesh(&mut s, root, "ground", square_at(0.0));
    s.set_node_mask(carrier, 0b10).unwrap();
    let down = (DVec3::new(0.1, 5.0, 0.2), DVec3::new(0.1, -5.0, 0.2));
    let query = |s: &SceneGraph, traversal_mask: u32| {
        let mut i = LineSegmentIntersector::new(down.0, down.1).unwrap();
        let mut v = IntersectionVisitor::new();
        v.set_traversal_mask(traversal_mask);
        v.apply(s, root, &mut i).unwrap();
        i.intersections().len()
    };
    assert_eq!(query(&s, !0b10), 1, "the carrier's mask hides the vehicle");
    assert_eq!(query(&s, u32::MAX), 2);
    assert_eq!(query(&s, 0), 0, "a zero traversal mask reaches nothing");
    // After the index exists: clearing the carrier's mask brings the vehicle back for
    // that traversal mask, masking the vehicle's geode hides it again.
    s.set_node_mask(carrier, u32::MAX).unwrap();
    assert_eq!(query(&s, !0b10), 2);
    s.set_node_mask(vehicle, 0b10).unwrap();
    assert_eq!(query(&s, !0b10), 1);
    assert_eq!(query(&s, 0b10), 2, "the ground keeps all bits");
}

#[test]
fn scaled_transforms_report_world_units() {
    let (mut s, root) = scene();
    // Scale 2 then lift by 10: the square at local height 1 lands at y = 10 + 2*1 = 12,
    // spanning x, z in [-2, 2].
    let t = s
        .add_transform(
            "t",
            DMat4::from_translation(DVec3::new(0.0, 10.0, 0.0))
                * DMat4::from_scale(DVec3::splat(2.0)),
        )
        .unwrap();
    s.add_child(root, t).unwrap();
    add_mesh(&mut s, t, "sq", square_at(1.0));

    // Segment: world (1.5, _, 0) is local (0.75, _, 0), below the diagonal: triangle 0.
    // y = 12 lies at ratio (20 - 12) / 20 = 0.4 of the way from y = 20 to y = 0.
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(1.5, 20.0, 0.0),
        DVec3::new(1.5, 0.0, 0.0),
    );
    assert_eq!(hits.len(), 1);
    assert!((hits[0].ratio - 0.4).abs() < 1e-15);
    assert!((hits[0].world_point - DVec3::new(1.5, 12.0, 0.0)).length() < 1e-12);

    // Sphere of radius 3 centred 3 m above the square: touches it (closed ball), at a
    // world distance of 3 (1.5 in local units).
    let mut sphere = SphereIntersector::new(DVec3::new(1.5, 15.0, 0.0), 3.0).unwrap();
    apply_both(&s, root, &mut sphere);
    // Triangle 1 (z >= x) is sqrt(3^2 + 0.75^2 + 0.75^2) = 3.18 away: missed.
    let h = sphere.intersections();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].primitive_index, 0);
    assert!((h[0].distance - 3.0).abs() < 1e-12);
    assert!((h[0].world_point - DVec3::new(1.5, 12.0, 0.0)).length() < 1e-12);

    // Polytope: the box x, z in [-5, 5], y in [11, 13] holds both triangles whole. The
    // reference plane is the last, the +z face (inward normal -z): distance = 5 - z.
    // Triangle 1 (2,2),(-2,2),(-2,-2): mean z = 2/3 -> 4.333; deepest vertex z = -2 -> 7.
    // Triangle 0 (-2,-2),(2,-2),(2,2): mean z = -2/3 -> 5.667.
    let mut poly = PolytopeIntersector::new(
        Polytope::from_box(DVec3::new(-5.0, 11.0, -5.0), DVec3::new(5.0, 13.0, 5.0)).unwrap(),
    );
    apply_both(&s, root, &mut poly);
    let h = poly.intersections();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0].primitive_index, 1);
    assert!((h[0].distance - (5.0 - 2.0 / 3.0)).abs() < 1e-12);
    assert!((h[0].max_distance - 7.0).abs() < 1e-12);
    assert!((h[1].distance - (5.0 + 2.0 / 3.0)).abs() < 1e-12);
    assert_eq!(h[0].polygon.len(), 3);
}

#[test]
fn a_sheared_transform_culls_nothing_it_holds() {
    // The shear x += y stretches (0.526, 0.851, 0) by the golden ratio 1.618 (the
    // largest singular value of axes (1, 0, 0), (1, 1, 0), (0, 0, 1)); its longest axis
    // is only √2 = 1.414 long. Two small flat triangles 10 units from the origin along
    // ±(0.526, 0.851, 0) give the geode a sphere of radius ~10 around the origin; moved
    // by the shear, the one at +p lands 16.18 from it, outside a sphere scaled by
    // 1.414 (14.15), which the plain traversal culled (found by the `edits` fuzz
    // target, whose frame had two long axes pointing almost the same way).
    let (mut s, root) = scene();
    let mut shear = DMat4::IDENTITY;
    shear.y_axis.x = 1.0;
    let t = s.add_transform("shear", shear).unwrap();
    s.add_child(root, t).unwrap();
    let golden = (1.0 + 5f64.sqrt()) / 2.0;
    let p = (DVec3::new(1.0, golden, 0.0).normalize() * 10.0).as_vec3();
    let flat = |c: Vec3| {
        [
            c + Vec3::new(-0.01, 0.0, -0.01),
            c + Vec3::new(0.01, 0.0, -0.01),
            c + Vec3::new(0.0, 0.0, 0.01),
        ]
    };
    add_mesh(&mut s, t, "pair", triangles([flat(p), flat(-p)].concat()));
    // The triangle at +p lies in the world plane y = p.y, around (p.x + p.y, p.y, 0).
    let at = DVec3::new(f64::from(p.x + p.y), f64::from(p.y), 0.0);
    assert!((at.length() - 10.0 * golden).abs() < 1e-5);

    // A vertical segment through it: one hit, half way.
    let hits = segment_hits(&s, root, at + DVec3::Y, at - DVec3::Y);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].primitive_index, 0);
    assert!((hits[0].ratio - 0.5).abs() < 1e-6);
    // A small box around it: the whole triangle.
    let mut poly = PolytopeIntersector::new(
        Polytope::from_box(at - DVec3::splat(0.05), at + DVec3::splat(0.05)).unwrap(),
    );
    apply_both(&s, root, &mut poly);
    assert_eq!(poly.intersections().len(), 1);
    assert_eq!(poly.intersections()[0].polygon.len(), 3);
    // A small ball on it.
    let mut ball = SphereIntersector::new(at, 0.05).unwrap();
    apply_both(&s, root, &mut ball);
    assert_eq!(ball.intersections().len(), 1);
    assert!(ball.intersections()[0].distance < 1e-5);
}

#[test]
fn polytope_through_a_triangle_without_a_vertex_inside() {
    let (mut s, root) = scene();
    // One big triangle in the plane y = 0.
    add_mesh(
        &mut s,
        root,
        "big",
        triangles(vec![
            Vec3::new(-100.0, 0.0, -100.0),
            Vec3::new(100.0, 0.0, -100.0),
            Vec3::new(0.0, 0.0, 100.0),
        ]),
    );
    // A unit box straddling the plane, far from every vertex.
    let mut poly = PolytopeIntersector::new(
        Polytope::from_box(DVec3::new(-0.5, -0.5, -0.5), DVec3::new(0.5, 0.5, 0.5)).unwrap(),
    );
    apply_both(&s, root, &mut poly);
    let h = poly.intersections();
    assert_eq!(h.len(), 1);
    // The clipped part is the box's section: the square [-0.5, 0.5]^2 at y = 0.
    assert_eq!(h[0].polygon.len(), 4);
    assert!(h[0].world_point.length() < 1e-12);
    // Reference plane = last = the +z face: distance 0.5 from the centre.
    assert!((h[0].distance - 0.5).abs() < 1e-12);
    assert!((h[0].max_distance - 1.0).abs() < 1e-12);
}

#[test]
fn touching_contacts_count() {
    let (mut s, root) = scene();
    // A triangle whose vertex (1, 1, 1) touches the unit cube's corner.
    add_mesh(
        &mut s,
        root,
        "t",
        triangles(vec![
            Vec3::new(1.0, 1.0, 1.0),
            Vec3::new(3.0, 1.0, 1.0),
            Vec3::new(3.0, 3.0, 3.0),
        ]),
    );
    let cube = Polytope::from_box(DVec3::ZERO, DVec3::ONE).unwrap();
    let mut poly = PolytopeIntersector::new(cube.clone());
    apply_both(&s, root, &mut poly);
    assert_eq!(poly.intersections().len(), 1);
    assert_eq!(poly.intersections()[0].polygon.as_slice(), &[DVec3::ONE]);
    // A ball of radius 1 centred at (0, 1, 1) touches the vertex exactly.
    let mut ball = SphereIntersector::new(DVec3::new(0.0, 1.0, 1.0), 1.0).unwrap();
    apply_both(&s, root, &mut ball);
    assert_eq!(ball.intersections().len(), 1);
    assert_eq!(ball.intersections()[0].distance, 1.0);
    // Slightly smaller: nothing.
    let mut ball = SphereIntersector::new(DVec3::new(0.0, 1.0, 1.0), 0.999).unwrap();
    apply_both(&s, root, &mut ball);
    assert!(ball.intersections().is_empty());
    // All normals flipped outward: the region is empty, nothing at the centre.
    let flipped = Polytope::new(cube.planes().iter().map(|p| -*p)).unwrap();
    let mut poly = PolytopeIntersector::new(flipped);
    add_mesh(
        &mut s,
        root,
        "centre",
        triangles(vec![
            Vec3::new(0.4, 0.5, 0.4),
            Vec3::new(0.6, 0.5, 0.4),
            Vec3::new(0.5, 0.5, 0.6),
        ]),
    );
    apply_both(&s, root, &mut poly);
    assert!(poly.intersections().is_empty());
}

#[test]
fn strips_and_fans_report_osg_primitive_indices() {
    let (mut s, root) = scene();
    // A strip of 3 triangles along x in the plane y = 0:
    // v0 (0,0,0) v1 (0,0,1) v2 (1,0,0) v3 (1,0,1) v4 (2,0,0).
    let strip = Geometry::new(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(2.0, 0.0, 0.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(
        PrimitiveMode::TriangleStrip,
        0,
        5,
    ))
    .unwrap();
    add_mesh(&mut s, root, "strip", strip);
    // (1.5, 0.2): only in triangle 2 = (v2, v3, v4).
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(1.5, 1.0, 0.2),
        DVec3::new(1.5, -1.0, 0.2),
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].primitive_index, 2);
    assert_eq!(hits[0].vertex_indices.as_slice(), &[2, 3, 4]);
    // (0.8, 0.7): in triangle 1 = (v1, v3, v2) (odd: reversed).
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.8, 1.0, 0.7),
        DVec3::new(0.8, -1.0, 0.7),
    );
    assert_eq!(hits[0].primitive_index, 1);
    assert_eq!(hits[0].vertex_indices.as_slice(), &[1, 3, 2]);
}

fn lod_scene() -> (SceneGraph, NodeId) {
    let (mut s, root) = scene();
    let lod = s.add_lod("lod", Some(DVec3::ZERO)).unwrap();
    s.add_child(root, lod).unwrap();
    for (name, y, min, max) in [("coarse", 1.0, 50.0, 1000.0), ("fine", 2.0, 0.0, 50.0)] {
        let geode = s.add_geode(name);
        let d = s.add_drawable(name, square_at(y));
        s.add_drawable_to_geode(geode, d).unwrap();
        s.add_lod_child(lod, geode, min, max).unwrap();
    }
    (s, root)
}

#[test]
fn lod_uses_the_highest_detail_unless_an_eye_point_is_given() {
    let (s, root) = lod_scene();
    let down = (DVec3::new(0.1, 10.0, 0.3), DVec3::new(0.1, -10.0, 0.3));
    let mut i = LineSegmentIntersector::new(down.0, down.1).unwrap();
    let mut v = IntersectionVisitor::new();
    v.apply(&s, root, &mut i).unwrap();
    // Highest detail = the child whose range starts at 0: "fine" at y = 2.
    assert_eq!(i.intersections().len(), 1);
    assert_eq!(i.intersections()[0].world_point.y, 2.0);
    // An eye 100 m away selects "coarse".
    v.set_lod_selection(LodSelection::EyePoint(DVec3::new(100.0, 0.0, 0.0)));
    v.apply(&s, root, &mut i).unwrap();
    assert_eq!(i.intersections()[0].world_point.y, 1.0);
    // An eye 10 m away: "fine" again.
    v.set_lod_selection(LodSelection::EyePoint(DVec3::new(10.0, 0.0, 0.0)));
    v.apply(&s, root, &mut i).unwrap();
    assert_eq!(i.intersections()[0].world_point.y, 2.0);
}

#[test]
fn switch_enters_enabled_children_only() {
    let (mut s, root) = scene();
    let sw = s.add_switch("switch");
    s.add_child(root, sw).unwrap();
    add_mesh(&mut s, sw, "a", square_at(1.0));
    add_mesh(&mut s, sw, "b", square_at(0.0));
    s.set_switch_child(sw, 0, false).unwrap();
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.1, 5.0, 0.3),
        DVec3::new(0.1, -5.0, 0.3),
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].world_point.y, 0.0);
}

#[test]
fn limits() {
    let (mut s, root) = scene();
    for y in [3.0, 1.0, 2.0] {
        add_mesh(&mut s, root, "layer", square_at(y));
    }
    let (a, b) = (DVec3::new(0.1, 5.0, 0.3), DVec3::new(0.1, -5.0, 0.3));
    let run = |limit| {
        let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
        apply_both(&s, root, &mut i);
        i.take_intersections()
    };
    let all = run(IntersectionLimit::None);
    assert_eq!(
        all.iter().map(|h| h.world_point.y).collect::<Vec<_>>(),
        vec![3.0, 2.0, 1.0]
    );
    let nearest = run(IntersectionLimit::Nearest);
    assert_eq!(nearest, vec![all[0].clone()]);
    assert_eq!(run(IntersectionLimit::OnePerDrawable).len(), 3);
    // `One` stops at the first hit the traversal finds, which depends on its order: the
    // plain traversal's is the scene's (here the square at y = 3, added first), the
    // accelerated one's its trees'. Either way it is one hit of the full list.
    for accelerated in [true, false] {
        let mut i = LineSegmentIntersector::new(a, b)
            .unwrap()
            .with_limit(IntersectionLimit::One);
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        visitor.apply(&s, root, &mut i).unwrap();
        let one = i.intersections();
        assert_eq!(one.len(), 1, "accelerated: {accelerated}");
        assert!(all.contains(&one[0]), "accelerated: {accelerated}");
        if !accelerated {
            assert_eq!(one[0].world_point.y, 3.0);
        }
    }
}

#[test]
fn a_shared_geode_is_hit_once_per_instance() {
    let (mut s, root) = scene();
    let geode = s.add_geode("shared");
    let d = s.add_drawable("sq", square_at(0.0));
    s.add_drawable_to_geode(geode, d).unwrap();
    for x in [0.0, 10.0] {
        let t = s
            .add_transform("t", DMat4::from_translation(DVec3::new(x, 0.0, 0.0)))
            .unwrap();
        s.add_child(root, t).unwrap();
        s.add_child(t, geode).unwrap();
    }
    // A horizontal box over both instances.
    let mut poly = PolytopeIntersector::new(
        Polytope::from_box(DVec3::new(-2.0, -1.0, -0.5), DVec3::new(12.0, 1.0, 0.5)).unwrap(),
    )
    .with_limit(IntersectionLimit::OnePerDrawable);
    apply_both(&s, root, &mut poly);
    let hits = poly.intersections();
    assert_eq!(hits.len(), 2);
    assert_ne!(hits[0].node_path, hits[1].node_path);
    assert_eq!(hits[0].drawable, hits[1].drawable);
}

#[test]
fn large_coordinates_keep_micrometre_precision() {
    let (mut s, root) = scene();
    let offset = DVec3::new(6.4e6, 12.0, -3.3e6);
    let t = s
        .add_transform("far", DMat4::from_translation(offset))
        .unwrap();
    s.add_child(root, t).unwrap();
    add_mesh(&mut s, t, "sq", square_at(0.0));
    let target = offset + DVec3::new(0.123456, 0.0, -0.654321);
    let hits = segment_hits(&s, root, target + DVec3::Y * 50.0, target - DVec3::Y * 50.0);
    assert_eq!(hits.len(), 1);
    assert!(
        (hits[0].world_point - target).length() < 1e-6,
        "{:?}",
        hits[0].world_point - target
    );
    assert!((hits[0].ratio - 0.5).abs() < 1e-12);
}

#[test]
fn absolute_reference_frame_ignores_the_parents() {
    let (mut s, root) = scene();
    let moved = s
        .add_transform(
            "moved",
            DMat4::from_translation(DVec3::new(100.0, 0.0, 0.0)),
        )
        .unwrap();
    s.add_child(root, moved).unwrap();
    let abs = s
        .add_transform("hud", DMat4::from_translation(DVec3::new(0.0, 5.0, 0.0)))
        .unwrap();
    s.set_reference_frame(abs, ReferenceFrame::Absolute)
        .unwrap();
    s.add_child(moved, abs).unwrap();
    add_mesh(&mut s, abs, "sq", square_at(0.0));
    // The square is at y = 5 around the origin, not at x = 100.
    let hits = segment_hits(
        &s,
        root,
        DVec3::new(0.0, 10.0, 0.5),
        DVec3::new(0.0, 0.0, 0.5),
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].world_point, DVec3::new(0.0, 5.0, 0.5));
}

#[test]
fn picking_tolerance_lets_segments_hit_lines_and_points() {
    let (mut s, root) = scene();
    let lines = Geometry::new(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, 5.0, 0.0),
        Vec3::new(3.0, 0.0, 0.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Lines, 0, 2))
    .unwrap()
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 2, 1))
    .unwrap();
    add_mesh(&mut s, root, "post", lines);
    // A horizontal segment along z at height 2, passing 0.1 from the post (x = 0.1).
    let (a, b) = (DVec3::new(0.1, 2.0, -1.0), DVec3::new(0.1, 2.0, 1.0));
    assert!(
        segment_hits(&s, root, a, b).is_empty(),
        "no tolerance: lines are not hit"
    );
    let mut i = LineSegmentIntersector::new(a, b)
        .unwrap()
        .with_picking_tolerance(0.15)
        .unwrap();
    apply_both(&s, root, &mut i);
    let h = i.intersections();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].primitive_kind, PrimitiveKind::Line);
    assert_eq!(h[0].ratio, 0.5);
    assert_eq!(h[0].world_point, DVec3::new(0.0, 2.0, 0.0));
    // The point (3, 0, 0) is 0.05 below a segment running over it.
    let mut i = LineSegmentIntersector::new(DVec3::new(2.0, 0.05, 0.0), DVec3::new(4.0, 0.05, 0.0))
        .unwrap()
        .with_picking_tolerance(0.06)
        .unwrap();
    apply_both(&s, root, &mut i);
    assert_eq!(i.intersections().len(), 1);
    assert_eq!(i.intersections()[0].primitive_kind, PrimitiveKind::Point);
    assert_eq!(i.intersections()[0].primitive_index, 1);
}

/// A square at y = 0 around the origin, and the view matrix of a camera 10 m above the
/// origin looking down (-z in view coordinates), with up along world -z: the square
/// lies at view depth z = -10.
fn square_under_camera() -> (SceneGraph, NodeId, DMat4) {
    let (mut s, root) = scene();
    add_mesh(&mut s, root, "sq", square_at(0.0));
    let view = glam::dcamera::rh::view::look_at_mat4(
        DVec3::new(0.0, 10.0, 0.0),
        DVec3::ZERO,
        DVec3::NEG_Z,
    );
    (s, root, view)
}

#[test]
fn a_reference_plane_given_in_the_view_frame_measures_in_the_view_frame() {
    let (s, root, view) = square_under_camera();
    let mut v = IntersectionVisitor::new();
    v.set_view_matrix(view);
    // A box in view coordinates around the square's centre, 9 to 11 m ahead.
    let around = Polytope::from_box(DVec3::new(-0.5, -0.5, -11.0), DVec3::new(0.5, 0.5, -9.0));
    let mut band = PolytopeIntersector::with_frame(CoordinateFrame::View, around.unwrap());
    // The plane 5 m ahead of the eye, facing away from it (view: -z - 5 >= 0 beyond):
    // the square, 10 m ahead, is 5 m past it. Measured in world coordinates, where the
    // square lies at y = 0 around the origin, the same four numbers would give -z - 5,
    // about -5.
    band.set_reference_plane(DVec4::new(0.0, 0.0, -1.0, -5.0))
        .unwrap();
    v.apply(&s, root, &mut band).unwrap();
    let hits = band.intersections();
    assert_eq!(hits.len(), 2, "both triangles of the square");
    for h in hits {
        assert!((h.distance - 5.0).abs() < 1e-9, "{}", h.distance);
        assert!((h.max_distance - 5.0).abs() < 1e-9, "{}", h.max_distance);
    }
}

#[test]
fn window_picking_matches_the_camera() {
    // Camera 10 m above the origin looking down, 90 degree vertical field of view,
    // a 200 x 100 viewport.
    let (s, root, view) = square_under_camera();
    let projection =
        glam::dcamera::rh::proj::opengl::perspective(std::f64::consts::FRAC_PI_2, 2.0, 1.0, 100.0);
    let viewport = Viewport::new(0.0, 0.0, 200.0, 100.0).unwrap();
    let mut v = IntersectionVisitor::new();
    v.set_view_matrix(view)
        .set_projection_matrix(projection)
        .set_viewport(viewport);
    // The centre of the window looks straight down at the origin.
    let mut i = LineSegmentIntersector::from_window(100.0, 50.0).unwrap();
    v.apply(&s, root, &mut i).unwrap();
    let h = i.first_intersection().unwrap();
    assert!(h.world_point.length() < 1e-9, "{:?}", h.world_point);
    // Window y = 54 is NDC y = 4/50 = 0.08; the half height at distance 10 is
    // 10 * tan(45deg) = 10 m, so 0.8 m towards the camera's up (-z): z = -0.8.
    // Window x = 108 is NDC x = 0.08 of a half width of 20 m: x = 1.6, off the square.
    let mut i = LineSegmentIntersector::from_window(100.0, 54.0).unwrap();
    v.apply(&s, root, &mut i).unwrap();
    let p = i.first_intersection().unwrap().world_point;
    assert!((p - DVec3::new(0.0, 0.0, -0.8)).length() < 1e-9, "{p:?}");
    let mut i = LineSegmentIntersector::from_window(108.0, 50.0).unwrap();
    v.apply(&s, root, &mut i).unwrap();
    assert!(i.intersections().is_empty());
    // The same pick from a y-down mouse position: pixel row 45 from the top of a
    // 100-high window is y = 100 - 45.5 = 54.5 in window coordinates (pixel centre).
    let (wx, wy) = viewport.window_from_top_left(100.0, 45.5);
    assert_eq!((wx, wy), (100.0, 54.5));
    // A rubber band around the centre selects both triangles; one far right, nothing.
    let mut band = PolytopeIntersector::from_window_rect(95.0, 45.0, 105.0, 55.0).unwrap();
    v.apply(&s, root, &mut band).unwrap();
    assert_eq!(band.intersections().len(), 2);
    let mut band = PolytopeIntersector::from_window_rect(180.0, 45.0, 199.0, 55.0).unwrap();
    v.apply(&s, root, &mut band).unwrap();
    assert!(band.intersections().is_empty());
}

#[test]
fn intersector_group_answers_like_separate_queries() {
    let (mut s, root) = scene();
    add_mesh(&mut s, root, "a", square_at(0.0));
    add_mesh(&mut s, root, "b", square_at(3.0));
    let seg =
        LineSegmentIntersector::new(DVec3::new(0.2, 5.0, 0.1), DVec3::new(0.2, -5.0, 0.1)).unwrap();
    let ball = SphereIntersector::new(DVec3::new(0.0, 2.5, 0.0), 0.6).unwrap();
    let mut group = IntersectorGroup::new();
    group.push(seg.clone().into());
    group.push(ball.clone().into());
    IntersectionVisitor::new()
        .apply(&s, root, &mut group)
        .unwrap();
    let (mut seg1, mut ball1) = (seg, ball);
    apply_both(&s, root, &mut seg1);
    apply_both(&s, root, &mut ball1);
    match group.members() {
        [AnyIntersector::LineSegment(g), AnyIntersector::Sphere(b)] => {
            assert_eq!(g.intersections(), seg1.intersections());
            assert_eq!(b.intersections(), ball1.intersections());
            assert_eq!(g.intersections().len(), 2);
            assert_eq!(
                b.intersections().len(),
                2,
                "the square at y = 3 is 0.5 away"
            );
        }
        other => panic!("unexpected members {other:?}"),
    }
}

#[test]
fn a_group_over_a_big_index_answers_like_separate_queries() {
    // 120 squares under transforms, stacked and spread, so the scene index's trees
    // have several levels of four-wide nodes; the group mixes nearest-first members
    // (whose limits drop as they find hits) with members that want every hit.
    let (mut s, root) = scene();
    let square = s.add_drawable("square", square_at(0.0));
    for k in 0..120 {
        let (x, y, z) = ((k % 10) as f64 * 2.5, (k / 10) as f64 * 0.7, (k % 7) as f64);
        let t = s
            .add_transform("t", DMat4::from_translation(DVec3::new(x, y, z)))
            .unwrap();
        s.add_child(root, t).unwrap();
        let geode = s.add_geode("g");
        s.add_drawable_to_geode(geode, square).unwrap();
        s.add_child(t, geode).unwrap();
    }
    let down = |x: f64, z: f64| {
        LineSegmentIntersector::new(DVec3::new(x, 20.0, z), DVec3::new(x, -1.0, z)).unwrap()
    };
    let members: Vec<AnyIntersector> = vec![
        down(0.3, 0.2).with_limit(IntersectionLimit::Nearest).into(),
        down(12.6, 3.1)
            .with_limit(IntersectionLimit::Nearest)
            .into(),
        down(12.6, 3.1).into(),
        down(22.0, 5.5).with_limit(IntersectionLimit::One).into(),
        SphereIntersector::new(DVec3::new(10.0, 4.0, 3.0), 2.0)
            .unwrap()
            .into(),
    ];
    let mut group = IntersectorGroup::new();
    for m in &members {
        group.push(m.clone());
    }
    IntersectionVisitor::new()
        .apply(&s, root, &mut group)
        .unwrap();
    for (grouped, alone) in group.members().iter().zip(members) {
        let mut alone = alone;
        IntersectionVisitor::new()
            .apply(&s, root, &mut alone)
            .unwrap();
        match (grouped, &alone) {
            (AnyIntersector::LineSegment(g), AnyIntersector::LineSegment(a)) => {
                assert!(!a.intersections().is_empty());
                assert_eq!(g.intersections(), a.intersections());
            }
            (AnyIntersector::Sphere(g), AnyIntersector::Sphere(a)) => {
                assert!(!a.intersections().is_empty());
                assert_eq!(g.intersections(), a.intersections());
            }
            other => panic!("unexpected members {other:?}"),
        }
    }
}

#[test]
fn bad_queries_are_errors() {
    assert_eq!(
        LineSegmentIntersector::new(DVec3::ONE, DVec3::ONE).unwrap_err(),
        QueryError::ZeroLengthSegment
    );
    // The message names the end that is wrong.
    assert_eq!(
        LineSegmentIntersector::new(DVec3::new(f64::NAN, 0.0, 0.0), DVec3::ONE).unwrap_err(),
        QueryError::NonFinite("segment start point")
    );
    assert_eq!(
        LineSegmentIntersector::new(DVec3::ZERO, DVec3::splat(f64::INFINITY)).unwrap_err(),
        QueryError::NonFinite("segment end point")
    );
    assert!(SphereIntersector::new(DVec3::ZERO, -1.0).is_err());
    assert!(SphereIntersector::new(DVec3::ZERO, f64::NAN).is_err());
    assert!(SphereIntersector::with_frame(CoordinateFrame::Window, DVec3::ZERO, 1.0).is_err());
    assert!(Polytope::new([DVec4::new(0.0, 0.0, 0.0, 1.0)]).is_err());
    assert!(Polytope::new([]).is_err());
    assert!(Polytope::from_oriented_box(
        DVec3::ZERO,
        DVec3::ONE,
        DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)
    )
    .is_err());
    // A singular camera is reported when the window query runs.
    let (s, root) = scene();
    let mut v = IntersectionVisitor::new();
    v.set_projection_matrix(DMat4::ZERO);
    let mut i = LineSegmentIntersector::from_window(1.0, 1.0).unwrap();
    assert!(matches!(
        v.apply(&s, root, &mut i),
        Err(QueryError::SingularFrame(_))
    ));
    // A removed root.
    let mut s = s;
    let foreign = s.add_group("x");
    s.remove_node(foreign).unwrap();
    let mut i = LineSegmentIntersector::new(DVec3::ZERO, DVec3::ONE).unwrap();
    assert_eq!(
        IntersectionVisitor::new().apply(&s, foreign, &mut i),
        Err(QueryError::UnknownRoot)
    );
}

#[test]
fn edits_are_seen_by_the_next_query() {
    let (mut s, root) = scene();
    let t = s.add_transform("t", DMat4::IDENTITY).unwrap();
    s.add_child(root, t).unwrap();
    let (_, d) = add_mesh(&mut s, t, "sq", square_at(0.0));
    let probe = (DVec3::new(20.0, 5.0, 0.1), DVec3::new(20.0, -5.0, 0.1));
    assert!(segment_hits(&s, root, probe.0, probe.1).is_empty());
    s.set_matrix(t, DMat4::from_translation(DVec3::new(20.0, 0.0, 0.0)))
        .unwrap();
    assert_eq!(segment_hits(&s, root, probe.0, probe.1).len(), 1);
    // Move a vertex far away: the bounds follow and the probe there finds it. Triangle 0
    // becomes (-1,-40), (1,-1), (1,1) in local x/z; at z = -20 it spans x in
    // [-1 + 2*20/41, -1 + 2*20/39] = [-0.024, 0.026], so local (0, -20) is inside.
    s.geometry_mut(d).unwrap().vertices_mut()[0] = Vec3::new(-1.0, 0.0, -40.0);
    let far = (DVec3::new(20.0, 5.0, -20.0), DVec3::new(20.0, -5.0, -20.0));
    assert_eq!(segment_hits(&s, root, far.0, far.1).len(), 1);
}

/// A segment query that also refuses every drawable narrower than `min_width` in x: a
/// filter, not a bounds cull, so it keeps the default `drawable_test_only_culls` (no).
struct WideDrawablesOnly {
    inner: LineSegmentIntersector,
    min_width: f64,
}

impl Intersector for WideDrawablesOnly {
    type Local = scene_intersect::intersectors::LocalSegment;
    fn begin(&mut self, frames: &scene_intersect::visitor::FrameContext) -> Result<(), QueryError> {
        self.inner.begin(frames)
    }
    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> Self::Local {
        self.inner.localize(local_to_world, world_to_local)
    }
    fn enter_node(
        &self,
        local: &Self::Local,
        bound: &scene_intersect::bounding::BoundingSphere,
    ) -> bool {
        self.inner.enter_node(local, bound)
    }
    fn enter_drawable(
        &self,
        local: &Self::Local,
        bound: &scene_intersect::bounding::BoundingBox,
    ) -> bool {
        bound.max.x - bound.min.x >= self.min_width && self.inner.enter_drawable(local, bound)
    }
    fn begin_world_boxes(&mut self, scene_bounds: &scene_intersect::accel::Aabb) {
        self.inner.begin_world_boxes(scene_bounds)
    }
    fn enter_world_box(&self, bound: &scene_intersect::accel::Aabb) -> Option<f64> {
        self.inner.enter_world_box(bound)
    }
    fn orders_world_boxes(&self) -> bool {
        self.inner.orders_world_boxes()
    }
    fn world_limit(&self) -> f64 {
        self.inner.world_limit()
    }
    fn intersect(
        &mut self,
        local: &Self::Local,
        context: &scene_intersect::visitor::DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        self.inner.intersect(local, context, drawable)
    }
    fn reached_limit(&self) -> bool {
        self.inner.reached_limit()
    }
    fn end(&mut self) {
        // (`LineSegmentIntersector::end` alone would be the segment's end point.)
        Intersector::end(&mut self.inner)
    }
}

#[test]
fn the_scene_index_asks_drawable_tests_that_do_more_than_cull() {
    let (mut s, root) = scene();
    // A 2-wide square at y = 2 above a 20-wide one at y = 0.
    add_mesh(&mut s, root, "narrow", square_at(2.0));
    let wide = triangles(
        [
            (-10.0, -10.0),
            (10.0, -10.0),
            (10.0, 10.0),
            (10.0, 10.0),
            (-10.0, 10.0),
            (-10.0, -10.0),
        ]
        .map(|(x, z)| Vec3::new(x, 0.0, z))
        .to_vec(),
    );
    let (_, wide) = add_mesh(&mut s, root, "wide", wide);
    let (a, b) = (DVec3::new(0.5, 4.0, -0.25), DVec3::new(0.5, -4.0, -0.25));
    // Both squares are hit by the plain segment: y = 2 at ratio 1/4, y = 0 at 1/2.
    assert_eq!(segment_hits(&s, root, a, b).len(), 2);
    for accelerated in [true, false] {
        let mut query = WideDrawablesOnly {
            inner: LineSegmentIntersector::new(a, b).unwrap(),
            min_width: 10.0,
        };
        assert!(!query.drawable_test_only_culls());
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        visitor.apply(&s, root, &mut query).unwrap();
        let hits = query.inner.intersections();
        assert_eq!(hits.len(), 1, "accelerated: {accelerated}");
        assert_eq!(hits[0].ratio, 0.5);
        assert_eq!(hits[0].drawable, wide);
    }
    // The built-in sphere's and polytope's drawable tests only cull: the index walk
    // skips them. The segment's decides for segments from very far away (see
    // tests/precision.rs), so the walk asks it too.
    assert!(!LineSegmentIntersector::new(a, b)
        .unwrap()
        .drawable_test_only_culls());
    assert!(SphereIntersector::new(a, 1.0)
        .unwrap()
        .drawable_test_only_culls());
    let unit_box = Polytope::from_oriented_box(a, DVec3::ONE, DQuat::IDENTITY).unwrap();
    assert!(PolytopeIntersector::new(unit_box).drawable_test_only_culls());
}
