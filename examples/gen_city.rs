//! Generates a procedural city with the library's own scene-graph API and writes it as
//! binary glTF with [`scene_intersect::io::gltf_writer`].
//!
//! ```text
//! cargo run --release --example gen_city -- [--seed N] [--out PATH] [--scale K] [--detail D]
//! ```
//!
//! The default output, `data/city.glb` (relative to the crate root), is the city the other
//! examples, tests and benchmarks use; regenerate it with no arguments.
//!
//! # Conventions and layout
//! glTF conventions: +Y up, metres, the ground is the `y = 0` plane. The city is a grid of
//! `6K × 6K` blocks (`K` = `--scale`), centred near the origin. Block widths (along x)
//! and depths (along z) are whole metres drawn in `60..=90`; streets are 12 m wide and
//! run between every pair of blocks and around the outside. Street centre lines are at
//! `x = X[0..=6K]` and `z = Z[0..=6K]`, with `X[0]` the west edge and
//! `X[i + 1] = X[i] + 12 + width[i]` (the same for `Z`); the program prints them.
//!
//! # Hierarchy (node names)
//! ```text
//! city (Group)
//! ├── district_I_J (Group; 2K × 2K districts of 3 × 3 blocks)
//! │   └── block_i_j (Transform: translation to the block's min corner)
//! │       └── building_k (Transform: translation · rotation by k·90° about Y · non-uniform scale)
//! │           └── proto_* (Geode shared by every building of that prototype)
//! ├── ground      (Geode: TRIANGLE_STRIP runs, 10 m cells, city + 60 m margin, y = 0)
//! ├── lamp_posts  (Geode: LINES, 5 m vertical posts on the sidewalks every ~25 m)
//! ├── lights      (Geode: POINTS, a lamp on each post + traffic signals at crossings)
//! ├── route       (Geode: LINE_STRIP at y = 0.5 along street centre lines, closed)
//! └── vehicle     (Transform at the route start, facing the first leg)
//!     └── vehicle_body (Geode: closed car mesh, 4.5 m long along +Z, 1.8 m wide, 1.5 m tall)
//! ```
//!
//! # Prototypes
//! Ten building prototypes, each a closed mesh wound outward, modelled in a unit
//! footprint (`x, z ∈ [-0.5, 0.5]`, `y ∈ [0, 1]`) and sized by the building transform.
//! They deliberately use every primitive-set kind: indexed `u16` TRIANGLES (most),
//! QUADS (`DrawElements`), QUAD_STRIP walls, TRIANGLE_STRIP walls (`DrawArrays` /
//! `DrawArrayLengths`), TRIANGLE_FAN roofs and a POLYGON floor. `--detail D` (default 2)
//! splits every wall into `D` storey bands: more triangles, same shape. Walls of adjacent
//! faces share their band heights, so the meshes stay closed without T-junctions.
//!
//! # Sizes (default seed, detail 2)
//! Instanced triangles (summed over every building instance, plus ground, car):
//! scale 1: 19 420 (323 buildings, 206 KB file); scale 3: 178 166 (3 480 buildings,
//! 1.7 MB); scale 10: 1 859 000 (37 430 buildings, 17 MB). `--detail 3` takes scale 10 to
//! 2 320 420. The file stays small because every building reuses a prototype mesh.
//!
//! # The route
//! An L-shaped closed tour through the centre: with `a = K`, `c = 3K`, `e = 5K` it visits
//! `(X[a], Z[a]) → (X[e], Z[a]) → (X[e], Z[c]) → (X[c], Z[c]) → (X[c], Z[e]) →
//! (X[a], Z[e]) → (X[a], Z[a])`, listing every intersection it crosses as a waypoint.
//! It runs on street centre lines only, so it never passes through a building.
//!
//! Everything random comes from a seeded SplitMix64 generator, so a seed always
//! gives the same file.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use glam::{DMat4, DVec3, DVec4, Vec2, Vec3};
use scene_intersect::bounding::BoundingBox;
use scene_intersect::drawable::{Geometry, Indices, PrimitiveFunctor, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{DrawableId, GraphError, NodeId, NodeKind, SceneGraph};
use scene_intersect::io::gltf_writer::glb_bytes;

/// Street width, metres.
const STREET: f64 = 12.0;
/// Sidewalk inside every block edge, metres (lamp posts stand on it).
const SIDEWALK: f64 = 4.0;
/// Distance of the lamp posts from the block edge.
const LAMP_INSET: f64 = 1.5;
/// Height of the lamp posts.
const LAMP_HEIGHT: f32 = 5.0;
/// Blocks per district side.
const DISTRICT_BLOCKS: usize = 3;
/// Ground cell size and margin around the city.
const GROUND_CELL: f64 = 10.0;
const GROUND_MARGIN: f64 = 60.0;
/// Height of the route polyline above the street.
const ROUTE_HEIGHT: f32 = 0.5;

/// Any error of the generator, as a message for the user.
type Error = Box<dyn std::error::Error>;

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("gen_city: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_city: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: gen_city [--seed N] [--out PATH] [--scale K] [--detail D]
  --seed N     random seed (default 20240601)
  --out PATH   output .glb (default data/city.glb in the crate root)
  --scale K    city of 6K x 6K blocks, K in 1..=32 (default 1)
  --detail D   storeys per building wall, D in 1..=64 (default 2)";

/// Command-line options.
#[derive(Debug)]
struct Options {
    seed: u64,
    out: PathBuf,
    scale: usize,
    detail: usize,
}

impl Options {
    /// Parses the arguments; `Ok(None)` when help was asked for.
    fn parse(args: impl Iterator<Item = String>) -> Result<Option<Self>, String> {
        let mut options = Options {
            seed: 20_240_601,
            out: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb"),
            scale: 1,
            detail: 2,
        };
        let mut args = args.peekable();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Ok(None);
            }
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--seed" => options.seed = parse_number(&flag, &value()?, 0, u64::MAX)?,
                "--out" => options.out = PathBuf::from(value()?),
                "--scale" => options.scale = parse_number(&flag, &value()?, 1, 32)? as usize,
                "--detail" => options.detail = parse_number(&flag, &value()?, 1, 64)? as usize,
                other => return Err(format!("unknown option '{other}'")),
            }
        }
        Ok(Some(options))
    }
}

