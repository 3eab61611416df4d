//! The main job: a vehicle drives through a glTF city and reports what it touches.
//!
//! ```text
//! cargo run --release --example city_drive -- [options]        (--help lists them)
//! ```
//!
//! Every frame the vehicle's Transform is moved along the route (constant speed, yaw
//! following the route, its box resting on the ground found by dropping a vertical
//! segment), then a [`PolytopeIntersector`] built from the vehicle's own oriented box
//! (collected through the primitive functor, grown by `--inflate`) asks which triangles of
//! the city are inside it. The vehicle's subtree carries node-mask bit `0x2` and the
//! query's traversal mask lacks it, so the vehicle never hits itself; lines and points
//! (lamp posts, lights, the route) are not tested (`PrimitiveMask::TRIANGLES`), and hits
//! on terrain nodes (`--ignore`) are not contacts. Contacts are per object (the glTF node
//! instancing the mesh); only their beginnings and ends are printed, with the object's
//! node path and the contact's distance behind the box's front plane.
//!
//! # Routes
//! * `--route X,Z;...`: the given waypoints.
//! * Otherwise the scene's `route` node (lines, such as `data/city.glb`'s closed tour along
//!   street centre lines), or, without one, a derived loop: 24 waypoints on a circle
//!   centred on the scene's bounding-sphere centre, of radius the median horizontal
//!   distance from there to the (world box) centres of the non-terrain drawables, so it
//!   runs among the objects rather than around the whole bounding box (truck_town's
//!   2 km outer plane would make that huge). Heights always come from the terrain.
//! * After a default route the vehicle takes a "crash leg": `--crash-leg` metres (at most
//!   3/4 of the way) straight from the route's end towards the centroid of its
//!   waypoints, off the streets, so the map shows highlighted hits even when the route
//!   itself is clear.
//!
//! # Output
//! The changes per frame, a summary (frames, queries, hits, query time and vehicle move
//! time per frame: median and p99) and a PNG map (`--out`, see [`map`]).

#[path = "../common/scene_walk.rs"]
mod scene_walk;

mod drive;
mod map;
mod options;
mod route;
mod terrain;
mod vehicle;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use glam::{DVec2, DVec3};
use scene_intersect::bounding::BoundingBox;
use scene_intersect::io::import_gltf;
use scene_intersect::prelude::*;

