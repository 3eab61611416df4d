//! Geometry 6.4e6 m from the origin (a georeferenced city: an f64 transform, f32
//! vertices near their local origin) is hit at the right world point to a micrometre by
//! all three intersectors, and the real city answers exactly as it does at the origin.
//! A plane whose normal is 10^-158 long culls nothing it touches, and a segment from
//! 10^269 units away still hits what its end touches (a triangle, or a point within its
//! picking tolerance). Distances of 10^-301, whose squares underflow, decide a ball's
//! and a picking tolerance's hits exactly. Queries on a knife's edge of triangles (under
//! made-up frames of every kind, and those of the real scenes, also while they are
//! edited) answer exactly as the plain traversal.

use glam::{DMat3, DMat4, DQuat, DVec3, DVec4, Vec3};
use scene_intersect::bounding::BoundingSphere;
use scene_intersect::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{DrawableId, NodeId, ReferenceFrame, SceneGraph, Transform};
use scene_intersect::intersectors::{
    LineSegmentHit, LineSegmentIntersector, Polytope, PolytopeHit, PolytopeIntersector,
    PrimitiveKind, SphereIntersector,
};
use scene_intersect::io::{import_gltf, load_gltf};
use scene_intersect::visitor::{IntersectionLimit, IntersectionVisitor};

#[path = "support/cases.rs"]
mod cases;
#[path = "support/reference.rs"]
mod reference;
#[path = "support/rng.rs"]
mod rng;
use rng::Rng;
#[path = "support/scenes.rs"]
mod scenes;
use scenes::real_scenes;

/// The local frame of the tile: 6.4e6 m east, 3.2e6 m south, turned 0.7 rad about y.
fn far() -> DMat4 {
    DMat4::from_rotation_translation(DQuat::from_rotation_y(0.7), DVec3::new(6.4e6, 12.5, -3.2e6))
}

/// The square [-10, 10]^2 at local y = 0, as two triangles split along x = z.
fn tile() -> (SceneGraph, NodeId) {
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let t = s.add_transform("far", far()).unwrap();
    s.add_child(root, t).unwrap();
    let v = |x: f32, z: f32| Vec3::new(x, 0.0, z);
    let quad = Geometry::new(vec![
        v(-10.0, -10.0),
        v(10.0, -10.0),
        v(10.0, 10.0),
        v(-10.0, 10.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_elements_u32(
        PrimitiveMode::Triangles,
        vec![0, 1, 2, 0, 2, 3],
    ))
    .unwrap();
    let d = s.add_drawable("tile", quad);
    let geode = s.add_geode("g");
    s.add_drawable_to_geode(geode, d).unwrap();
    s.add_child(t, geode).unwrap();
    (s, root)
}

#[test]
fn segment_polytope_and_sphere_hit_to_a_micrometre_far_from_the_origin() {
    let (s, root) = tile();
    let m = far();
    let mut v = IntersectionVisitor::new();
    // Local (5.123456, 0, -4.654321) lies in triangle 0 (x > z); the tile's up is the
    // world's up (a rotation about y), so the world point is m applied to it.
    let target = m.transform_point3(DVec3::new(5.123456, 0.0, -4.654321));
    let mut seg =
        LineSegmentIntersector::new(target + DVec3::Y * 40.0, target - DVec3::Y * 60.0).unwrap();
    v.apply(&s, root, &mut seg).unwrap();
    let h = seg.intersections();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].primitive_index, 0);
    assert!(
        (h[0].world_point - target).length() < 1e-6,
        "{:?}",
        h[0].world_point - target
    );
    assert!((h[0].ratio - 0.4).abs() < 1e-12, "40 m of 100 m");

    // A box of 1 x 0.5 x 1 m around the target, in the tile's axes: it cuts the tile in
    // the 1 m square around the target (x - z >= 8.8 > 0 there, so triangle 0 only).
    let rotation = DQuat::from_rotation_y(0.7);
    let half = DVec3::new(0.5, 0.25, 0.5);
    let mut poly =
        PolytopeIntersector::new(Polytope::from_oriented_box(target, half, rotation).unwrap());
    v.apply(&s, root, &mut poly).unwrap();
    let h = poly.intersections();
    assert_eq!(h.len(), 1);
    assert!((h[0].world_point - target).length() < 1e-6);
    // The polygon is the square's four corners, in some order.
    let corners: Vec<DVec3> = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
        .iter()
        .map(|&(dx, dz)| target + rotation * DVec3::new(dx, 0.0, dz))
        .collect();
    assert_eq!(h[0].polygon.len(), 4, "{:?}", h[0].polygon);
    for c in &corners {
        assert!(
            h[0].polygon.iter().any(|p| (*p - *c).length() < 1e-6),
            "corner {c:?} missing from {:?}",
            h[0].polygon
        );
    }
    // The reference plane is the front face, 0.5 m ahead of the target.
    assert!((h[0].distance - 0.5).abs() < 1e-6, "{}", h[0].distance);

    // A ball 0.3 m above the target touches the tile right below its centre.
    let mut ball = SphereIntersector::new(target + DVec3::Y * 0.3, 1.0).unwrap();
    v.apply(&s, root, &mut ball).unwrap();
    let h = ball.intersections();
    assert_eq!(h.len(), 1);
    assert!((h[0].world_point - target).length() < 1e-6);
    assert!((h[0].distance - 0.3).abs() < 1e-6);
}

/// A box holding the far tile (its two triangles taken whole when it holds the world
/// tree's box of them by more than the rounding allows for) answers as the plain
/// traversal does, with its face at any distance from the tile's edge: ten metres beyond
/// it to a millimetre inside.
#[test]
fn a_box_holding_the_far_tile_or_just_short_of_it_answers_as_the_plain_traversal() {
    let (s, root) = tile();
    let m = far();
    let rotation = DQuat::from_rotation_y(0.7);
    for gap in [10.0, 1.0, 0.1, 1e-3, 1e-6, 1e-9, 0.0, -1e-9, -1e-6, -1e-3] {
        // The box's +x face `gap` beyond the tile's edge at local x = 10, the others
        // ten metres or more beyond theirs (a box wider than the tile's world box, or
        // the walk would not look for boxes inside it).
        let centre = m.transform_point3(DVec3::new((gap - 20.0) / 2.0, 0.0, 0.0));
        let half = DVec3::new(20.0 + gap / 2.0, 20.0, 20.0);
        let polytope = Polytope::from_oriented_box(centre, half, rotation).unwrap();
        let hits = |accelerated: bool| {
            let mut v = IntersectionVisitor::new();
            v.set_use_acceleration(accelerated);
            let mut poly = PolytopeIntersector::new(polytope.clone());
            v.apply(&s, root, &mut poly).unwrap();
            (poly.intersections().iter())
                .map(|h| (h.primitive_index, h.polygon.to_vec()))
                .collect::<Vec<_>>()
        };
        let (plain, accelerated) = (hits(false), hits(true));
        assert_eq!(accelerated, plain, "gap {gap}");
        assert_eq!(plain.len(), 2, "gap {gap}");
        // Held whole: each triangle its own three corners. A micrometre short, the face
        // cuts off triangle 0's edge on x = 10 (three corners left) and triangle 1's
        // corner (10, 10) (four). (Closer, within the rounding at 6.4e6 m, either may
        // be found: by both traversals alike.)
        let mut corners: Vec<(u32, usize)> = plain.iter().map(|h| (h.0, h.1.len())).collect();
        corners.sort_unstable();
        if gap >= 1e-3 {
            assert_eq!(corners, [(0, 3), (1, 3)], "gap {gap}");
            let tile = [(-10.0, -10.0), (10.0, -10.0), (10.0, 10.0), (-10.0, 10.0)];
            let tile = tile.map(|(x, z)| m.transform_point3(DVec3::new(x, 0.0, z)));
            let on_tile = |p: &DVec3| tile.iter().any(|c| (*p - *c).length() < 1e-6);
            assert!(plain.iter().all(|h| h.1.iter().all(on_tile)), "gap {gap}");
        }
        if gap <= -1e-6 {
            assert_eq!(corners, [(0, 3), (1, 4)], "gap {gap}");
        }
    }
}

