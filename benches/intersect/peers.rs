//! OpenSceneGraph and Embree (benches/peers) on the same workload, run right after ours
//! when `BENCH_PEERS` names their binary.

use std::path::Path;

use scene_intersect::prelude::*;

use crate::scenes::{Bench, TABLE};
use crate::table::ratio_line;

/// Writes the scene's flattened triangles, its meshes and the ratio table's [`TABLE`]
/// segments and boxes (as the planes our `Polytope` holds) in the format
/// benches/peers/peers.cpp reads.
pub(crate) fn write_peer_workload(b: &Bench, path: &Path) -> std::io::Result<()> {
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
pub(crate) struct Ours {
    pub(crate) all: (f64, usize),
    pub(crate) summaries: (f64, usize),
    pub(crate) nearest: (f64, usize),
    pub(crate) boxes: (f64, usize),
    pub(crate) build: (f64, usize),
    /// All hits and boxes through the query tool's path, when it could be timed.
    pub(crate) tool_all: Option<(f64, usize)>,
    pub(crate) tool_boxes: Option<(f64, usize)>,
}

/// `BENCH_PEERS=<binary>` (benches/peers/build.sh makes it): the C++ peers answer this
/// scene's segments and boxes on its flattened triangles, right after ours in the same
/// run, and a ratio line is printed for each against our times. OpenSceneGraph 3.6
/// gets the scene's node paths as nested groups (no transforms: the vertices are in
/// world space) with one geode per placed drawable and a KdTree each; Embree 3 one
/// scene of all triangles.
pub(crate) fn run_peers(b: &Bench, ours: &Ours) {
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