/// An integer option value in `lo..=hi`.
fn parse_number(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{flag} {n} is out of range {lo}..={hi}")),
        Err(_) => Err(format!("{flag} expects a whole number, got '{text}'")),
    }
}

/// SplitMix64: a tiny, well-mixed, seedable generator (Steele, Lea & Flood 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from the top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `lo..=hi`.
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

fn run(options: &Options) -> Result<(), Error> {
    let mut rng = SplitMix64(options.seed);
    let mut scene = SceneGraph::new();
    let city = build_city(&mut scene, &mut rng, options)?;

    let bytes = glb_bytes(&scene, &[city.root])?;
    if let Some(dir) = options.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&options.out, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", options.out.display()))?;

    let stats = Stats::of(&scene, city.root);
    println!(
        "city: seed {}, scale {}, detail {}",
        options.seed, options.scale, options.detail
    );
    println!(
        "  {} x {} blocks, {} buildings, {} prototypes",
        city.streets_x.len() - 1,
        city.streets_z.len() - 1,
        city.buildings,
        PROTOTYPES.len()
    );
    println!("  street centre lines x = {:?}", city.streets_x);
    println!("  street centre lines z = {:?}", city.streets_z);
    println!(
        "  route: {} waypoints, starts at ({}, {}); vehicle there facing +x",
        city.route.len(),
        city.route[0].x,
        city.route[0].z
    );
    println!(
        "  nodes written {}, meshes {}, instanced triangles {}",
        stats.nodes, stats.meshes, stats.triangles
    );
    println!(
        "  bbox min ({:.1}, {:.1}, {:.1}) max ({:.1}, {:.1}, {:.1})",
        stats.bbox.min.x,
        stats.bbox.min.y,
        stats.bbox.min.z,
        stats.bbox.max.x,
        stats.bbox.max.y,
        stats.bbox.max.z
    );
    println!("  wrote {} bytes to {}", bytes.len(), options.out.display());
    Ok(())
}

// ----- the city --------------------------------------------------------------------------

/// What the generator built, for the summary.
struct City {
    root: NodeId,
    streets_x: Vec<f64>,
    streets_z: Vec<f64>,
    route: Vec<Vec3>,
    buildings: usize,
}

/// Street centre lines along one axis for `blocks` blocks of random sizes, shifted so the
/// city is centred on the origin (to the metre).
fn street_lines(rng: &mut SplitMix64, blocks: usize) -> Vec<f64> {
    let mut lines = vec![0.0];
    for _ in 0..blocks {
        let size = rng.int(60, 90) as f64;
        let last = lines[lines.len() - 1];
        lines.push(last + STREET + size);
    }
    let shift = (lines[blocks] / 2.0).round();
    lines.iter().map(|x| x - shift).collect()
}

