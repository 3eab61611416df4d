//! Query speed against the peers, measured side by side in one run.
//!
//! For every scene: segments (all hits and nearest), picking rays from above the scene
//! to a far plane 10^6 units away (nearest), vehicle-sized oriented boxes
//! (6-plane polytopes, made with `Polytope::from_oriented_box` and, a second time, given
//! as their six planes) and spheres, answered by
//! * `ours`: scene-intersect with its BVHs, one intersector per workload moved from
//!   query to query (`set_segment`, `set_polytope`, `set_sphere`), as a query repeated
//!   every frame would be,
//! * `plain`: scene-intersect without acceleration (bounding-volume culling only),
//! * `parry`: parry3d 0.31 on the same triangles flattened into one world-space
//!   `TriMesh` (its BVH: `cast_local_ray` for nearest, leaves + triangle ray casts for
//!   all hits, `intersect_aabb` + exact cuboid / ball tests for boxes and spheres);
//!
//! plus the same segments (all hits), boxes and spheres through the query tool's path
//! (`examples/query.rs`: the queries as query file lines, `answer_query_lines` on one
//! thread), BVH build time against `TriMesh::new`, and 1 vs 2 threads on a 10 000-query
//! batch. With `BENCH_PEERS=<binary>` (benches/peers), OpenSceneGraph 3.6 and Embree 3
//! answer the same segments and boxes too, right after ours in the same run. Before
//! the criterion groups, a ratio table is printed: every workload over the same 4 096
//! distinct queries for each engine, after a warm-up, the median of 5 samples of at
//! least 20 ms each (the batches: 9 runs after one untimed), in the same process. Scenes: `../shared/data`
//! (when present), `data/city.glb`, and the generated cities
//! `target/bench-cities/city_s3.glb` and `city_s10.glb` when they exist (see
//! benches/README.md).
//!
//! ```text
//! cargo bench --bench intersect
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use glam::{DMat4, DQuat, DVec3, DVec4, Quat, Vec3};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Pose;
use parry3d::query::{intersection_test, Ray, RayCast};
use parry3d::shape::{Ball, Cuboid, TriMesh};
use scene_intersect::accel::SceneIndex;
use scene_intersect::drawable::PrimitiveFunctor;
use scene_intersect::intersectors::PrimitiveMask;
use scene_intersect::io::query_file::{
    answer_query_lines, parse_query_file, BatchAnswer, QueryLine,
};
use scene_intersect::io::GltfImport;
use scene_intersect::prelude::*;

/// Queries per workload batch of the criterion groups and of `BENCH_PROFILE`.
const BATCH: usize = 256;

/// Distinct queries per workload of the ratio table (the first [`BATCH`] are the
/// criterion batch's). A batch of 256 run over and over is answered faster and faster
/// as the branch predictors learn its queries' paths, not as they would meet new
/// queries, and not alike for every engine: littlest_tokyo's nearest segments took
/// 0.45 µs a query (ours) and 0.39 µs (parry) that way, 0.70 and 1.03 µs over 10 000
/// distinct ones. The table times 4 096.
const TABLE: usize = 4096;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.next()
    }
}

/// A loaded scene with its workloads and its flattened twin for parry.
struct Bench {
    name: String,
    scene: SceneGraph,
    root: NodeId,
    /// What the loader made of the file (the query tool's drawable names).
    import: GltfImport,
    parry: TriMesh,
    parry_vertices: Vec<Vec3>,
    parry_indices: Vec<[u32; 3]>,
    /// Each placed drawable's run of `parry_indices`.
    meshes: Vec<Mesh>,
    segments: Vec<(DVec3, DVec3)>,
    /// Picking rays: from an eye above the scene through a point of it, to a far plane
    /// 10^6 units away.
    picks: Vec<(DVec3, DVec3)>,
    boxes: Vec<(DVec3, DVec3, DQuat)>,
    /// The same boxes as their six planes, as a query file gives them.
    box_planes: Vec<Vec<DVec4>>,
    spheres: Vec<(DVec3, f64)>,
    /// Segments of [`LOCAL_SEGMENT_LENGTH`] from a point of the box in any direction:
    /// the scaling line's segments whose length does not grow with the scene.
    local_segments: Vec<(DVec3, DVec3)>,
}

/// The length of [`Bench::local_segments`], in scene units (metres on the generated
/// cities: a few buildings).
const LOCAL_SEGMENT_LENGTH: f64 = 100.0;

/// The scene's triangles in world space, as parry and Embree get them.
struct Flattened {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    /// Each placed drawable's run of `triangles`, for the peers that keep a scene graph
    /// (OpenSceneGraph, see `run_peers`).
    meshes: Vec<Mesh>,
}

/// A placed drawable's run of triangles in [`Flattened::triangles`].
struct Mesh {
    first: u32,
    count: u32,
    /// The node path it was reached by, root first, each node as a dense number.
    path: Vec<u32>,
}

/// Every triangle of the scene in world space, walking all node paths.
fn flatten(scene: &SceneGraph, root: NodeId) -> Flattened {
    struct Collect<'a> {
        m: DMat4,
        v: &'a mut Vec<Vec3>,
        i: &'a mut Vec<[u32; 3]>,
    }
    impl PrimitiveFunctor for Collect<'_> {
        fn triangle(&mut self, v: [Vec3; 3], _i: [u32; 3], _p: u32) {
            let base = self.v.len() as u32;
            for p in v {
                self.v.push(self.m.transform_point3(p.as_dvec3()).as_vec3());
            }
            self.i.push([base, base + 1, base + 2]);
        }
    }
    let (mut vertices, mut indices, mut meshes) = (Vec::new(), Vec::new(), Vec::new());
    let mut node_numbers = std::collections::HashMap::new();
    let mut stack = vec![vec![root]];
    while let Some(path) = stack.pop() {
        let Some(node) = path.last().and_then(|&id| scene.node(id)) else {
            continue;
        };
        if !node.drawables().is_empty() {
            let m = scene.local_to_world(&path).unwrap_or(DMat4::IDENTITY);
            for &d in node.drawables() {
                if let Some(drawable) = scene.drawable(d) {
                    let first = indices.len() as u32;
                    drawable.accept(&mut Collect {
                        m,
                        v: &mut vertices,
                        i: &mut indices,
                    });
                    let count = indices.len() as u32 - first;
                    if count > 0 {
                        let path = (path.iter())
                            .map(|&n| {
                                let next = node_numbers.len() as u32;
                                *node_numbers.entry(n).or_insert(next)
                            })
                            .collect();
                        meshes.push(Mesh { first, count, path });
                    }
                }
            }
        }
        for &c in node.children() {
            let mut p = path.clone();
            p.push(c);
            stack.push(p);
        }
    }
    Flattened {
        vertices,
        triangles: indices,
        meshes,
    }
}

