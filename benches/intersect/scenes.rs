//! The scenes and their queries: each scene loaded, flattened for parry3d, and given
//! the same segments, picking rays, boxes and spheres for every engine.

use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3, DVec4, Vec3};
use parry3d::shape::TriMesh;
use scene_intersect::prelude::*;

/// Queries per workload batch of the criterion groups and of `BENCH_PROFILE`.
pub(crate) const BATCH: usize = 256;

/// Distinct queries per workload of the ratio table (the first [`BATCH`] are the
/// criterion batch's). A batch of 256 run over and over is answered faster and faster
/// as the branch predictors learn its queries' paths, not as they would meet new
/// queries, and not alike for every engine: littlest_tokyo's nearest segments took
/// 0.45 µs a query (ours) and 0.39 µs (parry) that way, 0.70 and 1.03 µs over 10 000
/// distinct ones. The table times 4 096.
pub(crate) const TABLE: usize = 4096;

pub(crate) struct Rng(u64);
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
pub(crate) struct Bench {
    pub(crate) name: String,
    pub(crate) scene: SceneGraph,
    pub(crate) root: NodeId,
    /// What the loader made of the file (the query tool's drawable names).
    pub(crate) import: GltfImport,
    pub(crate) parry: TriMesh,
    pub(crate) parry_vertices: Vec<Vec3>,
    pub(crate) parry_indices: Vec<[u32; 3]>,
    /// Each placed drawable's run of `parry_indices`.
    pub(crate) meshes: Vec<Mesh>,
    pub(crate) segments: Vec<(DVec3, DVec3)>,
    /// Picking rays: from an eye above the scene through a point of it, to a far plane
    /// 10^6 units away.
    pub(crate) picks: Vec<(DVec3, DVec3)>,
    pub(crate) boxes: Vec<(DVec3, DVec3, DQuat)>,
    /// The same boxes as their six planes, as a query file gives them.
    pub(crate) box_planes: Vec<Vec<DVec4>>,
    pub(crate) spheres: Vec<(DVec3, f64)>,
    /// Segments of [`LOCAL_SEGMENT_LENGTH`] from a point of the box in any direction:
    /// the scaling line's segments whose length does not grow with the scene.
    pub(crate) local_segments: Vec<(DVec3, DVec3)>,
}

/// The length of [`Bench::local_segments`], in scene units (metres on the generated
/// cities: a few buildings).
pub(crate) const LOCAL_SEGMENT_LENGTH: f64 = 100.0;

/// The scene's triangles in world space, as parry and Embree get them.
pub(crate) struct Flattened {
    pub(crate) vertices: Vec<Vec3>,
    pub(crate) triangles: Vec<[u32; 3]>,
    /// Each placed drawable's run of `triangles`, for the peers that keep a scene graph
    /// (OpenSceneGraph, see `run_peers`).
    pub(crate) meshes: Vec<Mesh>,
}

/// A placed drawable's run of triangles in [`Flattened::triangles`].
pub(crate) struct Mesh {
    pub(crate) first: u32,
    pub(crate) count: u32,
    /// The node path it was reached by, root first, each node as a dense number.
    pub(crate) path: Vec<u32>,
}

/// Every triangle of the scene in world space, walking all node paths.
pub(crate) fn flatten(scene: &SceneGraph, root: NodeId) -> Flattened {
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

pub(crate) fn load(path: &Path) -> Option<Bench> {
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

pub(crate) fn scenes() -> Vec<Bench> {
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