/// Hits of a grid of vertical segments and balls: (drawable name, primitive, world
/// point), with the world point moved back by `back`.
fn probe(
    s: &SceneGraph,
    root: NodeId,
    place: &DMat4,
    back: &DMat4,
) -> Vec<Vec<(String, u32, DVec3)>> {
    let mut v = IntersectionVisitor::new();
    let mut out = Vec::new();
    for i in 0..7 {
        for k in 0..7 {
            // Local probe positions chosen off the city's metre grid.
            let x = -150.0 + 47.3 * f64::from(i) + 0.137;
            let z = -150.0 + 47.3 * f64::from(k) + 0.291;
            let top = place.transform_point3(DVec3::new(x, 200.0, z));
            let bottom = place.transform_point3(DVec3::new(x, -5.0, z));
            let mut seg = LineSegmentIntersector::new(top, bottom).unwrap();
            v.apply(s, root, &mut seg).unwrap();
            out.push(
                seg.intersections()
                    .iter()
                    .map(|h| {
                        (
                            s.drawable_name(h.drawable).unwrap().to_string(),
                            h.primitive_index,
                            back.transform_point3(h.world_point),
                        )
                    })
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn the_city_far_away_answers_as_at_the_origin() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/city.glb")).unwrap();
    let build = |m: DMat4| {
        let mut s = SceneGraph::new();
        let import = import_gltf(&mut s, &bytes, None).unwrap();
        let root = s.add_group("world");
        let t = s.add_transform("place", m).unwrap();
        s.add_child(root, t).unwrap();
        s.add_child(t, import.root).unwrap();
        (s, root)
    };
    let (near, near_root) = build(DMat4::IDENTITY);
    let (far_scene, far_root) = build(far());
    let at_origin = probe(&near, near_root, &DMat4::IDENTITY, &DMat4::IDENTITY);
    let moved = probe(&far_scene, far_root, &far(), &far().inverse());
    assert!(at_origin.iter().filter(|h| !h.is_empty()).count() > 30);
    for (a, b) in at_origin.iter().zip(&moved) {
        // Two surfaces at the same height (a road on the ground) tie in ratio: rounding
        // may order them either way, so compare as sets sorted by primitive.
        let sorted = |h: &[(String, u32, DVec3)]| {
            let mut h = h.to_vec();
            h.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
            h
        };
        let (a, b) = (&sorted(a), &sorted(b));
        let ids =
            |h: &[(String, u32, DVec3)]| h.iter().map(|x| (x.0.clone(), x.1)).collect::<Vec<_>>();
        assert_eq!(ids(a), ids(b));
        for (x, y) in a.iter().zip(b) {
            assert!((x.2 - y.2).length() < 1e-6, "{:?} vs {:?}", x.2, y.2);
        }
    }
}

/// The hits of the segment from `start` to `end` under `limit`, with or without the
/// acceleration structures.
fn segment_hits(
    scene: &SceneGraph,
    root: NodeId,
    (start, end): (DVec3, DVec3),
    limit: IntersectionLimit,
    accelerated: bool,
) -> Vec<LineSegmentHit> {
    let mut visitor = IntersectionVisitor::new();
    visitor.set_use_acceleration(accelerated);
    let mut segment = LineSegmentIntersector::new(start, end)
        .unwrap()
        .with_limit(limit);
    visitor.apply(scene, root, &mut segment).unwrap();
    segment.take_intersections()
}

/// A scene of one geode under the root, holding `geometry`.
fn one_drawable(geometry: Geometry) -> (SceneGraph, NodeId) {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let geode = scene.add_geode("geode");
    scene.add_child(root, geode).unwrap();
    let d = scene.add_drawable("drawable", geometry);
    scene.add_drawable_to_geode(geode, d).unwrap();
    (scene, root)
}

/// Found by the `query` fuzz target: a half-space `x >= 0` given with a normal 4.4e-159
/// long (its square is subnormal, and a plain square root of it is off by 10^-7), over a
/// drawable whose vertex array also holds a vertex at x = -1.7e38 (unused, but in its
/// bound: a sphere 10^38 across that touches the half-space only at its rim). The plain
/// traversal culled that sphere and found nothing; the accelerated one found the
/// triangle. Both must find it, at its true distance.
#[test]
fn a_plane_with_a_tiny_normal_culls_nothing_it_touches() {
    let far_vertex = Vec3::new(-1.714704e38, -2.3159167e18, 0.0);
    let triangle = Geometry::new(vec![
        Vec3::new(43.0, -125.0, -1.0),
        Vec3::new(73.0, 73.0, 73.0),
        far_vertex,
        Vec3::new(44.0, -125.0, -1.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_elements_u32(
        PrimitiveMode::Triangles,
        vec![0, 3, 1],
    ))
    .unwrap();
    let (scene, root) = one_drawable(triangle);
    for tiny in [4.418321272710734e-159, 1e-160, 1.0] {
        for accelerated in [false, true] {
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(accelerated);
            let half_space = Polytope::new([DVec4::new(tiny, 0.0, 0.0, 0.0)]).unwrap();
            let mut polytope = PolytopeIntersector::new(half_space);
            visitor.apply(&scene, root, &mut polytope).unwrap();
            let hits = polytope.intersections();
            assert_eq!(hits.len(), 1, "normal {tiny:e}, accelerated {accelerated}");
            // The whole triangle is inside: its distance from the plane x = 0 is that of
            // its centroid, (43 + 44 + 73) / 3.
            let expected = 160.0 / 3.0;
            assert!(
                (hits[0].distance - expected).abs() <= 1e-12 * expected,
                "normal {tiny:e}, accelerated {accelerated}: distance {}",
                hits[0].distance
            );
        }
    }
}

/// Found by the `query` fuzz target: a drawable placed twice, once as it is and once
/// under a transform that throws it some 10^47 units away, past `f32` range. (The fuzzer
/// gave a projective matrix, reaching 10^140; scene transforms are affine now, and its
/// affine part reaches far enough.)
/// The index boxes holding that instance are infinite, and the box test of the
/// polytope's half-space `x >= 0` took the value of its plane at their corner as
/// `1·∞ + 0·∞ + 0·∞`, NaN: it rejected the root of the instances' tree, and with it the
/// instance in plain sight. The plain traversal found its nine zero-area triangles (as
/// their edges); the accelerated one found nothing.
#[test]
fn an_instance_past_f32_range_hides_nothing_beside_it() {
    let mut corners = vec![1u32; 26];
    corners.push(0);
    let slivers = Geometry::new(vec![
        Vec3::new(-93.0, -48.0, -1.0),
        Vec3::new(54.0, -35.0, -44.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_elements_u32(
        PrimitiveMode::Triangles,
        corners,
    ))
    .unwrap();
    // Column-major, as the fuzzer gave it but for the last row: y picks up a factor
    // 3.6e125 and z 1.1e45 from x.
    let far_away = DMat4::from_cols_array(&[
        -5.463546900607567e-108,
        -3.5961444911839095e125,
        1.1214089033777425e45,
        0.0,
        4.667415569701808e-62,
        4.820973205843552e-299,
        7.871276836755498e-101,
        0.0,
        1.1278055297264741e45,
        2.310817860204888e-100,
        -9.666858732194152e-292,
        0.0,
        5.386293016151153e-304,
        -2.4813502393331327e-98,
        1.26232872184263e-100,
        1.0,
    ]);
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let drawable = scene.add_drawable("slivers", slivers);
    let here = scene.add_geode("here");
    scene.add_child(root, here).unwrap();
    scene.add_drawable_to_geode(here, drawable).unwrap();
    let far = scene.add_transform("far", far_away).unwrap();
    scene.add_child(root, far).unwrap();
    let there = scene.add_geode("there");
    scene.add_child(far, there).unwrap();
    scene.add_drawable_to_geode(there, drawable).unwrap();
    for normal in [
        DVec3::X,
        DVec3::new(1.0, 1.0, 0.0),
        DVec3::new(2.9e-94, 2.4e-310, 0.0),
    ] {
        let mut answers = [false, true].map(|accelerated| {
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(accelerated);
            let half_space = Polytope::new([normal.extend(0.0)]).unwrap();
            let mut polytope = PolytopeIntersector::new(half_space);
            visitor.apply(&scene, root, &mut polytope).unwrap();
            polytope.take_intersections()
        });
        let [plain, accelerated] = &mut answers;
        // All nine primitives of the instance here touch the half-space at the vertex
        // (54, -35, -44) (the ninth, (54, -35, -44)-(-93, -48, -1), crosses its plane).
        let here_hits = plain.iter().filter(|h| h.node_path == [root, here]).count();
        assert_eq!(here_hits, 9, "normal {normal}");
        assert_eq!(accelerated, plain, "normal {normal}");
    }
}

/// Found by the `query` fuzz target: a segment from 6.3e269 units away ending on a
/// triangle. Its squared length overflows, and the plain traversal's bounding-sphere
/// test took the segment's closest point to the sphere to be its far start, culled the
/// geode and found nothing; the accelerated walk (whose `f32` filter lets such a segment
/// through to the exact test) found the hit at the end. Both must find it.
#[test]
fn a_segment_from_far_away_hits_what_its_end_touches() {
    // A triangle in the plane x = 0.
    let triangle = Geometry::new(vec![
        Vec3::new(0.0, -1.0, -1.0),
        Vec3::new(0.0, 1.0, -1.0),
        Vec3::new(0.0, 0.0, 1.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
    .unwrap();
    let (scene, root) = one_drawable(triangle);
    let start = DVec3::new(-6.272594058084805e269, 2.16327e-319, 0.0);
    let end = DVec3::new(0.0, 0.25, 0.25);
    for accelerated in [false, true] {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut segment = LineSegmentIntersector::new(start, end).unwrap();
        visitor.apply(&scene, root, &mut segment).unwrap();
        let hits = segment.intersections();
        assert_eq!(hits.len(), 1, "accelerated {accelerated}");
        assert_eq!(hits[0].ratio, 1.0, "accelerated {accelerated}");
    }
}

/// Found by the `query` fuzz target: a segment 8.5e303 units long with a picking
/// tolerance of 0.25, ending 1.9e-12 from a point of a drawable of points. The plain
/// traversal's padded box test computed the parameter at which the segment enters the
/// box as `1 + 2^-52` (one ulp of the parameter is 10^288 units along such a segment),
/// past the segment's end, and culled the drawable; the accelerated walk visits whole
/// items without that test and found the point. Both must find it, at the end.
#[test]
fn a_segment_from_far_away_picks_the_point_at_its_end() {
    // Point 3 is the vertex near the origin; the others are 130 units off the segment.
    let points = Geometry::new(vec![
        Vec3::new(4.6895815e-13, 6.8622916e-18, 1.833265e-12),
        Vec3::new(-125.0, 44.0, -3.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_elements_u32(
        PrimitiveMode::Points,
        vec![1, 1, 1, 0, 1],
    ))
    .unwrap();
    let (scene, root) = one_drawable(points);
    let start = DVec3::new(
        5.374453214340611e-306,
        -6.172346455576525e303,
        -5.829006823093293e303,
    );
    let end = DVec3::new(1.5e-323, 0.0, 0.0);
    for accelerated in [false, true] {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut picker = LineSegmentIntersector::new(start, end)
            .unwrap()
            .with_picking_tolerance(0.25)
            .unwrap();
        visitor.apply(&scene, root, &mut picker).unwrap();
        let hits = picker.intersections();
        assert_eq!(hits.len(), 1, "accelerated {accelerated}");
        assert_eq!(hits[0].primitive_index, 3, "accelerated {accelerated}");
        assert_eq!(hits[0].ratio, 1.0, "accelerated {accelerated}");
    }
}

/// Found by the `query` fuzz target: a segment from 9.3e169 units away that ends
/// 1.1e45 units from a small triangle near the origin. Seen from so far, the triangle's
/// corners vanish in the rounding of `corner - start`, and the exact test, left with
/// two edge functions zero, reported a hit at the segment's end. The plain traversal
/// never asked it: the segment misses the drawable's box, and the box test culled the
/// drawable. The accelerated walk skipped that test (it had already tested the world
/// box, which such a segment, beyond `f32`, always enters) and reported the hit. Both
/// must answer alike, whole (a strip) or placed in the world tree (a list).
#[test]
fn a_segment_from_far_away_that_ends_far_away_hits_nothing() {
    let corners = vec![
        Vec3::new(2.995426e-18, 2.4373483e-12, -5.054323e-37),
        Vec3::new(1.0, -9.0, 1.0),
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(0.0, 3.0, 1.0),
    ];
    let start = DVec3::new(
        -1.2215803287516444e-57,
        -1.5841584133443334e123,
        -9.268155274466896e169,
    );
    let end = DVec3::new(
        1.121408903690502e45,
        -3.0111114243300206e-220,
        -0.017857142861251188,
    );
    // The triangle (3, 1, 0), in a strip (kept whole) and alone in a list (placed).
    let strip = PrimitiveSet::DrawElements {
        mode: PrimitiveMode::TriangleStrip,
        indices: Indices::U8(vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 1, 0]),
    };
    let list = PrimitiveSet::draw_elements_u32(PrimitiveMode::Triangles, vec![3, 1, 0]);
    for set in [strip, list] {
        let geometry = Geometry::new(corners.clone())
            .with_primitive_set(set)
            .unwrap();
        let (scene, root) = one_drawable(geometry);
        for limit in [IntersectionLimit::None, IntersectionLimit::Nearest] {
            for accelerated in [false, true] {
                assert_eq!(
                    segment_hits(&scene, root, (start, end), limit, accelerated),
                    [],
                    "accelerated {accelerated}, {limit:?}"
                );
            }
        }
    }
}

/// Reaches of 0, just short of `gap` and just past it, each with whether it gets there.
fn reaches_around(gap: f64) -> [(f64, bool); 3] {
    [
        (0.0, false),
        (gap * (1.0 - 1e-9), false),
        (gap * (1.0 + 1e-9), true),
    ]
}

/// Found by the `query` fuzz target: a ball of radius 0 centred 2.3e-301 units from a
/// corner of a triangle. The square of that distance underflows to 0, and the
/// accelerated walk reported the triangle at distance 0 (the plain traversal happened
/// to cull the drawable first). The distance must be right at every scale, in both: a
/// ball just short of the corner misses, one just past it hits the corner, at that
/// distance.
#[test]
fn a_ball_a_hair_from_a_corner_hits_only_if_it_reaches_it() {
    // The corner is the origin; the triangle lies in x <= 0, y <= 0.
    let triangle = Geometry::new(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(0.0, -1.0, 0.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
    .unwrap();
    let (scene, root) = one_drawable(triangle);
    // 1.8e-311 across changes the distance by 10^-20 of it.
    let centre = DVec3::new(2.3e-301, 1.8e-311, 0.0);
    let gap = 2.3e-301;
    for accelerated in [false, true] {
        for (radius, reaches) in reaches_around(gap) {
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(accelerated);
            let mut ball = SphereIntersector::new(centre, radius).unwrap();
            visitor.apply(&scene, root, &mut ball).unwrap();
            let hits = ball.intersections();
            let case = format!("accelerated {accelerated}, radius {radius:e}");
            assert_eq!(hits.len(), usize::from(reaches), "{case}");
            if reaches {
                assert_eq!(hits[0].world_point, DVec3::ZERO, "{case}");
                assert!(
                    (hits[0].distance / gap - 1.0).abs() < 1e-15,
                    "{case}: {:e}",
                    hits[0].distance
                );
            }
        }
    }
}

/// The picking tolerance's twin of the ball above: a segment passing 2.3e-301 units
/// from a point and from a line, picked with a tolerance of 0, just short of that gap,
/// and just past it. Only the last picks them.
#[test]
fn a_pick_a_hair_from_a_point_or_a_line_needs_the_tolerance_to_reach_it() {
    // A point at the origin, and a line through it along z.
    let points = Geometry::new(vec![Vec3::ZERO])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 1))
        .unwrap();
    let line = Geometry::new(vec![Vec3::new(0.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0)])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Lines, 0, 2))
        .unwrap();
    let gap = 2.3e-301;
    // Along y, at x = gap: its closest point to both is (gap, 0, 0), at the middle.
    let (start, end) = (DVec3::new(gap, -1.0, 0.0), DVec3::new(gap, 1.0, 0.0));
    for geometry in [points, line] {
        let (scene, root) = one_drawable(geometry);
        for accelerated in [false, true] {
            for (tolerance, reaches) in reaches_around(gap) {
                let mut visitor = IntersectionVisitor::new();
                visitor.set_use_acceleration(accelerated);
                let mut picker = LineSegmentIntersector::new(start, end)
                    .unwrap()
                    .with_picking_tolerance(tolerance)
                    .unwrap();
                visitor.apply(&scene, root, &mut picker).unwrap();
                let hits = picker.intersections();
                let case = format!("accelerated {accelerated}, tolerance {tolerance:e}");
                assert_eq!(hits.len(), usize::from(reaches), "{case}");
                if reaches {
                    assert_eq!(hits[0].ratio, 0.5, "{case}");
                }
            }
        }
    }
}

/// Found by the `query` fuzz target: one triangle strip under nine geodes, and a segment
/// along one of its triangles' edges, (almost) in its plane. Rounding gave that triangle a
/// plane crossing 0.13 before its box. A nearest-first walk takes a box's entry as the
/// earliest hit it can hold: after finding that "hit" in one instance it skipped the
/// others, whose tie (same ratio) the node path breaks, and answered with the sixth
/// geode where the plain traversal answered with the first. The exact test now moves
/// such a crossing to where the segment is in the triangle's box.
#[test]
fn a_segment_along_an_edge_of_a_shared_strip_gives_the_same_nearest_hit() {
    let corners = vec![
        Vec3::new(-61.0, -61.0, -61.0),
        Vec3::new(-35.0, -1.0, -1.0),
        Vec3::new(-125.0, 44.0, -1.0),
        Vec3::new(-1.215361e-12, -1.2202369e-12, -6.098947e-13),
        Vec3::new(-1.0, -1.0, -1.0),
    ];
    // Triangles (1, 4, 3) (primitive 8), (4, 3, 1) (9) and (3, 1, 0) (10), after eight
    // degenerate ones.
    let strip = PrimitiveSet::DrawElements {
        mode: PrimitiveMode::TriangleStrip,
        indices: Indices::U8(vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 3, 1, 0]),
    };
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let strip = scene.add_drawable(
        "strip",
        Geometry::new(corners).with_primitive_set(strip).unwrap(),
    );
    let geodes: Vec<NodeId> = (0..9)
        .map(|_| {
            let geode = scene.add_geode("geode");
            scene.add_child(root, geode).unwrap();
            scene.add_drawable_to_geode(geode, strip).unwrap();
            geode
        })
        .collect();
    // Along x = y = z, through the corners (-61, -61, -61) and (-1, -1, -1).
    let (start, end) = (DVec3::splat(-84.75), DVec3::ZERO);
    let [plain, accelerated] = [false, true].map(|accelerated| {
        segment_hits(
            &scene,
            root,
            (start, end),
            IntersectionLimit::Nearest,
            accelerated,
        )
    });
    assert_eq!(accelerated, plain);
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].node_path, [root, geodes[0]]);
    // Triangle 10, where the segment enters its box: at its corner (-61, -61, -61),
    // 23.75 of the segment's 84.75 units along each axis.
    assert_eq!(plain[0].primitive_index, 10);
    assert!(
        (plain[0].ratio - 23.75 / 84.75).abs() < 1e-9,
        "{:?}",
        plain[0]
    );
}

/// Segments lying in triangles' planes, from near and from 10^9 units away, against a
/// drawable that five geodes share (three at the same place, whose hits tie, and two
/// moved): the edge tests pass or fail by rounding alone, and `t` is rounding over
/// rounding. Whatever they decide, every limit answers alike, plain and accelerated,
/// and every hit lies in its triangle's box.
#[test]
fn segments_in_a_triangles_plane_answer_alike_plain_and_accelerated() {
    let mut rng = Rng(0x5eed_0fc0_91a7);
    let corners: Vec<Vec3> = (0..24)
        .map(|_| {
            let mut c = || rng.range(-50.0, 50.0) as f32;
            Vec3::new(c(), c(), c())
        })
        .collect();
    let triangles = Geometry::new(corners.clone())
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 24))
        .unwrap();
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let drawable = scene.add_drawable("triangles", triangles);
    let moves = [
        DVec3::ZERO,
        DVec3::ZERO,
        DVec3::ZERO,
        DVec3::X * 0.1,
        DVec3::Z * 1e3,
    ];
    for offset in moves {
        let place = scene
            .add_transform("place", DMat4::from_translation(offset))
            .unwrap();
        let geode = scene.add_geode("geode");
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        scene.add_child(place, geode).unwrap();
        scene.add_child(root, place).unwrap();
    }
    let mut hits = 0;
    for query in 0..600 {
        // A triangle's plane, a point of it near the triangle and a direction in it.
        let k = rng.range(0.0, 8.0) as usize * 3;
        let [a, b, c] = [0, 1, 2].map(|i| corners[k + i].as_dvec3());
        let normal = (b - a).cross(c - a).normalize();
        let in_plane = |p: DVec3| p - normal * normal.dot(p - a);
        let mut random = || DVec3::new(rng.next(), rng.next(), rng.next()) - 0.5;
        let through = in_plane(a + random() * 60.0);
        let along = in_plane(through + random()) - through;
        let reach = [1e2, 1e4, 1e9][query % 3];
        let (start, end) = (through - along * reach, through + along * reach);
        for limit in [
            IntersectionLimit::None,
            IntersectionLimit::Nearest,
            IntersectionLimit::One,
        ] {
            let [plain, accelerated] = [false, true]
                .map(|accelerated| segment_hits(&scene, root, (start, end), limit, accelerated));
            assert_eq!(accelerated, plain, "query {query}, {limit:?}");
            for hit in &plain {
                let v: Vec<DVec3> = (hit.vertex_indices.iter())
                    .map(|&i| corners[i as usize].as_dvec3())
                    .collect();
                let (lo, hi) = (v[0].min(v[1]).min(v[2]), v[0].max(v[1]).max(v[2]));
                let slack = 1e-6 * reach;
                let p = hit.local_point;
                assert!(
                    p.cmpge(lo - slack).all() && p.cmple(hi + slack).all(),
                    "query {query}: {p} outside [{lo}, {hi}]"
                );
            }
            hits += plain.len();
        }
    }
    // Rounding must have let many such segments through, or nothing was tested.
    assert!(hits > 100, "{hits} hits");
}

/// A scene of one drawable (`vertices`, drawn whole in `mode`) under one transform
/// (`matrix`) under the root group; returns the scene and the root.
fn one_drawable_under(
    matrix: DMat4,
    vertices: Vec<Vec3>,
    mode: PrimitiveMode,
) -> (SceneGraph, NodeId) {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let place = scene.add_transform("place", matrix).unwrap();
    let count = vertices.len() as u32;
    let geometry = Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_arrays(mode, 0, count))
        .unwrap();
    let drawable = scene.add_drawable("drawable", geometry);
    let geode = scene.add_geode("geode");
    scene.add_drawable_to_geode(geode, drawable).unwrap();
    scene.add_child(place, geode).unwrap();
    scene.add_child(root, place).unwrap();
    (scene, root)
}

/// Found by the `query` fuzz target: a point under a matrix with an entry too large to
/// square (here an x axis 10^300 long, which leaves the point, on the y axis, in place).
/// The transform's bounding sphere, the point's sphere of radius 0 scaled by the
/// matrix's largest axis, came out NaN (0 times the overflowed length), so the plain
/// traversal culled the scene at its root while the accelerated one, on the point's
/// world box, found it. Both now find it, for a polytope and for a ball.
#[test]
fn a_point_under_a_matrix_too_large_to_square_is_found_by_both_traversals() {
    let mut stretch = DMat4::IDENTITY;
    stretch.x_axis.x = 1e300;
    let (scene, root) = one_drawable_under(stretch, vec![Vec3::Y], PrimitiveMode::Points);
    for accelerated in [false, true] {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        // The half-space y >= 0.5.
        let half_space = Polytope::new([DVec4::new(0.0, 1.0, 0.0, -0.5)]).unwrap();
        let mut polytope = PolytopeIntersector::new(half_space);
        visitor.apply(&scene, root, &mut polytope).unwrap();
        let hits = polytope.intersections();
        assert_eq!(hits.len(), 1, "polytope, accelerated {accelerated}");
        assert_eq!(hits[0].polygon.as_slice(), [DVec3::Y]);
        let mut ball = SphereIntersector::new(DVec3::new(0.0, 1.5, 0.0), 0.75).unwrap();
        visitor.apply(&scene, root, &mut ball).unwrap();
        assert_eq!(
            ball.intersections().len(),
            1,
            "ball, accelerated {accelerated}"
        );
    }
}

/// Found by the `edits` fuzz target: a ball whose centre, moved to a transform's frame,
/// overflows. The transform squeezes its x axis to 10^-200 and shears y into x, so its
/// inverse has 10^200 and −10^200 side by side in one row. A ball 10^150 units away,
/// moved to that frame, gets +∞ − ∞ = NaN there, and the plain traversal's node and
/// drawable tests (in the local frame) refused everything, while the accelerated walk,
/// testing world boxes, found the triangle. The ball holds the triangle whole, so both
/// must find it, alike, at the distance from the centre to the triangle (√2·10^150: at
/// that distance the triangle's points are all equally near, to `f64`).
#[test]
fn a_ball_whose_centre_overflows_in_a_frame_still_finds_what_it_holds() {
    let frame = DMat4::from_cols(
        DVec4::new(1e-200, 0.0, 0.0, 0.0),
        DVec4::new(1.0, 1.0, 0.0, 0.0),
        DVec4::Z,
        DVec4::W,
    );
    let (scene, root) = one_drawable_under(
        frame,
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        PrimitiveMode::Triangles,
    );
    let center = DVec3::new(1e150, 1e150, 0.0);
    // The frame's inverse, which the visitor moves the ball with, does overflow it.
    let local = frame.inverse().transform_point3(center);
    assert!(local.x.is_nan(), "{local}");
    let [plain, accelerated] = [false, true].map(|accelerated| {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut ball = SphereIntersector::new(center, 4e150).unwrap();
        visitor.apply(&scene, root, &mut ball).unwrap();
        ball.take_intersections()
    });
    assert_eq!(format!("{accelerated:?}"), format!("{plain:?}"));
    assert_eq!(plain.len(), 1);
    let expected = 2f64.sqrt() * 1e150;
    assert!(
        (plain[0].distance - expected).abs() <= 1e-12 * expected,
        "distance {}",
        plain[0].distance
    );
    let p = plain[0].world_point;
    assert!(p.z == 0.0 && (0.0..=1.0).contains(&p.x) && (0.0..=1.0).contains(&p.y));
}

/// Found by the `edits` fuzz target: a polytope's plane that overflows in the frame of
/// an outer transform but not in the drawable's. The outer transform stretches y by
/// 10^300 and the inner one squeezes it back by 10^-300, so the drawable sits in world
/// space as it is. The plane y >= 1 given as (0, 10^10, 0, -10^10) is, in the outer
/// frame, (0, 10^310, 0, -10^10): past `f64`, so not a number once normalized. The
/// plain traversal, testing the inner transform's bound with that plane, culled it and
/// found nothing, while the accelerated walk, which moves the planes straight to the
/// drawable's frame (where they are the world's), found the triangle. A plane that is
/// not a number no longer culls, so both find it.
#[test]
fn a_plane_that_overflows_in_an_outer_frame_culls_nothing_below_it() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let stretch = scene
        .add_transform("stretch", DMat4::from_scale(DVec3::new(1.0, 1e300, 1.0)))
        .unwrap();
    let squeeze = scene
        .add_transform("squeeze", DMat4::from_scale(DVec3::new(1.0, 1e-300, 1.0)))
        .unwrap();
    let triangle = Geometry::new(vec![
        Vec3::new(0.0, 2.0, 0.0),
        Vec3::new(1.0, 2.0, 0.0),
        Vec3::new(0.0, 2.0, 1.0),
    ])
    .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
    .unwrap();
    let drawable = scene.add_drawable("triangle", triangle);
    let geode = scene.add_geode("geode");
    scene.add_drawable_to_geode(geode, drawable).unwrap();
    scene.add_child(squeeze, geode).unwrap();
    scene.add_child(stretch, squeeze).unwrap();
    scene.add_child(root, stretch).unwrap();
    let plane = DVec4::new(0.0, 1e10, 0.0, -1e10);
    // In the outer frame the plane's normal has overflowed.
    let outer = DMat4::from_scale(DVec3::new(1.0, 1e300, 1.0)).transpose() * plane;
    assert_eq!(outer.y, f64::INFINITY);
    for accelerated in [false, true] {
        let hits = polytope_hits(&scene, root, &[plane], accelerated);
        assert_eq!(hits.len(), 1, "accelerated {accelerated}");
        // The whole triangle is inside: its corners, at y = 2 in world space.
        assert_eq!(hits[0].polygon.len(), 3, "accelerated {accelerated}");
        assert!(hits[0].polygon.iter().all(|p| p.y == 2.0));
    }
}

/// The hits of the polytope of `planes` on the scene under `root`, by the plain or the
/// accelerated traversal.
fn polytope_hits(
    scene: &SceneGraph,
    root: NodeId,
    planes: &[DVec4],
    accelerated: bool,
) -> Vec<PolytopeHit> {
    let mut visitor = IntersectionVisitor::new();
    visitor.set_use_acceleration(accelerated);
    let mut polytope = PolytopeIntersector::new(Polytope::new(planes.iter().copied()).unwrap());
    visitor.apply(scene, root, &mut polytope).unwrap();
    polytope.take_intersections()
}

/// Found by the `edits` fuzz target: a plane whose values overflow at the vertices of the
/// frame it is moved to. The frame shears local x and z into world y by ±10^300
/// (determinant 1), so the world plane y ≥ 5 is the local plane (10^300, 1, −10^300, −5).
/// At the vertex (10^10, 0, 1.001·10^10) its terms are 10^310 and −1.001·10^310: `∞ − ∞`
/// in `f64`, not a number, though the vertex lies 10^307 below the plane. The segment
/// clipper kept a line whose end values were not numbers, so the plain traversal hit
/// the line from that vertex, while the accelerated one, whose tree culls the line's box
/// by the normalized plane (clearly outside), did not. The clipped planes are now scaled
/// by a power of two into range, and neither traversal hits it; the drawable's other
/// line, on the plane's inner side, is hit by both.
#[test]
fn a_plane_whose_values_overflow_at_a_frames_vertices_is_clipped_by_in_range() {
    let shear = DMat4::from_cols(
        DVec4::new(1.0, 1e300, 0.0, 0.0),
        DVec4::Y,
        DVec4::new(0.0, -1e300, 1.0, 0.0),
        DVec4::W,
    );
    let (x, outside, inside) = (1e10f32, 1.001e10f32, 0.999e10f32);
    let vertices = vec![
        Vec3::new(x, 0.0, outside),
        Vec3::new(x, 0.0, 1.002e10),
        Vec3::new(x, 0.0, inside),
        Vec3::new(x, 0.0, 0.998e10),
    ];
    // Local plane values, in exact arithmetic: 10^300 (x − z) + y − 5.
    let plane = DVec4::new(0.0, 1.0, 0.0, -5.0);
    let local = shear.transpose() * plane;
    assert_eq!(local, DVec4::new(1e300, 1.0, -1e300, -5.0));
    let overflowing = |v: Vec3| {
        let v = v.as_dvec3();
        local.x * v.x + local.y * v.y + local.z * v.z + local.w
    };
    assert!(overflowing(vertices[0]).is_nan());
    assert!(overflowing(vertices[2]).is_nan());
    // Two lines of one drawable: the first outside, the second inside.
    let (scene, root) = one_drawable_under(shear, vertices, PrimitiveMode::Lines);
    for accelerated in [false, true] {
        let hits = polytope_hits(&scene, root, &[plane], accelerated);
        assert_eq!(hits.len(), 1, "accelerated {accelerated}");
        // The whole inner line, its ends kept as they are.
        assert_eq!(hits[0].primitive_kind, PrimitiveKind::Line);
        assert_eq!(hits[0].primitive_index, 1);
        assert_eq!(hits[0].polygon.len(), 2);
    }
}

/// Found by the `query` fuzz target: a point whose node's sphere a transform carries to
/// +∞ − ∞. The transform shears y and z into x by ±10^308 (its determinant is 1, its
/// inverse finite), so the point (0, 10, 10) lands at x = 10^309 − 10^309: not a number
/// in `f64`, though 0 in truth. The group above it merged that sphere with its other
/// child's into a sphere of radius NaN, which the plain traversal took for empty, so it
/// skipped both points, while the accelerated one, testing them in their own frames,
/// found both in the half-space y ≥ 5. A sphere carried past `f64` now holds
/// everything, and both traversals find both points.
#[test]
fn points_under_a_sphere_carried_past_f64_are_found_by_both_traversals() {
    let shear = DMat4::from_cols(
        DVec4::new(1.0, 0.0, 0.0, 0.0),
        DVec4::new(1e308, 1.0, 0.0, 0.0),
        DVec4::new(-1e308, 0.0, 1.0, 0.0),
        DVec4::W,
    );
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let group = scene.add_group("group");
    let place = scene.add_transform("place", shear).unwrap();
    let point = |name: &str, p: Vec3, scene: &mut SceneGraph| {
        let geometry = Geometry::new(vec![p])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 1))
            .unwrap();
        let drawable = scene.add_drawable(name, geometry);
        let geode = scene.add_geode(name);
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        geode
    };
    let sheared = point("sheared", Vec3::new(0.0, 10.0, 10.0), &mut scene);
    let plain_point = point("plain", Vec3::new(0.0, 7.0, 0.0), &mut scene);
    scene.add_child(place, sheared).unwrap();
    scene.add_child(group, place).unwrap();
    scene.add_child(group, plain_point).unwrap();
    scene.add_child(root, group).unwrap();
    assert!(shear
        .transform_point3(DVec3::new(0.0, 10.0, 10.0))
        .x
        .is_nan());
    assert_eq!(scene.node_bound(place).unwrap(), BoundingSphere::EVERYWHERE);
    let half_space = Polytope::new([DVec4::new(0.0, 1.0, 0.0, -5.0)]).unwrap();
    let [plain, accelerated] = [false, true].map(|accelerated| {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut polytope = PolytopeIntersector::new(half_space.clone());
        visitor.apply(&scene, root, &mut polytope).unwrap();
        polytope.take_intersections()
    });
    assert_eq!(format!("{accelerated:?}"), format!("{plain:?}"));
    assert_eq!(plain.len(), 2, "both points: {plain:?}");
}