fn load(path: &Path) -> Option<Bench> {
    let (scene, import) = match load_gltf(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipping {}: {e}", path.display());
            return None;
        }
    };
    scene.build_acceleration();
    let Flattened {
        vertices: parry_vertices,
        triangles: parry_indices,
        meshes,
    } = flatten(&scene, import.root);
    let parry = TriMesh::new(parry_vertices.clone(), parry_indices.clone()).ok()?;
    // World box of the scene from the flattened vertices.
    let (mut lo, mut hi) = (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN));
    for v in &parry_vertices {
        lo = lo.min(v.as_dvec3());
        hi = hi.max(v.as_dvec3());
    }
    let size = hi - lo;
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let point = |rng: &mut Rng| {
        DVec3::new(
            rng.range(lo.x, hi.x),
            rng.range(lo.y, hi.y),
            rng.range(lo.z, hi.z),
        )
    };
    // Segments crossing the scene: from one side of the box to the opposite side.
    let mut segments = Vec::new();
    while segments.len() < 10_000 {
        let (mut a, mut b) = (point(&mut rng), point(&mut rng));
        let axis = (rng.next() * 3.0) as usize % 3;
        a[axis] = lo[axis] - 0.05 * size[axis];
        b[axis] = hi[axis] + 0.05 * size[axis];
        segments.push((a, b));
    }
    // Picking rays: an eye above the scene (up to half its height), looking at a point
    // of it, the segment ending at a far plane 10^6 units away.
    let pick = |rng: &mut Rng| {
        let mut eye = point(rng);
        eye.y = hi.y + rng.range(0.1, 0.5) * size.y;
        let toward = (point(rng) - eye).normalize();
        (eye, eye + toward * 1e6)
    };
    let picks: Vec<(DVec3, DVec3)> = (0..BATCH).map(|_| pick(&mut rng)).collect();
    // Car- to truck-sized boxes (4-12 m long) near the ground, any heading.
    let vehicle_box = |rng: &mut Rng| {
        let mut c = point(rng);
        c.y = lo.y + rng.range(0.0, 0.1) * size.y;
        let half = DVec3::new(
            rng.range(0.9, 1.3),
            rng.range(0.7, 1.8),
            rng.range(2.0, 6.0),
        );
        (
            c,
            half,
            DQuat::from_rotation_y(rng.range(0.0, std::f64::consts::TAU)),
        )
    };
    let boxes: Vec<(DVec3, DVec3, DQuat)> = (0..BATCH).map(|_| vehicle_box(&mut rng)).collect();
    let planes_of = |(c, half, q): (DVec3, DVec3, DQuat)| {
        let p = Polytope::from_oriented_box(c, half, q).unwrap();
        p.planes().to_vec()
    };
    let box_planes = boxes.iter().map(|&b| planes_of(b)).collect();
    let mut spheres: Vec<(DVec3, f64)> = (0..BATCH)
        .map(|_| (point(&mut rng), rng.range(0.5, 10.0)))
        .collect();
    // The ratio table's further queries, made after the criterion batch's so that
    // those stay as they were.
    let mut picks = picks;
    let mut boxes = boxes;
    let mut box_planes: Vec<Vec<DVec4>> = box_planes;
    while picks.len() < TABLE {
        picks.push(pick(&mut rng));
        let one = vehicle_box(&mut rng);
        box_planes.push(planes_of(one));
        boxes.push(one);
        spheres.push((point(&mut rng), rng.range(0.5, 10.0)));
    }
    let direction = |rng: &mut Rng| loop {
        let d = DVec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        );
        if (1e-6..=1.0).contains(&d.length_squared()) {
            break d.normalize();
        }
    };
    let local_segments = (0..TABLE)
        .map(|_| {
            let start = point(&mut rng);
            (start, start + direction(&mut rng) * LOCAL_SEGMENT_LENGTH)
        })
        .collect();
    Some(Bench {
        name: path.file_stem()?.to_string_lossy().into_owned(),
        scene,
        root: import.root,
        import,
        parry,
        parry_vertices,
        parry_indices,
        meshes,
        segments,
        picks,
        boxes,
        box_planes,
        spheres,
        local_segments,
    })
}

fn scenes() -> Vec<Bench> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    let shared = root.join("../shared/data");
    for f in ["littlest_tokyo.glb", "truck_town.glb", "zdm2.glb"] {
        if shared.join(f).exists() {
            paths.push(shared.join(f));
        }
    }
    paths.push(root.join("data/city.glb"));
    for f in ["city_s3.glb", "city_s10.glb"] {
        let p = root.join("target/bench-cities").join(f);
        if p.exists() {
            paths.push(p);
        } else {
            eprintln!(
                "note: {} absent (see benches/README.md to generate it)",
                p.display()
            );
        }
    }
    // BENCH_SCENES=littlest_tokyo,city restricts the run to those scene names.
    let only = std::env::var("BENCH_SCENES").ok().filter(|s| !s.is_empty());
    paths
        .iter()
        .filter(|p| {
            only.as_deref().is_none_or(|only| {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                only.split(',').any(|name| stem.as_deref() == Some(name))
            })
        })
        .filter_map(|p| load(p))
        .collect()
}

// ----- the workloads, one function per (engine, query) -----------------------------

fn ours_segments(
    b: &Bench,
    v: &mut IntersectionVisitor,
    limit: IntersectionLimit,
    n: usize,
) -> usize {
    ours_segments_of(&b.segments[..n], b, v, limit)
}