fn build_city(
    scene: &mut SceneGraph,
    rng: &mut SplitMix64,
    options: &Options,
) -> Result<City, Error> {
    let blocks = 6 * options.scale;
    let xs = street_lines(rng, blocks);
    let zs = street_lines(rng, blocks);
    let root = scene.add_group("city");

    // One shared geode per prototype.
    let mut prototypes = Vec::with_capacity(PROTOTYPES.len());
    for proto in PROTOTYPES {
        let geometry = (proto.build)(options.detail)?;
        prototypes.push(geode(scene, proto.name, geometry)?);
    }

    // Districts → blocks → buildings.
    let districts = blocks / DISTRICT_BLOCKS;
    let mut district_nodes = Vec::with_capacity(districts * districts);
    for dj in 0..districts {
        for di in 0..districts {
            let d = scene.add_group(format!("district_{di}_{dj}"));
            scene.add_child(root, d)?;
            district_nodes.push(d);
        }
    }
    let centre = DVec3::ZERO;
    let half_extent = (xs[blocks] - xs[0]).max(zs[blocks] - zs[0]) / 2.0;
    let mut buildings = 0;
    for j in 0..blocks {
        for i in 0..blocks {
            let x0 = xs[i] + STREET / 2.0;
            let z0 = zs[j] + STREET / 2.0;
            let (w, d) = (xs[i + 1] - xs[i] - STREET, zs[j + 1] - zs[j] - STREET);
            let block = scene.add_transform(
                format!("block_{i}_{j}"),
                DMat4::from_translation(DVec3::new(x0, 0.0, z0)),
            )?;
            let district = district_nodes[(j / DISTRICT_BLOCKS) * districts + i / DISTRICT_BLOCKS];
            scene.add_child(district, block)?;
            // Downtown (near the centre) is taller.
            let block_centre = DVec3::new(x0 + w / 2.0, 0.0, z0 + d / 2.0);
            let centrality = 1.0 - ((block_centre - centre).length() / half_extent).min(1.0);
            let cols = lots_along(w);
            let rows = lots_along(d);
            let lot_w = (w - 2.0 * SIDEWALK) / cols as f64;
            let lot_d = (d - 2.0 * SIDEWALK) / rows as f64;
            for r in 0..rows {
                for c in 0..cols {
                    let lot_centre = DVec3::new(
                        SIDEWALK + lot_w * (c as f64 + 0.5),
                        0.0,
                        SIDEWALK + lot_d * (r as f64 + 0.5),
                    );
                    let kind = rng.int(0, PROTOTYPES.len() as u64 - 1) as usize;
                    let proto = &PROTOTYPES[kind];
                    // World footprint inside the lot, leaving at least 1.5 m around.
                    let fx = (lot_w - 3.0) * rng.range(0.65, 1.0);
                    let fz = (lot_d - 3.0) * rng.range(0.65, 1.0);
                    let height = rng.range(proto.height.0, proto.height.1)
                        * (1.0 + 1.5 * centrality * proto.downtown);
                    let quarter_turns = rng.int(0, 3) as usize;
                    let matrix = building_matrix(lot_centre, quarter_turns, fx, height, fz);
                    let b = scene.add_transform(format!("building_{buildings}"), matrix)?;
                    scene.add_child(block, b)?;
                    scene.add_child(b, prototypes[kind])?;
                    buildings += 1;
                }
            }
        }
    }

    let ground = geode(scene, "ground", ground(&xs, &zs)?)?;
    scene.add_child(root, ground)?;
    let (posts, lamps) = lamp_posts(&xs, &zs)?;
    let posts = geode(scene, "lamp_posts", posts)?;
    scene.add_child(root, posts)?;
    let lights = geode(scene, "lights", lights(&xs, &zs, lamps)?)?;
    scene.add_child(root, lights)?;

    let route = route(&xs, &zs, options.scale);
    let count = u32::try_from(route.len())?;
    let route_geometry = Geometry::new(route.clone()).with_primitive_set(
        PrimitiveSet::draw_arrays(PrimitiveMode::LineStrip, 0, count),
    )?;
    let route_node = geode(scene, "route", route_geometry)?;
    scene.add_child(root, route_node)?;

    let forward = (route[1] - route[0]).normalize().as_dvec3();
    let start = DVec3::new(f64::from(route[0].x), 0.0, f64::from(route[0].z));
    let vehicle = scene.add_transform("vehicle", facing(start, forward))?;
    scene.add_child(root, vehicle)?;
    let body = geode(scene, "vehicle_body", car()?)?;
    scene.add_child(vehicle, body)?;

    Ok(City {
        root,
        streets_x: xs,
        streets_z: zs,
        route,
        buildings,
    })
}

/// How many lots (2 to 4) fit along a block side of `size` metres: lots of at least 18 m.
fn lots_along(size: f64) -> usize {
    (((size - 2.0 * SIDEWALK) / 18.0) as usize).clamp(2, 4)
}

/// A geode holding one drawable of the same name.
fn geode(scene: &mut SceneGraph, name: &str, geometry: Geometry) -> Result<NodeId, GraphError> {
    let drawable: DrawableId = scene.add_drawable(name, geometry);
    let geode = scene.add_geode(name);
    scene.add_drawable_to_geode(geode, drawable)?;
    Ok(geode)
}