/// Found by the `edits` fuzz target: the plain traversal's nearest-hit search skips a
/// node whose sphere starts past the best hit so far, measuring the distance from the
/// segment's start to the sphere's centre. For a sphere 10^200 units across that
/// distance squared overflowed, the sphere seemed to start infinitely far away, and a
/// nearer hit inside it was skipped. Here a triangle stretched along x by 10^200 (and
/// squeezed along z by 10^-100, which keeps the matrix invertible) and centred
/// 5·10^199 units away covers the origin, where a unit segment down the y axis crosses
/// it at ratio 1/2, after the search met a small triangle at ratio 3/4.
#[test]
fn a_nearest_hit_inside_a_sphere_too_large_to_square_is_found() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let square = |y: f32| {
        Geometry::new(vec![
            Vec3::new(-1.0, y, -1.0),
            Vec3::new(1.0, y, -1.0),
            Vec3::new(-1.0, y, 1.0),
        ])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
        .unwrap()
    };
    let small = scene.add_drawable("small", square(-0.5));
    let small_geode = scene.add_geode("small");
    scene.add_drawable_to_geode(small_geode, small).unwrap();
    scene.add_child(root, small_geode).unwrap();
    let huge = scene.add_drawable("huge", square(0.0));
    let huge_geode = scene.add_geode("huge");
    scene.add_drawable_to_geode(huge_geode, huge).unwrap();
    let place = DMat4::from_translation(DVec3::new(5e199, 0.0, 0.0))
        * DMat4::from_scale(DVec3::new(1e200, 1.0, 1e-100));
    let stretch = scene.add_transform("stretch", place).unwrap();
    scene.add_child(stretch, huge_geode).unwrap();
    scene.add_child(root, stretch).unwrap();
    // The origin, where the segment crosses y = 0, is in the huge triangle: local
    // (-0.5, 0, 0), with x + z <= 0.
    assert_eq!(
        place.inverse().transform_point3(DVec3::ZERO),
        DVec3::new(-0.5, 0.0, 0.0)
    );
    for accelerated in [false, true] {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut segment = LineSegmentIntersector::new(DVec3::Y, -DVec3::Y)
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
        visitor.apply(&scene, root, &mut segment).unwrap();
        let hits = segment.intersections();
        assert_eq!(hits.len(), 1, "accelerated {accelerated}");
        assert_eq!(hits[0].drawable, huge, "accelerated {accelerated}");
        assert_eq!(hits[0].ratio, 0.5, "accelerated {accelerated}");
    }
}

