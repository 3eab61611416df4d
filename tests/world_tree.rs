//! The scene index's world tree: unique triangle lists are placed in world space
//! triangle by triangle, everything else stays whole. Neither may ever change an
//! answer: every limit, every intersector, after moves and mesh edits (which detach an
//! instance from the tree), under masks, with quads and shared meshes (kept whole),
//! and with intersectors that do not walk the tree themselves.

use glam::{DMat4, DQuat, DVec3, DVec4, Vec3};
use scene_intersect::accel::{Placement, WorldChild};
use scene_intersect::drawable::Drawable;
use scene_intersect::intersectors::{AnyIntersector, PrimitiveKind};
use scene_intersect::prelude::*;

/// A `cells` x `cells` grid of triangles (two per cell, TRIANGLES mode) over
/// `[-half, half]^2` in the plane y = 0, gently waved so that its tree has depth in y
/// too.
fn grid(cells: u32, half: f32) -> Geometry {
    let n = cells + 1;
    let step = 2.0 * half / cells as f32;
    let mut vertices = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let (x, z) = (-half + i as f32 * step, -half + j as f32 * step);
            let y = if (i + j) % 2 == 0 { 0.0 } else { 0.25 };
            vertices.push(Vec3::new(x, y, z));
        }
    }
    let mut indices = Vec::new();
    for j in 0..cells {
        for i in 0..cells {
            let a = j * n + i;
            indices.extend([a, a + 1, a + n + 1, a, a + n + 1, a + n]);
        }
    }
    Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_elements_u32(
            PrimitiveMode::Triangles,
            indices,
        ))
        .unwrap()
}

/// `strips` long quads side by side (QUADS mode: each quad's two triangles share one
/// primitive index) over `[-half, half]` in x, from z = -10 to z = 10, in the plane
/// y = 0.
fn quad_strips(strips: u32, half: f32) -> Geometry {
    let step = 2.0 * half / strips as f32;
    let mut vertices = Vec::new();
    for i in 0..=strips {
        let x = -half + i as f32 * step;
        vertices.push(Vec3::new(x, 0.0, -10.0));
        vertices.push(Vec3::new(x, 0.0, 10.0));
    }
    let mut indices = Vec::new();
    for i in 0..strips {
        let a = 2 * i;
        indices.extend([a, a + 2, a + 3, a + 1]);
    }
    Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_elements_u32(
            PrimitiveMode::Quads,
            indices,
        ))
        .unwrap()
}

/// Two big overlapping grids under different transforms (one tilted and scaled), long
/// quads, and a small mesh shared by two transforms. Returns the scene, its root, the
/// tilted grid's transform and the flat grid's.
fn scene() -> (SceneGraph, NodeId, NodeId, NodeId) {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let flat = scene.add_drawable("flat", grid(40, 20.0));
    let tilted = scene.add_drawable("tilted", grid(30, 15.0));
    let quads = scene.add_drawable("quads", quad_strips(80, 10.0));
    let small = scene.add_drawable("small", grid(2, 1.0));
    let add = |scene: &mut SceneGraph, name: &str, m: DMat4, d| {
        let t = scene.add_transform(name, m).unwrap();
        let g = scene.add_geode(format!("{name}-geode"));
        scene.add_drawable_to_geode(g, d).unwrap();
        scene.add_child(t, g).unwrap();
        scene.add_child(root, t).unwrap();
        t
    };
    let flat_t = add(&mut scene, "flat", DMat4::IDENTITY, flat);
    let moving = add(
        &mut scene,
        "tilted",
        DMat4::from_scale_rotation_translation(
            DVec3::new(1.3, 0.7, 1.1),
            DQuat::from_rotation_x(0.4) * DQuat::from_rotation_y(0.3),
            DVec3::new(2.0, 1.0, -1.0),
        ),
        tilted,
    );
    add(
        &mut scene,
        "quads",
        DMat4::from_translation(DVec3::new(0.0, 2.0, 0.0)),
        quads,
    );
    add(
        &mut scene,
        "small-a",
        DMat4::from_translation(DVec3::new(3.0, 3.0, 3.0)),
        small,
    );
    add(
        &mut scene,
        "small-b",
        DMat4::from_translation(DVec3::new(-3.0, 3.0, -3.0)),
        small,
    );
    (scene, root, moving, flat_t)
}

#[path = "support/whole_visits.rs"]
mod whole_visits;
use whole_visits::WholeVisits;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

impl Rng {
    /// A point in `[-r, r] x [-0.3 r, 0.3 r] x [-r, r]`.
    fn point(&mut self, r: f64) -> DVec3 {
        DVec3::new(
            self.range(-r, r),
            self.range(-0.3 * r, 0.3 * r),
            self.range(-r, r),
        )
    }
}

fn run<I: Intersector>(
    visitor: &mut IntersectionVisitor,
    scene: &SceneGraph,
    root: NodeId,
    i: &mut I,
) {
    visitor.apply(scene, root, i).unwrap();
}

const LIMITS: [IntersectionLimit; 3] = [
    IntersectionLimit::None,
    IntersectionLimit::Nearest,
    IntersectionLimit::OnePerDrawable,
];

/// Runs `query` (an intersector with the given limit) plain and accelerated, and
/// asserts both give the same hits, for every limit; `One` gives one of them.
fn assert_equal_plain<H: PartialEq + std::fmt::Debug>(
    what: &str,
    mut query: impl FnMut(bool, IntersectionLimit) -> Vec<H>,
) -> usize {
    for limit in LIMITS {
        assert_eq!(query(false, limit), query(true, limit), "{what}, {limit:?}");
    }
    let all = query(false, IntersectionLimit::None);
    let one = query(true, IntersectionLimit::One);
    assert_eq!(one.len(), usize::from(!all.is_empty()), "{what}, One");
    assert!(
        one.iter().all(|h| all.contains(h)),
        "{what}: One's hit is a hit"
    );
    all.len()
}

/// Every query kind and limit, accelerated (the world tree) against plain, with the
/// visitor's masks as `configure` sets them; returns how many hits there were.
fn assert_all_queries_equal_plain(
    scene: &SceneGraph,
    root: NodeId,
    seed: u64,
    configure: impl Fn(&mut IntersectionVisitor),
) -> usize {
    assert_all_queries_equal_plain_around(scene, root, seed, DVec3::ZERO, configure)
}

/// [`assert_all_queries_equal_plain`] for a scene moved by `origin`: every query is
/// moved with it.
fn assert_all_queries_equal_plain_around(
    scene: &SceneGraph,
    root: NodeId,
    seed: u64,
    origin: DVec3,
    configure: impl Fn(&mut IntersectionVisitor),
) -> usize {
    let visitor = |accelerated: bool| {
        let mut v = IntersectionVisitor::new();
        v.set_use_acceleration(accelerated);
        configure(&mut v);
        v
    };
    let mut rng = Rng(seed);
    let mut hits = 0;
    for _ in 0..60 {
        let (a, b) = (origin + rng.point(25.0), origin + rng.point(25.0));
        hits += assert_equal_plain(&format!("segment {a} -> {b}"), |accelerated, limit| {
            let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
            run(&mut visitor(accelerated), scene, root, &mut i);
            i.take_intersections()
        });
        // The same start, as a picking ray to a far plane 10^6 away.
        let far = a + (b - a).normalize_or(DVec3::Y) * 1e6;
        hits += assert_equal_plain(&format!("ray {a} -> {far}"), |accelerated, limit| {
            let mut i = LineSegmentIntersector::new(a, far)
                .unwrap()
                .with_limit(limit);
            run(&mut visitor(accelerated), scene, root, &mut i);
            i.take_intersections()
        });
        let (c, half) = (
            origin + rng.point(15.0),
            DVec3::new(2.0, 1.5, 4.0) * (0.5 + rng.next()),
        );
        let rotation = DQuat::from_rotation_y(rng.next() * 6.0);
        hits += assert_equal_plain(&format!("box at {c}"), |accelerated, limit| {
            let p = Polytope::from_oriented_box(c, half, rotation).unwrap();
            let mut i = PolytopeIntersector::new(p).with_limit(limit);
            run(&mut visitor(accelerated), scene, root, &mut i);
            i.take_intersections()
        });
        // The same box given as its six planes, shuffled and scaled: found to be a box
        // (bounds and all), and answered as the plain traversal answers it.
        let faces = Polytope::from_oriented_box(c, half, rotation).unwrap();
        let shuffled: Vec<DVec4> = [2, 0, 4, 1, 5, 3]
            .iter()
            .zip([1.0, 3.5, 0.25, 1e3, 2.0, 0.75])
            .map(|(&k, scale)| faces.planes()[k] * scale)
            .collect();
        assert!(Polytope::new(shuffled.iter().copied())
            .unwrap()
            .bounds()
            .is_some());
        hits += assert_equal_plain(&format!("box planes at {c}"), |accelerated, limit| {
            let p = Polytope::new(shuffled.iter().copied()).unwrap();
            let mut i = PolytopeIntersector::new(p).with_limit(limit);
            run(&mut visitor(accelerated), scene, root, &mut i);
            i.take_intersections()
        });
        let radius = 0.5 + rng.next() * 4.0;
        hits += assert_equal_plain(&format!("ball at {c} r {radius}"), |accelerated, limit| {
            let mut i = SphereIntersector::new(c, radius).unwrap().with_limit(limit);
            run(&mut visitor(accelerated), scene, root, &mut i);
            i.take_intersections()
        });
    }
    hits
}

/// The drawable named `name`.
fn drawable_named(scene: &SceneGraph, name: &str) -> DrawableId {
    (scene.drawables())
        .find(|(id, _)| scene.drawable_name(*id) == Some(name))
        .unwrap()
        .0
}

/// The names of the drawables whose instances `root`'s index visits whole since moves
/// and edits detached them, sorted.
fn detached_names(scene: &SceneGraph, root: NodeId) -> Vec<String> {
    let index = scene.scene_index(root).unwrap();
    let mut names: Vec<_> = (index.detached().iter())
        .map(|&k| scene.drawable_name(index.instances()[k as usize].drawable))
        .map(|name| name.unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

/// The primitive indices of a tree's triangles, in the order its leaves store them.
struct LeafOrder(Vec<u32>);

impl PrimitiveFunctor for LeafOrder {
    fn triangle(&mut self, _: [Vec3; 3], _: [u32; 3], p: u32) {
        self.0.push(p);
    }
}

/// The order of the triangles in the graph's tree of `drawable`, a geometry.
fn stored_order(scene: &SceneGraph, drawable: DrawableId) -> Vec<u32> {
    let geometry = scene.drawable(drawable).unwrap().as_geometry().unwrap();
    let mut order = LeafOrder(Vec::new());
    let bvh = scene.primitive_bvh(drawable).unwrap();
    bvh.for_each_candidate(geometry, |_| true, &mut order);
    order.0
}

/// The order of the triangles in a tree built afresh over `drawable` as it is now.
fn rebuilt_order(scene: &SceneGraph, drawable: DrawableId) -> Vec<u32> {
    let geometry = scene.drawable(drawable).unwrap().as_geometry().unwrap();
    let mut order = LeafOrder(Vec::new());
    let bvh = scene_intersect::accel::PrimitiveBvh::build(geometry).unwrap();
    bvh.for_each_candidate(geometry, |_| true, &mut order);
    order.0
}

#[test]
fn unique_triangle_lists_are_placed_and_quads_and_shared_meshes_stay_whole() {
    let (scene, root, _, _) = scene();
    let index = scene.scene_index(root).unwrap();
    let placement = |name: &str| {
        (index.instances().iter())
            .filter(|i| scene.drawable_name(i.drawable) == Some(name))
            .map(|i| i.placement)
            .collect::<Vec<_>>()
    };
    assert!(matches!(
        placement("flat")[..],
        [Placement::Triangles { .. }]
    ));
    assert!(matches!(
        placement("tilted")[..],
        [Placement::Triangles { .. }]
    ));
    // A quad's two halves share a primitive index: visited whole.
    assert_eq!(placement("quads"), [Placement::Whole]);
    // One mesh under two transforms: one primitive tree for both, not two copies.
    assert_eq!(placement("small"), [Placement::Whole, Placement::Whole]);
    let world = index.world();
    assert_eq!(world.triangle_count(), 3200 + 1800);
    assert_eq!(world.whole_count(), 3);
    // Every leaf triangle's id names a placed instance's primitive, and the leaf's box
    // holds that triangle in world space.
    let mut seen = 0;
    world.for_each_child(
        |_| true,
        |child, leaf_box| {
            if let WorldChild::Triangles { first, count } = child {
                for record in &world.triangles()[first as usize..(first + count) as usize] {
                    let (k, primitive) = index.locate(record.id).unwrap();
                    let instance = &index.instances()[k as usize];
                    let geometry = scene
                        .drawable(instance.drawable)
                        .unwrap()
                        .as_geometry()
                        .unwrap();
                    assert!(primitive < geometry.primitive_count() as u32);
                    let mut corners = Vec::new();
                    struct Corners<'a>(u32, &'a mut Vec<DVec3>, DMat4);
                    impl PrimitiveFunctor for Corners<'_> {
                        fn triangle(&mut self, v: [Vec3; 3], _: [u32; 3], p: u32) {
                            if p == self.0 {
                                self.1
                                    .extend(v.map(|v| self.2.transform_point3(v.as_dvec3())));
                            }
                        }
                    }
                    geometry.accept_functor(&mut Corners(
                        primitive,
                        &mut corners,
                        instance.local_to_world,
                    ));
                    for c in corners {
                        let (min, max) = leaf_box.as_dvec3();
                        assert!(
                            c.cmpge(min).all() && c.cmple(max).all(),
                            "{c} outside its leaf"
                        );
                    }
                    seen += 1;
                }
            }
        },
    );
    assert_eq!(seen, 3200 + 1800);
    assert_eq!(index.locate(3200 + 1800), None);
}

