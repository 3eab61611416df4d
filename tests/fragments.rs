//! Big drawables are cut into fragments of their primitive BVH so that overlapping
//! drawables are ordered in one tree (partial re-braiding). Fragments must never change
//! an answer: every limit, every intersector, after moves, with quads (whose halves must
//! stay in one visit) and with intersectors that do not accept fragments.

use glam::{DMat4, DQuat, DVec3, Vec3};
use scene_intersect::accel::FRAGMENT_PRIMITIVES;
use scene_intersect::bounding::{BoundingBox, BoundingSphere};
use scene_intersect::drawable::Drawable;
use scene_intersect::intersectors::{LocalSegment, QueryError};
use scene_intersect::prelude::*;
use scene_intersect::visitor::{DrawableContext, FrameContext};

/// A `cells` x `cells` grid of triangles (two per cell, TRIANGLES mode, so no two share a
/// primitive index) over `[-half, half]^2` in the plane y = 0, gently waved so that its
/// BVH has depth in y too.
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
/// y = 0. The two halves of a long quad lie on opposite sides of z = 0, where a BVH
/// would happily separate them.
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
/// quads, and a small shared drawable under two transforms.
fn scene() -> (SceneGraph, NodeId, NodeId) {
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
    add(&mut scene, "flat", DMat4::IDENTITY, flat);
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
    (scene, root, moving)
}

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

fn run<I: Intersector>(scene: &SceneGraph, root: NodeId, accelerated: bool, i: &mut I) {
    let mut v = IntersectionVisitor::new();
    v.set_use_acceleration(accelerated);
    v.apply(scene, root, i).unwrap();
}

const LIMITS: [IntersectionLimit; 3] = [
    IntersectionLimit::None,
    IntersectionLimit::Nearest,
    IntersectionLimit::OnePerDrawable,
];

/// Runs `query` (an intersector with the given limit) plain and accelerated, and
/// asserts both give the same hits, for every limit.
fn assert_equal_plain<H: PartialEq + std::fmt::Debug>(
    what: &str,
    mut query: impl FnMut(bool, IntersectionLimit) -> Vec<H>,
) {
    for limit in LIMITS {
        assert_eq!(query(false, limit), query(true, limit), "{what}, {limit:?}");
    }
}

/// Every query kind and limit, accelerated (fragments) against plain.
fn assert_all_queries_equal_plain(scene: &SceneGraph, root: NodeId, seed: u64) {
    let mut rng = Rng(seed);
    for _ in 0..60 {
        let (a, b) = (rng.point(25.0), rng.point(25.0));
        assert_equal_plain(&format!("segment {a} -> {b}"), |accelerated, limit| {
            let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
            run(scene, root, accelerated, &mut i);
            i.take_intersections()
        });
        let (c, half) = (
            rng.point(15.0),
            DVec3::new(2.0, 1.5, 4.0) * (0.5 + rng.next()),
        );
        let rotation = DQuat::from_rotation_y(rng.next() * 6.0);
        assert_equal_plain(&format!("box at {c}"), |accelerated, limit| {
            let p = Polytope::from_oriented_box(c, half, rotation).unwrap();
            let mut i = PolytopeIntersector::new(p).with_limit(limit);
            run(scene, root, accelerated, &mut i);
            i.take_intersections()
        });
        let radius = 0.5 + rng.next() * 4.0;
        assert_equal_plain(&format!("ball at {c} r {radius}"), |accelerated, limit| {
            let mut i = SphereIntersector::new(c, radius).unwrap().with_limit(limit);
            run(scene, root, accelerated, &mut i);
            i.take_intersections()
        });
    }
}

