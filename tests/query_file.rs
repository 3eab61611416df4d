//! The batch query format of `QUERY_FORMAT.md` (`io::query_file`, the `query` example's
//! core), end to end: a hand-written glTF file and query file against hand-computed
//! JSON lines, through the library and through the built `query` example's command
//! line; and on real scenes, the same answers with acceleration on and off, on one
//! thread and two, agreeing with the brute-force reference.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use glam::DVec3;
use scene_intersect::intersectors::PrimitiveKind;
use scene_intersect::io::load_gltf_slice;
use scene_intersect::io::query_file::{
    answer_query_lines, parse_query_file, result_line, BatchAnswer, BatchQuery, QueryLine,
};
use scene_intersect::prelude::*;

#[path = "support/glb.rs"]
mod glb_file;
#[path = "support/reference.rs"]
mod reference;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/scenes.rs"]
mod scenes;

use reference::Verdict;
use rng::Rng;

/// The small scene of the hand-computed test:
///
/// * mesh 0, one primitive: the unit square of the plane y = 0 (x, z in [0, 1]) as two
///   triangles, 0: (0,0,0) (1,0,0) (1,0,1) (where z <= x), 1: (0,0,0) (1,0,1) (0,0,1);
/// * mesh 1, primitive 0: triangle 0 of mesh 0 again; primitive 1: LINES, one line from
///   (0,0,-1) to (1,0,-1);
/// * node 0 (the scene's root) holds nodes 1, 2 and 3; node 1 places mesh 0 at y = 1,
///   node 2 mesh 1 at y = 2, node 3 mesh 0 at x = 5.
fn small_scene_glb() -> Vec<u8> {
    let positions: [[f32; 3]; 8] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 1.0],
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        [1.0, 0.0, -1.0],
    ];
    let bin: Vec<u8> = positions
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let json = r#"{
      "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
      "nodes": [
        {"children": [1, 2, 3]},
        {"mesh": 0, "translation": [0, 1, 0]},
        {"mesh": 1, "translation": [0, 2, 0]},
        {"mesh": 0, "translation": [5, 0, 0]}
      ],
      "meshes": [
        {"primitives": [{"attributes": {"POSITION": 0}}]},
        {"primitives": [{"attributes": {"POSITION": 1}},
                        {"attributes": {"POSITION": 2}, "mode": 1}]}
      ],
      "buffers": [{"byteLength": 96}],
      "bufferViews": [{"buffer": 0, "byteLength": 96}],
      "accessors": [
        {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 6, "type": "VEC3",
         "min": [0, 0, 0], "max": [1, 0, 1]},
        {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 3, "type": "VEC3",
         "min": [0, 0, 0], "max": [1, 0, 1]},
        {"bufferView": 0, "byteOffset": 72, "componentType": 5126, "count": 2, "type": "VEC3",
         "min": [0, 0, -1], "max": [1, 0, -1]}
      ]
    }"#;
    glb_file::glb(json.as_bytes(), &bin, None, None)
}

/// The small scene, loaded.
fn small_scene() -> (SceneGraph, GltfImport) {
    load_gltf_slice(&small_scene_glb(), None).expect("the hand-written scene loads")
}

/// Every line of the answers to `text`, as the `query` example writes them.
fn answer_text(scene: &SceneGraph, import: &GltfImport, text: &str, accelerated: bool) -> String {
    let lines = parse_query_file(text);
    let mut visitor = IntersectionVisitor::new();
    visitor.set_use_acceleration(accelerated);
    let answers = answer_query_lines(&visitor, scene, import, &lines);
    let mut out = String::new();
    for (q, answer) in answers.iter().enumerate() {
        writeln!(out, "{}", result_line(q, answer)).expect("writing to a String");
    }
    out
}

/// The hand-written query file of the small scene.
const SMALL_SCENE_QUERIES: &str = "\
# down through (x, z) = (0.75, 0.25): mesh 1's triangle at y = 2 (ratio 1/4) and
# triangle 0 of node 1's square at y = 1 (ratio 1/2); node 3's square is at x = 5.
seg 0.75 3 0.25   0.75 -1 0.25