use drive::{path_names, ContactEvent, Drive};
use map::Map;
use options::{Options, USAGE};
use route::{parse_route, route_from_node, Route};
use scene_walk::{for_each_drawable, WorldTriangles};
use terrain::Terrain;
use vehicle::{Pose, Vehicle, WITHOUT_VEHICLE};

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("city_drive: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("city_drive: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(o: &Options) -> Result<(), String> {
    let started = Instant::now();
    let (mut scene, import) =
        load_gltf(&o.scene).map_err(|e| format!("cannot load {}: {e}", o.scene.display()))?;
    let root = import.root;
    let vehicle_node = match &o.vehicle_file {
        Some(file) => import_vehicle(&mut scene, root, file, &o.vehicle)?,
        None => find_in(&scene, root, &o.vehicle).ok_or_else(|| {
            format!(
                "no node named `{}` in {} (choose one with --vehicle NAME, or import one with \
                 --vehicle-file PATH --vehicle NAME)",
                o.vehicle,
                o.scene.display()
            )
        })?,
    };
    let vehicle = Vehicle::new(&mut scene, vehicle_node)?;
    let terrain = Terrain::new(&scene, root, o.ignore.clone(), WITHOUT_VEHICLE);

    let (route, route_kind) = choose_route(&scene, root, &terrain, o)?;
    let size = vehicle.local_box.max - vehicle.local_box.min;
    println!(
        "scene {} ({} triangles); vehicle `{}` {:.2} x {:.2} x {:.2} m (w x h x l), box +{} m",
        o.scene.display(),
        import.stats.instanced_triangles,
        path_names(&scene, &[vehicle.node]),
        size.x,
        size.y,
        size.z,
        o.inflate
    );
    println!(
        "route: {route_kind}, {} waypoints, {:.1} m; {} m/s at {} fps",
        route.points().len(),
        route.length(),
        o.speed,
        o.fps
    );
    let frames = o
        .frames
        .unwrap_or_else(|| (route.length() / o.speed * o.fps).ceil() as usize + 1);

    let mut drive = Drive::new(vehicle, terrain, root, o.inflate);
    let mut times: Vec<Duration> = Vec::with_capacity(frames);
    let mut move_times: Vec<Duration> = Vec::with_capacity(frames);
    let mut total_hits = 0usize;
    let mut events = 0usize;
    let mut objects = std::collections::BTreeSet::new();
    let mut path: Vec<DVec3> = Vec::with_capacity(frames);
    let mut hit_polygons: Vec<Vec<DVec3>> = Vec::new();
    let mut contact_boxes: Vec<[DVec3; 4]> = Vec::new();
    let mut height = 0.0;
    for frame in 0..frames {
        let s = o.speed * frame as f64 / o.fps;
        let (at, heading) = route.sample(s);
        height = drive
            .terrain
            .height(&scene, root, at.x, at.y)
            .unwrap_or(height);
        let pose = Pose::heading(DVec3::new(at.x, height, at.y), heading.x, heading.y);
        let result = drive.step(&mut scene, &pose)?;
        times.push(result.query_time);
        move_times.push(result.move_time);
        total_hits += result.hits.len();
        path.push(pose.position);
        hit_polygons.extend(result.hits.iter().map(|h| h.polygon.to_vec()));
        for event in &result.events {
            events += 1;
            let (sign, contact) = match event {
                ContactEvent::Begin(c) => {
                    objects.insert(c.object.clone());
                    contact_boxes.push(drive.vehicle.footprint(&result.world, o.inflate));
                    ("begin", c)
                }
                ContactEvent::End(c) => ("end  ", c),
            };
            println!(
                "frame {frame:5} t {:6.2} s  contact {sign} {}  distance {:.2} m ({} triangles)",
                frame as f64 / o.fps,
                path_names(&scene, &contact.object),
                contact.distance,
                contact.triangles
            );
        }
        if o.progress > 0 && frame > 0 && frame % o.progress == 0 {
            eprintln!(
                "city_drive: frame {frame}/{frames} ({:.0}%), {:.1} s",
                100.0 * frame as f64 / frames as f64,
                started.elapsed().as_secs_f64()
            );
        }
    }

    for c in drive.contacts() {
        println!(
            "still in contact at the end: {}  distance {:.2} m ({} triangles)",
            path_names(&scene, &c.object),
            c.distance,
            c.triangles
        );
    }
    println!(
        "summary: {frames} frames, {frames} queries, {total_hits} triangle hits, {events} contact \
         events, {} objects touched",
        objects.len()
    );
    for (what, mut times) in [("query", times), ("vehicle move", move_times)] {
        times.sort();
        let percentile = |p: f64| {
            let i = ((times.len() as f64 - 1.0) * p).round() as usize;
            times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
        };
        println!(
            "{what} time per frame: median {:.1} us, p99 {:.1} us, max {:.1} us",
            percentile(0.5),
            percentile(0.99),
            percentile(1.0)
        );
    }

    let route_points: Vec<DVec3> = route
        .points()
        .iter()
        .map(|p| DVec3::new(p.x, 0.0, p.y))
        .collect();
    let map = draw_map(
        &scene,
        root,
        &route_points,
        &path,
        &hit_polygons,
        &contact_boxes,
    );
    map.write_png(&o.out)?;
    let (w, h) = map.size();
    println!(
        "map: {} ({w} x {h}): route blue, vehicle path dark, box at each contact begin orange, \
         hit triangles red",
        o.out.display()
    );
    println!("done in {:.2} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The first node named `name` under `root` (depth first).
fn find_in(scene: &SceneGraph, root: NodeId, name: &str) -> Option<NodeId> {
    let node = scene.node(root)?;
    if node.name() == name {
        return Some(root);
    }
    node.children()
        .iter()
        .find_map(|&c| find_in(scene, c, name))
}

/// Imports the glTF file's default scene into `scene`, takes its node `name` out of it
/// and puts it under a new Transform (the vehicle) under `root`.
fn import_vehicle(
    scene: &mut SceneGraph,
    root: NodeId,
    file: &Path,
    name: &str,
) -> Result<NodeId, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let imported = import_gltf(scene, &bytes, file.parent())
        .map_err(|e| format!("cannot load {}: {e}", file.display()))?;
    let node = find_in(scene, imported.root, name).ok_or_else(|| {
        let names: Vec<&str> = scene
            .node(imported.root)
            .map(|r| {
                r.children()
                    .iter()
                    .filter_map(|c| scene.node(*c))
                    .map(|n| n.name())
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "no node named `{name}` in {} (its top nodes: {})",
            file.display(),
            names.join(", ")
        )
    })?;
    let parents: Vec<NodeId> = scene
        .node(node)
        .map(|n| n.parents().to_vec())
        .unwrap_or_default();
    for parent in parents {
        scene
            .remove_child(parent, node)
            .map_err(|e| e.to_string())?;
    }
    let carrier = scene
        .add_transform(format!("vehicle:{name}"), glam::DMat4::IDENTITY)
        .map_err(|e| e.to_string())?;
    scene.add_child(root, carrier).map_err(|e| e.to_string())?;
    scene.add_child(carrier, node).map_err(|e| e.to_string())?;
    Ok(carrier)
}

/// The route to drive and a description of where it came from.
fn choose_route(
    scene: &SceneGraph,
    root: NodeId,
    terrain: &Terrain,
    o: &Options,
) -> Result<(Route, String), String> {
    if let Some(text) = &o.route {
        return Ok((parse_route(text)?, "--route".to_string()));
    }
    let (route, kind) = match find_in(scene, root, "route") {
        Some(node) => (route_from_node(scene, node)?, "the scene's `route` node"),
        None => (derived_loop(scene, root, terrain)?, "derived loop"),
    };
    let end = route.points()[route.points().len() - 1];
    let towards = route.centroid() - end;
    let leg = o.crash_leg.min(0.75 * towards.length());
    if leg > 0.0 {
        let with_leg = route.with_leg(towards, leg)?;
        Ok((with_leg, format!("{kind} + {leg:.0} m crash leg")))
    } else {
        Ok((route, kind.to_string()))
    }
}

/// The loop of the module docs: a circle among the scene's non-terrain objects.
fn derived_loop(scene: &SceneGraph, root: NodeId, terrain: &Terrain) -> Result<Route, String> {
    let centre = scene
        .node_bound(root)
        .filter(|b| !b.is_empty() && b.radius.is_finite())
        .ok_or("the scene is empty: no route can be derived")?
        .center;
    let mut distances = Vec::new();
    for_each_drawable(
        scene,
        root,
        glam::DMat4::IDENTITY,
        WITHOUT_VEHICLE,
        &mut |m, path, id, _| {
            if terrain.is_terrain(scene, path) {
                return;
            }
            if let Some(b) = scene.drawable_bound(id).filter(|b| !b.is_empty()) {
                let c = b.transformed(m).center();
                distances.push(DVec2::new(c.x - centre.x, c.z - centre.z).length());
            }
        },
    );
    distances.sort_by(f64::total_cmp);
    let radius = distances
        .get(distances.len() / 2)
        .copied()
        .filter(|r| *r > 1.0)
        .unwrap_or_else(|| scene.node_bound(root).map_or(10.0, |b| b.radius * 0.5));
    const N: usize = 24;
    Route::new((0..=N).map(|k| {
        let a = std::f64::consts::TAU * (k % N) as f64 / N as f64;
        DVec2::new(centre.x + radius * a.cos(), centre.z + radius * a.sin())
    }))
}

/// The map: the region the vehicle drove through with a margin, the city in it.
fn draw_map(
    scene: &SceneGraph,
    root: NodeId,
    route: &[DVec3],
    path: &[DVec3],
    hits: &[Vec<DVec3>],
    boxes: &[[DVec3; 4]],
) -> Map {
    let mut region = BoundingBox::EMPTY;
    route
        .iter()
        .chain(path)
        .for_each(|p| region.expand_by_point(*p));
    let size = (region.max - region.min).max_element();
    let margin = (size * 0.15).max(40.0);
    let (min, max) = (
        DVec2::new(region.min.x - margin, region.min.z - margin),
        DVec2::new(region.max.x + margin, region.max.z + margin),
    );
    let mut map = Map::new(min, max, 1400);
    let triangles = WorldTriangles::of(scene, root, WITHOUT_VEHICLE);
    map.draw_terrain(&triangles);
    map.polyline(route, map::ROUTE, 5.0);
    map.polyline(path, map::PATH, 1.5);
    for b in boxes {
        map.outline(b, map::CONTACT_BOX, 2.0);
    }
    for polygon in hits {
        map.outline(polygon, map::HIT, 3.0);
    }
    if let (Some(first), Some(last)) = (path.first(), path.last()) {
        map.dot(*first, 6.0, [0, 160, 0]);
        map.dot(*last, 6.0, [160, 0, 160]);
    }
    map
}