/// Strips, fans and polygons stay whole in the world tree; the trees of those of one
/// primitive set keep only their triangles' numbers, as triangle lists do, each triangle
/// read back from the set's entries in the decomposition's winding (a strip's odd
/// triangles turned, degenerate joins counted). A strip drawn as runs of one
/// `DrawArrayLengths` set keeps its primitives packed. Every query answers as the plain
/// traversal's, normals included.
#[test]
fn strips_fans_and_polygons_keep_compact_trees_and_answer_as_the_plain_traversal() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    // A wavy strip along x, from vertex 2 on (two unused vertices first): 80 triangles.
    let mut wave = vec![Vec3::splat(99.0); 2];
    for i in 0..=40 {
        let (x, y) = (i as f32 - 20.0, (i as f32 * 0.7).sin());
        wave.push(Vec3::new(x, y, -3.0));
        wave.push(Vec3::new(x, y + 0.5, 3.0));
    }
    let strip = Geometry::new(wave.clone())
        .with_primitive_set(PrimitiveSet::draw_arrays(
            PrimitiveMode::TriangleStrip,
            2,
            82,
        ))
        .unwrap();
    // Two rows of a wall as one indexed strip, joined by repeating the first row's last
    // index and the second row's first: 22 + 2 + 22 entries, 44 triangles (4 of them
    // degenerate).
    let wall: Vec<Vec3> = (0..33)
        .map(|k| Vec3::new((k % 11) as f32 * 2.0 - 10.0, (k / 11) as f32 * 1.5, 0.0))
        .collect();
    let mut entries: Vec<u16> = (0..11).flat_map(|c| [c, 11 + c]).collect();
    entries.extend([21, 11]);
    entries.extend((0..11).flat_map(|c| [11 + c, 22 + c]));
    let joined = Geometry::new(wall)
        .with_primitive_set(PrimitiveSet::DrawElements {
            mode: PrimitiveMode::TriangleStrip,
            indices: Indices::U16(entries),
        })
        .unwrap();
    // A disk as a fan: its hub, then 17 rim vertices (the first repeated): 16 triangles.
    let mut disk = vec![Vec3::ZERO];
    disk.extend((0..=16).map(|k| {
        let a = k as f32 * std::f32::consts::TAU / 16.0;
        Vec3::new(6.0 * a.cos(), 0.0, 6.0 * a.sin())
    }));
    let fan = Geometry::new(disk)
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::TriangleFan, 0, 18))
        .unwrap();
    // A hexagon as an indexed polygon, listed from its fourth corner: 4 triangles.
    let hexagon: Vec<Vec3> = (0..6)
        .map(|k| {
            let a = k as f32 * std::f32::consts::TAU / 6.0;
            Vec3::new(4.0 * a.cos(), 4.0 * a.sin(), 0.0)
        })
        .collect();
    let polygon = Geometry::new(hexagon)
        .with_primitive_set(PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Polygon,
            indices: Indices::U8(vec![3, 4, 5, 0, 1, 2]),
        })
        .unwrap();
    // The wave again, as two runs of one set.
    let runs = Geometry::new(wave)
        .with_primitive_set(PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::TriangleStrip,
            first: 2,
            lengths: vec![40, 42],
        })
        .unwrap();
    let parts = [
        ("strip", strip, DMat4::IDENTITY),
        (
            "joined",
            joined,
            DMat4::from_rotation_translation(
                DQuat::from_rotation_y(0.6),
                DVec3::new(2.0, -2.0, 5.0),
            ),
        ),
        (
            "fan",
            fan,
            DMat4::from_rotation_translation(
                DQuat::from_rotation_z(0.3),
                DVec3::new(-8.0, 1.0, -9.0),
            ),
        ),
        (
            "polygon",
            polygon,
            DMat4::from_scale_rotation_translation(
                DVec3::new(1.5, 0.5, 1.0),
                DQuat::from_rotation_x(1.2),
                DVec3::new(9.0, 0.5, -6.0),
            ),
        ),
        (
            "runs",
            runs,
            DMat4::from_translation(DVec3::new(0.0, 2.5, 8.0)),
        ),
    ];
    for (name, geometry, m) in parts {
        let d = scene.add_drawable(name, geometry);
        let t = scene.add_transform(name, m).unwrap();
        let g = scene.add_geode(format!("{name}-geode"));
        scene.add_drawable_to_geode(g, d).unwrap();
        scene.add_child(t, g).unwrap();
        scene.add_child(root, t).unwrap();
    }
    scene.build_acceleration();
    let index = scene.scene_index(root).unwrap();
    let whole: Vec<_> = (index.whole_drawables().iter())
        .map(|&d| scene.drawable_name(d).unwrap())
        .collect();
    assert_eq!(whole, ["strip", "joined", "fan", "polygon", "runs"]);
    assert_eq!(index.world().triangle_count(), 0);
    for (name, triangles, numbered) in [
        ("strip", 80, true),
        ("joined", 44, true),
        ("fan", 16, true),
        ("polygon", 4, true),
        ("runs", 78, false),
    ] {
        let bvh = scene.primitive_bvh(drawable_named(&scene, name)).unwrap();
        assert_eq!(bvh.len(), triangles, "{name}");
        assert_eq!(bvh.stores_triangle_numbers(), numbered, "{name}");
    }
    let mut hits = 0;
    for seed in [0x5719, 0xfa4, 0x9017] {
        hits += assert_all_queries_equal_plain(&scene, root, seed, |_| {});
    }
    assert!(hits > 1_000, "{hits} hits");
}

#[test]
fn the_world_tree_answers_exactly_as_the_plain_traversal() {
    let (scene, root, _, _) = scene();
    let hits = assert_all_queries_equal_plain(&scene, root, 0x0f0f_1234, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    // A hand-computed pick: straight down at (0.3, 0.6), from y = 5 to y = -5. The quads
    // at y = 2 are met first, at ratio (5 - 2) / 10 = 0.3 (the tilted grid lies
    // below y = 1.5 there, the flat one at y <= 0.25).
    let mut i = LineSegmentIntersector::new(DVec3::new(0.3, 5.0, 0.6), DVec3::new(0.3, -5.0, 0.6))
        .unwrap()
        .with_limit(IntersectionLimit::Nearest);
    run(&mut IntersectionVisitor::new(), &scene, root, &mut i);
    let hit = i.first_intersection().unwrap();
    assert_eq!(hit.ratio, 0.3);
    assert_eq!(hit.world_point, DVec3::new(0.3, 2.0, 0.6));
    assert_eq!(scene.drawable_name(hit.drawable), Some("quads"));
    // Without the quads, the flat grid's triangles (placed in world space) are nearest:
    // at (0.3, 0.6) its cell spans x 0..1, z 0..1 with y waving 0..0.25.
    let (mut masked, masked_root, _, _) = self::scene();
    let quads = masked.find_node("quads").unwrap();
    masked.set_node_mask(quads, 0b10).unwrap();
    let mut visitor = IntersectionVisitor::new();
    visitor.set_traversal_mask(!0b10);
    let mut i = LineSegmentIntersector::new(DVec3::new(0.3, 5.0, 0.6), DVec3::new(0.3, -5.0, 0.6))
        .unwrap()
        .with_limit(IntersectionLimit::Nearest);
    run(&mut visitor, &masked, masked_root, &mut i);
    let hit = i.first_intersection().unwrap();
    assert!(
        hit.world_point.y >= 0.0 && hit.world_point.y <= 1.5,
        "{hit:?}"
    );
    assert_ne!(masked.drawable_name(hit.drawable), Some("quads"));
}

#[test]
fn masks_on_placed_instances_answer_as_the_plain_traversal() {
    let (mut scene, root, _, flat) = scene();
    scene.build_acceleration();
    // The flat grid's transform excluded by mask, after the index was built.
    scene.set_node_mask(flat, 0b100).unwrap();
    let hits = assert_all_queries_equal_plain(&scene, root, 91, |v| {
        v.set_traversal_mask(!0b100);
    });
    assert!(hits > 100);
    // And included again through the override mask.
    assert_all_queries_equal_plain(&scene, root, 92, |v| {
        v.set_traversal_mask(!0b100).set_override_mask(0b100);
    });
}

#[test]
fn boxes_whose_planes_do_not_fit_f32_answer_as_the_plain_traversal() {
    let (scene, root, _, _) = scene();
    // A box of half extents 10^39 centred at x = 10^39: its low x face is the plane
    // x = 0, through the middle of the scene, while the offsets of the others (2 x 10^39
    // and 10^39) are beyond `f32`, so the walk's leaves cannot use the plane filter and
    // must clip every triangle they hold.
    let huge = DVec3::splat(1e39);
    let polytope =
        Polytope::from_oriented_box(DVec3::new(1e39, 0.0, 0.0), huge, DQuat::IDENTITY).unwrap();
    assert!(polytope.planes().iter().any(|p| (p.w as f32).is_infinite()));
    let hits = assert_equal_plain("box beyond f32", |accelerated, limit| {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        let mut i = PolytopeIntersector::new(polytope.clone()).with_limit(limit);
        run(&mut visitor, &scene, root, &mut i);
        i.take_intersections()
    });
    // Every grid cell of x >= 0 (and the quads and small meshes there) is hit: the flat
    // grid alone has 20 x 40 cells, two triangles each, on that side.
    assert!(hits > 1600, "{hits}");
}

#[test]
fn moved_instances_are_detached_and_still_answer_exactly() {
    let (mut scene, root, moving, _) = scene();
    scene.build_acceleration();
    for step in 0..4 {
        let m = DMat4::from_rotation_translation(
            DQuat::from_rotation_z(0.2 * step as f64),
            DVec3::new(-6.0 + 4.0 * step as f64, 0.5, 1.0),
        );
        scene.set_matrix(moving, m).unwrap();
        assert_all_queries_equal_plain(&scene, root, 77 + step, |_| {});
    }
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 4);
    // Only the tilted grid was moved: it alone is visited outside the world tree.
    let detached: Vec<_> = (index.detached().iter())
        .map(|&k| scene.drawable_name(index.instances()[k as usize].drawable))
        .collect();
    assert_eq!(detached, [Some("tilted")]);
    assert!(index.instances().iter().filter(|i| i.detached).count() == 1);
}

/// An edit whose triangles all stay inside their leaves' boxes in the world tree keeps
/// the drawable there (its records packed anew), through every way of editing; one that
/// moves a triangle out of its leaf detaches it as before. The answers stay the plain
/// traversal's throughout.
#[test]
fn edits_that_stay_in_their_leaves_keep_the_drawable_in_the_world_tree() {
    let (mut scene, root, _, _) = scene();
    scene.build_acceleration();
    let flat = drawable_named(&scene, "flat");
    let tilted = drawable_named(&scene, "tilted");
    // The flat grid's vertices alternate between heights 0 and 0.25: every leaf's box
    // spans both, so swapping the two heights keeps every triangle in its leaf's box
    // while moving every vertex.
    let swap = |v: &mut Vec3| v.y = 0.25 - v.y;
    scene
        .edit_geometry(flat, |g| g.vertices_mut().iter_mut().for_each(swap))
        .unwrap();
    assert!(detached_names(&scene, root).is_empty(), "swapped in place");
    assert_all_queries_equal_plain(&scene, root, 0x5ea1, |_| {});
    scene
        .edit_vertices(flat, |vertices| vertices.iter_mut().for_each(swap))
        .unwrap();
    scene
        .edit_vertices(tilted, |vertices| vertices[40].y = 0.25 - vertices[40].y)
        .unwrap();
    assert!(detached_names(&scene, root).is_empty());
    assert_all_queries_equal_plain(&scene, root, 0x5ea2, |_| {});
    // Handed out: the parked index is refitted at its next use, the same way.
    scene
        .geometry_mut(flat)
        .unwrap()
        .vertices_mut()
        .iter_mut()
        .for_each(swap);
    assert!(detached_names(&scene, root).is_empty());
    assert_all_queries_equal_plain(&scene, root, 0x5ea3, |_| {});
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 4);
    assert_eq!(index.world().triangle_count(), 3200 + 1800);
    // Edited more than eight times, a mesh is taken for an animated one and detached
    // (the tilted grid has had one edit: seven more keep it, the ninth detaches it).
    for edit in 2..=9 {
        scene
            .edit_vertices(tilted, |vertices| vertices[40].y = 0.25 - vertices[40].y)
            .unwrap();
        let expected: &[&str] = if edit <= 8 { &[] } else { &["tilted"] };
        assert_eq!(detached_names(&scene, root), expected, "edit {edit}");
    }
    assert_all_queries_equal_plain(&scene, root, 0x5ea4, |_| {});
    // One vertex lifted a unit above the grid: its triangles leave their leaves.
    scene
        .edit_vertices(flat, |vertices| vertices[100].y += 1.0)
        .unwrap();
    assert_eq!(detached_names(&scene, root), ["flat", "tilted"]);
    assert_all_queries_equal_plain(&scene, root, 0x5ea5, |_| {});
    // Detached, it stays so (visited whole) even when put back.
    scene
        .edit_vertices(flat, |vertices| vertices[100].y -= 1.0)
        .unwrap();
    assert_eq!(detached_names(&scene, root), ["flat", "tilted"]);
    assert_all_queries_equal_plain(&scene, root, 0x5ea6, |_| {});
}