sphere 5.5 0 0.5 0.1      # on node 3's diagonal: both its triangles
poly 4  1 0 0 -0.9  -1 0 0 1.1  0 0 1 0.1  0 0 -1 0.05   # round the corner x = 1, z = 0
sphere 0.5 2 -1 0.1       # touches only mesh 1's line: lines do not count
seg 0 0 0 1 1             # malformed: five numbers
sphere 0.25 1.01 0.75 0.02
";

/// The answers to [`SMALL_SCENE_QUERIES`], worked out by hand, one line per query.
const SMALL_SCENE_ANSWERS: [&str; 6] = [
    r#"{"q":0,"kind":"seg","hits":[{"d":"n2/p0","tri":0,"ratio":0.25,"point":[0.75,2,0.25]},{"d":"n1/p0","tri":0,"ratio":0.5,"point":[0.75,1,0.25]}]}"#,
    r#"{"q":1,"kind":"sphere","hits":[{"d":"n3/p0","tri":0},{"d":"n3/p0","tri":1}]}"#,
    r#"{"q":2,"kind":"poly","hits":[{"d":"n1/p0","tri":0},{"d":"n2/p0","tri":0}]}"#,
    r#"{"q":3,"kind":"sphere","hits":[]}"#,
    r#"{"q":4,"error":"line 8: `seg` takes 6 numbers, found 5"}"#,
    // 0.01 above node 1's square, over its triangle 1 (z > x).
    r#"{"q":5,"kind":"sphere","hits":[{"d":"n1/p0","tri":1}]}"#,
];

#[test]
fn a_hand_written_batch_gives_the_hand_computed_lines() {
    let (scene, import) = small_scene();
    for accelerated in [true, false] {
        let got = answer_text(&scene, &import, SMALL_SCENE_QUERIES, accelerated);
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got, SMALL_SCENE_ANSWERS, "accelerated: {accelerated}");
    }
}

/// The `query` example's executable, which `cargo test` builds beside the tests (in
/// `target/<profile>/examples`, one level above the tests' own `deps`).
fn query_tool() -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = test_exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("tests run from target/<profile>/deps");
    let tool = profile_dir
        .join("examples")
        .join(format!("query{}", std::env::consts::EXE_SUFFIX));
    assert!(
        tool.exists(),
        "{} is missing: run the tests with plain `cargo test` (which builds the examples) \
         or build it first with `cargo build --example query`",
        tool.display()
    );
    tool
}