/// `translation · rotation(quarter_turns · 90° about Y) · scale`, the scale chosen so the
/// rotated unit footprint covers `fx × fz` metres. Built from exact 0/±1 entries rather
/// than `sin`/`cos`, so the matrix has no rounding noise.
fn building_matrix(at: DVec3, quarter_turns: usize, fx: f64, height: f64, fz: f64) -> DMat4 {
    const COS: [f64; 4] = [1.0, 0.0, -1.0, 0.0];
    const SIN: [f64; 4] = [0.0, 1.0, 0.0, -1.0];
    let (c, s) = (COS[quarter_turns % 4], SIN[quarter_turns % 4]);
    // Odd quarter turns swap which local axis spans world x.
    let (sx, sz) = if quarter_turns % 2 == 0 {
        (fx, fz)
    } else {
        (fz, fx)
    };
    let rotation = DMat4::from_cols(
        DVec4::new(c, 0.0, -s, 0.0),
        DVec4::Y,
        DVec4::new(s, 0.0, c, 0.0),
        DVec4::W,
    );
    DMat4::from_translation(at) * rotation * DMat4::from_scale(DVec3::new(sx, height, sz))
}

/// A transform at `at` turning local +Z to `forward` (horizontal), +Y staying up.
fn facing(at: DVec3, forward: DVec3) -> DMat4 {
    let right = DVec3::Y.cross(forward); // local +X, so that X × Y = Z.
    DMat4::from_cols(
        right.extend(0.0),
        DVec4::Y,
        forward.extend(0.0),
        at.extend(1.0),
    )
}

/// The ground: one TRIANGLE_STRIP run per row of 10 m cells (wound upward), covering the
/// city plus a margin, at `y = 0`.
fn ground(xs: &[f64], zs: &[f64]) -> Result<Geometry, Error> {
    let (x0, x1) = (xs[0] - GROUND_MARGIN, xs[xs.len() - 1] + GROUND_MARGIN);
    let (z0, z1) = (zs[0] - GROUND_MARGIN, zs[zs.len() - 1] + GROUND_MARGIN);
    let nx = ((x1 - x0) / GROUND_CELL).ceil() as usize;
    let nz = ((z1 - z0) / GROUND_CELL).ceil() as usize;
    let x_at = |i: usize| (x0 + (x1 - x0) * i as f64 / nx as f64) as f32;
    let z_at = |j: usize| (z0 + (z1 - z0) * j as f64 / nz as f64) as f32;
    let mut vertices = Vec::with_capacity(nz * (nx + 1) * 2);
    for j in 0..nz {
        for i in 0..=nx {
            vertices.push(Vec3::new(x_at(i), 0.0, z_at(j)));
            vertices.push(Vec3::new(x_at(i), 0.0, z_at(j + 1)));
        }
    }
    let run = u32::try_from(2 * (nx + 1))?;
    Ok(
        Geometry::new(vertices).with_primitive_set(PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::TriangleStrip,
            first: 0,
            lengths: vec![run; nz],
        })?,
    )
}

/// Lamp posts on every block's sidewalk, `LAMP_INSET` from the kerb, about every 25 m:
/// a LINES geometry of vertical 5 m segments, plus the lamp positions on top.
fn lamp_posts(xs: &[f64], zs: &[f64]) -> Result<(Geometry, Vec<Vec3>), Error> {
    let mut vertices = Vec::new();
    let mut lamps = Vec::new();
    for j in 0..zs.len() - 1 {
        for i in 0..xs.len() - 1 {
            let (bx0, bx1) = (
                xs[i] + STREET / 2.0 + LAMP_INSET,
                xs[i + 1] - STREET / 2.0 - LAMP_INSET,
            );
            let (bz0, bz1) = (
                zs[j] + STREET / 2.0 + LAMP_INSET,
                zs[j + 1] - STREET / 2.0 - LAMP_INSET,
            );
            let mut edge = |a: (f64, f64), b: (f64, f64)| {
                // Posts from a (included) towards b (excluded: the next edge's start).
                let n = ((b.0 - a.0).abs().max((b.1 - a.1).abs()) / 25.0)
                    .round()
                    .max(1.0) as usize;
                for k in 0..n {
                    let t = k as f64 / n as f64;
                    let (x, z) = (
                        (a.0 + (b.0 - a.0) * t) as f32,
                        (a.1 + (b.1 - a.1) * t) as f32,
                    );
                    vertices.push(Vec3::new(x, 0.0, z));
                    vertices.push(Vec3::new(x, LAMP_HEIGHT, z));
                    lamps.push(Vec3::new(x, LAMP_HEIGHT, z));
                }
            };
            edge((bx0, bz0), (bx1, bz0));
            edge((bx1, bz0), (bx1, bz1));
            edge((bx1, bz1), (bx0, bz1));
            edge((bx0, bz1), (bx0, bz0));
        }
    }
    let count = u32::try_from(vertices.len())?;
    let geometry = Geometry::new(vertices).with_primitive_set(PrimitiveSet::draw_arrays(
        PrimitiveMode::Lines,
        0,
        count,
    ))?;
    Ok((geometry, lamps))
}

/// POINTS: the lamps, then four traffic signals (4 m high, on the corners) at every
/// inner street crossing.
fn lights(xs: &[f64], zs: &[f64], mut points: Vec<Vec3>) -> Result<Geometry, Error> {
    let corner = STREET / 2.0 + 1.0;
    for &z in &zs[1..zs.len() - 1] {
        for &x in &xs[1..xs.len() - 1] {
            for (dx, dz) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                points.push(Vec3::new(
                    (x + dx * corner) as f32,
                    4.0,
                    (z + dz * corner) as f32,
                ));
            }
        }
    }
    let count = u32::try_from(points.len())?;
    Ok(
        Geometry::new(points).with_primitive_set(PrimitiveSet::draw_arrays(
            PrimitiveMode::Points,
            0,
            count,
        ))?,
    )
}