/// A scene of one triangle list under `matrix`, whose triangles are the world points
/// `wanted` moved into the frame by `to_local` and kept as `f32`; and their corners as
/// that frame puts them in the world.
fn triangles_under(
    matrix: DMat4,
    to_local: impl Fn(DVec3) -> DVec3,
    wanted: &[DVec3],
) -> (SceneGraph, NodeId, Vec<DVec3>) {
    drawn_under(matrix, to_local, wanted, PrimitiveMode::Triangles)
}

/// [`triangles_under`] for vertices drawn in any `mode`: the scene, and the vertices as
/// the frame puts them in the world.
fn drawn_under(
    matrix: DMat4,
    to_local: impl Fn(DVec3) -> DVec3,
    wanted: &[DVec3],
    mode: PrimitiveMode,
) -> (SceneGraph, NodeId, Vec<DVec3>) {
    let local: Vec<Vec3> = wanted.iter().map(|&p| to_local(p).as_vec3()).collect();
    let corners = local
        .iter()
        .map(|p| matrix.transform_point3(p.as_dvec3()))
        .collect();
    let (scene, root) = one_drawable_under(matrix, local, mode);
    (scene, root, corners)
}

/// Found by a probe of the world tree's segment filter: under a frame that turns, then
/// squeezes one direction 700 000 times more than the others, then turns again (a shear,
/// of condition number ~10^6, then still placed in world space), the plain traversal's
/// exact test, run in the instance's frame, hit triangles that segments 100 to 1 000
/// units long missed by up to a tenth of an edge. Its rounding there grows with the
/// frame's skew, up to the square of its condition number (each coordinate in the frame
/// mixes stretched and squeezed world directions), past what the `f32` filter allows
/// for, so the accelerated walk rejected those triangles and answered differently (121
/// of the 18 000 sheared segments here). Such frames now keep their instances whole,
/// and both traversals test them alike. The same squeeze without the first turn (as a
/// glTF node's rotation and scale make it) skews nothing, is still placed, and answers
/// alike.
#[test]
fn a_segment_grazing_a_triangle_under_a_skewed_frame_answers_as_the_plain_traversal() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut differ = Vec::new();
    let mut grazing_hits = 0;
    for frame in 0..24 {
        let mut turn = || {
            let mut c = || rng.range(-1.0, 1.0);
            DQuat::from_xyzw(c(), c(), c(), c()).normalize()
        };
        let (inner, outer) = (turn(), turn());
        let sheared = frame % 2 == 0;
        let inner = if sheared { inner } else { DQuat::IDENTITY };
        let linear = DMat3::from_quat(outer)
            * DMat3::from_diagonal(DVec3::new(1e-3, 700.0, 700.0))
            * DMat3::from_quat(inner);
        let matrix = DMat4::from_mat3(linear);
        // A world triangle about a unit across; its local corners are what `f32` keeps
        // of it, and the world corners are those moved back.
        let wanted = [
            DVec3::new(0.1, 0.2, 0.3),
            DVec3::new(1.1, 0.25, 0.2),
            DVec3::new(0.3, 1.2, 0.5),
        ];
        let (scene, root, corners) = triangles_under(matrix, |p| linear.inverse() * p, &wanted);
        let normal = (corners[1] - corners[0])
            .cross(corners[2] - corners[0])
            .normalize();
        let mut visitor = IntersectionVisitor::new();
        for k in 0..1500 {
            // A point beside edge `k % 3`, off it by 0.5 % to 10 % of a unit, in the
            // triangle's plane; a segment through it, 100 to 1 000 units each way.
            let (a, b, opposite) = (corners[k % 3], corners[(k + 1) % 3], corners[(k + 2) % 3]);
            let mut outward = normal.cross(b - a).normalize();
            if outward.dot(opposite - a) > 0.0 {
                outward = -outward;
            }
            let beside =
                a + (b - a) * rng.range(0.05, 0.95) + outward * 10f64.powf(rng.range(-2.3, -1.0));
            let mut c = || rng.range(-1.0, 1.0);
            let direction = (normal * (0.6 + 0.4 * c()) + DVec3::new(c(), c(), c())).normalize();
            let reach = 10f64.powf(rng.range(2.0, 3.0));
            let (start, end) = (beside - direction * reach, beside + direction * reach);
            let [plain, accelerated] = [false, true].map(|accelerated| {
                visitor.set_use_acceleration(accelerated);
                let mut segment = LineSegmentIntersector::new(start, end).unwrap();
                visitor.apply(&scene, root, &mut segment).unwrap();
                let hits = segment.take_intersections();
                hits.iter()
                    .map(|h| (h.primitive_index, h.ratio.to_bits()))
                    .collect::<Vec<_>>()
            });
            if sheared {
                grazing_hits += plain.len();
            }
            if plain != accelerated {
                differ.push((frame, k, plain, accelerated));
            }
        }
    }
    assert!(differ.is_empty(), "{} differ: {differ:?}", differ.len());
    // The segments all pass beside the triangle, yet a sheared frame's rounding makes
    // the exact test hit it now and then: the cases that matter are exercised.
    assert!(grazing_hits > 0);
}