/// `rebuild_acceleration` puts the instances that moves, edits and handed-out
/// drawables detached back into the world tree (the index built afresh), and the
/// answers stay the plain traversal's.
#[test]
fn rebuilding_puts_moved_and_edited_instances_back_in_the_world_tree() {
    let (mut scene, root, moving, _) = scene();
    scene.build_acceleration();
    let placed = scene.scene_index(root).unwrap().world().triangle_count();
    assert_eq!(placed, 3200 + 1800, "the flat and tilted grids");
    let flat = drawable_named(&scene, "flat");
    scene
        .edit_geometry(flat, |g| {
            g.vertices_mut().iter_mut().for_each(|v| v.y += 0.5)
        })
        .unwrap();
    let turned = DMat4::from_translation(DVec3::new(0.5, 2.0, -1.0))
        * DMat4::from_rotation_z(0.3)
        * DMat4::from_scale(DVec3::new(1.3, 0.7, 1.1));
    scene.set_matrix(moving, turned).unwrap();
    assert_eq!(detached_names(&scene, root), ["flat", "tilted"]);

    scene.rebuild_acceleration();
    let index = scene.scene_index(root).unwrap();
    assert!(index.detached().is_empty());
    assert!(index.instances().iter().all(|i| !i.detached));
    assert_eq!(index.world().triangle_count(), placed, "placed again");
    assert_eq!(index.refit_count(), 0, "built afresh");
    assert_all_queries_equal_plain(&scene, root, 0x7eb1, |_| {});

    // A drawable handed out parks the index, whose refit would detach its instances: the
    // rebuild builds it afresh instead.
    scene
        .geometry_mut(flat)
        .unwrap()
        .vertices_mut()
        .iter_mut()
        .for_each(|v| v.y -= 0.25);
    scene.rebuild_acceleration();
    let index = scene.scene_index(root).unwrap();
    assert!(index.detached().is_empty());
    assert_eq!(index.world().triangle_count(), placed);
    assert_all_queries_equal_plain(&scene, root, 0x7eb2, |_| {});
}

/// Drawables edited in place (`edit_geometry`, `edit_vertices`) or replaced keep the
/// scene index: their instances are detached, as moved ones are, and every query still
/// answers as the plain traversal, whatever the edit did to the primitives;
/// `edit_vertices` refits the drawable's own tree too.
#[test]
fn edited_and_replaced_drawables_are_detached_and_still_answer_exactly() {
    let (mut scene, root, _, _) = scene();
    scene.build_acceleration();
    // The placed flat grid, lifted 1.5 units and stretched: its triangles in the world
    // tree are stale from now on.
    let flat = drawable_named(&scene, "flat");
    scene
        .edit_geometry(flat, |g| {
            for v in g.vertices_mut() {
                *v = Vec3::new(v.x * 1.2, v.y + 1.5, v.z);
            }
        })
        .unwrap();
    assert_all_queries_equal_plain(&scene, root, 0xed17, |_| {});
    assert_eq!(detached_names(&scene, root), ["flat"]);
    // The shared mesh (a whole item), its primitive set dropped: nothing left to hit,
    // and its vertices, so its box, where they were: both instances stay in place.
    let small = drawable_named(&scene, "small");
    scene
        .edit_geometry(small, |g| g.remove_primitive_set(0).is_some())
        .unwrap();
    assert_all_queries_equal_plain(&scene, root, 0xed18, |_| {});
    assert_eq!(detached_names(&scene, root), ["flat"]);
    // The quads (a whole item) replaced by a bigger grid, out of their box, then the
    // flat grid edited again.
    let quads = drawable_named(&scene, "quads");
    let old = scene.replace_drawable(quads, grid(12, 14.0)).unwrap();
    assert!(old.as_geometry().is_some_and(|g| g.primitive_count() > 0));
    assert_eq!(detached_names(&scene, root), ["flat", "quads"]);
    scene
        .edit_geometry(flat, |g| g.vertices_mut()[0].y = 9.0)
        .unwrap();
    assert_all_queries_equal_plain(&scene, root, 0xed19, |_| {});
    let index = scene.scene_index(root).unwrap();
    // The same index throughout, refitted four times; the world tree untouched.
    assert_eq!(index.refit_count(), 4);
    assert_eq!(index.world().triangle_count(), 3200 + 1800);
    // An edit that changes nothing refits all the same: the index cannot tell.
    scene
        .edit_geometry(drawable_named(&scene, "tilted"), |_| ())
        .unwrap();
    assert_eq!(scene.scene_index(root).unwrap().refit_count(), 5);
    assert_all_queries_equal_plain(&scene, root, 0xed1a, |_| {});
    // Vertices moved through `edit_vertices`: the grid's own tree (built here) is
    // refitted, not rebuilt, so it keeps its primitives' order, which a rebuild of the
    // grid mirrored in x turns around.
    let tilted = drawable_named(&scene, "tilted");
    let before = stored_order(&scene, tilted);
    assert_eq!(before.len(), 1800);
    for step in 1..=3 {
        scene
            .edit_vertices(tilted, |vertices| {
                for v in vertices {
                    *v = Vec3::new(-v.x, v.y + 0.5, v.z);
                }
            })
            .unwrap();
        assert_eq!(
            stored_order(&scene, tilted),
            before,
            "step {step}: refitted"
        );
        assert_all_queries_equal_plain(&scene, root, 0xed1a + step, |_| {});
    }
    assert_eq!(scene.scene_index(root).unwrap().refit_count(), 8);
    assert_ne!(
        rebuilt_order(&scene, tilted),
        before,
        "a rebuild orders the mirrored grid otherwise"
    );
    // A vertex made NaN takes its triangles out of both traversals (a refit would have
    // kept them in the grid's tree, where balls holding a whole leaf take its triangles
    // without a test: found by the `edits` fuzzer); made finite again, they are back.
    let corner = |scene: &SceneGraph, k: usize| {
        let g = scene.drawable(tilted).unwrap().as_geometry().unwrap();
        let index = scene.scene_index(root).unwrap();
        let instance = (index.instances().iter())
            .find(|i| i.drawable == tilted)
            .unwrap();
        instance
            .local_to_world
            .transform_point3(g.vertices()[k].as_dvec3())
    };
    let k = 31 * 15 + 15;
    let (near, at) = (corner(&scene, k + 1), corner(&scene, k));
    for value in [f32::NAN, 0.25] {
        scene
            .edit_vertices(tilted, |vertices| vertices[k].y = value)
            .unwrap();
        for radius in [0.3, 1.0, 3.0] {
            for centre in [near, at] {
                assert_equal_plain(
                    &format!("ball at {centre} r {radius}"),
                    |accelerated, limit| {
                        let mut i = SphereIntersector::new(centre, radius)
                            .unwrap()
                            .with_limit(limit);
                        let mut v = IntersectionVisitor::new();
                        v.set_use_acceleration(accelerated);
                        run(&mut v, &scene, root, &mut i);
                        i.take_intersections()
                    },
                );
            }
        }
    }
}

/// Drawables handed out as plain `&mut` (`geometry_mut`, `drawable_mut`) keep the
/// scene index too: it waits for the borrow to end and is refitted at its next use (a
/// query, or the next edit, which refits it first), for every drawable handed out in
/// between; a structural edit in between drops it, as it drops any index.
#[test]
fn drawables_handed_out_mutably_keep_the_index_refitted_at_its_next_use() {
    let (mut scene, root, moving, _) = scene();
    scene.build_acceleration();
    let refits = |scene: &SceneGraph| scene.scene_index(root).unwrap().refit_count();
    // The placed flat grid lifted 1.5 units through a borrow held across statements.
    let flat = drawable_named(&scene, "flat");
    let vertices = scene.geometry_mut(flat).unwrap().vertices_mut();
    for v in vertices.iter_mut() {
        v.y += 1.5;
    }
    vertices[0].y = 7.0;
    assert_all_queries_equal_plain(&scene, root, 0x6d01, |_| {});
    assert_eq!(
        refits(&scene),
        1,
        "refitted at the first query, not rebuilt"
    );
    assert_eq!(detached_names(&scene, root), ["flat"]);
    // Two drawables handed out before the next query, one through `drawable_mut`: the
    // index is refitted for both. The quads (a whole item) lose their primitives but
    // not their box, and stay in place; the shared mesh moves out of its box.
    let quads = drawable_named(&scene, "quads");
    let removed = (scene.drawable_mut(quads).unwrap().as_geometry_mut())
        .and_then(|g| g.remove_primitive_set(0));
    assert!(removed.is_some());
    let small = drawable_named(&scene, "small");
    for v in scene.geometry_mut(small).unwrap().vertices_mut() {
        v.x += 0.75;
    }
    assert_all_queries_equal_plain(&scene, root, 0x6d02, |_| {});
    assert_eq!(refits(&scene), 3);
    assert_eq!(detached_names(&scene, root), ["flat", "small", "small"]);
    // Handed out, then a transform moved before any query: the move refits the parked
    // index for the edit first, then for itself.
    let tilted = drawable_named(&scene, "tilted");
    scene.geometry_mut(tilted).unwrap().vertices_mut()[5].y = -4.0;
    let m =
        DMat4::from_rotation_translation(DQuat::from_rotation_z(0.3), DVec3::new(1.0, 0.5, 2.0));
    scene.set_matrix(moving, m).unwrap();
    assert_eq!(refits(&scene), 5);
    assert_all_queries_equal_plain(&scene, root, 0x6d03, |_| {});
    // Queried from two threads at once right after a hand-out: one of them refits the
    // parked index, and both answer as the plain traversal.
    scene.geometry_mut(flat).unwrap().vertices_mut()[1].y = -6.0;
    std::thread::scope(|threads| {
        for seed in [0x6d04, 0x6d05] {
            let scene = &scene;
            threads.spawn(move || assert_all_queries_equal_plain(scene, root, seed, |_| {}));
        }
    });
    assert_eq!(refits(&scene), 6);
    // Handed out, then a child added under the root: the parked index is brought up to
    // date with the new instance at its next use (one refit), then refitted for the
    // edit (another): the new instance is detached, and so are the edited mesh's two
    // others, whose corner left their boxes in the world tree.
    scene.geometry_mut(small).unwrap().vertices_mut()[0].z = 5.0;
    let extra = scene.add_geode("extra");
    scene.add_drawable_to_geode(extra, small).unwrap();
    scene.add_child(root, extra).unwrap();
    assert_all_queries_equal_plain(&scene, root, 0x6d06, |_| {});
    assert_eq!(refits(&scene), 8, "restructured and refitted, not rebuilt");
    let detached = ["flat", "small", "small", "small", "tilted"];
    assert_eq!(detached_names(&scene, root), detached);
    scene.rebuild_acceleration();
    assert_eq!(refits(&scene), 0, "rebuilt");
    assert_eq!(detached_names(&scene, root), Vec::<String>::new());
    assert_all_queries_equal_plain(&scene, root, 0x6d07, |_| {});
    // A geometry asked of a drawable of another kind: an error, and the index neither
    // dropped (a rebuild counts no refit) nor parked (its next use would refit it).
    struct Custom;
    impl Drawable for Custom {
        fn accept(&self, f: &mut dyn PrimitiveFunctor) {
            f.triangle([Vec3::ZERO, Vec3::X, Vec3::Z], [0, 1, 2], 0);
        }
    }
    let custom = scene.add_drawable("custom", Custom);
    scene.add_drawable_to_geode(extra, custom).unwrap();
    scene.set_matrix(moving, DMat4::IDENTITY).unwrap();
    assert_eq!(
        refits(&scene),
        2,
        "restructured after the geode changed, then moved"
    );
    assert_eq!(detached_names(&scene, root), ["custom", "tilted"]);
    scene.set_matrix(moving, m).unwrap();
    assert_eq!(refits(&scene), 3);
    assert!(scene.geometry_mut(custom).is_err());
    assert_eq!(refits(&scene), 3, "neither rebuilt nor refitted");
    assert_all_queries_equal_plain(&scene, root, 0x6d07, |_| {});
}