/// The closed tour (see the module docs), with every crossed intersection as a waypoint;
/// the last waypoint repeats the first.
fn route(xs: &[f64], zs: &[f64], scale: usize) -> Vec<Vec3> {
    let (a, c, e) = (scale, 3 * scale, 5 * scale);
    let corners = [(a, a), (e, a), (e, c), (c, c), (c, e), (a, e), (a, a)];
    let mut points = vec![];
    for leg in corners.windows(2) {
        let ((i0, j0), (i1, j1)) = (leg[0], leg[1]);
        let steps = i0.abs_diff(i1).max(j0.abs_diff(j1));
        for s in 0..steps {
            let step = |from: usize, to: usize| {
                if to >= from {
                    from + s
                } else {
                    from - s
                }
            };
            let (i, j) = (
                if i0 == i1 { i0 } else { step(i0, i1) },
                if j0 == j1 { j0 } else { step(j0, j1) },
            );
            points.push(Vec3::new(xs[i] as f32, ROUTE_HEIGHT, zs[j] as f32));
        }
    }
    points.push(points[0]);
    points
}

// ----- meshes ----------------------------------------------------------------------------

/// A building prototype: how to build its mesh, its height range in metres, and how much
/// taller it gets downtown (0: not at all).
struct Prototype {
    name: &'static str,
    build: fn(usize) -> Result<Geometry, GraphError>,
    height: (f64, f64),
    downtown: f64,
}

const PROTOTYPES: [Prototype; 10] = [
    Prototype {
        name: "proto_box",
        build: proto_box,
        height: (10.0, 30.0),
        downtown: 1.0,
    },
    Prototype {
        name: "proto_slab_quads",
        build: proto_slab_quads,
        height: (15.0, 40.0),
        downtown: 1.0,
    },
    Prototype {
        name: "proto_quad_strip_box",
        build: proto_quad_strip_box,
        height: (8.0, 25.0),
        downtown: 0.5,
    },
    Prototype {
        name: "proto_l_shape",
        build: proto_l_shape,
        height: (10.0, 25.0),
        downtown: 0.5,
    },
    Prototype {
        name: "proto_setback_tower",
        build: proto_setback_tower,
        height: (40.0, 80.0),
        downtown: 1.0,
    },
    Prototype {
        name: "proto_stepped_tower",
        build: proto_stepped_tower,
        height: (50.0, 100.0),
        downtown: 1.0,
    },
    Prototype {
        name: "proto_pyramid_roof",
        build: proto_pyramid_roof,
        height: (8.0, 14.0),
        downtown: 0.0,
    },
    Prototype {
        name: "proto_octagon_tower",
        build: proto_octagon_tower,
        height: (30.0, 70.0),
        downtown: 1.0,
    },
    Prototype {
        name: "proto_gable_house",
        build: proto_gable_house,
        height: (7.0, 12.0),
        downtown: 0.0,
    },
    Prototype {
        name: "proto_courtyard",
        build: proto_courtyard,
        height: (12.0, 24.0),
        downtown: 0.3,
    },
];

/// A mesh under construction: vertices, finished primitive sets, and indexed triangles
/// (`u16`) collected into one TRIANGLES set by [`MeshBuilder::finish`].
///
/// Orientation conventions: a footprint polygon is given in `(x, z)` with positive
/// shoelace area (`Σ x_i z_{i+1} − x_{i+1} z_i > 0`); its walls then face outward when
/// written as `(bottom_i, top_i, top_{i+1}, bottom_{i+1})`, a fan over it in order faces
/// down (−Y), and in reverse order faces up.
#[derive(Default)]
struct MeshBuilder {
    vertices: Vec<Vec3>,
    sets: Vec<PrimitiveSet>,
    triangles: Vec<u16>,
}

impl MeshBuilder {
    fn vertex(&mut self, p: Vec3) -> u16 {
        self.vertices.push(p);
        // Prototypes have a few thousand vertices at most (detail ≤ 64).
        (self.vertices.len() - 1) as u16
    }

    fn ring(&mut self, poly: &[Vec2], y: f32) -> Vec<u16> {
        poly.iter()
            .map(|p| self.vertex(Vec3::new(p.x, y, p.y)))
            .collect()
    }

    fn tri(&mut self, a: u16, b: u16, c: u16) {
        self.triangles.extend_from_slice(&[a, b, c]);
    }

    fn quad(&mut self, a: u16, b: u16, c: u16, d: u16) {
        self.tri(a, b, c);
        self.tri(a, c, d);
    }