/// Found by the probe behind the test below: a frame 2.2·10^6 units from the origin
/// whose linear part has a condition number of 3.7·10^5 (so then placed in world space).
/// Its general 4×4 inverse moves points into the frame and back 0.07 units off. When
/// every traversal inverted frames that way, the plain traversal tested a segment beside
/// the one asked: it hit triangle 1, which the segment misses by 0.03 units (it passes
/// 2·10^-11 units beside an edge of triangle 0), and the accelerated walk, whose filter
/// measures the segment asked, rejected it. The placement rule then kept such frames'
/// instances whole; and the traversals now invert a frame as an affine map, as
/// OpenSceneGraph does, which brings points back 10^-5 units off (the rounding of
/// coordinates of 2·10^6, magnified by the condition number): both traversals hit
/// triangle 0.
#[test]
fn a_segment_beside_a_triangle_under_a_far_frame_answers_as_the_plain_traversal() {
    let matrix = DMat4::from_cols_array(&[
        -1397.6327835893055,
        -24398.967205118937,
        3788.660886801457,
        0.0,
        -404.7350903716588,
        -7069.958376539073,
        1097.8561373757661,
        0.0,
        265.2265442503154,
        4625.479425591553,
        -718.0823063466323,
        0.0,
        2103161.261738582,
        552403.964500036,
        -558337.5662367792,
        1.0,
    ]);
    // Triangles 0 1 2 and 2 1 3.
    let corners = [
        Vec3::new(1.8449244, -4.032818, 3.5678127),
        Vec3::new(1.9782258, -4.038492, 4.2622895),
        Vec3::new(1.2794222, -2.9437733, 2.2494435),
        Vec3::new(1.2794222, -2.9437733, 2.2494435),
        Vec3::new(1.9782258, -4.038492, 4.2622895),
        Vec3::new(1.1336542, -2.285974, 2.48596),
    ];
    let (scene, root) = one_drawable_under(matrix, corners.to_vec(), PrimitiveMode::Triangles);
    let start = DVec3::new(2103164.512863821, 552393.1143315182, -558343.7968569082);
    let end = DVec3::new(2103160.4511651434, 552406.9744856409, -558335.9017179552);
    // What a general inverse makes of the start, taken back; and the traversals'.
    let back = matrix.transform_point3(matrix.inverse().transform_point3(start));
    assert!(back.distance(start) > 0.05, "{}", back.distance(start));
    let frame = Transform {
        matrix,
        reference_frame: ReferenceFrame::Relative,
    };
    let (to_world, to_frame) = frame.frame_below(&DMat4::IDENTITY);
    let back = to_world.transform_point3(to_frame.unwrap().transform_point3(start));
    assert!(back.distance(start) < 5e-5, "{}", back.distance(start));
    for limit in [IntersectionLimit::None, IntersectionLimit::Nearest] {
        let plain = segment_hits(&scene, root, (start, end), limit, false);
        let accelerated = segment_hits(&scene, root, (start, end), limit, true);
        assert_eq!(
            format!("{accelerated:?}"),
            format!("{plain:?}"),
            "{limit:?}"
        );
        assert_eq!(plain.len(), 1, "{limit:?}");
        assert_eq!(plain[0].primitive_index, 0, "{limit:?}: not triangle 1");
    }
}