/// Runs the `query` tool with `args`: its exit code, stdout and stderr.
fn run_query_tool(args: &[&str]) -> (Option<i32>, String, String) {
    let output = std::process::Command::new(query_tool())
        .args(args)
        .output()
        .expect("the query tool starts");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_query_tool_answers_the_hand_written_batch_whatever_its_options() {
    // The command line the issue's workloads go through: files in, JSON lines out, the
    // malformed line and the timings on stderr, the same answers with acceleration off
    // and on two threads, whichever way the options are spelled.
    let dir =
        std::env::temp_dir().join(format!("scene-intersect-query-tool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (scene_path, queries_path) = (dir.join("small.glb"), dir.join("queries.txt"));
    std::fs::write(&scene_path, small_scene_glb()).expect("the scene is written");
    std::fs::write(&queries_path, SMALL_SCENE_QUERIES).expect("the queries are written");
    let (scene, queries) = (
        scene_path.to_str().expect("a UTF-8 temporary path"),
        queries_path.to_str().expect("a UTF-8 temporary path"),
    );
    let option_sets: [&[&str]; 6] = [
        &[],
        &["--plain"],
        &["--no-accel"],
        &["--threads", "2"],
        &["--threads=2", "--repeat=3", "--no-accel"],
        &["--repeat", "2"],
    ];
    for options in option_sets {
        let args: Vec<&str> = [scene, queries].iter().chain(options).copied().collect();
        let (code, stdout, stderr) = run_query_tool(&args);
        assert_eq!(code, Some(0), "{options:?}: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines, SMALL_SCENE_ANSWERS, "{options:?}");
        assert!(
            stderr.contains("malformed query: line 8: `seg` takes 6 numbers, found 5"),
            "{options:?}: {stderr}"
        );
        for phase in ["load", "build", "query"] {
            let timed = stderr.lines().any(|l| {
                l.strip_prefix(&format!("time_ms {phase} "))
                    .is_some_and(|ms| ms.parse::<f64>().is_ok_and(|ms| ms >= 0.0))
            });
            assert!(timed, "{options:?}: no `time_ms {phase}` line in {stderr}");
        }
    }

    // Help on stdout; mistakes on stderr with a non-zero code, nothing on stdout.
    let (code, stdout, _) = run_query_tool(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.starts_with("usage: query SCENE.glb QUERIES.txt"),
        "{stdout}"
    );
    for (args, says) in [
        (vec![scene, queries, "--fast"], "unknown option --fast"),
        (
            vec![scene, queries, "--threads=0"],
            "--threads needs a whole number >= 1",
        ),
        (
            vec![scene, queries, "--repeat"],
            "--repeat needs a whole number >= 1",
        ),
        (vec![scene], "usage: query"),
        (vec!["no-such-scene.glb", queries], "error:"),
        (
            vec![scene, "no-such-queries.txt"],
            "cannot read query file no-such-queries.txt",
        ),
    ] {
        let (code, stdout, stderr) = run_query_tool(&args);
        assert!(code.is_some_and(|c| c != 0), "{args:?} exits with {code:?}");
        assert!(stdout.is_empty(), "{args:?} wrote {stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_scene_is_what_the_hand_computed_test_says() {
    // The line of mesh 1 is in the scene, so the test above shows that it is left out,
    // not that it is missing: a ball query of every primitive kind meets it.
    let (scene, import) = small_scene();
    let mut ball = SphereIntersector::new(DVec3::new(0.5, 2.0, -1.0), 0.1).expect("a ball");
    IntersectionVisitor::new()
        .apply(&scene, import.root, &mut ball)
        .expect("the query runs");
    let kinds: Vec<PrimitiveKind> = ball
        .intersections()
        .iter()
        .map(|h| h.primitive_kind)
        .collect();
    assert_eq!(kinds, [PrimitiveKind::Line]);
}

/// The real scenes and the box their queries are drawn in (`None`: the central part of
/// the scene's bounding sphere): the project's city, and Truck Town when `../shared` is
/// there (its terrain spans 2 km, its town the centre's 200 m, at most 15 m high).
fn real_scenes() -> Vec<(PathBuf, Option<(DVec3, DVec3)>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut scenes = vec![(root.join("data/city.glb"), None)];
    let shared = root.join("../shared/data/truck_town.glb");
    if shared.is_file() {
        let town = (
            DVec3::new(-100.0, -2.0, -100.0),
            DVec3::new(100.0, 15.0, 100.0),
        );
        scenes.push((shared, Some(town)));
    } else {
        eprintln!("skipping truck_town: ../shared/data is absent");
    }
    scenes
}

/// A query file of `count` random queries of every kind in the box `[min, max]`, with a
/// malformed line and a comment every so often.
fn random_query_file(rng: &mut Rng, min: DVec3, max: DVec3, count: usize) -> String {
    let size = max - min;
    let point = |rng: &mut Rng| rng.in_box(min, max);
    let mut text = String::new();
    for k in 0..count {
        let kind = rng.next();
        let line = if is_malformed(k) {
            "sphere 0 0 0 -1 # malformed: a negative radius".to_owned()
        } else if kind < 0.4 {
            let (a, b) = (point(rng), point(rng));
            format!("seg {} {} {} {} {} {}", a.x, a.y, a.z, b.x, b.y, b.z)
        } else if kind < 0.7 {
            let c = point(rng);
            let r = rng.range(0.0, 0.05) * size.max_element();
            format!("sphere {} {} {} {r}", c.x, c.y, c.z)
        } else {
            // A box turned about y, as a vehicle's (a car's to a truck's in the city).
            let c = point(rng);
            let unit = size.x.max(size.z) / 400.0;
            let half = unit
                * DVec3::new(
                    rng.range(0.5, 3.0),
                    rng.range(0.5, 3.0),
                    rng.range(1.0, 6.0),
                );
            let angle = rng.range(0.0, std::f64::consts::TAU);
            let (s, co) = angle.sin_cos();
            let axes = [DVec3::new(co, 0.0, -s), DVec3::Y, DVec3::new(s, 0.0, co)];
            let mut planes = String::new();
            for (axis, h) in axes.iter().zip([half.x, half.y, half.z]) {
                for n in [*axis, -*axis] {
                    let d = -n.dot(c) + h;
                    write!(planes, "  {} {} {} {d}", n.x, n.y, n.z).expect("a String");
                }
            }
            format!("poly 6{planes}")
        };
        writeln!(text, "{line}").expect("a String");
        if k % 23 == 0 {
            text.push_str("# a comment line, not a query\n\n");
        }
    }
    text
}

/// Whether [`random_query_file`] makes its query `k` malformed.
fn is_malformed(k: usize) -> bool {
    k % 17 == 5
}

/// The answers of `lines` on a pool of `threads` threads.
fn answers_on(
    threads: usize,
    accelerated: bool,
    scene: &SceneGraph,
    import: &GltfImport,
    lines: &[QueryLine],
) -> Vec<String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool");
    let mut visitor = IntersectionVisitor::new();
    visitor.set_use_acceleration(accelerated);
    let answers = pool.install(|| answer_query_lines(&visitor, scene, import, lines));
    answers
        .iter()
        .enumerate()
        .map(|(q, a)| result_line(q, a))
        .collect()
}

#[test]
fn real_scenes_answer_alike_with_and_without_acceleration_on_one_and_two_threads() {
    for (path, place) in real_scenes() {
        let bytes = std::fs::read(&path).expect("the scene file");
        let (scene, import) = load_gltf_slice(&bytes, path.parent()).expect("the scene loads");
        let bound = scene.node_bound(import.root).expect("the root's bound");
        let r = DVec3::splat(bound.radius * 0.6);
        let (min, max) = place.unwrap_or((bound.center - r, bound.center + r));
        let mut rng = Rng(0x5eed_0fba_7c4d);
        let text = random_query_file(&mut rng, min, max, 240);
        let lines = parse_query_file(&text);
        assert_eq!(lines.len(), 240, "{}", path.display());
        let accelerated_one_thread = answers_on(1, true, &scene, &import, &lines);
        let hits: usize = accelerated_one_thread
            .iter()
            .map(|l| l.matches("\"tri\"").count())
            .sum();
        assert!(
            hits > 240,
            "{}: the queries hit ({hits} hits)",
            path.display()
        );
        let errors = accelerated_one_thread
            .iter()
            .filter(|l| l.contains("\"error\""))
            .count();
        assert_eq!(errors, (0..240).filter(|&k| is_malformed(k)).count());
        for (threads, accelerated) in [(2, true), (1, false), (2, false)] {
            let other = answers_on(threads, accelerated, &scene, &import, &lines);
            for (q, (a, b)) in accelerated_one_thread.iter().zip(&other).enumerate() {
                assert_eq!(
                    a,
                    b,
                    "{}: query {q} on {threads} thread(s), accelerated {accelerated}",
                    path.display()
                );
            }
        }
    }
}

/// The reference's verdict on every triangle of the scene, by batch name and triangle
/// index (the parts of one key merged as `reference::verdicts` merges them).
///
/// (`reference::verdicts` itself also judges points and lines, which a batch leaves out.)
fn triangle_verdicts(
    triangles: &[reference::WorldPrimitive],
    import: &GltfImport,
    query: &BatchQuery,
) -> HashMap<(String, u32), Verdict> {
    const MARGIN: f64 = 1e-7;
    let mut out: HashMap<(String, u32), Verdict> = HashMap::new();
    for prim in triangles {
        let verdict = match query {
            BatchQuery::Segment { start, end } => {
                let v = &prim.vertices;
                reference::segment_triangle(*start, *end, [v[0], v[1], v[2]], MARGIN)
            }
            BatchQuery::Sphere { center, radius } => {
                reference::sphere_primitive(*center, *radius, prim, MARGIN)
            }
            BatchQuery::Polytope { polytope } => {
                reference::polytope_primitive(polytope.planes(), prim, MARGIN)
            }
        };
        let (path, drawable, index) = &prim.key;
        let name = import
            .drawable_name(path, *drawable)
            .expect("every drawable of a loaded file has a batch name");
        out.entry((name, *index))
            .and_modify(|old| *old = reference::merge_verdicts(*old, verdict))
            .or_insert(verdict);
    }
    out
}

#[test]
fn the_city_batch_agrees_with_the_brute_force_reference() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb");
    let bytes = std::fs::read(&path).expect("data/city.glb");
    let (scene, import) = load_gltf_slice(&bytes, None).expect("the city loads");
    let triangles: Vec<reference::WorldPrimitive> = reference::flatten(&scene, import.root)
        .into_iter()
        .filter(|p| p.kind == PrimitiveKind::Triangle)
        .collect();
    let bound = scene.node_bound(import.root).expect("the city's bound");
    // Low over the city, where its buildings are.
    let r = bound.radius * DVec3::new(0.5, 0.05, 0.5);
    let mut rng = Rng(0xc17e_5eed);
    let text = random_query_file(&mut rng, bound.center - r, bound.center + r, 60);
    let lines = parse_query_file(&text);
    let answers = answer_query_lines(&IntersectionVisitor::new(), &scene, &import, &lines);
    let (mut sure_hits, mut checked) = (0, 0);
    for (line, answer) in lines.iter().zip(&answers) {
        let Ok(query) = &line.query else {
            assert!(
                answer.is_err(),
                "line {}: a malformed line is an error",
                line.line
            );
            continue;
        };
        let found: Vec<((String, u32), Option<f64>)> = match answer {
            Ok(BatchAnswer::Segment(rows)) => rows
                .iter()
                .map(|h| (name_of(h.drawable, h.triangle), Some(h.ratio)))
                .collect(),
            Ok(BatchAnswer::Polytope(rows) | BatchAnswer::Sphere(rows)) => rows
                .iter()
                .map(|h| (name_of(h.drawable, h.triangle), None))
                .collect(),
            Err(e) => panic!("line {}: {e}", line.line),
        };
        let verdicts = triangle_verdicts(&triangles, &import, query);
        for (key, ratio) in &found {
            match verdicts.get(key) {
                Some(Verdict::Miss) | None => {
                    panic!(
                        "line {}: {key:?} is clearly missed but was found",
                        line.line
                    )
                }
                Some(Verdict::Hit(order)) => {
                    if let Some(ratio) = ratio {
                        assert!((ratio - order).abs() < 1e-9, "line {}: {key:?}", line.line);
                    }
                }
                Some(Verdict::Unsure) => {}
            }
        }
        for (key, verdict) in &verdicts {
            if matches!(verdict, Verdict::Hit(_)) {
                sure_hits += 1;
                assert!(
                    found.iter().any(|(k, _)| k == key),
                    "line {}: {key:?} is clearly hit but was not found",
                    line.line
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, (0..60).filter(|&k| !is_malformed(k)).count());
    assert!(sure_hits > 200, "the queries hit ({sure_hits} sure hits)");
}

fn name_of(drawable: Option<(usize, usize)>, triangle: u32) -> (String, u32) {
    let (node, primitive) = drawable.expect("every drawable of a loaded file has a batch name");
    (format!("n{node}/p{primitive}"), triangle)
}

/// Queries placed on the scene's own geometry, where exactness is hardest: segments
/// along the axes and along edges through vertices and edge midpoints, between two
/// vertices, of lengths from 10^-3 to 10^6; axis-aligned boxes with a corner on a
/// vertex, flat boxes, boxes turned about y, single planes through a vertex (half the
/// scene), a box holding the whole scene; balls of radius 0 on vertices and edge
/// midpoints, and balls touching a triangle's plane at its centroid. (A segment along
/// a degenerate triangle's edge may have no length: an error line, in both answers.)
fn queries_on_the_geometry(
    rng: &mut Rng,
    triangles: &[reference::WorldPrimitive],
    count: usize,
) -> String {
    let mut text = String::new();
    let pick = |rng: &mut Rng| {
        let t = &triangles[(rng.next() * triangles.len() as f64) as usize];
        let k = (rng.next() * 3.0) as usize;
        (
            t.vertices[k],
            t.vertices[(k + 1) % 3],
            t.vertices[(k + 2) % 3],
        )
    };
    let lengths = [1e-3, 0.1, 1.0, 10.0, 1e3, 1e6];
    let axes = [DVec3::X, DVec3::Y, DVec3::Z];
    // One box holds the whole scene (the walks take it whole); the others are smaller.
    let low = DVec3::splat(-1e7);
    writeln!(text, "{}", aligned_box(low, -low)).expect("a String");
    for _ in 1..count {
        let (a, b, c) = pick(rng);
        let length = lengths[(rng.next() * lengths.len() as f64) as usize];
        let axis = axes[(rng.next() * 3.0) as usize];
        let through = if rng.next() < 0.5 { a } else { (a + b) * 0.5 };
        let line = match (rng.next() * 12.0) as usize {
            0 => segment(through - axis * length, through + axis * length),
            1 => segment(through, through + axis * length),
            2 => segment(a, b),
            3 => segment(a - (b - a) * length, b + (b - a) * length),
            4 => {
                let (d, _, _) = pick(rng);
                segment(a, d)
            }
            5 | 8 => {
                let size = DVec3::new(rng.next(), rng.next(), rng.next()) * length.min(100.0);
                let low = if rng.next() < 0.5 { a } else { a - size };
                aligned_box(low, low + size)
            }
            6 => {
                // Flat: both planes of one axis through the vertex.
                let size = (DVec3::ONE - axis) * length.min(100.0);
                aligned_box(a - size, a + size)
            }
            7 => {
                let n = (b - a).cross(c - a);
                let n = if rng.next() < 0.5 { n } else { axis };
                format!("poly 1 {} {} {} {}", n.x, n.y, n.z, -n.dot(a))
            }
            9 => format!("sphere {} {} {} 0", through.x, through.y, through.z),
            10 => {
                let centroid = (a + b + c) / 3.0;
                let n = (b - a).cross(c - a).normalize_or_zero();
                let r = length.min(10.0);
                let o = centroid + n * r;
                format!("sphere {} {} {} {r}", o.x, o.y, o.z)
            }
            _ => {
                let angle = rng.range(0.0, std::f64::consts::TAU);
                let (s, co) = angle.sin_cos();
                let half = DVec3::new(1.0, 0.8, 2.5) * length.min(10.0);
                let mut planes = String::new();
                for (axis, h) in [DVec3::new(co, 0.0, -s), DVec3::Y, DVec3::new(s, 0.0, co)]
                    .iter()
                    .zip([half.x, half.y, half.z])
                {
                    for n in [*axis, -*axis] {
                        let d = -n.dot(a) + h;
                        write!(planes, " {} {} {} {d}", n.x, n.y, n.z).expect("a String");
                    }
                }
                format!("poly 6{planes}")
            }
        };
        writeln!(text, "{line}").expect("a String");
    }
    text
}

fn segment(a: DVec3, b: DVec3) -> String {
    format!("seg {} {} {} {} {} {}", a.x, a.y, a.z, b.x, b.y, b.z)
}

/// The six planes of the box `[low, high]`.
fn aligned_box(low: DVec3, high: DVec3) -> String {
    format!(
        "poly 6 1 0 0 {} -1 0 0 {} 0 1 0 {} 0 -1 0 {} 0 0 1 {} 0 0 -1 {}",
        -low.x, high.x, -low.y, high.y, -low.z, high.z
    )
}

#[test]
#[ignore = "large data: every shared scene and generated city, the plain traversal on 2 000 queries each (~1 min in release, ~4 with the generated cities); run with --release -- --ignored"]
fn queries_on_the_scenes_own_geometry_answer_alike_with_and_without_acceleration() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = scenes::real_scenes();
    for path in [
        // The bench's generated cities (benches/README.md tells how to make them), when
        // present: tens of thousands of instances of shared meshes, and ground strips.
        root.join("target/bench-cities/city_s3.glb"),
        root.join("target/bench-cities/city_s10.glb"),
    ] {
        if path.is_file() {
            paths.push(path);
        }
    }
    for path in paths {
        let bytes = std::fs::read(&path).expect("the scene file");
        let (scene, import) = load_gltf_slice(&bytes, path.parent()).expect("the scene loads");
        let triangles: Vec<reference::WorldPrimitive> = reference::flatten(&scene, import.root)
            .into_iter()
            .filter(|p| p.kind == PrimitiveKind::Triangle)
            .collect();
        let mut rng = Rng(0x0ad7_e5a7_1a15);
        let text = queries_on_the_geometry(&mut rng, &triangles, 2000);
        let lines = parse_query_file(&text);
        let accelerated = answers_on(2, true, &scene, &import, &lines);
        let plain = answers_on(2, false, &scene, &import, &lines);
        let hits: usize = accelerated
            .iter()
            .map(|l| l.matches("\"tri\"").count())
            .sum();
        eprintln!("{}: {hits} hits", path.display());
        for (q, (a, p)) in accelerated.iter().zip(&plain).enumerate() {
            assert_eq!(
                a,
                p,
                "{}: line {}: {}",
                path.display(),
                q + 1,
                text.lines().nth(q).unwrap_or("")
            );
        }
    }
}

mod round_trip {
    use super::*;
    use glam::DVec4;
    use proptest::prelude::*;

    /// Any `f64` the format takes: finite, of every magnitude, signed zeros included.
    fn finite() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>().prop_filter("finite", |x| x.is_finite()),
            -1e3..1e3f64,
            Just(0.0),
            Just(-0.0),
        ]
    }

    fn point() -> impl Strategy<Value = DVec3> {
        (finite(), finite(), finite()).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    /// A valid query of every kind (what the intersectors refuse is the unit tests').
    fn query() -> impl Strategy<Value = BatchQuery> {
        prop_oneof![
            (point(), point())
                .prop_filter("a segment has length", |(start, end)| start != end)
                .prop_map(|(start, end)| BatchQuery::Segment { start, end }),
            (point(), finite()).prop_map(|(center, radius)| BatchQuery::Sphere {
                center,
                radius: radius.abs()
            }),
            prop::collection::vec((point(), finite()), 1..=64).prop_filter_map(
                "planes with normals that can be normalized",
                |planes| {
                    let planes = planes.into_iter().map(|(n, d)| n.extend(d));
                    let polytope = Box::new(Polytope::new(planes).ok()?);
                    Some(BatchQuery::Polytope { polytope })
                }
            ),
        ]
    }

    proptest! {
        /// A query written as a line reads back as itself, bit for bit.
        #[test]
        fn a_written_query_reads_back_as_itself(q in query(), comment in "[ -~]{0,20}") {
            let text = format!("{q} # {comment}\n");
            let lines = parse_query_file(&text);
            prop_assert_eq!(lines.len(), 1);
            // Compared as bits: -0 is not 0, and each number must come back.
            let bits = |q: &BatchQuery| format!("{q:?}");
            match &lines[0].query {
                Ok(read) => prop_assert_eq!(bits(read), bits(&q)),
                Err(e) => prop_assert!(false, "{} was refused: {}", q, e),
            }
        }

        /// Any text reads without a panic, one query line per line that is not blank
        /// once its comment is cut.
        #[test]
        fn any_text_reads_into_one_entry_per_query_line(text in "[ -~\t\n#]{0,200}") {
            let lines = parse_query_file(&text);
            let expected = text
                .lines()
                .filter(|l| !l.split('#').next().unwrap_or("").trim().is_empty())
                .count();
            prop_assert_eq!(lines.len(), expected);
        }
    }

    #[test]
    fn a_plane_of_four_numbers_reads_back_in_its_order() {
        let plane = DVec4::new(1.0, -0.0, 2.5e-300, -7.0);
        let q = BatchQuery::Polytope {
            polytope: Box::new(Polytope::new([plane]).expect("a valid plane")),
        };
        assert_eq!(q.to_string(), "poly 1 1.0 -0.0 2.5e-300 -7.0");
    }
}