    /// Outward walls of a prism over `poly` from `y0` to `y1`, in `storeys` bands;
    /// returns the bottom and top rings.
    fn walls(&mut self, poly: &[Vec2], y0: f32, y1: f32, storeys: usize) -> (Vec<u16>, Vec<u16>) {
        let rings: Vec<Vec<u16>> = (0..=storeys)
            .map(|s| self.ring(poly, lerp(y0, y1, s, storeys)))
            .collect();
        let n = poly.len();
        for band in rings.windows(2) {
            let (b, t) = (&band[0], &band[1]);
            for i in 0..n {
                let j = (i + 1) % n;
                self.quad(b[i], t[i], t[j], b[j]);
            }
        }
        (rings[0].clone(), rings[storeys].clone())
    }

    /// A fan over a ring that is star-shaped from its first vertex.
    fn cap(&mut self, ring: &[u16], up: bool) {
        for i in 1..ring.len() - 1 {
            if up {
                self.tri(ring[0], ring[i + 1], ring[i]);
            } else {
                self.tri(ring[0], ring[i], ring[i + 1]);
            }
        }
    }

    /// The flat band between an outer ring and an inner ring of the same shape.
    fn annulus(&mut self, outer: &[u16], inner: &[u16], up: bool) {
        let n = outer.len();
        for i in 0..n {
            let j = (i + 1) % n;
            if up {
                self.quad(outer[i], inner[i], inner[j], outer[j]);
            } else {
                self.quad(outer[i], outer[j], inner[j], inner[i]);
            }
        }
    }

    /// Appends vertices drawn by one `DrawArrays` set.
    fn arrays(&mut self, mode: PrimitiveMode, vertices: Vec<Vec3>) {
        let first = self.vertices.len() as u32;
        self.sets.push(PrimitiveSet::draw_arrays(
            mode,
            first,
            vertices.len() as u32,
        ));
        self.vertices.extend(vertices);
    }

    /// Appends runs drawn by one `DrawArrayLengths` set (a `DrawArrays` for one run).
    fn array_runs(&mut self, mode: PrimitiveMode, runs: Vec<Vec<Vec3>>) {
        if runs.len() == 1 {
            return self.arrays(mode, runs.into_iter().flatten().collect());
        }
        let first = self.vertices.len() as u32;
        let lengths = runs.iter().map(|r| r.len() as u32).collect();
        self.sets.push(PrimitiveSet::DrawArrayLengths {
            mode,
            first,
            lengths,
        });
        self.vertices.extend(runs.into_iter().flatten());
    }

    /// The geometry: the collected triangles (if any) as an indexed `u16` TRIANGLES set
    /// first, then the other sets in the order they were added.
    fn finish(self) -> Result<Geometry, GraphError> {
        let mut geometry = Geometry::new(self.vertices);
        if !self.triangles.is_empty() {
            geometry.add_primitive_set(PrimitiveSet::DrawElements {
                mode: PrimitiveMode::Triangles,
                indices: Indices::U16(self.triangles),
            })?;
        }
        for set in self.sets {
            geometry.add_primitive_set(set)?;
        }
        Ok(geometry)
    }
}

/// `y0 + (y1 - y0) · s / n`, exact at both ends.
fn lerp(y0: f32, y1: f32, s: usize, n: usize) -> f32 {
    if s == n {
        y1
    } else {
        y0 + (y1 - y0) * s as f32 / n as f32
    }
}

/// The unit-footprint square scaled by `k`, in positive order.
fn square(k: f32) -> Vec<Vec2> {
    let h = 0.5 * k;
    vec![
        Vec2::new(-h, -h),
        Vec2::new(h, -h),
        Vec2::new(h, h),
        Vec2::new(-h, h),
    ]
}

/// Storey rings of a polygon as strip runs: per band, `bottom_i, top_i` pairs around the
/// polygon and back to the start (outward for TRIANGLE_STRIP and QUAD_STRIP).
fn wall_strips(poly: &[Vec2], y0: f32, y1: f32, storeys: usize) -> Vec<Vec<Vec3>> {
    (0..storeys)
        .map(|s| {
            let (yb, yt) = (lerp(y0, y1, s, storeys), lerp(y0, y1, s + 1, storeys));
            (0..=poly.len())
                .flat_map(|k| {
                    let p = poly[k % poly.len()];
                    [Vec3::new(p.x, yb, p.y), Vec3::new(p.x, yt, p.y)]
                })
                .collect()
        })
        .collect()
}

/// A polygon's corners at height `y`, in the given order.
fn at_height(poly: impl IntoIterator<Item = Vec2>, y: f32) -> Vec<Vec3> {
    poly.into_iter().map(|p| Vec3::new(p.x, y, p.y)).collect()
}

/// Plain box: indexed triangles.
fn proto_box(detail: usize) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let (bottom, top) = m.walls(&square(1.0), 0.0, 1.0, detail);
    m.cap(&bottom, false);
    m.cap(&top, true);
    m.finish()
}