/// A random unit vector.
fn random_direction(rng: &mut Rng) -> DVec3 {
    DVec3::new(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    )
    .normalize()
}

/// A random turn.
fn random_turn(rng: &mut Rng) -> DQuat {
    let mut c = || rng.range(-1.0, 1.0);
    DQuat::from_xyzw(c(), c(), c(), c()).normalize()
}

/// Queries on a knife's edge, under frames of every kind, answer as the plain traversal.
///
/// Each frame turns, scales each axis by up to 10^6 times more than another (so that
/// some instances are placed in world space and some are not), scales the whole by
/// 10^-3 to 10^3 and moves it up to 3·10^6 away; under it, two triangles 10^-2 to 10^3
/// units across share an edge (in every other frame as a strip, which stays a whole
/// item, culled and tested in its frame). Each query aims at one of their corners, a
/// point of an edge or of the inside, moved off it by 0 or 10^-15 to 10^-1 of their
/// size; through that point pass segments (every hit and the nearest) from and to 0.1
/// to 10 000 sizes away, or ending there, the corner, an edge or a face of an oriented
/// box, and the surface of a ball. 40 000 queries (`PROPERTY_SCALE` times as many for a deep
/// run; at 25, a million, it found differences under the placement rule of before the
/// two tests above).
#[test]
fn queries_grazing_triangles_under_any_frame_answer_as_the_plain_traversal() {
    let scale = cases::cases(1) as usize;
    let mut rng = Rng(0x005e_ed0f_6a2e);
    let mut differ = Vec::new();
    let mut hit = [0usize; 4];
    for frame in 0..200 * scale {
        let mut axis = || 10f64.powf(rng.range(-3.0, 3.0));
        let stretch = DVec3::new(axis(), axis(), axis()) * 10f64.powf(rng.range(-3.0, 3.0));
        let linear = DMat3::from_quat(random_turn(&mut rng))
            * DMat3::from_diagonal(stretch)
            * DMat3::from_quat(random_turn(&mut rng));
        let away = if rng.next() < 0.3 {
            0.0
        } else {
            10f64.powf(rng.range(0.0, 6.5))
        };
        let matrix =
            DMat4::from_translation(random_direction(&mut rng) * away) * DMat4::from_mat3(linear);
        let size = 10f64.powf(rng.range(-2.0, 3.0));
        let centre =
            matrix.w_axis.truncate() + random_direction(&mut rng) * size * rng.range(0.0, 3.0);
        let (a, b, c) = (
            centre,
            centre + random_direction(&mut rng) * size,
            centre + random_direction(&mut rng) * size,
        );
        let d = b + c - a + random_direction(&mut rng) * size * 0.3;
        // Triangles abc and cbd, their corners as `f32` keeps them in the frame, and
        // those moved back to the world: in every other frame the strip abcd (the same
        // triangles), which stays a whole item, visited in its frame.
        let inverse = matrix.inverse();
        let to_local = |p| inverse.transform_point3(p);
        let (scene, root, corners) = if frame % 2 == 0 {
            triangles_under(matrix, to_local, &[a, b, c, c, b, d])
        } else {
            let strip = [a, b, c, d];
            let (scene, root, s) =
                drawn_under(matrix, to_local, &strip, PrimitiveMode::TriangleStrip);
            (scene, root, vec![s[0], s[1], s[2], s[2], s[1], s[3]])
        };
        let triangles = [
            [corners[0], corners[1], corners[2]],
            [corners[3], corners[4], corners[5]],
        ];
        for d in grazing_differences(&scene, root, &triangles, 200, &mut rng, &mut hit) {
            differ.push(format!("frame {frame}, {d}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} differ, the first: {:?}",
        differ.len(),
        &differ[..differ.len().min(3)]
    );
    // Each kind of query hits in some cases and misses in others.
    let asked = 200 * 200 * scale / 4;
    assert!(
        hit.iter().all(|&h| h > asked / 10 && h < asked),
        "{hit:?} of {asked}"
    );
}

/// A point on a knife's edge of the triangle `[a, b, c]` (`size` across): its corner
/// `which`, a point of its edge `which` or of its inside, moved off it by 0 or 10^-15 to
/// 10^-1 of `size`, along the normal or any direction; with the triangle's unit normal
/// (zero for a triangle of no area).
fn grazing_point(rng: &mut Rng, [a, b, c]: [DVec3; 3], which: usize, size: f64) -> (DVec3, DVec3) {
    let normal = (b - a).cross(c - a).normalize_or_zero();
    let on = match rng.next() {
        x if x < 0.3 => [a, b, c][which],
        x if x < 0.8 => {
            let (p, q) = [(a, b), (b, c), (c, a)][which];
            p + (q - p) * rng.next()
        }
        _ => {
            let (u, w) = (rng.next(), rng.next());
            let (u, w) = if u + w > 1.0 {
                (1.0 - u, 1.0 - w)
            } else {
                (u, w)
            };
            a + (b - a) * u + (c - a) * w
        }
    };
    let off = if rng.next() < 0.1 {
        0.0
    } else {
        size * 10f64.powf(rng.range(-15.0, -1.0)) * if rng.next() < 0.5 { -1.0 } else { 1.0 }
    };
    let away_from = if rng.next() < 0.5 {
        normal
    } else {
        random_direction(rng)
    };
    (on + away_from * off, normal)
}

/// The answer, as text, of query `kind` (0: every hit of a segment, 1: its nearest, 2: a
/// box, 3: a ball) through `point` (near a triangle `size` across with this `normal`),
/// shaped by `rng`; empty when it hits nothing.
fn grazing_answer(
    scene: &SceneGraph,
    root: NodeId,
    visitor: &mut IntersectionVisitor,
    (kind, point, normal, size): (usize, DVec3, DVec3, f64),
    rng: &mut Rng,
) -> String {
    match kind {
        0 | 1 => {
            let direction = if rng.next() < 0.2 {
                (normal + random_direction(rng) * 1e-3).normalize()
            } else {
                random_direction(rng)
            };
            let before = size * 10f64.powf(rng.range(-1.0, 4.0));
            let after = if rng.next() < 0.3 {
                0.0
            } else {
                size * 10f64.powf(rng.range(-1.0, 4.0))
            };
            let limit = [IntersectionLimit::None, IntersectionLimit::Nearest][kind];
            let mut segment =
                LineSegmentIntersector::new(point - direction * before, point + direction * after)
                    .unwrap()
                    .with_limit(limit);
            visitor.apply(scene, root, &mut segment).unwrap();
            let hits = segment.take_intersections();
            if hits.is_empty() {
                String::new()
            } else {
                format!("{hits:?}")
            }
        }
        2 => {
            let turn = random_turn(rng);
            let mut half = || rng.range(0.1, 2.0);
            let half = DVec3::new(half(), half(), half()) * size * 10f64.powf(rng.range(-1.0, 1.0));
            let mut side = || if rng.next() < 0.5 { -1.0 } else { 1.0 };
            let corner = DVec3::new(side(), side(), side());
            // A corner, an edge or a face through the point.
            let keep =
                [DVec3::ONE, DVec3::new(1.0, 1.0, 0.0), DVec3::X][(rng.next() * 3.0) as usize % 3];
            let centre = point - turn * (corner * half * keep);
            let mut polytope =
                PolytopeIntersector::new(Polytope::from_oriented_box(centre, half, turn).unwrap());
            visitor.apply(scene, root, &mut polytope).unwrap();
            let hits = polytope.take_intersections();
            if hits.is_empty() {
                String::new()
            } else {
                format!("{hits:?}")
            }
        }
        _ => {
            let radius = size * 10f64.powf(rng.range(-1.5, 1.0));
            let outward = if rng.next() < 0.5 {
                normal
            } else {
                random_direction(rng)
            };
            let mut ball = SphereIntersector::new(point + outward * radius, radius).unwrap();
            visitor.apply(scene, root, &mut ball).unwrap();
            let hits = ball.take_intersections();
            if hits.is_empty() {
                String::new()
            } else {
                format!("{hits:?}")
            }
        }
    }
}

/// The world triangles of `scene` under `root`, each with its node path and drawable.
fn world_triangles(scene: &SceneGraph, root: NodeId) -> Vec<(Vec<NodeId>, DrawableId, [DVec3; 3])> {
    reference::flatten(scene, root)
        .into_iter()
        .filter(|p| p.kind == PrimitiveKind::Triangle)
        .map(|p| {
            (
                p.key.0,
                p.key.1,
                [p.vertices[0], p.vertices[1], p.vertices[2]],
            )
        })
        .collect()
}

/// The corners of [`world_triangles`], alone.
fn world_triangle_corners(scene: &SceneGraph, root: NodeId) -> Vec<[DVec3; 3]> {
    (world_triangles(scene, root).into_iter())
        .map(|(_, _, t)| t)
        .collect()
}

/// Fails, naming `what` and the first two, when some queries' answers differ
/// (`differ`, as [`grazing_differences`] gives them).
fn assert_none_differ(what: &str, differ: &[String]) {
    assert!(
        differ.is_empty(),
        "{what}: {} differ, the first: {:?}",
        differ.len(),
        &differ[..differ.len().min(2)]
    );
}

/// Fails unless each of the four kinds of query (`hit`, as [`grazing_differences`]
/// counts them, of `asked` each) hit something in more than a tenth of its queries.
fn assert_every_kind_hits(what: &str, hit: &[usize; 4], asked: usize) {
    assert!(
        hit.iter().all(|&h| h > asked / 10),
        "{what}: {hit:?} of {asked}"
    );
}

/// `count` queries on a knife's edge of triangles drawn from `targets`, as in
/// [`queries_grazing_triangles_under_any_frame_answer_as_the_plain_traversal`], each
/// answered by the plain and the accelerated traversal; adds to `hit` the queries of
/// each kind that hit something, and returns the queries answered differently.
fn grazing_differences(
    scene: &SceneGraph,
    root: NodeId,
    targets: &[[DVec3; 3]],
    count: usize,
    rng: &mut Rng,
    hit: &mut [usize; 4],
) -> Vec<String> {
    let mut visitor = IntersectionVisitor::new();
    let mut differ = Vec::new();
    for k in 0..count {
        let t = targets[(rng.next() * targets.len() as f64) as usize];
        let size = t[0]
            .distance(t[1])
            .max(t[1].distance(t[2]))
            .max(t[2].distance(t[0]));
        let (point, normal) = grazing_point(rng, t, k / 4 % 3, size);
        let kind = k % 4;
        let shape = (rng.next() * 9e15) as u64 | 1;
        let answers = [false, true].map(|accelerated| {
            visitor.set_use_acceleration(accelerated);
            let query = (kind, point, normal, size);
            grazing_answer(scene, root, &mut visitor, query, &mut Rng(shape))
        });
        if !answers[0].is_empty() {
            hit[kind] += 1;
        }
        if answers[0] != answers[1] {
            differ.push(format!("query {k}: {} / {}", answers[0], answers[1]));
        }
    }
    differ
}

/// Queries on a knife's edge of real scenes' triangles answer as the plain traversal.
///
/// The test above makes up its frames and triangles; here they are the real scenes':
/// world trees whose leaves hold up to four triangles, their corners quantized in the
/// leaf's box, instances placed in world space and instances kept whole, the city's
/// ground strips, littlest_tokyo's meshes of 40 000 triangles. Each query aims, as there, at a corner, a point of an edge or of the
/// inside of a triangle drawn at random from every instance, moved off it by 0 or
/// 10^-15 to 10^-1 of its size: 400 queries a scene (`PROPERTY_SCALE` times as many for
/// a deep run).
#[test]
fn queries_grazing_real_scenes_answer_as_the_plain_traversal() {
    let queries = cases::cases(400) as usize;
    for (n, path) in real_scenes().iter().enumerate() {
        let (scene, import) = load_gltf(path).unwrap();
        let triangles = world_triangle_corners(&scene, import.root);
        assert!(!triangles.is_empty(), "{path:?} has no triangles");
        let mut rng = Rng(0x6a2e_5ce4_e000 + n as u64);
        let mut hit = [0; 4];
        let differ =
            grazing_differences(&scene, import.root, &triangles, queries, &mut rng, &mut hit);
        assert_none_differ(&format!("{path:?}"), &differ);
        // Each kind of query hits something (on these dense scenes it may hit in every
        // case).
        assert_every_kind_hits(&format!("{path:?}"), &hit, queries / 4);
    }
}

/// Queries on a knife's edge of real scenes answer as the plain traversal while the
/// scenes change under a scene index built before: in each of 10 rounds, three
/// transforms turn and move a little (their instances leave the world tree for the tree
/// of moved ones), and two meshes have vertices moved (one of them every round, so that
/// past eight edits it too leaves the world tree; its instances may be placed or kept
/// whole, shared or not). After each round, 12 queries aim at the triangles the round
/// changed and 12 at any triangle (`PROPERTY_SCALE` times as many for a deep run).
#[test]
fn queries_grazing_real_scenes_answer_as_the_plain_traversal_through_edits() {
    let queries = cases::cases(12) as usize;
    for (n, path) in real_scenes().iter().enumerate() {
        let (mut scene, import) = load_gltf(path).unwrap();
        let root = import.root;
        scene.build_acceleration();
        let transforms: Vec<NodeId> = scene
            .nodes()
            .filter(|(_, node)| node.transform().is_some())
            .map(|(id, _)| id)
            .collect();
        let meshes: Vec<DrawableId> = scene
            .drawables()
            .filter(|(_, d)| d.as_geometry().is_some_and(|g| !g.vertices().is_empty()))
            .map(|(id, _)| id)
            .collect();
        let reach = scene.node_bound(root).unwrap().radius;
        let mut rng = Rng(0x0ed1_75ce_4e00 + n as u64);
        let every_round = meshes[(rng.next() * meshes.len() as f64) as usize];
        let (mut hit, mut asked) = ([0; 4], 0);
        for round in 0..10 {
            let mut moved = Vec::new();
            for _ in 0..transforms.len().min(3) {
                let t = transforms[(rng.next() * transforms.len() as f64) as usize];
                let matrix = scene.node(t).unwrap().transform().unwrap().matrix;
                let angle = rng.range(-0.05, 0.05);
                let turn = DQuat::from_axis_angle(random_direction(&mut rng), angle);
                let shift = random_direction(&mut rng) * reach * 1e-3;
                let nudge = DMat4::from_rotation_translation(turn, shift);
                scene.set_matrix(t, matrix * nudge).unwrap();
                moved.push(t);
            }
            let other = meshes[(rng.next() * meshes.len() as f64) as usize];
            for mesh in [every_round, other] {
                let bound = scene.drawable_bound(mesh).unwrap();
                let step = ((bound.max - bound.min).length() * 1e-2) as f32;
                let vertices = scene.geometry_mut(mesh).unwrap().vertices_mut();
                for _ in 0..3 {
                    let v = (rng.next() * vertices.len() as f64) as usize;
                    vertices[v] += random_direction(&mut rng).as_vec3() * step;
                }
            }
            let (mut changed, mut every) = (Vec::new(), Vec::new());
            for (path, drawable, t) in world_triangles(&scene, root) {
                if drawable == every_round
                    || drawable == other
                    || path.iter().any(|node| moved.contains(node))
                {
                    changed.push(t);
                }
                every.push(t);
            }
            let mut differ = Vec::new();
            for targets in [&changed, &every] {
                if !targets.is_empty() {
                    differ.extend(grazing_differences(
                        &scene, root, targets, queries, &mut rng, &mut hit,
                    ));
                    asked += queries / 4;
                }
            }
            assert_none_differ(&format!("{path:?}, round {round}"), &differ);
        }
        assert_every_kind_hits(&format!("{path:?}"), &hit, asked);
    }
}

/// Knife-edge queries at the real scenes' triangles after moves of the whole scene by
/// translations (a floating origin re-centred): from a thousandth of the scene's size
/// to 4·10^6 units out and back, the world tree moves with the scene (nothing is
/// detached) and every query answers as the plain traversal.
#[test]
fn queries_grazing_real_scenes_answer_as_the_plain_traversal_after_whole_scene_moves() {
    let queries = cases::cases(12) as usize;
    for (n, path) in real_scenes().iter().enumerate() {
        let (mut scene, import) = load_gltf(path).unwrap();
        let top = scene
            .add_transform("floating origin", DMat4::IDENTITY)
            .unwrap();
        scene.add_child(top, import.root).unwrap();
        scene.build_acceleration();
        let reach = scene.node_bound(top).unwrap().radius;
        let mut rng = Rng(0x5_41f7 + n as u64);
        let (mut hit, mut asked) = ([0; 4], 0);
        let mut at = DVec3::ZERO;
        for (round, distance) in [1e-3 * reach, 0.37 * reach, 10.0 * reach, 4e6, 0.5 * reach]
            .into_iter()
            .enumerate()
        {
            // The fourth round goes 4·10^6 units out, the fifth back near the origin.
            at = match round {
                3 => DVec3::new(4e6, 1e3, -3e6),
                4 => random_direction(&mut rng) * distance,
                _ => at + random_direction(&mut rng) * distance,
            };
            scene.set_matrix(top, DMat4::from_translation(at)).unwrap();
            let index = scene.scene_index(top).unwrap();
            assert!(
                index.detached().is_empty(),
                "{path:?}, round {round}: the world tree moves with the scene"
            );
            let targets = world_triangle_corners(&scene, top);
            let differ = grazing_differences(&scene, top, &targets, queries, &mut rng, &mut hit);
            asked += queries / 4;
            assert_none_differ(&format!("{path:?}, round {round} (at {at})"), &differ);
        }
        assert_every_kind_hits(&format!("{path:?}"), &hit, asked);
    }
}

/// Knife-edge queries at the real scenes' triangles, built at a heading (the world tree
/// along the scene's own axes), then after moves of the whole scene that turn and
/// scale it uniformly (a model turned in a viewer, a scene scaled to other units):
/// turned at random, scaled by a tenth to ten times, a mirror among them, placed from
/// near the origin to 4·10^6 units out and back, the world tree's frame turns with the
/// scene (nothing is detached) and every query answers as the plain traversal.
#[test]
fn queries_grazing_real_scenes_answer_as_the_plain_traversal_after_whole_scene_turns() {
    let queries = cases::cases(12) as usize;
    for (n, path) in real_scenes().iter().enumerate() {
        let (mut scene, import) = load_gltf(path).unwrap();
        // Placed at a heading and scaled, as a georeferenced model is: the world tree
        // is built along the model's own axes, then carried by the turns.
        let placed = DMat4::from_scale_rotation_translation(
            DVec3::splat(1.5),
            DQuat::from_rotation_y(0.3),
            DVec3::new(20.0, -3.0, 7.0),
        );
        let top = scene.add_transform("model", placed).unwrap();
        scene.add_child(top, import.root).unwrap();
        scene.build_acceleration();
        assert!(scene.scene_index(top).unwrap().world().frame().is_turned());
        let reach = scene.node_bound(top).unwrap().radius;
        let mut rng = Rng(0x7_0a2e + n as u64);
        let (mut hit, mut asked) = ([0; 4], 0);
        let targets = world_triangle_corners(&scene, top);
        let differ = grazing_differences(&scene, top, &targets, queries, &mut rng, &mut hit);
        asked += queries / 4;
        assert_none_differ(&format!("{path:?}, built at a heading"), &differ);
        for (round, (scale, distance)) in [
            (1.0, 0.0),
            (10.0, 0.37 * reach),
            (0.1, 4e6),
            (-1.5, 10.0 * reach),
            (0.8, 1e-3 * reach),
        ]
        .into_iter()
        .enumerate()
        {
            let turn = DQuat::from_axis_angle(random_direction(&mut rng), rng.range(0.1, 3.0));
            let at = random_direction(&mut rng) * distance;
            // A negative scale mirrors the scene through its origin as well.
            let motion = DMat4::from_scale_rotation_translation(DVec3::splat(scale), turn, at);
            scene.set_matrix(top, motion).unwrap();
            let index = scene.scene_index(top).unwrap();
            assert!(
                index.detached().is_empty() && index.world().frame().is_turned(),
                "{path:?}, round {round}: the world tree turns with the scene"
            );
            let targets = world_triangle_corners(&scene, top);
            let differ = grazing_differences(&scene, top, &targets, queries, &mut rng, &mut hit);
            asked += queries / 4;
            assert_none_differ(
                &format!("{path:?}, round {round} (scale {scale}, at {at})"),
                &differ,
            );
        }
        assert_every_kind_hits(&format!("{path:?}"), &hit, asked);
    }
}

/// A frame turned at random, scaled by 10^-2 to 10^2 along each axis and placed up to
/// `10^exponent` units from the origin, and three vertices within 10 units of its own
/// origin.
fn far_frame_and_vertices(rng: &mut Rng, exponent: i32) -> (DMat4, Vec<Vec3>) {
    let mut c = || rng.range(-1.0, 1.0);
    let turn = DQuat::from_xyzw(c(), c(), c(), c()).normalize();
    let place = DVec3::new(c(), c(), c()) * 10f64.powi(exponent);
    let scale = DVec3::new(c(), c(), c()).map(|e| 10f64.powf(2.0 * e));
    let matrix = DMat4::from_scale_rotation_translation(scale, turn, place);
    let vertices = (0..3)
        .map(|_| DVec3::new(c(), c(), c()).as_vec3() * 10.0)
        .collect();
    (matrix, vertices)
}

/// Found by a probe of the sphere's culls in a drawable's own frame: a ball of radius 0
/// at a triangle's corner, as the exact world-space test places that corner, hits it. The
/// frame's culls (the plain traversal's node and drawable tests, the accelerated walk's
/// boxes and triangles) compared the vertex with the ball's centre moved into the frame,
/// which the rounding of a far frame and its inverse puts beside it. Of the 120 corners
/// here per distance, under frames turned and scaled unevenly (by 10^-2 to 10^2), the
/// plain traversal missed 1 at 10^6 units out, 56 at 10^9 and 88 at 10^12, where the
/// accelerated walk of whole items missed 26 (and the world tree's none): the two
/// answered differently. The shapes culled there are now grown by that rounding, and
/// both find every corner, of a triangle list (placed in the world tree where its
/// frame allows) or of a strip (visited whole).
#[test]
fn a_ball_of_radius_zero_at_a_corner_under_a_far_frame_hits_it_in_both_traversals() {
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut missed = Vec::new();
    for exponent in [0, 6, 9, 12, 15] {
        for frame in 0..40 {
            let (matrix, corners) = far_frame_and_vertices(&mut rng, exponent);
            let mode = [PrimitiveMode::Triangles, PrimitiveMode::TriangleStrip][frame % 2];
            let (scene, root) = one_drawable_under(matrix, corners.clone(), mode);
            for corner in &corners {
                let centre = matrix.transform_point3(corner.as_dvec3());
                for accelerated in [false, true] {
                    let mut visitor = IntersectionVisitor::new();
                    visitor.set_use_acceleration(accelerated);
                    let mut ball = SphereIntersector::new(centre, 0.0).unwrap();
                    visitor.apply(&scene, root, &mut ball).unwrap();
                    if ball.intersections().len() != 1 {
                        missed.push((exponent, frame, accelerated));
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{} missed: {missed:?}", missed.len());
}

/// The segment's picking tolerance, like the ball, culls in a drawable's own frame and
/// tests points and lines in world space: a segment starting at a point, as the frame
/// places it in the world, passes through it (at ratio 0, where the closest point is
/// the start itself), so it picks it with any tolerance. Under far frames, turned and
/// scaled unevenly, both traversals culled 39 of these 120 points 10^9 units out, 55
/// at 10^12 and 65 at 10^15: the tolerance, moved into the frame, was not grown by the
/// rounding of moving points between the frames. (A probe with segments ending at the
/// points also found the two traversals answering differently 10^12 units out.)
#[test]
fn a_segment_from_a_point_under_a_far_frame_picks_it_in_both_traversals() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut missed = Vec::new();
    for exponent in [0, 6, 9, 12, 15] {
        for frame in 0..40 {
            let (matrix, points) = far_frame_and_vertices(&mut rng, exponent);
            let (scene, root) = one_drawable_under(matrix, points.clone(), PrimitiveMode::Points);
            for (index, point) in points.iter().enumerate() {
                let start = matrix.transform_point3(point.as_dvec3());
                let mut c = || rng.range(-1.0, 1.0);
                let end = start + DVec3::new(c(), c(), c()) * 10.0;
                for accelerated in [false, true] {
                    let mut visitor = IntersectionVisitor::new();
                    visitor.set_use_acceleration(accelerated);
                    let mut segment = LineSegmentIntersector::new(start, end)
                        .unwrap()
                        .with_picking_tolerance(1e-300)
                        .unwrap();
                    visitor.apply(&scene, root, &mut segment).unwrap();
                    let hits = segment.intersections();
                    if hits.len() != 1 || hits[0].primitive_index != index as u32 {
                        missed.push((exponent, frame, index, accelerated));
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{} missed: {missed:?}", missed.len());
}