/// An edited geometry's own tree is refitted at its next use, whichever way the edit
/// came (`geometry_mut`, `edit_geometry`, `edit_drawable`), so it keeps its primitives'
/// order, which a rebuild of the squashed grid changes; it is rebuilt when the
/// edit changed the primitive sets, or left a vertex that is not finite.
#[test]
fn edited_geometries_keep_their_tree_refitted_unless_their_primitives_changed() {
    let (mut scene, root, _, _) = scene();
    scene.build_acceleration();
    let tilted = drawable_named(&scene, "tilted");
    // The grid's half below x = 0 squashed and the other stretched: a rebuild splits it
    // elsewhere.
    let squash = |vertices: &mut [Vec3]| {
        for v in vertices {
            v.x *= if v.x < 0.0 { 0.25 } else { 2.0 };
            v.y += 0.5;
        }
    };
    let before = stored_order(&scene, tilted);
    assert_eq!(before.len(), 1800);
    scene.geometry_mut(tilted).unwrap().vertices_mut()[7].z += 0.25;
    assert_eq!(
        stored_order(&scene, tilted),
        before,
        "a vertex moved: refitted"
    );
    squash(scene.geometry_mut(tilted).unwrap().vertices_mut());
    assert_ne!(
        rebuilt_order(&scene, tilted),
        before,
        "a rebuild orders it otherwise"
    );
    assert_eq!(stored_order(&scene, tilted), before, "squashed: refitted");
    assert_all_queries_equal_plain(&scene, root, 0xb701, |_| {});
    scene
        .edit_geometry(tilted, |g| squash(g.vertices_mut()))
        .unwrap();
    squash(scene.geometry_mut(tilted).unwrap().vertices_mut());
    assert_eq!(
        stored_order(&scene, tilted),
        before,
        "twice more, before any query"
    );
    assert_all_queries_equal_plain(&scene, root, 0xb702, |_| {});
    scene
        .edit_drawable(tilted, |d| {
            squash(d.as_geometry_mut().unwrap().vertices_mut())
        })
        .unwrap();
    assert_eq!(
        stored_order(&scene, tilted),
        before,
        "through edit_drawable"
    );
    // Its one primitive set taken out and put back: the same primitives, but the
    // geometry cannot tell, so the tree is rebuilt (in the squashed grid's order).
    let g = scene.geometry_mut(tilted).unwrap();
    let set = g.remove_primitive_set(0).unwrap();
    g.add_primitive_set(set).unwrap();
    assert_eq!(
        stored_order(&scene, tilted),
        rebuilt_order(&scene, tilted),
        "rebuilt"
    );
    assert_ne!(stored_order(&scene, tilted), before);
    assert_all_queries_equal_plain(&scene, root, 0xb703, |_| {});
    // A vertex made NaN: its triangles leave the rebuilt tree, as they leave the plain
    // traversal (a refit would have kept them).
    scene.geometry_mut(tilted).unwrap().vertices_mut()[31 * 15 + 15].y = f32::NAN;
    assert_eq!(stored_order(&scene, tilted).len(), 1800 - 6);
    assert_all_queries_equal_plain(&scene, root, 0xb704, |_| {});
}

/// Drawables the world tree keeps whole (a mesh shared by two instances, quad strips)
/// stay there when an edit leaves them inside the box the tree holds for them, near the
/// world origin and in a georeferenced scene (a tree measured from the scene's centre);
/// out of it, they are detached. Every query answers as the plain traversal's.
#[test]
fn whole_items_edited_inside_their_boxes_stay_in_the_world_tree() {
    for origin in [DVec3::ZERO, DVec3::new(4.0e6, 12.5, -3.0e6)] {
        let (mut scene, inner, _, _) = scene();
        let root = scene
            .add_transform("georeference", DMat4::from_translation(origin))
            .unwrap();
        scene.add_child(root, inner).unwrap();
        scene.build_acceleration();
        let check = |scene: &SceneGraph, seed: u64| {
            assert_all_queries_equal_plain_around(scene, root, seed, origin, |_| {});
        };
        let (small, quads) = (
            drawable_named(&scene, "small"),
            drawable_named(&scene, "quads"),
        );
        // The shared mesh shrunk towards its middle; the quads narrowed and their
        // vertices listed backwards: both inside their old boxes.
        scene
            .edit_geometry(small, |g| {
                g.vertices_mut().iter_mut().for_each(|v| *v *= 0.5);
            })
            .unwrap();
        scene
            .edit_vertices(quads, |vertices| {
                vertices.iter_mut().for_each(|v| v.z *= 0.25);
                vertices.reverse();
            })
            .unwrap();
        assert!(detached_names(&scene, root).is_empty(), "at {origin}");
        check(&scene, 0x3e01);
        // Back to where they were, and edited many times over (no limit on the edits:
        // nothing is packed): still in place.
        for _ in 0..12 {
            scene
                .edit_vertices(small, |vertices| {
                    vertices.iter_mut().for_each(|v| *v *= 2.0)
                })
                .unwrap();
            scene
                .edit_vertices(small, |vertices| {
                    vertices.iter_mut().for_each(|v| *v *= 0.5)
                })
                .unwrap();
        }
        scene
            .edit_vertices(small, |vertices| {
                vertices.iter_mut().for_each(|v| *v *= 2.0)
            })
            .unwrap();
        assert!(detached_names(&scene, root).is_empty(), "at {origin}");
        check(&scene, 0x3e02);
        // Past the box (a hundredth of a unit near the origin; two units 5·10^6 away,
        // where world boxes are `f32`, good to half a unit): both instances of the
        // shared mesh leave.
        let past = if origin == DVec3::ZERO { 0.01 } else { 2.0 };
        scene
            .edit_vertices(small, |vertices| vertices[0].x -= past)
            .unwrap();
        assert_eq!(
            detached_names(&scene, root),
            ["small", "small"],
            "at {origin}"
        );
        check(&scene, 0x3e03);
        // Its first corner lifted 3 units: a segment through the lifted part only, 2
        // units above the box the tree held, hits it (the plain traversal's hits).
        scene
            .edit_vertices(small, |vertices| vertices[0].y += 3.0)
            .unwrap();
        let (a, b) = (
            origin + DVec3::new(-2.0, 5.0, 2.05),
            origin + DVec3::new(8.0, 5.0, 2.05),
        );
        let hits = assert_equal_plain("through the lifted corner", |accelerated, limit| {
            let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(accelerated);
            run(&mut visitor, &scene, root, &mut i);
            i.take_intersections()
        });
        assert_eq!(hits, 1, "at {origin}");
        let index = scene.scene_index(root).unwrap();
        assert_eq!(index.refit_count(), 29, "the same index throughout");
    }
}

#[test]
fn georeferenced_scenes_are_measured_from_their_centre_and_answer_exactly() {
    // The test scene placed 4·10^6 units east and 3·10^6 south, as a georeferenced city
    // is, by a transform above its root.
    let (mut scene, root, _, _) = scene();
    let origin = DVec3::new(4.0e6, 12.5, -3.0e6);
    let placed = scene
        .add_transform("georeference", DMat4::from_translation(origin))
        .unwrap();
    scene.add_child(placed, root).unwrap();
    scene.build_acceleration();
    // The world tree's `f32` coordinates are measured from the scene's centre, not from
    // the world origin (where `f32` is good to a quarter unit only).
    let index = scene.scene_index(placed).unwrap();
    let centre = index.world().frame().origin();
    assert!(
        (centre - origin).abs().max_element() < 30.0,
        "frame origin {centre} should lie inside the scene near {origin}"
    );
    assert!(index.world().bounds().max.abs().max_element() < 100.0);
    let hits = assert_all_queries_equal_plain_around(&scene, placed, 0x6e0, origin, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    // A hand-computed pick, as in the scene near the origin: the quads 2 units up.
    let pick = |from: DVec3, to: DVec3| {
        let mut i = LineSegmentIntersector::new(origin + from, origin + to)
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
        run(&mut IntersectionVisitor::new(), &scene, placed, &mut i);
        i.take_intersections()
    };
    let hits = pick(DVec3::new(0.3, 5.0, 0.6), DVec3::new(0.3, -5.0, 0.6));
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].ratio, 0.3);
    assert_eq!(hits[0].world_point, origin + DVec3::new(0.3, 2.0, 0.6));
    // Beside the scene by half a unit: nothing (at 4·10^6 a world `f32` box could not
    // tell these apart).
    assert!(pick(DVec3::new(40.5, 5.0, 0.0), DVec3::new(40.5, -5.0, 0.0)).is_empty());
}

/// The whole scene moved by translations (a floating origin re-centred, a model dragged
/// as a whole): the world tree moves with it, nothing is detached, and every query
/// answers as the plain traversal, near the origin, 4·10^6 units out and back; an
/// uneven scale of the whole scene, or a move of one part, detaches what it moves as
/// before.
#[test]
fn moving_the_whole_scene_by_a_translation_moves_the_world_tree() {
    let (mut scene, root, moving, _) = scene();
    let top = scene
        .add_transform("floating origin", DMat4::IDENTITY)
        .unwrap();
    scene.add_child(top, root).unwrap();
    scene.build_acceleration();
    let origin_at_build = scene.scene_index(top).unwrap().world().frame().origin();
    let shifts = [
        DVec3::new(7.5, -0.25, 3.0),
        DVec3::new(4.0e6, 12.5, -3.0e6),
        DVec3::new(4.0e6 + 0.5, 12.5, -3.0e6 + 1.0),
        DVec3::new(-0.125, 0.0, 0.0625),
    ];
    for (step, shift) in shifts.into_iter().enumerate() {
        scene
            .set_matrix(top, DMat4::from_translation(shift))
            .unwrap();
        let index = scene.scene_index(top).unwrap();
        assert_eq!(index.refit_count(), step as u64 + 1, "the same index");
        assert!(index.detached().is_empty(), "move {step}: nothing detached");
        let moved_by = index.world().frame().origin() - origin_at_build;
        assert!(
            (moved_by - shift).abs().max_element() <= 1e-9 * shift.abs().max_element(),
            "move {step}: the frame moved by {moved_by}, the scene by {shift}"
        );
        let hits =
            assert_all_queries_equal_plain_around(&scene, top, 0x5f1 + step as u64, shift, |_| {});
        assert!(hits > 500, "move {step}: the queries must hit: {hits}");
        // Intersectors that visit whole drawables get them from the refitted tree over
        // the instances.
        let (a, b) = (
            shift + DVec3::new(-18.0, 4.0, -17.0),
            shift + DVec3::new(18.0, -3.0, 16.0),
        );
        let mut whole = WholeVisits::new(LineSegmentIntersector::new(a, b).unwrap());
        run(&mut IntersectionVisitor::new(), &scene, top, &mut whole);
        let mut plain = LineSegmentIntersector::new(a, b).unwrap();
        run(&mut plain_visitor(), &scene, top, &mut plain);
        assert!(!plain.intersections().is_empty());
        assert_eq!(
            whole.inner.intersections(),
            plain.intersections(),
            "move {step}"
        );
    }
    // A pick by hand, back near the origin: the quads 2 units up.
    let last = shifts[3];
    let mut pick = LineSegmentIntersector::new(
        last + DVec3::new(0.3, 5.0, 0.6),
        last + DVec3::new(0.3, -5.0, 0.6),
    )
    .unwrap()
    .with_limit(IntersectionLimit::Nearest);
    run(&mut IntersectionVisitor::new(), &scene, top, &mut pick);
    assert_eq!(pick.intersections()[0].ratio, 0.3);
    assert_eq!(
        pick.intersections()[0].world_point,
        last + DVec3::new(0.3, 2.0, 0.6)
    );
    // One part moved: it alone is detached.
    scene
        .set_matrix(moving, DMat4::from_translation(DVec3::new(1.0, 0.5, -2.0)))
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x5f9, last, |_| {});
    // The whole scene moved again: the tree moves, the part stays detached and moves
    // with the scene.
    let shift = DVec3::new(250.0, 0.0, 0.0);
    scene
        .set_matrix(top, DMat4::from_translation(shift))
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x5fa, shift, |_| {});
    // An uneven scale of the whole scene is neither a translation nor a similarity:
    // every instance is detached.
    scene
        .set_matrix(
            top,
            DMat4::from_scale_rotation_translation(
                DVec3::new(1.0, 1.5, 1.0),
                DQuat::from_rotation_y(0.5),
                shift,
            ),
        )
        .unwrap();
    let index = scene.scene_index(top).unwrap();
    assert_eq!(index.detached().len(), index.instances().len());
    assert_all_queries_equal_plain_around(&scene, top, 0x5fb, shift, |_| {});
}