/// [`ours_segments`] with every hit wanted as summaries only
/// (`HitRecords::Summaries`: no full records are built).
fn ours_segment_summaries(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    let (s, e) = b.segments[0];
    let mut i = LineSegmentIntersector::new(s, e)
        .unwrap()
        .with_records(HitRecords::Summaries);
    for &(s, e) in &b.segments[..n] {
        i.set_segment(s, e).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

/// Nearest segments as the pick example (and OpenSceneGraph's habit) asks them: a new
/// intersector for every query. (Never inlined: the profiles collect `ours_*`.)
#[inline(never)]
fn ours_fresh_nearest(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    for &(s, e) in &b.segments[..n] {
        let mut i = LineSegmentIntersector::new(s, e)
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

/// The nearest hits of the first `n` picking rays.
fn ours_picks(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    ours_segments_of(&b.picks[..n], b, v, IntersectionLimit::Nearest)
}

fn ours_segments_of(
    segments: &[(DVec3, DVec3)],
    b: &Bench,
    v: &mut IntersectionVisitor,
    limit: IntersectionLimit,
) -> usize {
    let mut hits = 0;
    let (s, e) = segments[0];
    let mut i = LineSegmentIntersector::new(s, e).unwrap().with_limit(limit);
    for &(s, e) in segments {
        i.set_segment(s, e).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

fn parry_segments_all(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(s, e) in &b.segments[..n] {
        let ray = Ray::new(s.as_vec3(), (e - s).as_vec3());
        for leaf in b
            .parry
            .bvh()
            .leaves(|node| node.aabb().intersects_local_ray(&ray, 1.0))
        {
            if b.parry
                .triangle(leaf)
                .cast_local_ray(&ray, 1.0, false)
                .is_some()
            {
                hits += 1;
            }
        }
    }
    hits
}

fn parry_segments_nearest(b: &Bench, n: usize) -> usize {
    parry_nearest_of(&b.segments[..n], b)
}

fn parry_picks(b: &Bench, n: usize) -> usize {
    parry_nearest_of(&b.picks[..n], b)
}

fn parry_nearest_of(segments: &[(DVec3, DVec3)], b: &Bench) -> usize {
    segments
        .iter()
        .filter(|(s, e)| {
            let ray = Ray::new(s.as_vec3(), (*e - *s).as_vec3());
            b.parry.cast_local_ray(&ray, 1.0, false).is_some()
        })
        .count()
}

/// The vehicle boxes' hits, as full records or only as summaries.
fn ours_boxes(b: &Bench, v: &mut IntersectionVisitor, n: usize, records: HitRecords) -> usize {
    let mut hits = 0;
    let (c, half, q) = b.boxes[0];
    let mut i = PolytopeIntersector::new(Polytope::from_oriented_box(c, half, q).unwrap())
        .with_primitive_mask(PrimitiveMask::TRIANGLES)
        .with_records(records);
    for &(c, half, q) in &b.boxes[..n] {
        i.set_oriented_box(c, half, q).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

/// The boxes given as planes (as a query file gives them), written in place by
/// `set_planes`, which finds the box in them as `Polytope::new` does.
fn ours_box_planes(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    let mut i = PolytopeIntersector::new(Polytope::new(b.box_planes[0].iter().copied()).unwrap())
        .with_primitive_mask(PrimitiveMask::TRIANGLES);
    for planes in &b.box_planes[..n] {
        i.set_planes(planes).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

fn parry_boxes(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(c, half, q) in &b.boxes[..n] {
        let cuboid = Cuboid::new(half.as_vec3());
        let pose = Pose::from_parts(c.as_vec3(), q.as_quat());
        let aabb = cuboid.aabb(&pose);
        for t in b.parry.bvh().intersect_aabb(&aabb) {
            let tri = b.parry.triangle(t);
            if intersection_test(&pose, &cuboid, &Pose::IDENTITY, &tri)
                .is_ok_and(|i| i.intersecting)
            {
                hits += 1;
            }
        }
    }
    hits
}

/// The balls' hits, as full records or only as summaries.
fn ours_spheres(b: &Bench, v: &mut IntersectionVisitor, n: usize, records: HitRecords) -> usize {
    let mut hits = 0;
    let (c, r) = b.spheres[0];
    let mut i = SphereIntersector::new(c, r)
        .unwrap()
        .with_primitive_mask(PrimitiveMask::TRIANGLES)
        .with_records(records);
    for &(c, r) in &b.spheres[..n] {
        i.set_sphere(c, r).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

fn parry_spheres(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(c, r) in &b.spheres[..n] {
        let ball = Ball::new(r as f32);
        let pose = Pose::from_parts(c.as_vec3(), Quat::IDENTITY);
        let aabb = ParryAabb::new(
            (c - DVec3::splat(r)).as_vec3(),
            (c + DVec3::splat(r)).as_vec3(),
        );
        for t in b.parry.bvh().intersect_aabb(&aabb) {
            let tri = b.parry.triangle(t);
            if intersection_test(&pose, &ball, &Pose::IDENTITY, &tri).is_ok_and(|i| i.intersecting)
            {
                hits += 1;
            }
        }
    }
    hits
}

/// Everything a query needs: the scene index (the instances, their tree, and the world
/// tree over every placed triangle) and the own BVH of every drawable the world tree
/// keeps whole (the cities' shared building meshes; none in the shared scenes). The
/// answer counts the primitives held.
fn ours_build(b: &Bench) -> usize {
    let index = SceneIndex::build(&b.scene, b.root);
    let whole_primitives: usize = (index.whole_drawables().iter())
        .filter_map(|&d| b.scene.build_primitive_bvh(d))
        .map(|bvh| bvh.len())
        .sum();
    index.world().triangle_count() + whole_primitives
}

fn parry_build(b: &Bench) -> usize {
    TriMesh::new(b.parry_vertices.clone(), b.parry_indices.clone())
        .map(|m| m.num_triangles())
        .unwrap_or(0)
}

/// The batch of nearest-hit segment queries, made afresh for each run.
fn batch_queries(b: &Bench) -> Vec<LineSegmentIntersector> {
    b.segments
        .iter()
        .map(|&(s, e)| {
            LineSegmentIntersector::new(s, e)
                .unwrap()
                .with_limit(IntersectionLimit::Nearest)
        })
        .collect()
}

/// The median time of `run` on a pool of `threads` threads, over 9 timed runs after one
/// untimed (which warms the pool's threads and the caches), in milliseconds, and the
/// answer count: `run` times one batch itself and gives its milliseconds and answers.
/// Nine runs, not five: a batch of a small scene takes a few milliseconds, which one
/// preemption of the shared machine can double.
fn median_of_batches(
    threads: usize,
    mut run: impl FnMut(&rayon::ThreadPool) -> (f64, usize),
) -> (f64, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut times = Vec::new();
    let mut answer = 0;
    for k in 0..10 {
        let (ms, answers) = run(&pool);
        if k > 0 {
            times.push(ms);
        }
        answer = answers;
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], answer)
}

/// Median wall time of `apply_batch` on `threads` threads (see [`median_of_batches`]),
/// and the answer count. Only the batch call is timed: the intersectors are made before
/// the clock starts and dropped after it stops (the caller's work, serial, which would
/// cap any speed-up by Amdahl's law).
fn ours_batch_ms(b: &Bench, threads: usize) -> (f64, usize) {
    let v = IntersectionVisitor::new();
    median_of_batches(threads, |pool| {
        let mut queries = batch_queries(b);
        let t = Instant::now();
        pool.install(|| v.apply_batch(&b.scene, b.root, &mut queries));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (ms, queries.iter().map(|q| q.intersections().len()).sum())
    })
}

/// The first `n` segments, boxes (as their six planes) and spheres as the lines of a
/// query file (`../shared/QUERY_FORMAT.md`), read back as the query tool reads them:
/// numbers written in Rust's shortest round-trip form, so the queries are the same.
fn query_lines(b: &Bench, n: usize) -> [Vec<QueryLine>; 3] {
    let segments: String = (b.segments[..n].iter())
        .map(|(s, e)| {
            format!(
                "seg {:?} {:?} {:?} {:?} {:?} {:?}\n",
                s.x, s.y, s.z, e.x, e.y, e.z
            )
        })
        .collect();
    let boxes: String = (b.box_planes[..n].iter())
        .map(|planes| {
            let numbers: Vec<String> = (planes.iter())
                .flat_map(|p| p.to_array())
                .map(|x| format!("{x:?}"))
                .collect();
            format!("poly {} {}\n", planes.len(), numbers.join(" "))
        })
        .collect();
    let spheres: String = (b.spheres[..n].iter())
        .map(|(c, r)| format!("sphere {:?} {:?} {:?} {r:?}\n", c.x, c.y, c.z))
        .collect();
    [segments, boxes, spheres].map(|text| parse_query_file(&text))
}

/// The query tool's answer to `lines` (`examples/query.rs` without reading and writing:
/// [`answer_query_lines`] on one thread), as the triangles hit. Unlike the tool's clock,
/// this one also runs while the answers are dropped.
fn ours_query_tool(b: &Bench, pool: &rayon::ThreadPool, lines: &[QueryLine]) -> usize {
    let v = IntersectionVisitor::new();
    let answers = pool.install(|| answer_query_lines(&v, &b.scene, &b.import, lines));
    (answers.iter().flatten())
        .map(|answer| match answer {
            BatchAnswer::Segment(rows) => rows.len(),
            BatchAnswer::Polytope(rows) | BatchAnswer::Sphere(rows) => rows.len(),
        })
        .sum()
}

/// [`ours_batch_ms`] for `map_batch`: the same 10 000 nearest segments, one intersector
/// per worker moved from query to query, keeping each nearest ratio. Everything is
/// inside the clock here (the intersectors are the batch's own).
fn ours_mapped_batch_ms(b: &Bench, threads: usize) -> (f64, usize) {
    let v = IntersectionVisitor::new();
    median_of_batches(threads, |pool| {
        let t = Instant::now();
        let nearest = pool.install(|| {
            v.map_batch(
                &b.scene,
                b.root,
                &b.segments,
                |&(s, e)| {
                    LineSegmentIntersector::new(s, e)
                        .map(|i| i.with_limit(IntersectionLimit::Nearest))
                },
                |i, &(s, e)| i.set_segment(s, e),
                |i| i.first_intersection().map(|hit| hit.ratio),
            )
        });
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (
            ms,
            nearest.iter().filter(|r| matches!(r, Ok(Some(_)))).count(),
        )
    })
}

// ----- the ratio table -------------------------------------------------------------

/// How long each timed sample of the ratio table runs its workload, at least.
const SAMPLE: Duration = Duration::from_millis(20);

/// Median wall time of one run of `f`, in milliseconds, over 5 samples, and the
/// workload's answer count. A batch of 256 queries takes well under a millisecond, and
/// timed once it is timed while the caches, branch predictors and clock are still
/// warming to it: five single runs in a row fell from 0.32 to 0.15 ms, and the run
/// order alone moved parry's boxes from 0.16 to 0.12 ms between two rows of one table.
/// So `f` first runs for one sample's time untimed, then each sample repeats it for
/// at least [`SAMPLE`] (a slow workload, such as the plain traversal, once).
fn median_ms(mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut answer = 0;
    let warm = Instant::now();
    while warm.elapsed() < SAMPLE {
        answer = std::hint::black_box(f());
    }
    let mut times = Vec::new();
    for _ in 0..5 {
        let (t, mut runs) = (Instant::now(), 0u32);
        while runs == 0 || t.elapsed() < SAMPLE {
            answer = std::hint::black_box(f());
            runs += 1;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3 / f64::from(runs));
    }
    times.sort_by(f64::total_cmp);
    (times[2], answer)
}

fn ratio_line(scene: &str, what: &str, ours: (f64, usize), other_name: &str, other: (f64, usize)) {
    println!(
        "ratio {scene:>16} {what:<22} ours {:>9.3} ms ({:>7} hits)  {other_name} {:>9.3} ms ({:>7} hits)  speed-up {:>6.2}x",
        ours.0,
        ours.1,
        other.0,
        other.1,
        other.0 / ours.0
    );
}

/// One of our workloads on a scene: the queries answered, the hits found.
type Workload = dyn Fn(&Bench, &mut IntersectionVisitor) -> usize;

fn print_ratios(benches: &[Bench]) {
    println!(
        "\n== side-by-side: {TABLE} distinct queries per workload, after a warm-up, median of 5 samples of >= {} ms (threads: 10 000, median of 9) ==",
        SAMPLE.as_millis()
    );
    for b in benches {
        let mut v = IntersectionVisitor::new();
        let mut plain = IntersectionVisitor::new();
        plain.set_use_acceleration(false);
        let n = TABLE;
        // The plain traversal is slow on big scenes: it answers a sixty-fourth of the
        // queries, and its time is scaled up.
        let few = TABLE / 64;
        let scaled = |(t, hits): (f64, usize)| (t * (n / few) as f64, hits);
        let all = median_ms(|| ours_segments(b, &mut v, IntersectionLimit::None, n));
        let parry_all = median_ms(|| parry_segments_all(b, n));
        ratio_line(&b.name, "segments all hits", all, "parry", parry_all);
        // The same hits as summaries (ratio, drawable, primitive, world point, path):
        // still more than parry3d's answer (a parameter and a triangle id).
        let summaries = median_ms(|| ours_segment_summaries(b, &mut v, n));
        ratio_line(
            &b.name,
            "segs all (summaries)",
            summaries,
            "parry",
            parry_all,
        );
        ratio_line(
            &b.name,
            "segs all (plain, 1/64)",
            all,
            "plain",
            scaled(median_ms(|| {
                ours_segments(b, &mut plain, IntersectionLimit::None, few)
            })),
        );
        let nearest = median_ms(|| ours_segments(b, &mut v, IntersectionLimit::Nearest, n));
        ratio_line(
            &b.name,
            "segments nearest",
            nearest,
            "parry",
            median_ms(|| parry_segments_nearest(b, n)),
        );
        ratio_line(
            &b.name,
            "picking rays to 1e6",
            median_ms(|| ours_picks(b, &mut v, n)),
            "parry",
            median_ms(|| parry_picks(b, n)),
        );
        let boxes = median_ms(|| ours_boxes(b, &mut v, n, HitRecords::Full));
        let parry_boxes = median_ms(|| parry_boxes(b, n));
        ratio_line(&b.name, "boxes (6 planes)", boxes, "parry", parry_boxes);
        // Summaries (distance, drawable, primitive, world point, path): still more
        // than parry3d's answer (triangle ids).
        ratio_line(
            &b.name,
            "boxes (summaries)",
            median_ms(|| ours_boxes(b, &mut v, n, HitRecords::Summaries)),
            "parry",
            parry_boxes,
        );
        ratio_line(
            &b.name,
            "boxes given as planes",
            median_ms(|| ours_box_planes(b, &mut v, n)),
            "parry",
            parry_boxes,
        );
        ratio_line(
            &b.name,
            "boxes (plain, 1/64)",
            boxes,
            "plain",
            scaled(median_ms(|| {
                ours_boxes(b, &mut plain, few, HitRecords::Full)
            })),
        );
        let spheres = median_ms(|| ours_spheres(b, &mut v, n, HitRecords::Full));
        let parry_spheres = median_ms(|| parry_spheres(b, n));
        ratio_line(&b.name, "spheres", spheres, "parry", parry_spheres);
        ratio_line(
            &b.name,
            "spheres (summaries)",
            median_ms(|| ours_spheres(b, &mut v, n, HitRecords::Summaries)),
            "parry",
            parry_spheres,
        );
        // The query tool's path (`examples/query.rs`, one thread): rows of numbers
        // per triangle hit, sorted and named after its clock.
        let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let mut tool = [None; 3];
        if let Ok(pool) = one_thread {
            let [segment_lines, box_lines, sphere_lines] = query_lines(b, n);
            for ((what, lines, peer), tool) in [
                ("segs all (query tool)", &segment_lines, parry_all),
                ("boxes (query tool)", &box_lines, parry_boxes),
                ("spheres (query tool)", &sphere_lines, parry_spheres),
            ]
            .into_iter()
            .zip(&mut tool)
            {
                let ours = median_ms(|| ours_query_tool(b, &pool, lines));
                ratio_line(&b.name, what, ours, "parry", peer);
                *tool = Some(ours);
            }
        }
        let build = median_ms(|| ours_build(b));
        ratio_line(
            &b.name,
            "build",
            build,
            "parry",
            median_ms(|| parry_build(b)),
        );
        run_peers(
            b,
            &Ours {
                all,
                summaries,
                nearest,
                boxes,
                build,
                tool_all: tool[0],
                tool_boxes: tool[1],
            },
        );
        for (what, batch) in [
            (
                "batch nearest 10k",
                ours_batch_ms as fn(&Bench, usize) -> (f64, usize),
            ),
            ("mapped batch 10k", ours_mapped_batch_ms),
        ] {
            let (one, two) = (batch(b, 1), batch(b, 2));
            println!(
                "ratio {:>16} {what:<22} 1 thread {:>9.3} ms  2 threads {:>9.3} ms  speed-up {:>6.2}x",
                b.name,
                one.0,
                two.0,
                one.0 / two.0
            );
        }
        let (bytes, _) = b.scene.acceleration_memory();
        let triangles = b.parry_indices.len();
        println!(
            "memory {:>15} {:.1} MB of acceleration structures, {:.1} bytes per instanced triangle ({triangles})",
            b.name,
            bytes as f64 / 1e6,
            bytes as f64 / triangles.max(1) as f64,
        );
    }
    // Cost per query as the city grows 10x (generated cities). Segments crossing the
    // scene grow with it (3.2 times as long on a city 10 times the area), segments of a
    // fixed length, boxes and spheres do not.
    if let (Some(small), Some(big)) = (
        benches.iter().find(|b| b.name == "city_s3"),
        benches.iter().find(|b| b.name == "city_s10"),
    ) {
        let per_query = |b: &Bench, run: &Workload| {
            let mut v = IntersectionVisitor::new();
            median_ms(|| run(b, &mut v)).0 * 1e3 / TABLE as f64
        };
        let workloads: [(&str, &Workload); 5] = [
            ("nearest segment crossing the scene", &|b, v| {
                ours_segments(b, v, IntersectionLimit::Nearest, TABLE)
            }),
            ("nearest segment of 100 units", &|b, v| {
                ours_segments_of(&b.local_segments, b, v, IntersectionLimit::Nearest)
            }),
            ("all hits of 100 units", &|b, v| {
                ours_segments_of(&b.local_segments, b, v, IntersectionLimit::None)
            }),
            ("box", &|b, v| ours_boxes(b, v, TABLE, HitRecords::Full)),
            ("sphere", &|b, v| {
                ours_spheres(b, v, TABLE, HitRecords::Full)
            }),
        ];
        for (what, run) in workloads {
            let (t_small, t_big) = (per_query(small, run), per_query(big, run));
            println!(
                "scaling: {} -> {} triangles: {what} {:.3} -> {:.3} us per query ({:.2}x)",
                small.parry_indices.len(),
                big.parry_indices.len(),
                t_small,
                t_big,
                t_big / t_small
            );
        }
    }
    println!();
}

/// Microseconds one `set_matrix` takes, with the refit of the scene index it triggers,
/// for `movers` (transforms) moved in turn, round after round, each by a little more
/// at each round, [`TABLE`] moves a sample (the first round, in which each mover's
/// first move looks for its instances among all, before the timing); every mover is
/// put back where it was. `None` when `movers` is empty.
///
/// The movers stay detached from the world tree until the next rebuild (so the moves are
/// timed after every query workload).
fn ours_moves(b: &mut Bench, movers: &[NodeId]) -> Option<f64> {
    let homes: Vec<DMat4> = (movers.iter())
        .map(|&n| match b.scene.node(n).map(|node| node.kind()) {
            Some(NodeKind::Transform(t)) => Some(t.matrix),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if movers.is_empty() {
        return None;
    }
    b.scene.scene_index(b.root)?;
    let pose = |home: DMat4, step: usize| {
        home * DMat4::from_translation(DVec3::new(0.01 * (step % 10_000) as f64, 0.0, 0.0))
    };
    for (&n, &home) in movers.iter().zip(&homes) {
        b.scene.set_matrix(n, pose(home, 1)).ok()?;
    }
    let mut step = movers.len();
    let (ms, moves) = median_ms(|| {
        for _ in 0..TABLE {
            step += 1;
            let k = step % movers.len();
            b.scene
                .set_matrix(movers[k], pose(homes[k], step / movers.len()))
                .expect("a finite, affine pose");
        }
        TABLE
    });
    for (&n, &home) in movers.iter().zip(&homes) {
        b.scene.set_matrix(n, home).ok()?;
    }
    Some(ms * 1e3 / moves as f64)
}

/// Microseconds one `edit_geometry` of `drawable` takes (one vertex raised a little
/// more at each edit; the scene index refitted, the drawable's instances detached),
/// [`TABLE`] edits a sample (the first edit, which looks for its instances among all,
/// before the timing); the vertex is put back. With `handed_out`, the edit goes through
/// `geometry_mut` instead and the time includes the scene index's next use, which
/// refits it. `None` for a drawable that is not a `Geometry` or has no vertex.
fn ours_mesh_edits(b: &mut Bench, drawable: DrawableId, handed_out: bool) -> Option<f64> {
    let home = *b
        .scene
        .drawable(drawable)?
        .as_geometry()?
        .vertices()
        .first()?;
    let mut step = 0u32;
    let mut edit = |b: &mut Bench| {
        step += 1;
        let y = home.y + 1e-3 * (step % 1000) as f32;
        if handed_out {
            b.scene
                .geometry_mut(drawable)
                .expect("a geometry")
                .vertices_mut()[0]
                .y = y;
            std::hint::black_box(b.scene.scene_index(b.root));
        } else {
            b.scene
                .edit_geometry(drawable, |g| g.vertices_mut()[0].y = y)
                .expect("a geometry");
        }
    };
    edit(b);
    let (ms, edits) = median_ms(|| {
        for _ in 0..TABLE {
            edit(b);
        }
        TABLE
    });
    b.scene
        .edit_geometry(drawable, |g| g.vertices_mut()[0] = home)
        .ok()?;
    Some(ms * 1e3 / edits as f64)
}

/// How many of the generated cities' buildings `print_moves` moves about together.
const MOVING_BUILDINGS: usize = 100;

/// The cost of moving things in the generated cities (a refit of the scene index along
/// the moved instances' paths): the vehicle alone, [`MOVING_BUILDINGS`] buildings each
/// moved once a round (as a scene with that many vehicles moves them every frame), and
/// the vehicle's mesh edited in place; per city and as the city grows 10x.
fn print_moves(benches: &mut [Bench]) {
    let mut per_city = Vec::new();
    for b in benches.iter_mut() {
        let Some(vehicle) = b.scene.find_node("vehicle") else {
            continue;
        };
        let buildings: Vec<NodeId> = (b.scene.nodes())
            .filter(|(_, node)| {
                matches!(node.kind(), NodeKind::Transform(_))
                    && node.name().starts_with("building_")
            })
            .map(|(id, _)| id)
            .take(MOVING_BUILDINGS)
            .collect();
        let vehicle_mesh = (b.scene.scene_index(b.root))
            .and_then(|index| index.instances().iter().find(|i| i.path.contains(&vehicle)))
            .map(|i| i.drawable);
        let (Some(one), Some(many), Some(edit), Some(handed_out)) = (
            ours_moves(b, &[vehicle]),
            ours_moves(b, &buildings),
            vehicle_mesh.and_then(|d| ours_mesh_edits(b, d, false)),
            vehicle_mesh.and_then(|d| ours_mesh_edits(b, d, true)),
        ) else {
            continue;
        };
        println!(
            "move {:>17} the vehicle: {one:.3} us per set_matrix; {} buildings in turn: {many:.3} us per set_matrix; the vehicle's mesh: {edit:.3} us per edit_geometry, {handed_out:.3} us per geometry_mut and next use of the index ({} triangles)",
            b.name,
            buildings.len(),
            b.parry_indices.len()
        );
        per_city.push((b.name.clone(), b.parry_indices.len(), one, many, edit));
    }
    let find = |name: &str| per_city.iter().find(|(n, ..)| n == name);
    if let (Some(small), Some(big)) = (find("city_s3"), find("city_s10")) {
        for (what, t_small, t_big) in [
            ("moving the vehicle", small.2, big.2),
            ("moving buildings in turn", small.3, big.3),
            ("editing the vehicle's mesh", small.4, big.4),
        ] {
            println!(
                "scaling: {} -> {} triangles: {what} {t_small:.3} -> {t_big:.3} us per edit ({:.2}x)",
                small.1,
                big.1,
                t_big / t_small
            );
        }
    }
    println!();
}

/// Milliseconds a structural edit takes with the scene index's next use, which brings
/// the index up to date (`SceneIndex::restructure`): a marker (one triangle under a
/// transform) added under the root, then taken away again, [`STRUCTURAL_EDITS`] times
/// each, the median; and a build of the index afresh, which such an edit cost before.
/// The markers stay in the index, removed, until the next rebuild.
fn print_structural_edits(benches: &mut [Bench]) {
    'scenes: for b in benches.iter_mut() {
        let Some(bound) = b.scene.node_bound(b.root) else {
            continue;
        };
        let marker = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .expect("three vertices");
        let drawable = b.scene.add_drawable("marker", marker);
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        for k in 0..STRUCTURAL_EDITS {
            let (Ok(t), geode) = (
                b.scene
                    .add_transform(format!("marker-{k}"), DMat4::from_translation(bound.center)),
                b.scene.add_geode(format!("marker-{k}-geode")),
            ) else {
                continue 'scenes;
            };
            let linked = b.scene.add_drawable_to_geode(geode, drawable).is_ok()
                && b.scene.add_child(t, geode).is_ok();
            let time = |b: &mut Bench, edit: &dyn Fn(&mut SceneGraph) -> bool| {
                let start = Instant::now();
                let done = edit(&mut b.scene);
                std::hint::black_box(b.scene.scene_index(b.root));
                done.then(|| start.elapsed().as_secs_f64() * 1e3)
            };
            let root = b.root;
            let (Some(add), Some(remove)) = (
                time(b, &|s| linked && s.add_child(root, t).is_ok()),
                time(b, &|s| s.remove_child(root, t).is_ok()),
            ) else {
                continue 'scenes;
            };
            added.push(add);
            removed.push(remove);
        }
        added.sort_by(f64::total_cmp);
        removed.sort_by(f64::total_cmp);
        let start = Instant::now();
        std::hint::black_box(SceneIndex::build(&b.scene, b.root));
        let build = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "structure {:>12} a marker added under the root: {:.3} ms, taken away: {:.3} ms, each with the index's next use; a build of the index: {build:.3} ms",
            b.name,
            added[STRUCTURAL_EDITS / 2],
            removed[STRUCTURAL_EDITS / 2],
        );
    }
    println!();
}

/// How many markers [`print_structural_edits`] adds and takes away (the median of as
/// many times).
const STRUCTURAL_EDITS: usize = 7;

/// Milliseconds a move of the whole scene takes with the scene index's next use: a
/// transform (a model turned in a viewer, a floating origin) put above the root, its
/// index built, then its matrix set to a turn, and to a translation, a little further
/// at each move ([`WHOLE_SCENE_MOVES`] of each, the median); the world tree follows,
/// and every instance's frame and world box are computed again (on the machine's cores
/// from 4 096 instances on). The transform is removed again after.
fn print_whole_scene_moves(benches: &mut [Bench]) {
    for b in benches.iter_mut() {
        let Ok(model) = b.scene.add_transform("model", DMat4::IDENTITY) else {
            continue;
        };
        if b.scene.add_child(model, b.root).is_err() {
            continue;
        }
        std::hint::black_box(b.scene.scene_index(model));
        let mut time = |pose: &dyn Fn(f64) -> DMat4| {
            let mut times: Vec<f64> = (1..=WHOLE_SCENE_MOVES)
                .map(|step| {
                    let start = Instant::now();
                    b.scene
                        .set_matrix(model, pose(step as f64))
                        .expect("a finite, affine pose");
                    std::hint::black_box(b.scene.scene_index(model));
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        let turn = time(&|step| DMat4::from_rotation_y(0.01 * step));
        let shift = time(&|step| DMat4::from_translation(DVec3::new(0.5 * step, 0.0, 0.25)));
        let instances = b
            .scene
            .scene_index(model)
            .map_or(0, |i| i.instances().len());
        // (Its index with it.)
        let _ = b.scene.remove_node(model);
        println!(
            "whole scene {:>10} turned: {turn:.3} ms, moved: {shift:.3} ms, each with the index's next use ({instances} instances)",
            b.name
        );
    }
    println!();
}

/// How many moves of each kind [`print_whole_scene_moves`] times (the median of as
/// many).
const WHOLE_SCENE_MOVES: usize = 9;

// ----- the C++ peers: OpenSceneGraph and Embree ----------------------------------------

/// Writes the scene's flattened triangles, its meshes and the ratio table's [`TABLE`]
/// segments and boxes (as the planes our `Polytope` holds) in the format
/// benches/peers/peers.cpp reads.
fn write_peer_workload(b: &Bench, path: &Path) -> std::io::Result<()> {
    fn u32_of(n: usize) -> [u8; 4] {
        u32::try_from(n)
            .expect("workload fits u32 counts")
            .to_le_bytes()
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"SIPEERS2");
    out.extend_from_slice(&u32_of(b.parry_vertices.len()));
    for v in &b.parry_vertices {
        for x in v.to_array() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out.extend_from_slice(&u32_of(b.meshes.len()));
    for mesh in &b.meshes {
        out.extend_from_slice(&mesh.first.to_le_bytes());
        out.extend_from_slice(&mesh.count.to_le_bytes());
        out.extend_from_slice(&u32_of(mesh.path.len()));
        for node in &mesh.path {
            out.extend_from_slice(&node.to_le_bytes());
        }
    }
    out.extend_from_slice(&u32_of(b.parry_indices.len()));
    for t in &b.parry_indices {
        for i in t {
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    let f64s = |out: &mut Vec<u8>, values: &[f64]| {
        for x in values {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    out.extend_from_slice(&u32_of(TABLE));
    for (s, e) in &b.segments[..TABLE] {
        f64s(&mut out, &s.to_array());
        f64s(&mut out, &e.to_array());
    }
    out.extend_from_slice(&u32_of(b.boxes.len()));
    for &(c, half, q) in &b.boxes {
        let polytope = Polytope::from_oriented_box(c, half, q).unwrap();
        assert_eq!(polytope.planes().len(), 6);
        for plane in polytope.planes() {
            f64s(&mut out, &plane.to_array());
        }
    }
    std::fs::write(path, out)
}

/// Our figures (time, answer) that [`run_peers`] sets beside the C++ peers'.
struct Ours {
    all: (f64, usize),
    summaries: (f64, usize),
    nearest: (f64, usize),
    boxes: (f64, usize),
    build: (f64, usize),
    /// All hits and boxes through the query tool's path, when it could be timed.
    tool_all: Option<(f64, usize)>,
    tool_boxes: Option<(f64, usize)>,
}

/// `BENCH_PEERS=<binary>` (benches/peers/build.sh makes it): the C++ peers answer this
/// scene's segments and boxes on its flattened triangles, right after ours in the same
/// run, and a ratio line is printed for each against our times. OpenSceneGraph 3.6
/// gets the scene's node paths as nested groups (no transforms: the vertices are in
/// world space) with one geode per placed drawable and a KdTree each; Embree 3 one
/// scene of all triangles.
fn run_peers(b: &Bench, ours: &Ours) {
    let Ours {
        all,
        summaries,
        nearest,
        boxes,
        build,
        ..
    } = *ours;
    let Some(binary) = std::env::var_os("BENCH_PEERS") else {
        return;
    };
    let file = std::env::temp_dir().join(format!("scene-intersect-peers-{}.bin", b.name));
    if let Err(e) = write_peer_workload(b, &file) {
        eprintln!("peers: cannot write {}: {e}", file.display());
        return;
    }
    let output = std::process::Command::new(&binary).arg(&file).output();
    let _ = std::fs::remove_file(&file);
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!("peers failed: {}", String::from_utf8_lossy(&o.stderr));
            return;
        }
        Err(e) => {
            eprintln!("peers: cannot run {}: {e}", binary.to_string_lossy());
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let peer = |name: &str| {
        stdout.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("peer") && words.next() == Some(name))
                .then(|| Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?)))
                .flatten()
        })
    };
    for (what, ours, engine, name) in [
        ("segments all hits", all, "osg", "osg_segments_all"),
        ("segments all hits", all, "embree", "embree_segments_all"),
        // Embree's all-hits answer is a parameter and ids: against summaries too.
        (
            "segs all (summaries)",
            summaries,
            "embree",
            "embree_segments_all",
        ),
        ("segments nearest", nearest, "osg", "osg_segments_nearest"),
        (
            "segments nearest",
            nearest,
            "embree",
            "embree_segments_nearest",
        ),
        ("boxes (6 planes)", boxes, "osg", "osg_boxes"),
        ("build", build, "osg", "osg_build"),
        ("build", build, "embree", "embree_build"),
    ] {
        match peer(name) {
            Some(theirs) => ratio_line(&b.name, what, ours, engine, theirs),
            None => eprintln!("peers: no line for {name}"),
        }
    }
    // The query tool's path (`examples/query.rs`) against the same peer lines.
    let tool = [
        (
            "segs all (query tool)",
            ours.tool_all,
            "osg",
            "osg_segments_all",
        ),
        (
            "segs all (query tool)",
            ours.tool_all,
            "embree",
            "embree_segments_all",
        ),
        ("boxes (query tool)", ours.tool_boxes, "osg", "osg_boxes"),
    ];
    for (what, tool_figure, engine, name) in tool {
        if let (Some(tool_figure), Some(theirs)) = (tool_figure, peer(name)) {
            ratio_line(&b.name, what, tool_figure, engine, theirs);
        }
    }
}

// ----- criterion -------------------------------------------------------------------

/// `BENCH_PROFILE=<workload>[:<repeats>]` runs one side of one workload (ours: `all`,
/// `all_summaries`, `nearest`, `fresh_nearest` (a new intersector each query),
/// `picks`, `boxes`, `boxes_summaries`, `box_planes`, `spheres`, `spheres_summaries`,
/// `build`; the query tool's path, [`ours_query_tool`], as `tool_all`, `tool_boxes`,
/// `tool_spheres`, whose queries run on a rayon worker: profile them with callgrind's
/// `--toggle-collect='*answer_query_lines*'`; parry's: `parry_all`,
/// `parry_nearest`, `parry_picks`, `parry_boxes`, `parry_spheres`, `parry_build`) over
/// and over on the selected scenes, for a profiler (`perf record`, `valgrind
/// --tool=callgrind`), and exits.
fn profile_only(benches: &[Bench], spec: &str) {
    let (what, repeats) = spec.split_once(':').unwrap_or((spec, "200"));
    let repeats: usize = repeats.parse().unwrap_or(200);
    // BENCH_QUERIES=<n>: that many distinct queries per repeat (default: the criterion
    // batch; the ratio table's count is TABLE).
    let n = std::env::var("BENCH_QUERIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(BATCH)
        .clamp(1, TABLE);
    for b in benches {
        let mut v = IntersectionVisitor::new();
        // The query tool's lines and pool, made before the clock.
        let tool = what.starts_with("tool_").then(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
            (query_lines(b, n), pool.expect("a one-thread pool"))
        });
        let tool_answers = |kind: usize| {
            let Some(([segments, boxes, spheres], pool)) = &tool else {
                unreachable!("made for every tool_ workload")
            };
            ours_query_tool(b, pool, [segments, boxes, spheres][kind])
        };
        let t = Instant::now();
        let mut answers = 0;
        for _ in 0..repeats {
            answers += match what {
                "tool_all" => tool_answers(0),
                "tool_boxes" => tool_answers(1),
                "tool_spheres" => tool_answers(2),
                "all" => ours_segments(b, &mut v, IntersectionLimit::None, n),
                "all_summaries" => ours_segment_summaries(b, &mut v, n),
                "build" => ours_build(b),
                "parry_build" => parry_build(b),
                "nearest" => ours_segments(b, &mut v, IntersectionLimit::Nearest, n),
                "fresh_nearest" => ours_fresh_nearest(b, &mut v, n),
                "picks" => ours_picks(b, &mut v, n),
                "parry_picks" => parry_picks(b, n),
                "boxes" => ours_boxes(b, &mut v, n, HitRecords::Full),
                "boxes_summaries" => ours_boxes(b, &mut v, n, HitRecords::Summaries),
                "box_planes" => ours_box_planes(b, &mut v, n),
                "spheres" => ours_spheres(b, &mut v, n, HitRecords::Full),
                "spheres_summaries" => ours_spheres(b, &mut v, n, HitRecords::Summaries),
                "parry_all" => parry_segments_all(b, n),
                "parry_nearest" => parry_segments_nearest(b, n),
                "parry_boxes" => parry_boxes(b, n),
                "parry_spheres" => parry_spheres(b, n),
                other => panic!("BENCH_PROFILE: unknown workload {other}"),
            };
        }
        let per_query = t.elapsed().as_secs_f64() * 1e6 / (repeats * n) as f64;
        println!(
            "profile {:>16} {what}: {per_query:.3} us per query, {answers} answers",
            b.name
        );
    }
    std::process::exit(0);
}

fn bench_all(c: &mut Criterion) {
    let mut benches = scenes();
    if let Ok(spec) = std::env::var("BENCH_PROFILE") {
        profile_only(&benches, &spec);
    }
    // BENCH_EDITS_ONLY=1: only the `move`, `whole scene` and `structure` lines (a few
    // seconds a scene, where the ratio table takes minutes).
    if std::env::var_os("BENCH_EDITS_ONLY").is_some() {
        print_moves(&mut benches);
        print_whole_scene_moves(&mut benches);
        print_structural_edits(&mut benches);
        return;
    }
    print_ratios(&benches);
    for b in &benches {
        let mut group = c.benchmark_group(&b.name);
        group.sample_size(10);
        group.warm_up_time(std::time::Duration::from_millis(300));
        group.measurement_time(std::time::Duration::from_secs(2));
        let mut v = IntersectionVisitor::new();
        group.bench_function(BenchmarkId::new("segments_all", "ours"), |x| {
            x.iter(|| ours_segments(b, &mut v, IntersectionLimit::None, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_all", "parry"), |x| {
            x.iter(|| parry_segments_all(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_nearest", "ours"), |x| {
            x.iter(|| ours_segments(b, &mut v, IntersectionLimit::Nearest, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_nearest", "parry"), |x| {
            x.iter(|| parry_segments_nearest(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("boxes", "ours"), |x| {
            x.iter(|| ours_boxes(b, &mut v, BATCH, HitRecords::Full))
        });
        group.bench_function(BenchmarkId::new("boxes", "parry"), |x| {
            x.iter(|| parry_boxes(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("spheres", "ours"), |x| {
            x.iter(|| ours_spheres(b, &mut v, BATCH, HitRecords::Full))
        });
        group.bench_function(BenchmarkId::new("spheres", "parry"), |x| {
            x.iter(|| parry_spheres(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("build", "ours"), |x| {
            x.iter(|| ours_build(b))
        });
        group.bench_function(BenchmarkId::new("build", "parry"), |x| {
            x.iter(|| parry_build(b))
        });
        group.finish();
    }
    // Last: the moved and edited instances stay detached from the world tree until the
    // next rebuild, which would slow the queries above on the cities.
    print_moves(&mut benches);
    print_whole_scene_moves(&mut benches);
    print_structural_edits(&mut benches);
}

criterion_group!(benches, bench_all);
criterion_main!(benches);