#[test]
fn big_drawables_are_cut_and_quads_are_not() {
    let (scene, root, _) = scene();
    let index = scene.scene_index(root).unwrap();
    let instances = index.instances();
    let per_instance = |name: &str| {
        let k = instances
            .iter()
            .position(|i| scene.drawable_name(i.drawable) == Some(name))
            .unwrap();
        index
            .fragments()
            .iter()
            .filter(|f| f.instance as usize == k)
            .map(|f| f.bvh_node)
            .collect::<Vec<_>>()
    };
    // 3200 triangles in pieces of at most FRAGMENT_PRIMITIVES.
    assert!(per_instance("flat").len() >= 3200 / FRAGMENT_PRIMITIVES);
    assert!(per_instance("tilted").len() >= 1800 / FRAGMENT_PRIMITIVES);
    // A quad's two halves share a primitive index: visited whole, from the root.
    assert_eq!(per_instance("quads"), vec![0]);
    assert!(scene.primitive_bvh(instances[0].drawable).is_some());
}

#[test]
fn fragments_answer_exactly_as_the_plain_traversal() {
    let (scene, root, _) = scene();
    assert_all_queries_equal_plain(&scene, root, 0x0f0f_1234);
    // A hand-computed pick: straight down at (0.3, 0.6), from y = 5 to y = -5. The quads
    // at y = 2 are met first, at ratio (5 - 2) / 10 = 0.3 (the tilted grid lies
    // below y = 1.5 there, the flat one at y <= 0.25).
    let mut i = LineSegmentIntersector::new(DVec3::new(0.3, 5.0, 0.6), DVec3::new(0.3, -5.0, 0.6))
        .unwrap()
        .with_limit(IntersectionLimit::Nearest);
    run(&scene, root, true, &mut i);
    let hit = i.first_intersection().unwrap();
    assert_eq!(hit.ratio, 0.3);
    assert_eq!(hit.world_point, DVec3::new(0.3, 2.0, 0.6));
    assert_eq!(scene.drawable_name(hit.drawable), Some("quads"));
}

#[test]
fn moved_fragments_follow_their_transform() {
    let (mut scene, root, moving) = scene();
    scene.build_acceleration();
    for step in 0..4 {
        let m = DMat4::from_rotation_translation(
            DQuat::from_rotation_z(0.2 * step as f64),
            DVec3::new(-6.0 + 4.0 * step as f64, 0.5, 1.0),
        );
        scene.set_matrix(moving, m).unwrap();
        assert_all_queries_equal_plain(&scene, root, 77 + step);
    }
    assert_eq!(scene.scene_index(root).unwrap().refit_count(), 4);
}

/// A segment intersector that keeps the default `accepts_fragments` (no) and records
/// which BVH nodes its visits start from.
struct WholeVisits {
    inner: LineSegmentIntersector,
    starts: Vec<u32>,
}

impl Intersector for WholeVisits {
    type Local = LocalSegment;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.inner.begin(frames)
    }
    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> LocalSegment {
        self.inner.localize(local_to_world, world_to_local)
    }
    fn enter_node(&self, local: &LocalSegment, bound: &BoundingSphere) -> bool {
        self.inner.enter_node(local, bound)
    }
    fn enter_drawable(&self, local: &LocalSegment, bound: &BoundingBox) -> bool {
        self.inner.enter_drawable(local, bound)
    }
    fn intersect(
        &mut self,
        local: &LocalSegment,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        self.starts.push(context.bvh_node);
        self.inner.intersect(local, context, drawable);
    }
    fn reached_limit(&self) -> bool {
        self.inner.reached_limit()
    }
    fn end(&mut self) {
        // Not `self.inner.end()`: that is the segment's end point.
        Intersector::end(&mut self.inner);
    }
}

#[test]
fn intersectors_that_refuse_fragments_get_whole_drawables() {
    let (scene, root, _) = scene();
    let (a, b) = (DVec3::new(-18.0, 4.0, -17.0), DVec3::new(18.0, -3.0, 16.0));
    let mut whole = WholeVisits {
        inner: LineSegmentIntersector::new(a, b).unwrap(),
        starts: Vec::new(),
    };
    run(&scene, root, true, &mut whole);
    assert!(!whole.starts.is_empty());
    assert!(whole.starts.iter().all(|&n| n == 0));
    // Its answers are the fragment walk's answers.
    let mut fragments = LineSegmentIntersector::new(a, b).unwrap();
    run(&scene, root, true, &mut fragments);
    assert!(!fragments.intersections().is_empty());
    assert_eq!(whole.inner.intersections(), fragments.intersections());
}