/// The whole scene turned and scaled uniformly (a model turned in a viewer, a scene
/// scaled to other units), mirrored, 4·10^6 units out and back, and orbited in a
/// thousand small turns composed one on the other: the world tree's frame turns and
/// scales with it, nothing is detached, and every query answers as the plain traversal.
/// Then a move of one part detaches it alone, an edit of a placed mesh keeps it while
/// its triangles stay in their leaves' boxes (and of a whole item, while it stays in
/// its box), and an uneven scale detaches everything.
#[test]
fn turning_and_scaling_the_whole_scene_turns_the_world_tree() {
    let (mut scene, root, moving, _) = scene();
    let top = scene.add_transform("model", DMat4::IDENTITY).unwrap();
    scene.add_child(top, root).unwrap();
    scene.build_acceleration();
    let axis = DVec3::new(1.0, 2.0, -0.5).normalize();
    let mirror = DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0));
    let motions = [
        DMat4::from_rotation_y(0.5),
        DMat4::from_scale_rotation_translation(
            DVec3::splat(2.5),
            DQuat::from_axis_angle(axis, 2.0),
            DVec3::new(7.5, -0.25, 3.0),
        ),
        DMat4::from_scale_rotation_translation(
            DVec3::splat(0.75),
            DQuat::from_rotation_x(-1.2),
            DVec3::new(4.0e6, 12.5, -3.0e6),
        ),
        DMat4::from_translation(DVec3::new(-3.0, 1.0, 2.0)) * mirror,
        DMat4::from_scale_rotation_translation(
            DVec3::splat(1.25),
            DQuat::from_rotation_z(0.3),
            DVec3::new(-0.125, 0.0, 0.0625),
        ),
    ];
    for (step, motion) in motions.into_iter().enumerate() {
        scene.set_matrix(top, motion).unwrap();
        let index = scene.scene_index(top).unwrap();
        assert_eq!(index.refit_count(), step as u64 + 1, "the same index");
        assert!(index.detached().is_empty(), "move {step}: nothing detached");
        assert!(index.world().frame().is_turned(), "move {step}");
        let at = motion.w_axis.truncate();
        let hits =
            assert_all_queries_equal_plain_around(&scene, top, 0x7a1 + step as u64, at, |_| {});
        assert!(hits > 500, "move {step}: the queries must hit: {hits}");
    }
    // A pick by hand under an exact quarter turn, doubled, 10 units along x: the quads'
    // point (0.3, 2, 0.6) is at (10 + 2·0.6, 2·2, −2·0.3) = (11.2, 4, −0.6).
    let quarter = DMat4::from_cols(
        DVec4::new(0.0, 0.0, -2.0, 0.0),
        DVec4::new(0.0, 2.0, 0.0, 0.0),
        DVec4::new(2.0, 0.0, 0.0, 0.0),
        DVec4::new(10.0, 0.0, 0.0, 1.0),
    );
    scene.set_matrix(top, quarter).unwrap();
    assert!(detached_names(&scene, top).is_empty());
    let mut pick =
        LineSegmentIntersector::new(DVec3::new(11.2, 10.0, -0.6), DVec3::new(11.2, -10.0, -0.6))
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
    run(&mut IntersectionVisitor::new(), &scene, top, &mut pick);
    assert_eq!(pick.intersections().len(), 1);
    assert!((pick.intersections()[0].ratio - 0.3).abs() < 1e-12);
    let point = pick.intersections()[0].world_point;
    assert!(
        (point - DVec3::new(11.2, 4.0, -0.6)).length() < 1e-12,
        "{point}"
    );
    // An orbit about a point, each step a small turn composed on the last matrix, as a
    // viewer's trackball does: measured against the build, the rounding of a thousand
    // steps does not add up to a detachment.
    let pivot = DVec3::new(2.0, 0.0, -1.0);
    let step_turn = DMat4::from_translation(pivot)
        * DMat4::from_axis_angle(axis, 0.0061)
        * DMat4::from_translation(-pivot);
    let mut matrix = quarter;
    for step in 1..=1000 {
        matrix = step_turn * matrix;
        scene.set_matrix(top, matrix).unwrap();
        if step % 250 == 0 {
            assert!(detached_names(&scene, top).is_empty(), "orbit step {step}");
            let at = matrix.w_axis.truncate();
            assert_all_queries_equal_plain_around(&scene, top, 0x7b0 + step, at, |_| {});
        }
    }
    let at = matrix.w_axis.truncate();
    // One part moved: it alone is detached.
    let tilted = scene.node(moving).unwrap().transform().unwrap().matrix;
    scene
        .set_matrix(
            moving,
            DMat4::from_translation(DVec3::new(1.0, 0.5, -2.0)) * tilted,
        )
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    // A placed mesh edited in the turned frame: a vertex moved within its triangles'
    // leaf boxes keeps it there, its records packed anew in the frame; a vertex lifted
    // a unit above the grid detaches it.
    let flat = (scene.drawables())
        .find(|(id, _)| scene.drawable_name(*id) == Some("flat"))
        .unwrap()
        .0;
    scene
        .edit_vertices(flat, |vertices| vertices[100].y = 0.25 - vertices[100].y)
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x7c0, at, |_| {});
    // Turned again, the records packed anew in the last frame hold in the next.
    matrix = DMat4::from_rotation_z(-0.2) * matrix;
    scene.set_matrix(top, matrix).unwrap();
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    let at = matrix.w_axis.truncate();
    assert_all_queries_equal_plain_around(&scene, top, 0x7c5, at, |_| {});
    scene
        .edit_vertices(flat, |vertices| vertices[100].y += 1.0)
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["flat", "tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x7c1, at, |_| {});
    // A whole item (the quads) edited within the box the turned tree holds for it stays
    // there; lifted out of it, it is detached.
    let quads = (scene.drawables())
        .find(|(id, _)| scene.drawable_name(*id) == Some("quads"))
        .unwrap()
        .0;
    scene
        .edit_vertices(quads, |vertices| vertices[40].z = 0.0)
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["flat", "tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x7c4, at, |_| {});
    scene
        .edit_vertices(quads, |vertices| vertices[40].y = 1.0)
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["flat", "quads", "tilted"]);
    // The whole scene turned again: the tree turns, the two stay detached.
    scene
        .set_matrix(top, DMat4::from_rotation_x(0.25) * matrix)
        .unwrap();
    assert_eq!(detached_names(&scene, top), ["flat", "quads", "tilted"]);
    assert_all_queries_equal_plain_around(&scene, top, 0x7c2, at, |_| {});
    // An uneven scale is no similarity: every instance is detached.
    scene
        .set_matrix(top, DMat4::from_scale(DVec3::new(1.0, 1.0, 1.01)) * matrix)
        .unwrap();
    let index = scene.scene_index(top).unwrap();
    assert_eq!(index.detached().len(), index.instances().len());
    assert_all_queries_equal_plain_around(&scene, top, 0x7c3, at, |_| {});
}