/// Slab: every face a quad of one `u16` QUADS `DrawElements` set.
fn proto_slab_quads(detail: usize) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let poly = square(1.0);
    let rings: Vec<Vec<u16>> = (0..=detail)
        .map(|s| m.ring(&poly, lerp(0.0, 1.0, s, detail)))
        .collect();
    let mut quads = Vec::new();
    for band in rings.windows(2) {
        for i in 0..4 {
            let j = (i + 1) % 4;
            quads.extend_from_slice(&[band[0][i], band[1][i], band[1][j], band[0][j]]);
        }
    }
    let (b, t) = (&rings[0], &rings[detail]);
    quads.extend_from_slice(&[t[0], t[3], t[2], t[1]]);
    quads.extend_from_slice(&[b[0], b[1], b[2], b[3]]);
    m.sets.push(PrimitiveSet::DrawElements {
        mode: PrimitiveMode::Quads,
        indices: Indices::U16(quads),
    });
    m.finish()
}

/// Box with QUAD_STRIP walls and TRIANGLE_FAN roof and floor.
fn proto_quad_strip_box(detail: usize) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let poly = square(1.0);
    m.array_runs(
        PrimitiveMode::QuadStrip,
        wall_strips(&poly, 0.0, 1.0, detail),
    );
    m.arrays(
        PrimitiveMode::TriangleFan,
        at_height([poly[0], poly[3], poly[2], poly[1]], 1.0),
    );
    m.arrays(PrimitiveMode::TriangleFan, at_height(poly, 0.0));
    m.finish()
}

/// L-shaped block: the polygon starts at its reflex corner, from which it is star-shaped,
/// so the caps are fans from there.
fn proto_l_shape(detail: usize) -> Result<Geometry, GraphError> {
    let poly = [
        (-0.1, -0.1),
        (-0.1, 0.5),
        (-0.5, 0.5),
        (-0.5, -0.5),
        (0.5, -0.5),
        (0.5, -0.1),
    ]
    .map(|(x, z)| Vec2::new(x, z));
    let mut m = MeshBuilder::default();
    let (bottom, top) = m.walls(&poly, 0.0, 1.0, detail);
    m.cap(&bottom, false);
    m.cap(&top, true);
    m.finish()
}

/// Stacked tiers of shrinking squares `(scale, y0, y1)`, joined by flat terraces.
fn tiers(detail: usize, tiers: &[(f32, f32, f32)]) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let mut below: Option<Vec<u16>> = None;
    for &(k, y0, y1) in tiers {
        let (bottom, top) = m.walls(&square(k), y0, y1, detail);
        match &below {
            None => m.cap(&bottom, false),
            Some(outer) => m.annulus(outer, &bottom, true),
        }
        below = Some(top);
    }
    if let Some(top) = below {
        m.cap(&top, true);
    }
    m.finish()
}

/// Tower with one setback.
fn proto_setback_tower(detail: usize) -> Result<Geometry, GraphError> {
    tiers(detail, &[(1.0, 0.0, 0.6), (0.6, 0.6, 1.0)])
}

/// Wedding-cake tower with three tiers.
fn proto_stepped_tower(detail: usize) -> Result<Geometry, GraphError> {
    tiers(
        detail,
        &[(1.0, 0.0, 0.45), (0.7, 0.45, 0.8), (0.45, 0.8, 1.0)],
    )
}

/// House with TRIANGLE_STRIP walls, a TRIANGLE_FAN pyramid roof and a POLYGON floor.
fn proto_pyramid_roof(detail: usize) -> Result<Geometry, GraphError> {
    let eave = 0.65;
    let mut m = MeshBuilder::default();
    let poly = square(1.0);
    m.array_runs(
        PrimitiveMode::TriangleStrip,
        wall_strips(&poly, 0.0, eave, detail),
    );
    let mut roof = vec![Vec3::new(0.0, 1.0, 0.0)];
    roof.extend(at_height(
        [poly[0], poly[3], poly[2], poly[1], poly[0]],
        eave,
    ));
    m.arrays(PrimitiveMode::TriangleFan, roof);
    m.arrays(PrimitiveMode::Polygon, at_height(poly, 0.0));
    m.finish()
}

/// Octagonal tower: TRIANGLE_STRIP walls, TRIANGLE_FAN roof and floor around centres.
fn proto_octagon_tower(detail: usize) -> Result<Geometry, GraphError> {
    let poly: Vec<Vec2> = (0..8)
        .map(|k| {
            let a = std::f32::consts::TAU * k as f32 / 8.0;
            Vec2::new(0.5 * a.cos(), 0.5 * a.sin())
        })
        .collect();
    let mut m = MeshBuilder::default();
    m.array_runs(
        PrimitiveMode::TriangleStrip,
        wall_strips(&poly, 0.0, 1.0, detail),
    );
    let mut roof = vec![Vec3::new(0.0, 1.0, 0.0)];
    roof.extend(at_height(poly.iter().rev().copied().chain([poly[7]]), 1.0));
    m.arrays(PrimitiveMode::TriangleFan, roof);
    let mut floor = vec![Vec3::ZERO];
    floor.extend(at_height(poly.iter().copied().chain([poly[0]]), 0.0));
    m.arrays(PrimitiveMode::TriangleFan, floor);
    m.finish()
}