/// A scene placed at a heading (its root turned off the world's axes and scaled, as a
/// georeferenced model is) is measured along its own axes: the world tree's boxes are
/// those of the scene unturned, and every query answers as the plain traversal. A
/// quarter turn keeps the world's axes, along which boxes hug the scene as well.
#[test]
fn a_scene_placed_at_a_heading_is_measured_along_its_own_axes() {
    let bounds_under = |top_matrix: DMat4| {
        let (mut scene, root, _, _) = scene();
        let top = scene.add_transform("model", top_matrix).unwrap();
        scene.add_child(top, root).unwrap();
        scene.build_acceleration();
        let world = scene.scene_index(top).unwrap().world();
        let (turned, bounds) = (world.frame().is_turned(), world.bounds());
        (scene, top, turned, bounds)
    };
    let (_, _, turned, unturned) = bounds_under(DMat4::IDENTITY);
    assert!(!turned);
    let heading = DMat4::from_scale_rotation_translation(
        DVec3::splat(1.5),
        DQuat::from_rotation_y(0.3),
        DVec3::new(40.0, 2.0, -15.0),
    );
    let (scene, top, turned, bounds) = bounds_under(heading);
    assert!(turned);
    // The tree's unit is 1.5 world units along the scene's own axes, from the world's
    // origin: its coordinates are the scene's own, up to the move (40, 2, −15) taken
    // back, turned and scaled.
    let offset = DMat4::from_scale_rotation_translation(
        DVec3::splat(1.0 / 1.5),
        DQuat::from_rotation_y(-0.3),
        DVec3::ZERO,
    )
    .transform_point3(DVec3::new(40.0, 2.0, -15.0));
    let (min, max) = bounds.as_dvec3();
    let (umin, umax) = unturned.as_dvec3();
    assert!(
        (min - offset - umin).abs().max_element() < 1e-4,
        "{min} vs {umin}"
    );
    assert!(
        (max - offset - umax).abs().max_element() < 1e-4,
        "{max} vs {umax}"
    );
    let at = DVec3::new(40.0, 2.0, -15.0);
    let hits = assert_all_queries_equal_plain_around(&scene, top, 0x7f1, at, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    let quarter = DMat4::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let (_, _, turned, _) = bounds_under(quarter);
    assert!(!turned);
}

/// The test scene under a transform "model", with a ground under an absolute transform
/// beside the rest (it stays where it is when the model moves). Returns the scene and
/// the model's transform.
fn scene_with_a_pinned_ground() -> (SceneGraph, NodeId) {
    let (mut scene, root, _, _) = scene();
    let top = scene.add_transform("model", DMat4::IDENTITY).unwrap();
    scene.add_child(top, root).unwrap();
    add_pinned_ground(&mut scene, root, 10);
    (scene, top)
}

/// Adds under `root` a ground of `cells`² cells, a unit below, under an absolute
/// transform: it stays where it is when the rest of the scene moves.
fn add_pinned_ground(scene: &mut SceneGraph, root: NodeId, cells: u32) {
    let pinned = scene
        .add_transform(
            "pinned",
            DMat4::from_translation(DVec3::new(0.0, -1.0, 0.0)),
        )
        .unwrap();
    scene
        .set_reference_frame(pinned, ReferenceFrame::Absolute)
        .unwrap();
    let ground = scene.add_drawable("ground", grid(cells, 20.0));
    let geode = scene.add_geode("ground-geode");
    scene.add_drawable_to_geode(geode, ground).unwrap();
    scene.add_child(pinned, geode).unwrap();
    scene.add_child(root, pinned).unwrap();
}

/// A part under an absolute transform stays where it is when the rest of the scene
/// turns: it alone is detached, and the world tree turns with the rest, through
/// further turns and moves; every query answers as the plain traversal.
#[test]
fn a_part_that_stays_put_when_the_whole_scene_turns_is_detached_alone() {
    let (mut scene, top) = scene_with_a_pinned_ground();
    scene.build_acceleration();
    let attached = |scene: &SceneGraph| {
        let index = scene.scene_index(top).unwrap();
        index.instances().len() - index.detached().len()
    };
    let before = attached(&scene);
    let turn = DMat4::from_scale_rotation_translation(
        DVec3::splat(1.5),
        DQuat::from_rotation_y(0.7),
        DVec3::new(1.0, 0.0, 2.0),
    );
    let moves = [
        turn,
        // A translation after the turn, then a second turn with a mirror.
        DMat4::from_translation(DVec3::new(-3.0, 0.5, 1.0)) * turn,
        DMat4::from_scale(DVec3::new(-0.5, 0.5, 0.5)) * DMat4::from_rotation_x(0.2) * turn,
    ];
    for (k, matrix) in moves.into_iter().enumerate() {
        scene.set_matrix(top, matrix).unwrap();
        assert!(scene.scene_index(top).unwrap().world().frame().is_turned());
        assert_eq!(detached_names(&scene, top), ["ground"], "move {k}");
        assert_eq!(attached(&scene), before - 1, "move {k}");
        let hits = assert_all_queries_equal_plain_around(
            &scene,
            top,
            0x7d1 + k as u64,
            DVec3::ZERO,
            |_| {},
        );
        assert!(hits > 500, "the queries must hit: {hits}");
    }
    // An uneven scale is no similarity: everything below the moved node is detached.
    scene
        .set_matrix(top, DMat4::from_scale(DVec3::new(1.0, 2.0, 1.0)))
        .unwrap();
    let index = scene.scene_index(top).unwrap();
    assert_eq!(index.detached().len(), index.instances().len());
    let hits = assert_all_queries_equal_plain_around(&scene, top, 0x7d9, DVec3::ZERO, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
}

/// The same for a translation of the whole scene, which the ground does not follow
/// either: it alone is detached.
#[test]
fn a_part_that_stays_put_when_the_whole_scene_moves_is_detached_alone() {
    let (mut scene, top) = scene_with_a_pinned_ground();
    scene.build_acceleration();
    for (k, x) in [4.0, -7.5].into_iter().enumerate() {
        let shift = DVec3::new(x, 0.25, 2.0);
        scene
            .set_matrix(top, DMat4::from_translation(shift))
            .unwrap();
        assert_eq!(detached_names(&scene, top), ["ground"], "move {k}");
        let hits =
            assert_all_queries_equal_plain_around(&scene, top, 0x7e1 + k as u64, shift, |_| {});
        assert!(hits > 500, "the queries must hit: {hits}");
    }
}

/// Side of the square of tiles of [`tiles_scene`]: 9 216 instances, in runs on the
/// machine's cores when the whole scene moves.
const TILES_SIDE: usize = 96;

/// A model transform over a square of [`TILES_SIDE`]² small tiles (one shared mesh,
/// each tile under its own transform, turned a little more than the one before), and,
/// when `pinned`, a ground under an absolute transform among the last instances (so in
/// the last run). Returns the scene, the model and the tiles with their matrices.
fn tiles_scene(pinned: bool) -> (SceneGraph, NodeId, Vec<(NodeId, DMat4)>) {
    let mut scene = SceneGraph::new();
    let top = scene.add_transform("model", DMat4::IDENTITY).unwrap();
    let root = scene.add_group("root");
    scene.add_child(top, root).unwrap();
    let tile = scene.add_drawable("tile", grid(1, 0.2));
    let geode = scene.add_geode("tile-geode");
    scene.add_drawable_to_geode(geode, tile).unwrap();
    let mut tiles = Vec::new();
    for j in 0..TILES_SIDE {
        for i in 0..TILES_SIDE {
            let at = DVec3::new(
                i as f64 * 0.5 - 24.0,
                0.1 * (i % 3) as f64,
                j as f64 * 0.5 - 24.0,
            );
            let matrix = DMat4::from_translation(at) * DMat4::from_rotation_y((i + j) as f64 * 0.1);
            let t = scene
                .add_transform(format!("tile_{i}_{j}"), matrix)
                .unwrap();
            scene.add_child(t, geode).unwrap();
            scene.add_child(root, t).unwrap();
            tiles.push((t, matrix));
        }
    }
    if pinned {
        add_pinned_ground(&mut scene, root, 4);
    }
    scene.build_acceleration();
    (scene, top, tiles)
}

/// Moves the model of a [`tiles_scene`] by each of `moves`, checking after each that
/// the index is the same one, which instances are detached, whether the world tree
/// turned, that every tile has its own path's frame, bit for bit (the model's matrix
/// times the tile's: the root is a group, and the product by the identity above the
/// model is exact), and that segments along the rows and boxes over them answer as
/// the plain traversal.
fn assert_tiles_follow(pinned: bool, moves: &[(DMat4, bool)]) {
    let (mut scene, top, tiles) = tiles_scene(pinned);
    let expected_detached: &[&str] = if pinned { &["ground"] } else { &[] };
    for (step, &(model, turned)) in moves.iter().enumerate() {
        scene.set_matrix(top, model).unwrap();
        let index = scene.scene_index(top).unwrap();
        assert_eq!(
            index.refit_count(),
            step as u64 + 1,
            "move {step}: the same index"
        );
        assert_eq!(
            detached_names(&scene, top),
            expected_detached,
            "move {step}"
        );
        assert_eq!(index.world().frame().is_turned(), turned, "move {step}");
        let frames: std::collections::HashMap<NodeId, DMat4> = (index.instances().iter())
            .filter(|i| scene.drawable_name(i.drawable) == Some("tile"))
            .map(|i| (i.path[2], i.local_to_world))
            .collect();
        assert_eq!(frames.len(), TILES_SIDE * TILES_SIDE);
        for (t, matrix) in &tiles {
            let name = scene.node(*t).unwrap().name();
            assert_eq!(frames[t], model * *matrix, "move {step}, {name}");
        }
        let visitor = |accelerated: bool| {
            let mut v = IntersectionVisitor::new();
            v.set_use_acceleration(accelerated);
            v
        };
        let mut hits = 0;
        for k in 0..6 {
            let z = -24.0 + 9.5 * k as f64;
            let (a, b) = (
                model.transform_point3(DVec3::new(-30.0, 0.02, z)),
                model.transform_point3(DVec3::new(30.0, 0.02, z + 0.3)),
            );
            let what = format!("move {step}: segment {a} -> {b}");
            hits += assert_equal_plain(&what, |accelerated, limit| {
                let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
                run(&mut visitor(accelerated), &scene, top, &mut i);
                i.take_intersections()
            });
            let c = model.transform_point3(DVec3::new(z, 0.0, 20.0 - 7.0 * k as f64));
            let half = DVec3::new(2.0, 1.0, 3.0);
            hits +=
                assert_equal_plain(&format!("move {step}: box at {c}"), |accelerated, limit| {
                    let p = Polytope::from_oriented_box(c, half, DQuat::IDENTITY).unwrap();
                    let mut i = PolytopeIntersector::new(p).with_limit(limit);
                    run(&mut visitor(accelerated), &scene, top, &mut i);
                    i.take_intersections()
                });
        }
        assert!(hits > 300, "move {step}: the queries must hit: {hits}");
    }
}

/// A whole-scene move of a scene of thousands of instances, whose frames are computed
/// in runs on the machine's cores: a translation moves the world tree's origin, turns
/// turn it, every tile gets its own frame, and nothing is detached.
#[test]
fn a_whole_scene_move_of_thousands_of_instances_gives_each_its_own_frame() {
    let turn = DMat4::from_scale_rotation_translation(
        DVec3::splat(1.25),
        DQuat::from_rotation_y(0.4),
        DVec3::new(3.0, 0.5, -2.0),
    );
    assert_tiles_follow(
        false,
        &[
            (DMat4::from_translation(DVec3::new(2.5, -0.5, 1.0)), false),
            (DMat4::from_translation(DVec3::new(-4.0, 1.5, 0.5)), false),
            (turn, true),
            (
                DMat4::from_translation(DVec3::new(-1.0, 0.0, 0.5)) * turn,
                true,
            ),
        ],
    );
}

/// The same with a part that stays put (the ground under an absolute transform, in the
/// last run of instances): it alone is detached, by a translation (which the world
/// tree then follows as a turn does, the part refusing the shift of its origin) as by
/// a turn.
#[test]
fn a_part_that_stays_put_among_thousands_of_instances_is_detached_alone() {
    let turn = DMat4::from_scale_rotation_translation(
        DVec3::splat(0.75),
        DQuat::from_rotation_y(-1.1),
        DVec3::new(3.0, 0.5, -2.0),
    );
    // From the build: a translation, which the part refuses to shift_under; a turn,
    // which every other instance refuses to it.
    assert_tiles_follow(
        true,
        &[(DMat4::from_translation(DVec3::new(1.5, 0.0, -0.5)), true)],
    );
    assert_tiles_follow(
        true,
        &[
            (turn, true),
            (
                DMat4::from_translation(DVec3::new(-1.0, 0.0, 0.5)) * turn,
                true,
            ),
        ],
    );
}

/// A drawable with nothing to hit when the index is built (no finite vertex, no
/// primitive set) is hit once an edit gives it something, whichever way the edit
/// comes: its instances were collected with an empty box, out of the world tree, and
/// the edit detaches them. (The `edits` fuzzer's `points-first-finite-after-an-edit`:
/// two points, each with a NaN coordinate, one moved to a grid point through
/// `geometry_mut`; the index held no instance of them, and the accelerated
/// traversals missed the point the plain one hit.)
#[test]
fn drawables_with_nothing_to_hit_at_the_build_are_hit_after_an_edit_gives_them_some() {
    let (mut scene, root, _, _) = scene();
    let nan = Vec3::new(0.5, f32::NAN, 0.5);
    let points = Geometry::new(vec![nan, nan, nan])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 3))
        .unwrap();
    let triangles = Geometry::new(vec![nan, nan, nan])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
        .unwrap();
    let bare = Geometry::new(vec![
        Vec3::new(-3.0, 1.0, -3.0),
        Vec3::new(3.0, 1.0, -3.0),
        Vec3::new(0.0, 1.0, 3.0),
    ]);
    let mut added = Vec::new();
    for (name, geometry, shared) in [
        ("points", points, true),
        ("triangle", triangles, false),
        ("bare", bare, false),
    ] {
        let d = scene.add_drawable(name, geometry);
        let geode = scene.add_geode(format!("{name}-geode"));
        scene.add_drawable_to_geode(geode, d).unwrap();
        scene.add_child(root, geode).unwrap();
        if shared {
            let turned = scene
                .add_transform(format!("{name}-turned"), DMat4::from_rotation_y(0.5))
                .unwrap();
            scene.add_child(turned, geode).unwrap();
            scene.add_child(root, turned).unwrap();
        }
        added.push(d);
    }
    scene.build_acceleration();
    let hits_of = |scene: &SceneGraph, d: DrawableId| {
        let mut hits = 0;
        for accelerated in [false, true] {
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(accelerated);
            let mut ball = SphereIntersector::new(DVec3::new(0.0, 1.0, 0.0), 4.0).unwrap();
            visitor.apply(scene, root, &mut ball).unwrap();
            let found = (ball.intersections().iter())
                .filter(|h| h.drawable == d)
                .count();
            if accelerated {
                assert_eq!(found, hits, "{:?}", scene.drawable_name(d));
            }
            hits = found;
        }
        hits
    };
    for &d in &added {
        assert_eq!(hits_of(&scene, d), 0);
    }
    // Each made hittable its own way: in place through `geometry_mut` (refitted at the
    // next use), through `edit_geometry`, and given a primitive set.
    let finite = [
        Vec3::new(0.5, 1.0, 0.5),
        Vec3::new(-0.5, 1.0, 0.5),
        Vec3::new(0.0, 1.0, -0.5),
    ];
    scene
        .geometry_mut(added[0])
        .unwrap()
        .vertices_mut()
        .copy_from_slice(&finite);
    scene
        .edit_geometry(added[1], |g| g.vertices_mut().copy_from_slice(&finite))
        .unwrap();
    scene
        .edit_geometry(added[2], |g| {
            g.add_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
        })
        .unwrap()
        .unwrap();
    assert_eq!(hits_of(&scene, added[0]), 6, "three points under two paths");
    assert_eq!(hits_of(&scene, added[1]), 1);
    assert_eq!(hits_of(&scene, added[2]), 1);
    assert_eq!(
        detached_names(&scene, root),
        ["bare", "points", "points", "triangle"]
    );
    let hits = assert_all_queries_equal_plain(&scene, root, 0x7f1, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
}

/// A node on every path but shared below two parents (off the path every instance
/// starts with) moved by a translation moves the world tree; a turn of the whole scene
/// after it, measured against the build, would miss that move: it detaches instead,
/// and every query answers as the plain traversal.
#[test]
fn a_turn_after_a_shared_node_moved_the_whole_scene_detaches() {
    let mut scene = SceneGraph::new();
    let top = scene.add_transform("model", DMat4::IDENTITY).unwrap();
    let root = scene.add_group("root");
    scene.add_child(top, root).unwrap();
    let shared = scene.add_transform("shared", DMat4::IDENTITY).unwrap();
    let geode = scene.add_geode("grid-geode");
    let grid = scene.add_drawable("grid", grid(20, 6.0));
    scene.add_drawable_to_geode(geode, grid).unwrap();
    scene.add_child(shared, geode).unwrap();
    for (name, x) in [("left", -8.0), ("right", 8.0)] {
        let side = scene
            .add_transform(name, DMat4::from_translation(DVec3::new(x, 0.0, 0.0)))
            .unwrap();
        scene.add_child(side, shared).unwrap();
        scene.add_child(root, side).unwrap();
    }
    scene.build_acceleration();
    let lift = DMat4::from_translation(DVec3::new(0.0, 3.0, 1.0));
    scene.set_matrix(shared, lift).unwrap();
    assert!(
        detached_names(&scene, top).is_empty(),
        "a translation of both"
    );
    assert_all_queries_equal_plain_around(&scene, top, 0x7e1, DVec3::ZERO, |_| {});
    let turn = DMat4::from_rotation_y(0.8);
    scene.set_matrix(top, turn).unwrap();
    assert_eq!(detached_names(&scene, top), ["grid", "grid"]);
    let hits = assert_all_queries_equal_plain_around(&scene, top, 0x7e2, DVec3::ZERO, |_| {});
    assert!(hits > 200, "the queries must hit: {hits}");
}

#[test]
fn intersectors_that_do_not_walk_the_world_tree_get_whole_drawables() {
    let (scene, root, _, _) = scene();
    let (a, b) = (DVec3::new(-18.0, 4.0, -17.0), DVec3::new(18.0, -3.0, 16.0));
    let mut whole = WholeVisits::new(LineSegmentIntersector::new(a, b).unwrap());
    run(&mut IntersectionVisitor::new(), &scene, root, &mut whole);
    // The placed grids too were visited whole, once each.
    let flat = scene
        .drawables()
        .find(|(id, _)| scene.drawable_name(*id) == Some("flat"))
        .unwrap()
        .0;
    assert_eq!(whole.visits.iter().filter(|&&d| d == flat).count(), 1);
    // Its answers are the world tree walk's answers.
    let mut walked = LineSegmentIntersector::new(a, b).unwrap();
    run(&mut IntersectionVisitor::new(), &scene, root, &mut walked);
    assert!(!walked.intersections().is_empty());
    assert_eq!(whole.inner.intersections(), walked.intersections());
}

/// The city's vehicle driven about, out of the city and back: intersectors that do not
/// walk the world tree get whole drawables from the tree over the instances, which the
/// moves leave as built (the vehicle's trail would stretch its boxes), and the vehicle's
/// from the tree of detached instances; they must find it wherever it is, and answer as
/// the plain traversal.
#[test]
fn intersectors_that_do_not_walk_the_world_tree_find_a_moved_vehicle() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb");
    let (mut scene, import) = scene_intersect::io::load_gltf(&path).unwrap();
    let (root, vehicle) = (import.root, scene.find_node("vehicle").unwrap());
    scene.build_acceleration();
    let vehicle_drawables: Vec<DrawableId> = (scene.scene_index(root).unwrap().instances())
        .iter()
        .filter(|i| i.path.contains(&vehicle))
        .map(|i| i.drawable)
        .collect();
    assert!(!vehicle_drawables.is_empty());
    let built = scene.scene_index(root).unwrap().bvh().clone();
    let mut rng = Rng(0x7e1);
    for (step, x) in [-175.0, -60.0, 40.0, 400.0, 2500.0, 90.0]
        .into_iter()
        .enumerate()
    {
        let at = DVec3::new(x, 0.0, -170.0);
        scene
            .set_matrix(
                vehicle,
                DMat4::from_translation(at) * DMat4::from_rotation_y(0.3 * step as f64),
            )
            .unwrap();
        // Straight down through the vehicle's roof, then across the city at random.
        let mut segments = vec![(at + DVec3::new(0.0, 10.0, 0.0), at - DVec3::Y)];
        segments.extend((0..8).map(|_| (rng.point(300.0), rng.point(300.0))));
        for (k, (a, b)) in segments.into_iter().enumerate() {
            let mut whole = WholeVisits::new(LineSegmentIntersector::new(a, b).unwrap());
            run(&mut IntersectionVisitor::new(), &scene, root, &mut whole);
            let mut plain = LineSegmentIntersector::new(a, b).unwrap();
            let mut visitor = IntersectionVisitor::new();
            visitor.set_use_acceleration(false);
            run(&mut visitor, &scene, root, &mut plain);
            assert_eq!(
                whole.inner.intersections(),
                plain.intersections(),
                "move {step}, segment {k}: {a} -> {b}"
            );
            if k == 0 {
                assert!(
                    plain.intersections()[0].node_path.contains(&vehicle),
                    "move {step}: the vehicle is hit first"
                );
                assert!(vehicle_drawables.iter().any(|d| whole.visits.contains(d)));
            }
        }
    }
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 6);
    assert_eq!(index.bvh(), &built);
}

/// Lamp posts (a drawable of lines only) standing on a grid: a segment without a
/// picking tolerance cannot hit a line, so whole visits skip the posts; with one, they
/// are visited and the post passed within it is hit.
#[test]
fn drawables_of_lines_only_are_skipped_unless_lines_can_be_hit() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let ground = scene.add_drawable("ground", grid(4, 10.0));
    let post_ends = [
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(1.0, 5.0, 1.0),
        Vec3::new(-3.0, 0.0, 2.0),
        Vec3::new(-3.0, 5.0, 2.0),
    ];
    let lines = PrimitiveSet::draw_arrays(PrimitiveMode::Lines, 0, 4);
    let posts = Geometry::new(post_ends.to_vec())
        .with_primitive_set(lines)
        .unwrap();
    assert!(!posts.emits_triangles());
    let posts = scene.add_drawable("posts", posts);
    for (name, drawable) in [("ground", ground), ("posts", posts)] {
        let geode = scene.add_geode(name);
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        scene.add_child(root, geode).unwrap();
    }
    // Level at y = 2, 0.1 beside the first post (z = 1.1) and 0.9 beside the second.
    let (a, b) = (DVec3::new(-9.0, 2.0, 1.1), DVec3::new(9.0, 2.0, 1.1));
    let visit = |tolerance: Option<f64>| {
        let mut inner = LineSegmentIntersector::new(a, b).unwrap();
        inner.set_picking_tolerance(tolerance).unwrap();
        let mut whole = WholeVisits::new(inner);
        run(&mut IntersectionVisitor::new(), &scene, root, &mut whole);
        whole
    };
    let without = visit(None);
    assert!(!without.visits.contains(&posts));
    assert!(without.inner.intersections().is_empty());
    let within = visit(Some(0.2));
    assert!(within.visits.contains(&posts));
    let hits = within.inner.intersections();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].drawable, posts);
    assert_eq!(hits[0].primitive_kind, PrimitiveKind::Line);
    assert_eq!(hits[0].primitive_index, 0);
}

#[test]
fn groups_of_queries_walk_the_world_tree_and_answer_as_one_by_one() {
    let (scene, root, _, _) = scene();
    let mut rng = Rng(5150);
    for _ in 0..20 {
        let (a, b) = (rng.point(25.0), rng.point(25.0));
        let c = rng.point(15.0);
        let box_at = Polytope::from_oriented_box(
            c,
            DVec3::new(2.0, 1.5, 4.0),
            DQuat::from_rotation_y(rng.next() * 6.0),
        )
        .unwrap();
        let radius = 0.5 + rng.next() * 4.0;
        let members: Vec<AnyIntersector> = vec![
            LineSegmentIntersector::new(a, b).unwrap().into(),
            LineSegmentIntersector::new(b, a)
                .unwrap()
                .with_limit(IntersectionLimit::Nearest)
                .into(),
            PolytopeIntersector::new(box_at)
                .with_limit(IntersectionLimit::OnePerDrawable)
                .into(),
            SphereIntersector::new(c, radius).unwrap().into(),
        ];
        // One by one, plain: the reference.
        let mut alone = members.clone();
        for m in &mut alone {
            run(&mut plain_visitor(), &scene, root, m);
        }
        // As a group (each member walks the tree in turn), and each member alone
        // accelerated (AnyIntersector dispatches the walk).
        let mut group = IntersectorGroup::new();
        for m in members.iter().cloned() {
            group.push(m);
        }
        run(&mut IntersectionVisitor::new(), &scene, root, &mut group);
        for (g, a) in group.members().iter().zip(&alone) {
            assert_eq!(hits_of(g), hits_of(a));
        }
        for (m, a) in members.into_iter().zip(&alone) {
            let mut m = m;
            run(&mut IntersectionVisitor::new(), &scene, root, &mut m);
            assert_eq!(hits_of(&m), hits_of(a));
        }
    }
}

fn plain_visitor() -> IntersectionVisitor {
    let mut v = IntersectionVisitor::new();
    v.set_use_acceleration(false);
    v
}

/// A member's hits, as text (the three hit types in one comparable form).
fn hits_of(member: &AnyIntersector) -> String {
    match member {
        AnyIntersector::LineSegment(i) => format!("{:?}", i.intersections()),
        AnyIntersector::Polytope(i) => format!("{:?}", i.intersections()),
        AnyIntersector::Sphere(i) => format!("{:?}", i.intersections()),
    }
}

#[test]
fn a_segment_through_more_triangles_than_one_batch_hits_every_one_in_order() {
    // 75 horizontal triangles stacked one unit apart (y = 0..74), one placed drawable
    // under a translation by 10 in y: more triangles pass the filter for one segment
    // than the all-hits walk tests in one batch (32), so its batches are flushed along
    // the way.
    const LAYERS: u32 = 75;
    let mut vertices = Vec::new();
    for k in 0..LAYERS {
        let y = k as f32;
        vertices.extend([
            Vec3::new(-1.0, y, -1.0),
            Vec3::new(2.0, y, -1.0),
            Vec3::new(-1.0, y, 2.0),
        ]);
    }
    let stack = Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_arrays(
            PrimitiveMode::Triangles,
            0,
            3 * LAYERS,
        ))
        .unwrap();
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let drawable = scene.add_drawable("stack", stack);
    let t = scene
        .add_transform("lift", DMat4::from_translation(DVec3::new(0.0, 10.0, 0.0)))
        .unwrap();
    let geode = scene.add_geode("stack-geode");
    scene.add_drawable_to_geode(geode, drawable).unwrap();
    scene.add_child(t, geode).unwrap();
    scene.add_child(root, t).unwrap();
    let index = scene.scene_index(root).unwrap();
    assert!(matches!(
        index.instances()[0].placement,
        Placement::Triangles { .. }
    ));
    // Straight up through (0, y, 0) from y = 9 to y = 9 + 80: layer k (world y = 10 + k)
    // at ratio (1 + k) / 80.
    let (start, end) = (DVec3::new(0.0, 9.0, 0.0), DVec3::new(0.0, 89.0, 0.0));
    let hits = |accelerated: bool, limit: IntersectionLimit| {
        let mut v = IntersectionVisitor::new();
        v.set_use_acceleration(accelerated);
        let mut i = LineSegmentIntersector::new(start, end)
            .unwrap()
            .with_limit(limit);
        run(&mut v, &scene, root, &mut i);
        i.take_intersections()
    };
    let all = hits(true, IntersectionLimit::None);
    assert_eq!(all.len(), LAYERS as usize);
    for (k, hit) in all.iter().enumerate() {
        assert_eq!(hit.primitive_index, k as u32);
        assert_eq!(hit.ratio, (1.0 + k as f64) / 80.0);
        assert_eq!(hit.world_point, DVec3::new(0.0, 10.0 + k as f64, 0.0));
    }
    for limit in LIMITS {
        assert_eq!(hits(true, limit), hits(false, limit), "{limit:?}");
    }
}

/// A transform named `transform` (under no parent yet) over a geode of `geometry`, a
/// new drawable named `mesh`, in a geode named `{mesh}-geode`; returns the transform.
fn mesh_under_transform(
    scene: &mut SceneGraph,
    transform: &str,
    mesh: &str,
    matrix: DMat4,
    geometry: Geometry,
) -> NodeId {
    let t = scene.add_transform(transform, matrix).unwrap();
    let d = scene.add_drawable(mesh, geometry);
    let g = scene.add_geode(format!("{mesh}-geode"));
    scene.add_drawable_to_geode(g, d).unwrap();
    scene.add_child(t, g).unwrap();
    t
}

/// The number of refits of the index of `root` (0 right after a build).
fn refit_count(scene: &SceneGraph, root: NodeId) -> u64 {
    scene.scene_index(root).unwrap().refit_count()
}

/// Structural edits keep the index: a vehicle added under the root is a new instance,
/// detached (visited whole), and the world tree is not built again; taken away, its
/// instance is removed (never visited again); transforms made absolute where that
/// keeps their frames, and a grid moved under another parent, are brought in as well.
/// Every query answers as the plain traversal after each edit, and
/// `rebuild_acceleration` puts it all back in a world tree of its own.
#[test]
fn structural_edits_keep_the_index_and_detach_what_they_add() {
    let (mut scene, root, moving, flat_t) = scene();
    scene.build_acceleration();
    let instances = scene.scene_index(root).unwrap().instances().len();
    let world_nodes = scene.scene_index(root).unwrap().world().nodes().len();
    // A vehicle: a transform over a geode of a new mesh.
    let vehicle = mesh_under_transform(
        &mut scene,
        "vehicle",
        "body",
        DMat4::from_translation(DVec3::new(1.0, 0.5, -2.0)),
        grid(3, 1.5),
    );
    scene.add_child(root, vehicle).unwrap();
    let hits = assert_all_queries_equal_plain(&scene, root, 0x7a1, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 1, "restructured, not rebuilt");
    assert_eq!(index.instances().len(), instances + 1);
    assert_eq!(index.world().nodes().len(), world_nodes);
    assert_eq!(detached_names(&scene, root), ["body"]);
    // It moves as any detached instance moves: the index is refitted.
    scene
        .set_matrix(vehicle, DMat4::from_translation(DVec3::new(-4.0, 0.5, 3.0)))
        .unwrap();
    assert_eq!(refit_count(&scene, root), 2);
    assert_all_queries_equal_plain(&scene, root, 0x7a2, |_| {});
    // Taken away again: removed, never visited; the scene answers as before it came.
    scene.remove_child(root, vehicle).unwrap();
    assert_all_queries_equal_plain(&scene, root, 0x7a3, |_| {});
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 3);
    assert_eq!(index.removed_count(), 1);
    assert!(index.instances().iter().any(|i| i.removed));
    assert!(detached_names(&scene, root).is_empty());
    // Transforms made absolute under the root group, whose frames stay as they were:
    // nothing to detach.
    scene
        .set_reference_frame(flat_t, ReferenceFrame::Absolute)
        .unwrap();
    scene
        .set_reference_frame(moving, ReferenceFrame::Absolute)
        .unwrap();
    assert_all_queries_equal_plain(&scene, root, 0x7a4, |_| {});
    assert!(detached_names(&scene, root).is_empty());
    assert_eq!(refit_count(&scene, root), 4);
    // The tilted grid's transform moved under a lifted parent and made relative again:
    // a new path (its old instance removed, a new one detached).
    let parent = scene
        .add_transform("parent", DMat4::from_translation(DVec3::new(0.0, 2.0, 0.0)))
        .unwrap();
    scene.remove_child(root, moving).unwrap();
    scene.add_child(parent, moving).unwrap();
    scene.add_child(root, parent).unwrap();
    scene
        .set_reference_frame(moving, ReferenceFrame::Relative)
        .unwrap();
    assert_all_queries_equal_plain(&scene, root, 0x7a5, |_| {});
    assert_eq!(detached_names(&scene, root), ["tilted"]);
    // The new instance took the place the vehicle left: the grid's old one is the only
    // removed instance, and the index holds one instance more than it was built with.
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.removed_count(), 1);
    assert_eq!(index.instances().len(), instances + 1);
    let tilted = &index.instances()[instances];
    assert_eq!(scene.drawable_name(tilted.drawable), Some("tilted"));
    assert!(!tilted.removed && tilted.detached);
    scene.rebuild_acceleration();
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 0);
    assert_eq!(index.removed_count(), 0);
    assert!(index.detached().is_empty());
    assert_all_queries_equal_plain(&scene, root, 0x7a6, |_| {});
}