/// House with a gable roof (ridge along x): indexed triangles.
fn proto_gable_house(detail: usize) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let (bottom, e) = m.walls(&square(1.0), 0.0, 0.6, detail);
    m.cap(&bottom, false);
    let r0 = m.vertex(Vec3::new(-0.5, 1.0, 0.0));
    let r1 = m.vertex(Vec3::new(0.5, 1.0, 0.0));
    // Gable triangles on the x = ±0.5 walls, then the two roof slopes.
    m.tri(e[1], r1, e[2]);
    m.tri(e[3], r0, e[0]);
    m.quad(e[0], r0, r1, e[1]);
    m.quad(e[2], r1, r0, e[3]);
    m.finish()
}

/// Perimeter block around a courtyard: outer walls, inner walls facing the yard, and
/// flat rings on top and below.
fn proto_courtyard(detail: usize) -> Result<Geometry, GraphError> {
    let mut m = MeshBuilder::default();
    let (outer_bottom, outer_top) = m.walls(&square(1.0), 0.0, 1.0, detail);
    let inner: Vec<Vec2> = square(0.5).into_iter().rev().collect();
    let (mut inner_bottom, mut inner_top) = m.walls(&inner, 0.0, 1.0, detail);
    inner_bottom.reverse();
    inner_top.reverse();
    m.annulus(&outer_top, &inner_top, true);
    m.annulus(&outer_bottom, &inner_bottom, false);
    m.finish()
}

/// The car: a side profile in `(z, y)` extruded 1.8 m along x. Each side is a
/// TRIANGLE_FAN from the hood/windshield corner (the profile is star-shaped from it), the
/// band around it one TRIANGLE_STRIP. 4.5 m long (front at +Z), 1.5 m tall.
fn car() -> Result<Geometry, GraphError> {
    let profile = [
        (1.0, 0.95),
        (0.35, 1.5),
        (-1.45, 1.5),
        (-2.05, 1.0),
        (-2.25, 0.9),
        (-2.25, 0.0),
        (2.25, 0.0),
        (2.25, 0.8),
    ];
    let half_width = 0.9;
    let at = |x: f32, (z, y): (f32, f32)| Vec3::new(x, y, z);
    let mut m = MeshBuilder::default();
    // +x side: reversed order faces +x; -x side: in order faces -x.
    let right = std::iter::once(profile[0]).chain(profile[1..].iter().rev().copied());
    m.arrays(
        PrimitiveMode::TriangleFan,
        right.map(|p| at(half_width, p)).collect(),
    );
    m.arrays(
        PrimitiveMode::TriangleFan,
        profile.iter().map(|&p| at(-half_width, p)).collect(),
    );
    let band = (0..=profile.len())
        .flat_map(|k| {
            let p = profile[k % profile.len()];
            [at(-half_width, p), at(half_width, p)]
        })
        .collect();
    m.arrays(PrimitiveMode::TriangleStrip, band);
    m.finish()
}

// ----- summary ---------------------------------------------------------------------------

/// Counts for the summary, gathered by walking the graph as the writer does.
struct Stats {
    nodes: usize,
    meshes: usize,
    triangles: u64,
    bbox: BoundingBox,
}

impl Stats {
    fn of(scene: &SceneGraph, root: NodeId) -> Stats {
        struct Count(u64);
        impl PrimitiveFunctor for Count {
            fn triangle(&mut self, _v: [Vec3; 3], _i: [u32; 3], _p: u32) {
                self.0 += 1;
            }
        }
        let mut stats = Stats {
            nodes: 0,
            meshes: 0,
            triangles: 0,
            bbox: BoundingBox::EMPTY,
        };
        let mut triangles: HashMap<NodeId, u64> = HashMap::new();
        let mut stack = vec![(root, DMat4::IDENTITY)];
        while let Some((id, parent)) = stack.pop() {
            let Some(node) = scene.node(id) else { continue };
            stats.nodes += 1;
            let matrix = match node.kind() {
                NodeKind::Transform(t) => parent * t.matrix,
                _ => parent,
            };
            if let NodeKind::Geode { drawables } = node.kind() {
                let count = *triangles.entry(id).or_insert_with(|| {
                    drawables
                        .iter()
                        .filter_map(|&d| scene.drawable(d))
                        .map(|d| {
                            let mut c = Count(0);
                            d.accept(&mut c);
                            c.0
                        })
                        .sum()
                });
                stats.triangles += count;
                for &d in drawables {
                    if let Some(b) = scene.drawable_bound(d) {
                        stats.bbox.expand_by_box(&b.transformed(&matrix));
                    }
                }
            }
            stack.extend(node.children().iter().map(|&c| (c, matrix)));
        }
        stats.meshes = triangles.len();
        stats
    }
}