/// A marker added under the root and taken away again, many times over (a pick
/// marker, a projectile spawned and despawned): the index neither grows nor is built
/// again. Each new instance takes the place the last one left, and the queries answer
/// as the plain traversal between the edits.
#[test]
fn a_marker_added_and_removed_over_and_over_keeps_the_index_the_same_size() {
    let (mut scene, root, _, _) = scene();
    scene.build_acceleration();
    let instances = scene.scene_index(root).unwrap().instances().len();
    let marker = mesh_under_transform(
        &mut scene,
        "marker",
        "pin",
        DMat4::from_translation(DVec3::new(1.0, 0.5, -2.0)),
        grid(3, 1.5),
    );
    // A second one that stays: a place taken is not given away again.
    let beacon = mesh_under_transform(
        &mut scene,
        "beacon",
        "light",
        DMat4::from_translation(DVec3::new(-3.0, 1.0, 2.0)),
        grid(2, 0.5),
    );
    for round in 0..200u64 {
        scene.add_child(root, marker).unwrap();
        if round == 3 {
            scene.add_child(root, beacon).unwrap();
        }
        if round % 50 == 0 {
            assert_all_queries_equal_plain(&scene, root, 0x900 + round, |_| {});
        }
        let index = scene.scene_index(root).unwrap();
        let expected = instances + 1 + usize::from(round >= 3);
        assert_eq!(index.instances().len(), expected, "round {round}");
        assert_eq!(index.removed_count(), 0);
        assert_eq!(detached_names(&scene, root).len(), expected - instances);
        scene.remove_child(root, marker).unwrap();
        if round % 50 == 25 {
            assert_all_queries_equal_plain(&scene, root, 0xa00 + round, |_| {});
        }
        let index = scene.scene_index(root).unwrap();
        assert_eq!(index.instances().len(), expected);
        assert_eq!(index.removed_count(), 1);
    }
    // Restructured at every use after an edit (the beacon with its round's marker),
    // never built again.
    assert_eq!(refit_count(&scene, root), 400);
    assert_eq!(detached_names(&scene, root), ["light"]);
}

/// Meshes taken out of the scene one at a time (a city's buildings demolished): each
/// removal keeps the index while the removed instances, whose triangles the world tree
/// still holds, are at most as many as those left; the next builds the index afresh.
#[test]
fn the_index_is_built_afresh_once_most_of_its_instances_are_removed() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let mut houses = Vec::new();
    for k in 0..30 {
        let (x, z) = (f64::from(k % 6) * 4.0 - 10.0, f64::from(k / 6) * 4.0 - 8.0);
        let house = mesh_under_transform(
            &mut scene,
            &format!("house-{k}"),
            &format!("walls-{k}"),
            DMat4::from_translation(DVec3::new(x, 0.0, z)),
            grid(2, 1.5),
        );
        scene.add_child(root, house).unwrap();
        houses.push(house);
    }
    scene.build_acceleration();
    assert_eq!(scene.scene_index(root).unwrap().instances().len(), 30);
    for (removed, &house) in houses[..15].iter().enumerate() {
        scene.remove_child(root, house).unwrap();
        let index = scene.scene_index(root).unwrap();
        // Removed r of 30: kept while r <= 30 - r.
        assert_eq!(index.removed_count(), removed + 1);
        assert_eq!(index.refit_count(), removed as u64 + 1, "restructured");
    }
    assert_all_queries_equal_plain(&scene, root, 0xb01, |_| {});
    // The sixteenth: 16 removed against 14 left.
    scene.remove_child(root, houses[15]).unwrap();
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 0, "built afresh");
    assert_eq!(index.removed_count(), 0);
    assert_eq!(index.instances().len(), 14);
    assert_all_queries_equal_plain(&scene, root, 0xb02, |_| {});
}

/// Twenty markers added in one go and taken away in one go, with three houses, then
/// twenty more: more changed nodes than a parked index once kept apart (16). Each
/// use restructures the index, answers as the plain traversal, and the last twenty
/// take the places of the first.
#[test]
fn many_nodes_changed_at_once_restructure_the_index() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let place = |scene: &mut SceneGraph, name: String, k: u32, size: f32| {
        let (x, z) = (
            f64::from(k % 10) * 4.0 - 20.0,
            f64::from(k / 10) * 4.0 - 20.0,
        );
        mesh_under_transform(
            scene,
            &name,
            &format!("{name}-mesh"),
            DMat4::from_translation(DVec3::new(x, 0.0, z)),
            grid(2, size),
        )
    };
    let houses: Vec<NodeId> = (0..90)
        .map(|k| {
            let house = place(&mut scene, format!("house-{k}"), k, 1.5);
            scene.add_child(root, house).unwrap();
            house
        })
        .collect();
    scene.build_acceleration();
    let markers = |scene: &mut SceneGraph, round: u32| -> Vec<NodeId> {
        (0..20)
            .map(|k| place(scene, format!("marker-{round}-{k}"), k * 4 + round, 0.5))
            .collect()
    };
    let first = markers(&mut scene, 0);
    for &marker in &first {
        scene.add_child(root, marker).unwrap();
    }
    assert_all_queries_equal_plain(&scene, root, 0xc01, |_| {});
    let index = scene.scene_index(root).unwrap();
    assert_eq!((index.refit_count(), index.instances().len()), (1, 110));
    assert_eq!(index.detached().len(), 20);
    for &node in first.iter().chain(&houses[..3]) {
        scene.remove_child(root, node).unwrap();
    }
    assert_all_queries_equal_plain(&scene, root, 0xc02, |_| {});
    let index = scene.scene_index(root).unwrap();
    assert_eq!((index.refit_count(), index.removed_count()), (2, 23));
    assert!(index.detached().is_empty());
    let second = markers(&mut scene, 1);
    for &marker in &second {
        scene.add_child(root, marker).unwrap();
    }
    assert_all_queries_equal_plain(&scene, root, 0xc03, |_| {});
    let index = scene.scene_index(root).unwrap();
    assert_eq!((index.refit_count(), index.removed_count()), (3, 3));
    assert_eq!(index.instances().len(), 110);
    assert_eq!(index.detached().len(), 20);
}

/// What decides the rebuild is the removed instances left after the edit: a marker
/// taken away in the same edit that adds another, which takes its place, leaves as
/// many removed as before.
#[test]
fn an_instance_added_in_a_removed_ones_place_does_not_count_as_removed() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let house = |scene: &mut SceneGraph, name: &str, k: u32| {
        let (x, z) = (f64::from(k % 6) * 4.0 - 10.0, f64::from(k / 6) * 4.0 - 8.0);
        mesh_under_transform(
            scene,
            name,
            &format!("{name}-mesh"),
            DMat4::from_translation(DVec3::new(x, 0.0, z)),
            grid(2, 1.5),
        )
    };
    let houses: Vec<NodeId> = (0..20)
        .map(|k| {
            let node = house(&mut scene, &format!("house-{k}"), k);
            scene.add_child(root, node).unwrap();
            node
        })
        .collect();
    let [first, second, third] = ["first", "second", "third"].map(|n| house(&mut scene, n, 3));
    scene.build_acceleration();
    scene.add_child(root, first).unwrap();
    scene.add_child(root, second).unwrap();
    assert_eq!(scene.scene_index(root).unwrap().instances().len(), 22);
    // Eleven houses removed: eleven removed against eleven left, kept.
    for &house in &houses[..11] {
        scene.remove_child(root, house).unwrap();
        let _ = scene.scene_index(root);
    }
    let index = scene.scene_index(root).unwrap();
    assert_eq!((index.refit_count(), index.removed_count()), (12, 11));
    // One marker for another, in one edit: still eleven and eleven.
    scene.remove_child(root, first).unwrap();
    scene.add_child(root, third).unwrap();
    let index = scene.scene_index(root).unwrap();
    assert_eq!((index.refit_count(), index.removed_count()), (13, 11));
    assert_eq!(index.instances().len(), 22);
    assert_all_queries_equal_plain(&scene, root, 0xb03, |_| {});
}

/// A transform's reference frame changed above placed instances moves them: they are
/// detached, and answer as the plain traversal; a switch child turned off and on
/// detaches nothing.
#[test]
fn structural_edits_that_change_frames_detach_and_switches_detach_nothing() {
    let (mut scene, root, moving, _) = scene();
    // The grids under a switch, under a lifted transform.
    let top = scene
        .add_transform("top", DMat4::from_translation(DVec3::new(0.5, 1.0, 0.0)))
        .unwrap();
    let switch = scene.add_switch("switch");
    scene.add_child(top, switch).unwrap();
    scene.add_child(switch, root).unwrap();
    scene.build_acceleration();
    scene.set_switch_child(switch, 0, false).unwrap();
    assert_all_queries_equal_plain(&scene, top, 0x7b1, |_| {});
    scene.set_switch_child(switch, 0, true).unwrap();
    assert_all_queries_equal_plain(&scene, top, 0x7b2, |_| {});
    assert_eq!(refit_count(&scene, top), 2, "restructured, not rebuilt");
    assert!(detached_names(&scene, top).is_empty());
    // Made absolute under the lifted transform: the tilted grid's frame drops the lift.
    scene
        .set_reference_frame(moving, ReferenceFrame::Absolute)
        .unwrap();
    let hits = assert_all_queries_equal_plain(&scene, top, 0x7b3, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    assert_eq!(detached_names(&scene, top), ["tilted"]);
    assert_eq!(refit_count(&scene, top), 3);
}

/// A child taken from under a switch or LOD moves the children after it up a place:
/// the instances under them take their new places in their gates (three grids under a
/// switch, the second off, and three under a LOD, each shown at its own distances;
/// the first of each taken away).
#[test]
fn children_taken_from_a_switch_or_lod_move_the_others_gates_up() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let switch = scene.add_switch("switch");
    let lod = scene.add_lod("lod", None).unwrap();
    scene.add_child(root, switch).unwrap();
    scene.add_child(root, lod).unwrap();
    let mut firsts = Vec::new();
    for (k, y) in [0.0, 2.0, 4.0].into_iter().enumerate() {
        let add = |scene: &mut SceneGraph, name: String, x: f64| {
            let m = DMat4::from_translation(DVec3::new(x, y, 0.0));
            mesh_under_transform(scene, &name, &name, m, grid(6, 3.0))
        };
        let s = add(&mut scene, format!("switched-{k}"), -5.0);
        scene.add_child(switch, s).unwrap();
        let l = add(&mut scene, format!("lod-{k}"), 5.0);
        let near = 10.0 * k as f64;
        scene.add_lod_child(lod, l, near, near + 10.0).unwrap();
        if k == 0 {
            firsts.push((switch, s));
            firsts.push((lod, l));
        }
    }
    scene.set_switch_child(switch, 1, false).unwrap();
    scene.build_acceleration();
    let eye = |v: &mut IntersectionVisitor| {
        v.set_lod_selection(LodSelection::EyePoint(DVec3::new(5.0, 2.0, 15.0)));
    };
    assert_all_queries_equal_plain(&scene, root, 0x7d1, eye);
    for (parent, child) in firsts {
        scene.remove_child(parent, child).unwrap();
        let hits = assert_all_queries_equal_plain(&scene, root, 0x7d2, eye);
        assert!(hits > 100, "the queries must hit: {hits}");
    }
    assert!(refit_count(&scene, root) > 0, "restructured, not rebuilt");
}

/// Structural edits that would leave more than a quarter of the instances detached
/// build the index afresh instead.
#[test]
fn structural_edits_that_add_many_instances_rebuild_the_index() {
    let (mut scene, root, _, _) = scene();
    scene.build_acceleration();
    let before = scene.scene_index(root).unwrap().instances().len();
    // Twelve small meshes, then a query: more than eight, and more than a quarter.
    for k in 0..12 {
        let name = format!("extra-{k}");
        let m = DMat4::from_translation(DVec3::new(k as f64 - 6.0, 1.0, 0.0));
        let t = mesh_under_transform(&mut scene, &name, &name, m, grid(2, 0.4));
        scene.add_child(root, t).unwrap();
    }
    let hits = assert_all_queries_equal_plain(&scene, root, 0x7c1, |_| {});
    assert!(hits > 500, "the queries must hit: {hits}");
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 0, "rebuilt");
    assert_eq!(index.instances().len(), before + 12);
    assert!(index.detached().is_empty());
}
